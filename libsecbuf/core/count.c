/*
 * Live secrets and their bytes, for the whole process (secbuf_totals()):
 * guarded buffers and packed secrets, the drop-in's included.  A forked
 * child starts at zero: the buffers it inherits are not its to use.
 *
 * The figures are read rarely and changed on every allocation and free,
 * the hottest path there is: so each thread counts in a tally of its own,
 * on a cache line of its own, with plain stores, and a reader sums the
 * tallies.  (Two process-wide atomic counters cost packed secrets 41% of
 * their speed on one thread and 87% on two, the threads fighting over one
 * line.)  A tally holds deltas, so a secret freed by another thread than
 * the one that made it leaves one tally up and one down, and their sum
 * right: sums wrap in size_t, exactly.  For the same reason a tally
 * outlives its thread: at exit it goes to a free list with its counts, and
 * the next new thread carries on from them.  Threads beyond the tallies
 * (all taken at once) share one more, with atomic adds.
 */
#include <pthread.h>
#include "core.h"

#define TALLIES 256

struct tally {
	size_t secrets, bytes;
	struct tally *next_free;
} __attribute__((aligned(64)));

static struct tally tallies[TALLIES];
static struct tally shared; /* atomics only: any thread without a tally of its own */
static unsigned int used;   /* tallies handed out so far; never shrinks */
static struct tally *free_list;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_err;

static __thread struct tally *mine __attribute__((tls_model("initial-exec")));

/* At thread exit: the tally, counts and all, goes to the next new thread. */
static void release(void *arg)
{
	struct tally *t = arg;

	mine = NULL;
	pthread_mutex_lock(&lock);
	t->next_free = free_list;
	free_list = t;
	pthread_mutex_unlock(&lock);
}

static void make_exit_key(void)
{
	exit_key_err = pthread_key_create(&exit_key, release);
}

/* The calling thread's first count: a tally of its own, or the shared one. */
static struct tally *adopt(void)
{
	struct tally *t = NULL;

	pthread_once(&exit_key_once, make_exit_key);
	if (exit_key_err)
		return &shared;
	pthread_mutex_lock(&lock);
	if (free_list) {
		t = free_list;
		free_list = t->next_free;
	} else if (used < TALLIES) {
		t = &tallies[used++];
	}
	pthread_mutex_unlock(&lock);
	if (!t)
		return &shared;
	if (pthread_setspecific(exit_key, t) != 0) {
		release(t);
		return &shared;
	}
	mine = t;
	return t;
}

/*
 * Only the owner writes its tally; a relaxed store (a plain move) keeps a
 * concurrent reader's load free of a data race.
 */
static void count(size_t secrets, size_t bytes)
{
	struct tally *t = mine;

	if (__builtin_expect(!t, 0))
		t = adopt();
	if (t == &shared) {
		__atomic_add_fetch(&t->secrets, secrets, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->bytes, bytes, __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&t->secrets, t->secrets + secrets, __ATOMIC_RELAXED);
	__atomic_store_n(&t->bytes, t->bytes + bytes, __ATOMIC_RELAXED);
}

void sb_count_add(size_t bytes)
{
	count(1, bytes);
}

/* Subtraction as the addition of the two's complement: sums wrap exactly. */
void sb_count_sub(size_t bytes)
{
	count((size_t)-1, -bytes);
}

void sb_count_get(size_t *secrets, size_t *bytes)
{
	size_t s, b;

	pthread_mutex_lock(&lock);
	s = __atomic_load_n(&shared.secrets, __ATOMIC_RELAXED);
	b = __atomic_load_n(&shared.bytes, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < used; i++) {
		s += __atomic_load_n(&tallies[i].secrets, __ATOMIC_RELAXED);
		b += __atomic_load_n(&tallies[i].bytes, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&lock);
	*secrets = s;
	*bytes = b;
}

/* The lock is a leaf: nothing is taken while it is held. */
void sb_count_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void sb_count_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

/*
 * The child's one thread keeps its tally, at zero like every other; the
 * other threads' tallies are free (their threads are not in the child).
 */
void sb_count_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	free_list = NULL;
	shared.secrets = shared.bytes = 0;
	for (unsigned int i = 0; i < used; i++) {
		tallies[i].secrets = tallies[i].bytes = 0;
		if (&tallies[i] != mine) {
			tallies[i].next_free = free_list;
			free_list = &tallies[i];
		}
	}
}
