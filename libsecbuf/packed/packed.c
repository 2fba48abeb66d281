/*
 * Packed secrets (SECBUF_PACKED): small secrets that share locked slab
 * pages.  The fast path takes no lock and makes no system call: a thread
 * allocates from and frees into its own bin of free slots, and goes to
 * the pool only for a batch (pool.c).  What makes a slot a
 * live secret is one bit in its slab's live bitmap, set and cleared
 * atomically: of two frees of one pointer, even in two threads at once,
 * one finds the bit clear and aborts.
 *
 * A freed secret is checked (guard bytes on both sides, padding) and
 * zeroed before its slot can be handed out again.  There is no registry
 * entry per secret: the slot's size and flags sit in the slab's metadata.
 */
#include <errno.h>
#include <string.h>
#include "packed.h"
#include "slab.h"

#define SB_BIN_SLOTS 64 /* free slots a thread keeps per class and kind */

/*
 * A thread's bins, in a metadata block of their own, made on its first
 * packed allocation and given back at its exit (process/thread.c calls
 * sb_packed_thread_exit(), which init.c registered).
 */
struct bins {
	uint64_t epoch; /* key epoch of the slabs the bins hold slots of */
	unsigned char nbin[SB_KINDS][SB_CLASSES];
	void *bin[SB_KINDS][SB_CLASSES][SB_BIN_SLOTS]; /* LIFO: free slots */
};
_Static_assert(sizeof(struct bins) <= SB_META_BLOCK, "bins must fit a metadata block");

static __thread struct bins *bins_self __attribute__((tls_model("initial-exec")));

/* ---- pointers: which slot, and is it live ---- */

static int is_live(const struct sb_slab *s, unsigned int i)
{
	return !!(__atomic_load_n(&s->live[i / 64].bits, __ATOMIC_ACQUIRE) & 1ull << (i % 64));
}

static void __attribute__((noreturn)) not_live(const void *ptr, const char *fn)
{
	sb_misuse("%s(%p): not a live secbuf buffer (foreign pointer, or double free "
		  "of a packed secret)",
		  fn, ptr);
}

/*
 * The slot ptr is the start of, or abort saying what ptr is instead.
 * Fields are read without a lock: for a live secret they do not change;
 * for a stale pointer racing a slab's teardown they may be another slab's,
 * so the index is only bounded here, and take_live() checks the block.
 */
static unsigned int slot_of(const struct sb_slab *s, const void *ptr, const char *fn)
{
	uintptr_t first = sb_slab_first(ptr), u = (uintptr_t)ptr - first, r;
	unsigned int i;

	if (s->epoch != sb_key_epoch())
		sb_misuse("%s(%p): the buffer was allocated by a parent process before "
			  "fork(); in this process it reads as zeros and may not be used "
			  "or freed",
			  fn, ptr);
	/* A slab torn down (block 0) or reused for another block: stale. */
	if (__atomic_load_n(&s->block, __ATOMIC_ACQUIRE) != ((uintptr_t)ptr & ~(SB_SLAB_BLOCK - 1)))
		not_live(ptr, fn);
	sb_slab_verify(s, ptr, fn);
	if ((uintptr_t)ptr < first || u >= (uintptr_t)s->nslots * s->stride)
		not_live(ptr, fn);
	i = sb_slab_index(s, u);
	if (i >= SB_SLAB_MAX_SLOTS)
		not_live(ptr, fn);
	r = u - (uintptr_t)i * s->stride;
	if (r == 0)
		return i;
	if (r < s->csize && is_live(s, i))
		sb_misuse("%s(%p): foreign pointer: it points inside the live buffer %p, "
			  "not at its start",
			  fn, ptr, (void *)(first + (uintptr_t)i * s->stride));
	not_live(ptr, fn);
}

