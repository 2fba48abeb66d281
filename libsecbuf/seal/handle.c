/*
 * Handles: slots in an arena of their own, mapped in doubling blocks and
 * never unmapped, so that checking a pointer reads only memory this file
 * owns.  A pointer outside the arena is foreign, one between slots is
 * inside a handle, and a slot's state and keyed check tell a live handle
 * from a freed (or corrupted) one.  Freed slots wait in a queue before
 * reuse, so that a stale pointer stays a detected "freed" for a while:
 * after reuse it names another live secret, as a stale pointer into any
 * allocator does.  The live list is what rekey walks.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "seal.h"

#define STATE_LIVE  0x5ea1edu
#define STATE_FREED 0xf4eedu
#define QUARANTINE  256 /* freed slots that wait before reuse */
#define MAX_BLOCKS  48	/* 64 slots doubling: more than memory holds */
#define FIRST_SLOTS ((size_t)64)

static struct block {
	uintptr_t start, end;
} blocks[MAX_BLOCKS];
static unsigned nblocks; /* published after its block is filled in */
static unsigned char *carve, *carve_end;
static struct secbuf_sealed *queue_head, *queue_tail, *live;
static size_t queued, nlive[SBS_KINDS], live_bytes, live_sealed;
static uint64_t serials;
static unsigned char check_key[crypto_shorthash_KEYBYTES];
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

int sbs_handle_init(void)
{
	/*
	 * In ordinary memory, on purpose: it guards no secret, only makes a
	 * forged or foreign handle fail its check, and inherited handles
	 * must pass in a forked child.
	 */
	randombytes_buf(check_key, sizeof(check_key));
	return 0;
}

static uint64_t check_of(const struct secbuf_sealed *h, uint32_t state)
{
	const struct {
		uint64_t self, serial, blob, size;
		uint32_t flags, state;
	} w = { (uintptr_t)h, h->serial, (uintptr_t)h->blob, h->size, h->flags, state };
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t v;

	crypto_shorthash(out, (const unsigned char *)&w, sizeof(w), check_key);
	memcpy(&v, out, sizeof(v));
	return v;
}

/* Which slot p is, without reading it: 1 a slot, 0 inside one, -1 not in the arena. */
static int slot_of(const void *p)
{
	unsigned i, n = __atomic_load_n(&nblocks, __ATOMIC_ACQUIRE);
	uintptr_t a = (uintptr_t)p;

	for (i = 0; i < n; i++)
		if (a >= blocks[i].start && a < blocks[i].end)
			return (a - blocks[i].start) % sizeof(struct secbuf_sealed) == 0;
	return -1;
}

static void check(const struct secbuf_sealed *h, const char *fn, int freeing)
{
	int slot = slot_of(h);
	uint32_t state;

	if (slot < 0)
		sbs_misuse("%s(%p): not a sealed secret (a foreign pointer)", fn, (void *)h);
	if (slot == 0)
		sbs_misuse("%s(%p): points inside a sealed secret, not at one", fn, (void *)h);
	state = __atomic_load_n(&h->state, __ATOMIC_ACQUIRE);
	if (state == STATE_LIVE && h->check == check_of(h, STATE_LIVE))
		return;
	if (state == STATE_FREED && h->check == check_of(h, STATE_FREED))
		sbs_misuse("%s(%p): %s", fn, (void *)h,
			   freeing ? "double free of a sealed secret" :
				     "use of a freed sealed secret");
	if (state == 0)
		sbs_misuse("%s(%p): not a sealed secret (a slot never handed out)", fn, (void *)h);
	sbs_misuse("%s(%p): sealed secret corrupted: its check does not match", fn, (void *)h);
}

void sbs_handle_check(const struct secbuf_sealed *h, const char *fn)
{
	check(h, fn, 0);
}

