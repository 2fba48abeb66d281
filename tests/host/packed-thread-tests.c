/*
 * Packed secrets across threads and fork(): secrets freed by other
 * threads, slabs unmapped when their last secret goes, one of two
 * concurrent frees aborting, fork() while threads allocate, and what a
 * child sees of its parent's secrets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "tests.h"

#define THREADS 8
#define LIVE 64		/* per thread */
#define HANDOFF 256	/* secrets in flight between threads */

static struct {
	pthread_mutex_t lock;
	unsigned char *p[HANDOFF];
	size_t len[HANDOFF];
} handoff = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The fill byte of a secret of n bytes at p: derived from both. */
static unsigned char fill_of(const unsigned char *p, size_t n)
{
	return (unsigned char)((uintptr_t)p >> 4 ^ n);
}

/* Swap a secret with the hand-off array: frees land in other threads. */
static unsigned char *swap_handoff(unsigned char *p, size_t *len, unsigned *seed)
{
	int k = rand_r(seed) % HANDOFF;
	unsigned char *q;
	size_t qlen;

	pthread_mutex_lock(&handoff.lock);
	q = handoff.p[k];
	qlen = handoff.len[k];
	handoff.p[k] = p;
	handoff.len[k] = *len;
	pthread_mutex_unlock(&handoff.lock);
	*len = qlen;
	return q;
}

static void *stress(void *arg)
{
	unsigned seed = (uintptr_t)arg;
	unsigned char *live[LIVE] = { 0 };
	size_t len[LIVE] = { 0 };
	long bad = 0;
	int i;

	for (i = 0; i < 40000; i++) {
		int k = rand_r(&seed) % LIVE;

		if (live[k]) {
			bad += secbuf_size(live[k]) != len[k];
			bad += sbt_differs(live[k], len[k], fill_of(live[k], len[k]));
			if (rand_r(&seed) % 4 == 0) {
				live[k] = swap_handoff(live[k], &len[k], &seed);
				continue;
			}
			secbuf_free(live[k]);
			live[k] = NULL;
			continue;
		}
		len[k] = 1 + rand_r(&seed) % SECBUF_PACKED_MAX;
		live[k] = secbuf_alloc_flags(len[k], packed_flags());
		if (!live[k]) {
			bad++;
			continue;
		}
		memset(live[k], fill_of(live[k], len[k]), len[k]);
	}
	for (i = 0; i < LIVE; i++) {
		if (live[i])
			bad += sbt_differs(live[i], len[i], fill_of(live[i], len[i]));
		secbuf_free(live[i]);
	}
	return (void *)bad;
}

static long run_threads(void *(*fn)(void *))
{
	pthread_t t[THREADS];
	void *bad;
	long total = 0;
	int i;

	for (i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, fn, (void *)(uintptr_t)(i + 1)), 0);
	for (i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(t[i], &bad), 0);
		total += (long)bad;
	}
	return total;
}

/* All sizes at once, a quarter of the frees in another thread than the allocation. */
START_TEST(packed_threads_stress_cross_free)
{
	int i;

	sbt_need_method();
	ck_assert_int_eq(run_threads(stress), 0);
	for (i = 0; i < HANDOFF; i++) {
		if (handoff.p[i])
			ck_assert(!sbt_differs(handoff.p[i], handoff.len[i],
					      fill_of(handoff.p[i], handoff.len[i])));
		secbuf_free(handoff.p[i]);
		handoff.p[i] = NULL;
	}
}
END_TEST

/* 20,000 secrets in a thread, all freed: at its exit, its slabs go. */
static void *fill_and_free(void *arg)
{
	enum { N = 20000 };
	unsigned char **p = calloc(N, sizeof(*p));
	long i, bad = 0;

	(void)arg;
	if (!p)
		return (void *)1;
	for (i = 0; i < N; i++) {
		p[i] = secbuf_alloc_flags(1 + i % 64, packed_flags());
		bad += !p[i];
	}
	for (i = 0; i < N; i++)
		secbuf_free(p[i]);
	free(p);
	return (void *)bad;
}

START_TEST(packed_empty_slabs_unmapped)
{
	long vmlck0, vmlck1;
	int lines0, lines1;
	pthread_t t;
	void *bad;

	sbt_need_method();
	sbt_need_no_valgrind("valgrind maps memory for its threads as it likes");
	/* Once, for what stays: the thread stack cache, the metadata arena. */
	ck_assert_int_eq(pthread_create(&t, NULL, fill_and_free, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &bad), 0);
	lines0 = sbt_maps_lines();
	vmlck0 = sbt_vmlck_kb();
	ck_assert_int_eq(pthread_create(&t, NULL, fill_and_free, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &bad), 0);
	ck_assert_ptr_null(bad);
	lines1 = sbt_maps_lines();
	vmlck1 = sbt_vmlck_kb();
	printf("# REPORT: 20000 packed secrets made and freed in a thread: %+d mappings, VmLck "
	       "%+ld kB after it exits\n", lines1 - lines0, vmlck1 - vmlck0);
	if (!sbt_under_asan())
		ck_assert_int_eq(lines1, lines0);
	ck_assert_int_eq(vmlck1, vmlck0);
}
END_TEST

/* Two threads free one secret at the same moment: one of them must abort. */
static struct {
	pthread_barrier_t go;
	unsigned char *p;
} twice;