/* Clear the live bit of slot i: exactly one free of a secret gets past here. */
static void take_live(struct sb_slab *s, unsigned int i, const void *ptr, const char *fn)
{
	uint64_t bit = 1ull << (i % 64);

	if (!(__atomic_fetch_and(&s->live[i / 64].bits, ~bit, __ATOMIC_ACQ_REL) & bit))
		not_live(ptr, fn);
	/* The bit was set, so this slab cannot be torn down until we give the slot back. */
	if (__atomic_load_n(&s->block, __ATOMIC_ACQUIRE) != ((uintptr_t)ptr & ~(SB_SLAB_BLOCK - 1)))
		not_live(ptr, fn);
}

int sb_packed_method(const struct sb_slab *s)
{
	return s->region.method;
}

int sb_packed_is_live(const struct sb_slab *s, const void *p)
{
	uintptr_t first = sb_slab_first(p), u = (uintptr_t)p - first;
	unsigned int i;

	if (s->epoch != sb_key_epoch() ||
	    __atomic_load_n(&s->block, __ATOMIC_ACQUIRE) != ((uintptr_t)p & ~(SB_SLAB_BLOCK - 1)) ||
	    (uintptr_t)p < first || u >= (uintptr_t)s->nslots * s->stride)
		return 0;
	i = sb_slab_index(s, u);
	return i < SB_SLAB_MAX_SLOTS && u - (uintptr_t)i * s->stride < s->csize && is_live(s, i);
}

void sb_packed_check_live(struct sb_slab *s, const void *ptr, const char *fn)
{
	if (!is_live(s, slot_of(s, ptr, fn)))
		not_live(ptr, fn);
}

/* ---- guard bytes and padding ---- */

/* The padding after a secret repeats the guard bytes that follow it. */
static void fill_padding(const struct sb_slab *s, unsigned int i, unsigned char *p, size_t size)
{
	unsigned char g[SB_GUARD];
	uint64_t w[2];
	size_t k;

	sb_slab_guard(s, i + 1, w);
	memcpy(g, w, SB_GUARD);
	for (k = size; k < s->csize; k++)
		p[k] = g[k % SB_GUARD];
}

static void check_guards(const struct sb_slab *s, unsigned int i, const unsigned char *p,
			 size_t size, const char *fn)
{
	unsigned char front[SB_GUARD], back[SB_GUARD];
	uint64_t w[2];
	size_t k;

	sb_slab_guard(s, i, w);
	memcpy(front, w, SB_GUARD);
	sb_slab_guard(s, i + 1, w);
	memcpy(back, w, SB_GUARD);
	if (memcmp(p - SB_GUARD, front, SB_GUARD))
		sb_misuse("%s(%p): guard bytes in front of the packed secret are corrupted "
			  "(buffer underflow, or an overflow of the secret before it)",
			  fn, (const void *)p);
	for (k = size; k < s->csize; k++)
		if (p[k] != back[k % SB_GUARD])
			sb_misuse("%s(%p): padding after byte %zu is corrupted (buffer overflow)",
				  fn, (const void *)p, size);
	if (memcmp(p + s->csize, back, SB_GUARD))
		sb_misuse("%s(%p): guard bytes after the packed secret are corrupted "
			  "(buffer overflow)",
			  fn, (const void *)p);
}

/* ---- the thread's bins ---- */

static void forget(struct bins *b)
{
	memset(b->nbin, 0, sizeof(b->nbin));
	b->epoch = 0;
}

/* The thread's state (process/) carries the exit hook that gives the bins back. */
static struct bins *make_bins(void)
{
	struct bins *b;

	if (!sb_thread_get() || !(b = sb_meta_get(SB_META_BINS)))
		return NULL;
	forget(b); /* a recycled block: the counts; the slots do not matter */
	bins_self = b;
	return b;
}

/* The thread's bins, emptied if they hold slots of older slabs. */
static struct bins *thread_bins(void)
{
	struct bins *b = bins_self;
	uint64_t epoch = sb_key_epoch();

	if (__builtin_expect(b && b->epoch == epoch, 1))
		return b;
	if (!b && !(b = make_bins()))
		return NULL;
	if (b->epoch != epoch) {
		forget(b);
		b->epoch = epoch;
	}
	return b;
}