/* A fresh block twice the last one's size: 0, or -1 with errno ENOMEM. */
static int grow(void)
{
	size_t len = FIRST_SLOTS * sizeof(struct secbuf_sealed) << nblocks;
	void *p;

	if (nblocks == MAX_BLOCKS) {
		errno = ENOMEM;
		return -1;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	blocks[nblocks].start = (uintptr_t)p;
	blocks[nblocks].end = (uintptr_t)p + len;
	__atomic_store_n(&nblocks, nblocks + 1, __ATOMIC_RELEASE);
	carve = p;
	carve_end = carve + len;
	return 0;
}

static struct secbuf_sealed *take_slot(void)
{
	struct secbuf_sealed *h;

	if (queued > QUARANTINE) {
		h = queue_head;
		queue_head = h->next;
		queued--;
		return h;
	}
	if (carve == carve_end && grow() < 0)
		return NULL;
	h = (struct secbuf_sealed *)carve;
	carve += sizeof(*h);
	return h;
}

struct secbuf_sealed *sbs_handle_new(unsigned char *blob, size_t size, unsigned flags, uint64_t gen)
{
	struct secbuf_sealed *h;
	size_t sealed_len;

	(void)sbs_sealed_len(size, &sealed_len); /* checked when blob was made */
	pthread_mutex_lock(&mutex);
	h = take_slot();
	if (h) {
		h->serial = ++serials;
		h->blob = blob;
		h->size = size;
		h->gen = gen;
		h->flags = flags;
		h->prev = NULL;
		h->next = live;
		if (live)
			live->prev = h;
		live = h;
		h->check = check_of(h, STATE_LIVE);
		__atomic_store_n(&h->state, STATE_LIVE, __ATOMIC_RELEASE);
		nlive[sbs_kind_of(flags)]++;
		live_bytes += size;
		live_sealed += sealed_len;
	}
	pthread_mutex_unlock(&mutex);
	return h;
}

unsigned char *sbs_handle_free(struct secbuf_sealed *h, const char *fn)
{
	unsigned char *blob;
	size_t sealed_len;

	pthread_mutex_lock(&mutex);
	check(h, fn, 1);
	if (h->prev)
		h->prev->next = h->next;
	else
		live = h->next;
	if (h->next)
		h->next->prev = h->prev;
	nlive[sbs_kind_of(h->flags)]--;
	live_bytes -= h->size;
	(void)sbs_sealed_len(h->size, &sealed_len); /* checked when it was sealed */
	live_sealed -= sealed_len;
	blob = h->blob;
	h->check = check_of(h, STATE_FREED);
	__atomic_store_n(&h->state, STATE_FREED, __ATOMIC_RELEASE);
	h->next = NULL;
	if (queued)
		queue_tail->next = h;
	else
		queue_head = h;
	queue_tail = h;
	queued++;
	pthread_mutex_unlock(&mutex);
	return blob;
}

void sbs_handle_each(void (*fn)(struct secbuf_sealed *h, void *arg), void *arg)
{
	struct secbuf_sealed *h;

	pthread_mutex_lock(&mutex);
	for (h = live; h; h = h->next)
		fn(h, arg);
	pthread_mutex_unlock(&mutex);
}

size_t sbs_handle_count(enum sbs_kind kind)
{
	size_t n;

	pthread_mutex_lock(&mutex);
	n = nlive[kind];
	pthread_mutex_unlock(&mutex);
	return n;
}

void sbs_handle_totals(size_t *n, size_t *bytes, size_t *sealed_bytes)
{
	pthread_mutex_lock(&mutex);
	*n = nlive[SBS_OWN] + nlive[SBS_INHERITED];
	*bytes = live_bytes;
	*sealed_bytes = live_sealed;
	pthread_mutex_unlock(&mutex);
}

void sbs_handle_fork_prepare(void)
{
	pthread_mutex_lock(&mutex);
}

void sbs_handle_fork_parent(void)
{
	pthread_mutex_unlock(&mutex);
}

void sbs_handle_fork_child(void)
{
	pthread_mutex_init(&mutex, NULL); /* its owner was the parent's thread */
}
