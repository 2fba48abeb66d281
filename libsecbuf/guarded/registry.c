/*
 * The registry of live buffers: an open-addressing table keyed by the user
 * pointer, outside the buffers, so that a pointer the library did not hand
 * out (or already took back) is recognised.  Where an entry sits and its
 * check value both come from the keyed PRF: a stray or hostile write into
 * the heap can neither forge an entry nor predict where one is.
 *
 * An entry is pinned while a call uses its mapping with the lock dropped
 * (mprotect, mincore); a free marks it dying and waits for the pins to go,
 * so that such a call never acts on an address the kernel has since given
 * to someone else.
 *
 * The table grows at half full and shrinks at an eighth, so that the
 * memory of a burst of buffers comes back once they are freed.
 *
 * After fork() the child's table of the parent's buffers is set aside,
 * never searched by slot again (the child has a new key) but kept to name
 * an inherited buffer when the child touches one.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include "guarded.h"

enum slot_state {
	SLOT_EMPTY,
	SLOT_LIVE,
	SLOT_DYING,  /* being freed: waits for its pins */
	SLOT_PARENT, /* in a child that kept the table: a parent's, not inherited */
};

struct slot {
	struct sb_meta m;
	unsigned int pins;
	unsigned char state;
};

struct table {
	struct table *older; /* set-aside tables of earlier processes, newest first */
	uint64_t epoch;	     /* of the key its slots were placed with */
	size_t cap, used;    /* used: live and dying */
	struct slot slot[];
};

#define MIN_SLOTS 64

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t unpinned = PTHREAD_COND_INITIALIZER;
static struct table *cur;	/* this process's buffers */
static struct table *inherited; /* buffers of the processes this one was forked from */

/* Over the whole entry, pins and state too: a forged pin would make a free wait for ever. */
static uint64_t check_value(const struct slot *s)
{
	const struct sb_meta *m = &s->m;
	const uint64_t w[] = {
		(uintptr_t)m->user, m->size,
		m->flags,	    (uintptr_t)m->region.base,
		m->region.map_len,  (uintptr_t)m->region.data,
		m->region.data_len, (uint64_t)m->region.method,
		m->serial,	    s->pins,
		s->state,
	};

	return sb_prf(SB_PRF_CHECK, w, sizeof(w) / sizeof(w[0]));
}

static void seal(struct slot *s)
{
	s->m.check = check_value(s);
}

/* With the lock held: abort unless the entry is one this library wrote. */
static void verify(struct slot *s, const void *user, const char *fn);

static size_t home(const struct table *t, const void *user)
{
	uint64_t u = (uintptr_t)user;

	return sb_prf(SB_PRF_SLOT, &u, 1) & (t->cap - 1);
}

static void set_aside(void)
{
	cur->older = inherited;
	inherited = cur;
	cur = NULL;
}

/* A child forked without the atfork handler (a raw clone) is caught here. */
static void lock(void)
{
	pthread_mutex_lock(&reg_lock);
	if (cur && cur->epoch != sb_key_epoch())
		set_aside();
}

static void unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static struct slot *find(struct table *t, const void *user)
{
	size_t i, n;

	if (!t)
		return NULL;
	for (i = home(t, user), n = 0; n < t->cap; i = (i + 1) & (t->cap - 1), n++) {
		if (t->slot[i].state == SLOT_EMPTY)
			return NULL;
		if (t->slot[i].m.user == user)
			return &t->slot[i];
	}
	return NULL;
}

static void place(struct table *t, const struct slot *s)
{
	size_t i = home(t, s->m.user);

	while (t->slot[i].state != SLOT_EMPTY)
		i = (i + 1) & (t->cap - 1);
	t->slot[i] = *s;
	t->used++;
}

/*
 * Deletion without tombstones: close the gap by moving back every later
 * entry of the cluster whose home does not lie between the gap and itself.
 */
static void remove_slot(struct table *t, struct slot *s)
{
	size_t mask = t->cap - 1, gap = s - t->slot, i = gap, h;

	for (;;) {
		i = (i + 1) & mask;
		if (t->slot[i].state == SLOT_EMPTY)
			break;
		h = home(t, t->slot[i].m.user);
		if (((i - h) & mask) >= ((i - gap) & mask)) {
			t->slot[gap] = t->slot[i];
			gap = i;
		}
	}
	memset(&t->slot[gap], 0, sizeof(t->slot[gap]));
	t->used--;
}

