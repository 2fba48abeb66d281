/*
 * Slabs: making one (an aligned region, locked or not, its metadata and
 * guard keys), handing its slots out and taking them back, and tearing it
 * down once empty.  The layout is in slab.h.  Callers hold the lock
 * of the slab's pool, except for making one.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include "slab.h"

static unsigned char *slot_at(const struct sb_slab *s, unsigned int i)
{
	return s->region.data + SB_GUARD + (size_t)i * s->stride;
}

static void write_guard(const struct sb_slab *s, unsigned int n)
{
	uint64_t g[2];

	sb_slab_guard(s, n, g);
	memcpy(s->region.data + (size_t)n * s->stride, g, SB_GUARD);
}

static void set_geometry(struct sb_slab *s, unsigned int cls)
{
	s->cls = cls;
	s->csize = (cls + 1) * SB_CLASS_STEP;
	s->stride = s->csize + SB_GUARD;
	s->nslots = (s->region.data_len - SB_GUARD) / s->stride;
	s->index_magic = ((1ull << 40) + s->stride - 1) / s->stride;
}

/* Keys for this slab's guard bytes: the PRF over its block and a serial number. */
static void draw_guard_keys(struct sb_slab *s)
{
	static uint64_t serial;
	uint64_t in[3] = { s->block, __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED), 0 };
	size_t i;

	for (i = 0; i < sizeof(s->guard_key) / sizeof(s->guard_key[0]); i++) {
		in[2] = i;
		s->guard_key[i] = sb_prf(SB_PRF_GUARD, in, 3);
	}
	s->guard_key[1] |= 1; /* multipliers: odd, so that the mix is a bijection */
	s->guard_key[2] |= 1;
}

static int kind_method(enum sb_pool_kind kind)
{
	switch (kind) {
	case SB_LOCKED:
	case SB_INHERIT_LOCKED:
		return sb_caps()->method;
	case SB_SECRET:
		return SECBUF_LOCK_SECRETMEM;
	default:
		return SECBUF_LOCK_NONE;
	}
}

/*
 * A new slab of class cls, locked with the process's method (SB_LOCKED),
 * secret memory (SB_SECRET) or not locked at all (SB_UNLOCKED).  Locked
 * and secret slabs are strict: a refused lock or a kernel without secret
 * memory fails here, and the caller decides what else will do.  Under
 * plain mlock, which is eager, a locked slab is populated whole.
 */
struct sb_slab *sb_slab_make(unsigned int cls, enum sb_pool_kind kind)
{
	const struct sb_caps *caps = sb_caps();
	int method = kind_method(kind);
	unsigned flags = (method == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : 0) |
			 (sb_kind_inherited(kind) ? SECBUF_INHERIT : 0);
	struct sb_slab *s = sb_meta_get(SB_META_SLAB);
	int err;

	if (!s)
		return NULL;
	/* A recycled block: all but the slot info, which is written on allocation. */
	memset(s, 0, offsetof(struct sb_slab, info));
	if (sb_region_map(&s->region, SB_SLAB_BLOCK - 2 * caps->page, SB_SLAB_BLOCK, method,
			  flags) < 0)
		goto fail;
	s->kind = kind;
	s->epoch = sb_key_epoch();
	set_geometry(s, cls);
	__atomic_store_n(&s->block, (uintptr_t)s->region.base, __ATOMIC_RELEASE);
	draw_guard_keys(s);
	s->check = sb_slab_check(s);
	if (sb_slabmap_set(s->block, s) < 0) {
		err = errno;
		sb_region_unmap(&s->region, "secbuf_alloc");
		errno = err;
		goto fail;
	}
	return s;
fail:
	err = errno;
	sb_meta_put(SB_META_SLAB, s);
	errno = err;
	return NULL;
}

void sb_slab_forged(const void *p, const char *fn)
{
	sb_misuse("%s(%p): the metadata of the slab holding it is corrupted "
		  "(or forged)",
		  fn, p);
}

/*
 * Every slot was zeroed when its secret was freed; the wipe clears the
 * guard bytes too, and touches resident pages only.
 */
void sb_slab_unmake(struct sb_slab *s)
{
	sb_slabmap_clear(s->block);
	__atomic_store_n(&s->block, 0, __ATOMIC_RELEASE);
	if (sb_wipe_resident(s->region.data, s->region.data_len) < 0)
		sb_misuse("secbuf_free: mincore of an empty slab at %p failed: %m",
			  (void *)s->region.data);
#ifdef SECBUF_TEST_KEEP_MAPPING
	/* Wipe-proof test build only: leave the wiped slab readable. */
	if (sb_region_protect(&s->region, PROT_READ) < 0)
		sb_misuse("secbuf_free: mprotect of an empty slab failed: %m");
#else
	sb_region_unmap(&s->region, "secbuf_free");
#endif
	sb_meta_put(SB_META_SLAB, s);
}

/*
 * Slots never handed out get their guard bytes now.  The first batch of a
 * slab stays within its first page, so that a slab with one secret has
 * one page resident.
 */
static unsigned int carve(struct sb_slab *s, void **out, unsigned int max)
{
	unsigned int n = s->nslots - s->carved, k, fit;

	if (n > max)
		n = max;
	if (!s->carved) {
		fit = (sb_caps()->page - SB_GUARD) / s->stride;
		if (fit && n > fit)
			n = fit;
		write_guard(s, 0);
	}
	for (k = 0; k < n; k++) {
		write_guard(s, s->carved + k + 1);
		out[k] = slot_at(s, s->carved + k);
	}
	s->carved += n;
	return n;
}

/* Free slots of one bitmap word: a batch stays on one live-bitmap cache line. */
static unsigned int take_pooled(struct sb_slab *s, void **out, unsigned int max)
{
	unsigned int w = s->scan, n = 0;
	uint64_t bits;

	while (!s->pooled_bits[w])
		w++;
	s->scan = w;
	bits = s->pooled_bits[w];
	while (bits && n < max) {
		out[n++] = slot_at(s, w * 64 + __builtin_ctzll(bits));
		bits &= bits - 1;
	}
	s->pooled_bits[w] = bits;
	s->pooled -= n;
	return n;
}

unsigned int sb_slab_take(struct sb_slab *s, void **out, unsigned int max)
{
	return s->pooled ? take_pooled(s, out, max) : carve(s, out, max);
}

int sb_slab_give(struct sb_slab *s, unsigned int i)
{
	s->pooled_bits[i / 64] |= 1ull << (i % 64);
	s->pooled++;
	if (i / 64 < s->scan)
		s->scan = i / 64;
	return s->pooled == s->carved;
}