/* A free slot of the class from the bin, refilled from the pool if empty. */
static void *take_slot(struct bins *t, enum sb_pool_kind kind, unsigned int cls)
{
	void **bin = t->bin[kind][cls], *got[SB_BIN_SLOTS];
	int n, k;

	if (!t->nbin[kind][cls]) {
		n = sb_pool_take(kind, cls, got, SB_BIN_SLOTS);
		if (n < 0)
			return NULL;
		/* Lowest address on top: secrets allocated in a row sit side by side. */
		for (k = 0; k < n; k++)
			bin[k] = got[n - 1 - k];
		t->nbin[kind][cls] = n;
	}
	return bin[--t->nbin[kind][cls]];
}

static void *take_slot_best_effort(struct bins *t, unsigned int cls, enum sb_pool_kind locked,
				   enum sb_pool_kind unlocked)
{
	void *p;

	/* Locked if at hand, then unlocked if at hand, then a new locked batch. */
	if (t->nbin[locked][cls])
		return t->bin[locked][cls][--t->nbin[locked][cls]];
	if (t->nbin[unlocked][cls])
		return t->bin[unlocked][cls][--t->nbin[unlocked][cls]];
	p = take_slot(t, locked, cls);
	if (!p && sb_lock_unavailable(errno))
		p = take_slot(t, unlocked, cls);
	return p;
}

/*
 * A slot for a secret with these flags.  Secret memory comes from secret
 * slabs only; under SECBUF_BEST_EFFORT, if none can be had, from what the
 * flags without SECBUF_SECRET would give.
 */
static void *take(struct bins *t, unsigned int cls, unsigned flags, int method)
{
	int inherit = !!(flags & SECBUF_INHERIT);
	enum sb_pool_kind locked = inherit ? SB_INHERIT_LOCKED : SB_LOCKED;
	enum sb_pool_kind unlocked = inherit ? SB_INHERIT_UNLOCKED : SB_UNLOCKED;
	void *p;

	if (method == SECBUF_LOCK_SECRETMEM) {
		p = take_slot(t, SB_SECRET, cls);
		if (p || !(flags & SECBUF_BEST_EFFORT))
			return p;
		flags &= ~SECBUF_SECRET;
		if ((method = sb_region_method(flags)) < 0)
			return NULL;
	}
	if (method == SECBUF_LOCK_NONE)
		return take_slot(t, unlocked, cls);
	if (flags & SECBUF_BEST_EFFORT)
		return take_slot_best_effort(t, cls, locked, unlocked);
	return take_slot(t, locked, cls);
}

/* The n oldest slots of a bin (its bottom) back to the pool. */
static void flush(struct bins *t, enum sb_pool_kind kind, unsigned int cls, unsigned int n)
{
	void **bin = t->bin[kind][cls];
	unsigned int k;

	sb_pool_give(kind, cls, bin, n);
	for (k = n; k < t->nbin[kind][cls]; k++)
		bin[k - n] = bin[k];
	t->nbin[kind][cls] -= n;
}

static void put_slot(struct bins *t, const struct sb_slab *s, void *p)
{
	if (t->nbin[s->kind][s->cls] == SB_BIN_SLOTS)
		flush(t, s->kind, s->cls, SB_BIN_SLOTS / 2);
	t->bin[s->kind][s->cls][t->nbin[s->kind][s->cls]++] = p;
}

/* ---- the calls ---- */

/*
 * Strict secrets come from locked (or secret) slabs only; best-effort ones
 * from an unlocked slab only when a locked one cannot be had, and a slab
 * is locked or not as a whole, so a strict secret is never unlocked.
 */