/*
 * Move every entry into a table of cap slots.  Without memory the old
 * table stays: -1 matters only when it must grow.
 */
static int resize(size_t cap)
{
	struct table *t;
	size_t i;

	if (cap > (SIZE_MAX - sizeof(*t)) / sizeof(t->slot[0]))
		return -1;
	t = calloc(1, sizeof(*t) + cap * sizeof(t->slot[0]));
	if (!t)
		return -1;
	t->cap = cap;
	t->epoch = sb_key_epoch();
	for (i = 0; cur && i < cur->cap; i++)
		if (cur->slot[i].state != SLOT_EMPTY)
			place(t, &cur->slot[i]);
	if (cur) {
		sb_wipe(cur, sizeof(*cur) + cur->cap * sizeof(cur->slot[0]));
		free(cur);
	}
	cur = t;
	return 0;
}

/* Keep the table at most half full. */
static int make_room(void)
{
	if (cur && (cur->used + 1) * 2 <= cur->cap)
		return 0;
	return resize(cur ? cur->cap * 2 : MIN_SLOTS);
}

/*
 * After a burst, give the memory back: halve the table once it is an
 * eighth full.  It is then a quarter full, so a buffer made and freed
 * at the boundary does not make it grow and shrink each time.
 */
static void maybe_shrink(void)
{
	if (cur->cap > MIN_SLOTS && cur->used * 8 <= cur->cap)
		(void)resize(cur->cap / 2); /* no memory: keep the larger table */
}

int sb_registry_add(struct sb_meta *m)
{
	struct slot s = { .state = SLOT_LIVE };
	int ret = 0;

	s.m = *m;
	seal(&s);
	lock();
	if (make_room() < 0) {
		errno = ENOMEM;
		ret = -1;
	} else {
		place(cur, &s);
	}
	unlock();
	return ret;
}

/* The table entry whose mapping holds p, for a sharper abort message. */
static const struct slot *holder(const struct table *t, const void *p)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; t && i < t->cap; i++) {
		const struct sb_region *r = &t->slot[i].m.region;

		if (t->slot[i].state != SLOT_EMPTY && c >= r->base && c < r->base + r->map_len)
			return &t->slot[i];
	}
	return NULL;
}

static const struct slot *inherited_holder(const void *p)
{
	const struct table *t;
	const struct slot *s = NULL;

	for (t = inherited; t && !s; t = t->older)
		s = holder(t, p);
	return s;
}

/* Say what user is, since it is not a live buffer, and abort. */
static void __attribute__((noreturn))
not_live(const void *user, const struct slot *s, const char *fn)
{
	const struct slot *h = s ? NULL : holder(cur, user);
	const struct slot *old = s ? (s->state == SLOT_PARENT ? s : NULL) :
				 h ? NULL :
				     inherited_holder(user);
	const void *start = h ? h->m.user : old ? old->m.user : NULL;

	unlock();
	if (s && !old)
		sb_misuse("%s(%p): the buffer is being freed by another thread "
			  "(double free)",
			  fn, user);
	if (h)
		sb_misuse("%s(%p): foreign pointer: it points inside the live "
			  "buffer %p, not at its start",
			  fn, user, start);
	if (old)
		sb_misuse("%s(%p): the buffer %p was allocated by a parent process "
			  "before fork(); in this process it reads as zeros and "
			  "may not be used or freed",
			  fn, user, start);
	sb_misuse("%s(%p): not a live secbuf buffer (foreign pointer or double free)", fn, user);
}

static void verify(struct slot *s, const void *user, const char *fn)
{
	if (s->m.check != check_value(s)) {
		unlock();
		sb_misuse("%s(%p): buffer metadata is corrupted", fn, user);
	}
}

/* With the lock held: the live, intact entry of user, or abort. */
static struct slot *live_slot(const void *user, const char *fn)
{
	struct slot *s = find(cur, user);

	if (!s)
		not_live(user, s, fn);
	verify(s, user, fn);
	if (s->state != SLOT_LIVE)
		not_live(user, s, fn);
	return s;
}