static void *free_it(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&twice.go);
	secbuf_free(twice.p);
	pthread_barrier_wait(&twice.go);
	return NULL;
}

static void concurrent_double_frees(void *arg)
{
	pthread_t t;
	int i;

	(void)arg;
	if (pthread_barrier_init(&twice.go, NULL, 2) || pthread_create(&t, NULL, free_it, NULL))
		_exit(2);
	for (i = 0; i < 100000; i++) {
		twice.p = secbuf_alloc_flags(32, packed_flags());
		pthread_barrier_wait(&twice.go);
		secbuf_free(twice.p);
		pthread_barrier_wait(&twice.go);
	}
	_exit(3);	/* a double free got through */
}

START_TEST(packed_concurrent_double_free_aborts)
{
	char msg[512];
	int st;

	sbt_need_method();
	st = sbt_child(concurrent_double_frees, NULL, msg, sizeof(msg));
	ck_assert_msg(sbt_signalled(st, SIGABRT) && strstr(msg, "double free"),
		      "status %#x, stderr: %s", st, msg);
}
END_TEST

/* ---- fork ---- */

static void child_reads_zeros(void *arg)
{
	unsigned char **p = arg;
	int i, k;

	for (i = 0; i < 4; i++)
		for (k = 0; k < 32; k++)
			if (p[i][k])
				_exit(1);
	_exit(0);
}

START_TEST(packed_fork_child_sees_zeros)
{
	unsigned char *p[4];
	char msg[256];
	int i;

	sbt_need_method();
	for (i = 0; i < 4; i++) {
		p[i] = secbuf_alloc_flags(32, packed_flags());
		ck_assert_ptr_nonnull(p[i]);
		memset(p[i], 0xa5, 32);
	}
	ck_assert(sbt_exited_ok(sbt_child(child_reads_zeros, p, msg, sizeof(msg))));
	for (i = 0; i < 4; i++) {
		ck_assert_uint_eq(p[i][31], 0xa5);
		secbuf_free(p[i]);
	}
}
END_TEST

enum inherited_use { USE_FREE, USE_SIZE, USE_STAT, USE_PROTECT };

struct inherited {
	unsigned char *p;
	enum inherited_use use;
};

static void use_inherited(void *arg)
{
	struct inherited *in = arg;
	struct secbuf_stat st;

	/* The child's own secrets work; the parent's abort. */
	secbuf_free(secbuf_alloc_flags(32, packed_flags()));
	switch (in->use) {
	case USE_FREE:
		secbuf_free(in->p);
		break;
	case USE_SIZE:
		(void)secbuf_size(in->p);
		break;
	case USE_STAT:
		secbuf_stat(in->p, &st);
		break;
	case USE_PROTECT:
		secbuf_protect(in->p, SECBUF_READONLY);
		break;
	}
	_exit(0);
}

START_TEST(packed_fork_inherited_secret_aborts)
{
	char fails[1024] = "";
	struct inherited in;

	sbt_need_method();
	in.p = secbuf_alloc_flags(32, packed_flags());
	ck_assert_ptr_nonnull(in.p);
	for (in.use = USE_FREE; in.use <= USE_PROTECT; in.use++) {
		char msg[512];
		int st = sbt_child(use_inherited, &in, msg, sizeof(msg));

		if (!sbt_signalled(st, SIGABRT) ||
		    !strstr(msg, "allocated by a parent process before fork()"))
			sbt_note(fails, sizeof(fails), "use %d: status %#x, stderr: %s", in.use, st,
				 msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
	secbuf_free(in.p);
}
END_TEST

static void *churn_packed(void *arg)
{
	unsigned seed = (uintptr_t)arg;
	unsigned char *keep[16] = { 0 };
	int k;

	while (keep_churning()) {
		size_t n = 1 + rand_r(&seed) % SECBUF_PACKED_MAX;

		k = rand_r(&seed) % 16;
		secbuf_free(keep[k]);
		keep[k] = secbuf_alloc_flags(n, packed_flags());
		if (!keep[k])
			return (void *)1;
		memset(keep[k], 0x5a, n);
	}
	for (k = 0; k < 16; k++)
		secbuf_free(keep[k]);
	return NULL;
}

static int packed_in_child(void)
{
	unsigned char *p[100];
	int k;

	for (k = 0; k < 100; k++) {
		p[k] = secbuf_alloc_flags(1 + k, packed_flags());
		if (!p[k])
			return 2;
		memset(p[k], 1, 1 + k);
	}
	for (k = 0; k < 100; k++)
		secbuf_free(p[k]);
	return 0;
}

/* fork() while three threads allocate and free packed secrets: no child deadlocks. */
START_TEST(packed_fork_while_threads_allocate)
{
	sbt_need_method();
	fork_while_churning(churn_packed, packed_in_child);
}
END_TEST

const struct sbt_test packed_thread_tests[] = {
	SBT_SLOW(packed_threads_stress_cross_free),
	SBT(packed_empty_slabs_unmapped),
	SBT(packed_concurrent_double_free_aborts),
	SBT(packed_fork_child_sees_zeros),
	SBT(packed_fork_inherited_secret_aborts),
	SBT_SLOW(packed_fork_while_threads_allocate),
	SBT_END,
};