void *sb_packed_alloc(size_t size, unsigned flags)
{
	unsigned int cls = (size - 1) / SB_CLASS_STEP, i;
	struct bins *t;
	int method = sb_region_method(flags);
	struct sb_slab *s;
	unsigned char *p;

	if (method < 0 || !(t = thread_bins()) || !(p = take(t, cls, flags, method))) {
		sb_report_failure(size, flags);
		return NULL;
	}
	s = sb_slab_of(p);
	i = sb_slab_index(s, (uintptr_t)p - sb_slab_first(p));
	if (__atomic_fetch_or(&s->live[i / 64].bits, 1ull << (i % 64), __ATOMIC_ACQ_REL) &
	    1ull << (i % 64))
		sb_misuse("secbuf_alloc: internal error: packed slot %p handed out twice",
			  (void *)p);
	s->info[i] = size | (flags & SB_INFO_FLAGS) << SB_INFO_FLAGS_SHIFT;
	if (size < s->csize)
		fill_padding(s, i, p, size);
	sb_count_add(size);
	return p;
}

void sb_packed_free(struct sb_slab *s, void *ptr, const char *fn)
{
	unsigned int i = slot_of(s, ptr, fn);
	struct bins *t;

	take_live(s, i, ptr, fn);
	check_guards(s, i, ptr, s->info[i] & SB_INFO_SIZE, fn);
	sb_count_sub(s->info[i] & SB_INFO_SIZE);
	sb_wipe(ptr, s->csize);
	t = thread_bins();
	if (t)
		put_slot(t, s, ptr);
	else /* no memory for this thread's state: straight back to the pool */
		sb_pool_give(s->kind, s->cls, &ptr, 1);
}

size_t sb_packed_size(struct sb_slab *s, const void *ptr, const char *fn)
{
	unsigned int i = slot_of(s, ptr, fn);

	if (!is_live(s, i))
		not_live(ptr, fn);
	return s->info[i] & SB_INFO_SIZE;
}

/*
 * The pages holding the slot, its guard bytes included; the pool's lock
 * keeps the slab mapped while mincore looks at them.
 */
int sb_packed_stat(struct sb_slab *s, const void *ptr, struct secbuf_stat *st, const char *fn)
{
	size_t page = sb_caps()->page, resident;
	unsigned int i = slot_of(s, ptr, fn);
	uintptr_t lo = ((uintptr_t)ptr - SB_GUARD) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)ptr + s->csize + SB_GUARD + page - 1) & ~(page - 1);
	int ret;

	sb_pool_lock(s);
	if (!is_live(s, i)) {
		sb_pool_unlock(s);
		not_live(ptr, fn);
	}
	ret = sb_walk((unsigned char *)lo, hi - lo, NULL, &resident);
	sb_pool_unlock(s);
	if (ret < 0)
		return -1;
	st->size = s->info[i] & SB_INFO_SIZE;
	st->mapped_bytes = hi - lo;
	st->resident_pages = resident;
	st->locked_pages = s->region.method == SECBUF_LOCK_NONE ? 0 : resident;
	st->lock_method = s->region.method;
	st->flags = SECBUF_PACKED | s->info[i] >> SB_INFO_FLAGS_SHIFT;
	return 0;
}

/* ---- purge ---- */

/* The live secrets of one slab of this process, their bytes only. */
static void purge_slab(struct sb_slab *s, uintptr_t block)
{
	unsigned int w, i;

	if (s->epoch != sb_key_epoch() || __atomic_load_n(&s->block, __ATOMIC_ACQUIRE) != block)
		return; /* a parent's (not ours to touch), or torn down */
	for (w = 0; w < SB_SLAB_WORDS; w++) {
		uint64_t bits = __atomic_load_n(&s->live[w].bits, __ATOMIC_ACQUIRE);

		while (bits) {
			unsigned char *p;
			size_t size;

			i = w * 64 + __builtin_ctzll(bits);
			bits &= bits - 1;
			p = s->region.data + SB_GUARD + (size_t)i * s->stride;
			size = s->info[i] & SB_INFO_SIZE;
			if (i < s->nslots && size <= s->csize && !sb_is_zero(p, size))
				sb_wipe(p, size);
		}
	}
}

/*
 * Every slab the slab map knows.  A slab's pool lock keeps it mapped; if
 * someone holds it, the slab is wiped all the same, and a slab torn down
 * at this moment may fault: a purge never waits.
 */