void sb_registry_get(const void *user, struct sb_meta *out, const char *fn)
{
	lock();
	*out = live_slot(user, fn)->m;
	unlock();
}

void sb_registry_pin(const void *user, struct sb_meta *out, const char *fn)
{
	struct slot *s;

	lock();
	s = live_slot(user, fn);
	s->pins++;
	seal(s);
	*out = s->m;
	unlock();
}

void sb_registry_unpin(const void *user, const char *fn)
{
	struct slot *s;

	lock();
	s = find(cur, user);
	if (s)
		verify(s, user, fn);
	if (!s || !s->pins) {
		unlock();
		sb_misuse("internal error: %p unpinned but not pinned", user);
	}
	s->pins--;
	seal(s);
	if (!s->pins && s->state == SLOT_DYING)
		pthread_cond_broadcast(&unpinned);
	unlock();
}

/*
 * The last buffers freed, for the crash handler to name a use after free:
 * their mappings are gone, so a fault there is the program's use of a
 * buffer it freed (unless the address was mapped again since, and then it
 * would not fault).  Written under the lock, read without it, field by
 * field: a torn record could only misname a crash, never cause one.
 */
#define FREED_RING 64
static struct freed {
	uintptr_t base, map_len, user, size;
} freed_ring[FREED_RING];
static unsigned int freed_next;

static void remember_freed(const struct sb_meta *m)
{
	unsigned int i = freed_next;
	struct freed *f = &freed_ring[i % FREED_RING];

	__atomic_store_n(&freed_next, i + 1, __ATOMIC_RELAXED);

	__atomic_store_n(&f->base, (uintptr_t)m->region.base, __ATOMIC_RELAXED);
	__atomic_store_n(&f->map_len, m->region.map_len, __ATOMIC_RELAXED);
	__atomic_store_n(&f->user, (uintptr_t)m->user, __ATOMIC_RELAXED);
	__atomic_store_n(&f->size, m->size, __ATOMIC_RELAXED);
}

void sb_registry_take(const void *user, struct sb_meta *out, const char *fn)
{
	struct slot *s;

	lock();
	s = live_slot(user, fn);
	s->state = SLOT_DYING;
	seal(s);
	/* The table may grow while we wait: find the entry again each time. */
	for (;;) {
		s = find(cur, user);
		verify(s, user, fn);
		if (!s->pins)
			break;
		pthread_cond_wait(&unpinned, &reg_lock);
	}
	*out = s->m;
	remember_freed(&s->m);
	remove_slot(cur, s);
	maybe_shrink();
	unlock();
}

int sb_registry_holds(const void *p)
{
	int held;

	lock();
	held = find(cur, p) || holder(cur, p) || inherited_holder(p);
	unlock();
	return held;
}

int sb_registry_live(const void *user, struct sb_meta *out)
{
	const struct slot *s;
	int live;

	lock();
	s = find(cur, user);
	live = s && s->state == SLOT_LIVE;
	if (live && out)
		*out = s->m;
	unlock();
	return live;
}

/* The part of a resident page inside the buffer [arg[0], arg[1]). */
static void wipe_user_part(void *page, size_t len, void *arg)
{
	const uintptr_t *range = arg;
	uintptr_t lo = (uintptr_t)page, hi = lo + len;

	if (lo < range[0])
		lo = range[0];
	if (hi > range[1])
		hi = range[1];
	if (lo < hi && !sb_is_zero((void *)lo, hi - lo))
		sb_wipe((void *)lo, hi - lo);
}

/*
 * Every buffer's bytes, not its canaries, so that it can still be freed.
 * Without the lock if another thread (or the interrupted code) holds it:
 * entries may move under us then, and a moved one may be missed or wiped
 * twice, but a purge never waits.  Pages never touched are not read.
 */
void sb_registry_purge(void)
{
	int locked = pthread_mutex_trylock(&reg_lock) == 0;
	struct table *t = __atomic_load_n(&cur, __ATOMIC_ACQUIRE);
	size_t i;

	for (i = 0; t && i < t->cap; i++) {
		struct sb_meta m = t->slot[i].m;
		uintptr_t range[2] = { (uintptr_t)m.user, (uintptr_t)m.user + m.size };

		if (t->slot[i].state == SLOT_EMPTY || !m.region.data)
			continue;
		if (mprotect(m.region.data, m.region.data_len, PROT_READ | PROT_WRITE) < 0)
			continue; /* not ours any more */
		(void)sb_resident_walk(m.region.data, m.region.data_len, NULL, 0, wipe_user_part,
				       range, NULL);
	}
	if (locked)
		pthread_mutex_unlock(&reg_lock);
}

/*
 * At exit, with the lock: no other call runs any more, or if one does it
 * waits.  A buffer made no-access or read-only is made readable first:
 * the process is ending, nothing relies on its protection any more.
 */
void sb_registry_check_all(const char *fn)
{
	lock();
	for (size_t i = 0; cur && i < cur->cap; i++) {
		const struct sb_meta *m = &cur->slot[i].m;

		if (cur->slot[i].state != SLOT_LIVE || !m->region.data ||
		    mprotect(m->region.data, m->region.data_len, PROT_READ) < 0)
			continue;
		sb_canary_check(m, fn);
	}
	unlock();
}

/* The newest freed buffer whose mapping held addr; 0 if none. */
static int freed_holder(uintptr_t a, struct sb_fault *out)
{
	unsigned int next = __atomic_load_n(&freed_next, __ATOMIC_RELAXED);

	for (unsigned int i = 1; i <= FREED_RING; i++) {
		const struct freed *f = &freed_ring[(next - i) % FREED_RING];
		uintptr_t base = __atomic_load_n(&f->base, __ATOMIC_RELAXED);

		if (base && a - base < __atomic_load_n(&f->map_len, __ATOMIC_RELAXED)) {
			out->user = (const void *)__atomic_load_n(&f->user, __ATOMIC_RELAXED);
			out->size = __atomic_load_n(&f->size, __ATOMIC_RELAXED);
			out->kind = SB_FAULT_FREED;
			return 1;
		}
	}
	return 0;
}

/*
 * Without the lock, like the purge: only the crash handler asks.  A fault
 * in a live buffer's guard page is an overflow or underflow; in its data,
 * the protection secbuf_protect() set; outside every live buffer, in one
 * freed since, a use after free.
 */
int sb_registry_name_fault(const void *addr, struct sb_fault *f)
{
	const struct slot *s = holder(__atomic_load_n(&cur, __ATOMIC_ACQUIRE), addr);
	const unsigned char *a = addr;

	if (!s)
		return freed_holder((uintptr_t)addr, f);
	f->user = s->m.user;
	f->size = s->m.size;
	if (a >= s->m.region.data + s->m.region.data_len)
		f->kind = SB_FAULT_OVERFLOW;
	else if (a >= s->m.region.data)
		f->kind = SB_FAULT_PROTECTED;
	else
		f->kind = SB_FAULT_UNDERFLOW;
	return 1;
}

void sb_registry_fork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

void sb_registry_fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

/*
 * Pins and waiters belonged to threads the child does not have.  A child
 * that kept the key (the parent made SECBUF_INHERIT buffers) keeps the
 * table: its inherited buffers are its own, locked again; the others read
 * as zeros there and are marked the parent's, never to be used or freed.
 * Otherwise the table is set aside.
 */
void sb_registry_fork_child(void)
{
	int kept = sb_key_kept();
	size_t i;

	for (i = 0; cur && i < cur->cap; i++) {
		if (cur->slot[i].state == SLOT_EMPTY)
			continue;
		if (kept && cur->slot[i].pins) {
			cur->slot[i].pins = 0; /* the pinning threads are not in the child */
			seal(&cur->slot[i]);
		}
		if (kept && cur->slot[i].m.region.inherit) {
			sb_region_relock(&cur->slot[i].m.region);
			continue;
		}
		sb_region_hold_dropped(&cur->slot[i].m.region);
		if (kept) {
			cur->slot[i].state = SLOT_PARENT;
			seal(&cur->slot[i]);
		}
	}
	if (cur && !kept)
		set_aside();
	pthread_cond_init(&unpinned, NULL);
	pthread_mutex_unlock(&reg_lock);
}