void sb_packed_purge(void)
{
	size_t top, k;

	for (top = 0; top < SB_BLOCKMAP_TOP; top++) {
		void **leaf = __atomic_load_n(&sb_slabmap.leaf[top], __ATOMIC_ACQUIRE);

		for (k = 0; leaf && k < SB_BLOCKMAP_LEAF; k++) {
			struct sb_slab *s = __atomic_load_n(&leaf[k], __ATOMIC_ACQUIRE);
			uintptr_t block = (top << SB_BLOCKMAP_LEAF_BITS | k) << SB_SLAB_SHIFT;
			int locked;

			if (!s)
				continue;
			locked = sb_pool_trylock(s);
			purge_slab(s, block);
			if (locked)
				sb_pool_unlock(s);
		}
	}
}

/* One slab's live secrets, their guard bytes checked (a parent's slab is not ours). */
static void check_slab(const struct sb_slab *s, uintptr_t block, const char *fn)
{
	if (s->epoch != sb_key_epoch() || __atomic_load_n(&s->block, __ATOMIC_ACQUIRE) != block)
		return;
	for (unsigned int w = 0; w < SB_SLAB_WORDS; w++) {
		uint64_t bits = __atomic_load_n(&s->live[w].bits, __ATOMIC_ACQUIRE);

		while (bits) {
			unsigned int i = w * 64 + __builtin_ctzll(bits);

			bits &= bits - 1;
			if (i < s->nslots)
				check_guards(s, i,
					     s->region.data + SB_GUARD + (size_t)i * s->stride,
					     s->info[i] & SB_INFO_SIZE, fn);
		}
	}
}

/* At exit (SECBUF_CHECK_ON_EXIT): every slab, under its pool's lock. */
void sb_packed_check_all(const char *fn)
{
	for (size_t top = 0; top < SB_BLOCKMAP_TOP; top++) {
		void **leaf = __atomic_load_n(&sb_slabmap.leaf[top], __ATOMIC_ACQUIRE);

		for (size_t k = 0; leaf && k < SB_BLOCKMAP_LEAF; k++) {
			struct sb_slab *s = __atomic_load_n(&leaf[k], __ATOMIC_ACQUIRE);
			uintptr_t block = (top << SB_BLOCKMAP_LEAF_BITS | k) << SB_SLAB_SHIFT;
			int locked;

			if (!s)
				continue;
			locked = sb_pool_trylock(s);
			check_slab(s, block, fn);
			if (locked)
				sb_pool_unlock(s);
		}
	}
}

/* ---- threads and fork ---- */

void sb_packed_thread_exit(void)
{
	struct bins *t = bins_self;
	unsigned int k, c;

	if (!t)
		return;
	if (t->epoch == sb_key_epoch())
		for (k = 0; k < SB_KINDS; k++)
			for (c = 0; c < SB_CLASSES; c++)
				if (t->nbin[k][c])
					flush(t, k, c, t->nbin[k][c]);
	bins_self = NULL;
	sb_meta_put(SB_META_BINS, t);
}

/*
 * What the bins hold belongs to the parent's slabs.  The parent's slabs
 * stay in the slab map, set aside by their key epoch; a child that kept
 * the key (sb_key_kept()) keeps the inherited ones as its own, locked
 * again, and sets the others aside by marking them with epoch 0.
 */
void sb_packed_fork_child(void)
{
	int kept = sb_key_kept();
	struct sb_slab *s;
	size_t top, i;

	if (bins_self)
		forget(bins_self);
	for (top = 0; top < SB_BLOCKMAP_TOP; top++)
		for (i = 0; sb_slabmap.leaf[top] && i < SB_BLOCKMAP_LEAF; i++) {
			s = sb_slabmap.leaf[top][i];
			if (!s || !s->block)
				continue;
			if (kept && sb_kind_inherited(s->kind)) {
				sb_region_relock(&s->region);
				continue;
			}
			if (kept)
				s->epoch = 0;
			sb_region_hold_dropped(&s->region);
		}
}
