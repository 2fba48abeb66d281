/*
 * secbuf_totals(): the whole process's secrets, guarded and packed, their
 * bytes and their locked pages, back to where they were once freed.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "secbuf.h"
#include "tests.h"

START_TEST(totals_count_every_secret)
{
	struct secbuf_totals before, during, after;
	unsigned flags = sbt_flags(0);
	size_t page = sbt_page();
	unsigned char *g, *p1, *p2;

	sbt_need_method();
	ck_assert_int_eq(secbuf_totals(&before), 0);
	g = secbuf_alloc_flags(3 * page, flags);
	p1 = secbuf_alloc_flags(24, packed_flags());
	p2 = secbuf_alloc_flags(100, packed_flags());
	ck_assert_msg(g && p1 && p2, "alloc: %s", strerror(errno));
	g[0] = g[2 * page] = 1;
	memset(p1, 1, 24);
	ck_assert_int_eq(secbuf_totals(&during), 0);
	ck_assert_uint_eq(during.secrets, before.secrets + 3);
	ck_assert_uint_eq(during.bytes, before.bytes + 3 * page + 24 + 100);
	ck_assert_uint_ge(during.mapped_bytes, before.mapped_bytes + 3 * page);
	/* The two touched pages of g are locked on fault, where the method locks. */
	if (sbt_locks(flags))
		ck_assert_uint_ge(during.locked_pages, before.locked_pages + 2);
	secbuf_free(g);
	secbuf_free(p1);
	secbuf_free(p2);
	ck_assert_int_eq(secbuf_totals(&after), 0);
	ck_assert_uint_eq(after.secrets, before.secrets);
	ck_assert_uint_eq(after.bytes, before.bytes);
	ck_assert_uint_le(after.mapped_bytes, during.mapped_bytes - 3 * page);
}
END_TEST

/*
 * Counted per thread and summed on read: a secret made by one thread and
 * freed by another, by threads that have exited, and by more threads at
 * once than there are per-thread tallies (256), still sums to the truth.
 */
#define MANY_THREADS 300

struct handoff {
	void *secret;
	pthread_barrier_t *all_made;
	pthread_barrier_t *counted;
};

static void *make_then_wait(void *arg)
{
	struct handoff *h = arg;

	h->secret = secbuf_alloc_flags(40, packed_flags());
	pthread_barrier_wait(h->all_made);
	pthread_barrier_wait(h->counted);
	return NULL;
}

static void *free_one(void *arg)
{
	secbuf_free(arg);
	return NULL;
}

START_TEST(totals_sum_across_threads)
{
	static struct handoff h[MANY_THREADS];
	static pthread_t tid[MANY_THREADS];
	pthread_barrier_t all_made, counted;
	struct secbuf_totals before, during, after;
	size_t made = 0;

	sbt_need_method();
	ck_assert_int_eq(secbuf_totals(&before), 0);
	ck_assert_int_eq(pthread_barrier_init(&all_made, NULL, MANY_THREADS + 1), 0);
	ck_assert_int_eq(pthread_barrier_init(&counted, NULL, MANY_THREADS + 1), 0);
	for (int i = 0; i < MANY_THREADS; i++) {
		h[i] = (struct handoff){ NULL, &all_made, &counted };
		ck_assert_int_eq(pthread_create(&tid[i], NULL, make_then_wait, &h[i]), 0);
	}
	pthread_barrier_wait(&all_made);
	for (int i = 0; i < MANY_THREADS; i++)
		made += h[i].secret != NULL;
	ck_assert_uint_eq(made, MANY_THREADS);
	/* Every thread alive at once, more of them than tallies. */
	ck_assert_int_eq(secbuf_totals(&during), 0);
	pthread_barrier_wait(&counted);
	for (int i = 0; i < MANY_THREADS; i++)
		pthread_join(tid[i], NULL);
	ck_assert_uint_eq(during.secrets, before.secrets + MANY_THREADS);
	ck_assert_uint_eq(during.bytes, before.bytes + 40 * MANY_THREADS);
	/* The makers have exited; half the secrets are freed here, half by new threads. */
	for (int i = 0; i < MANY_THREADS; i += 2) {
		secbuf_free(h[i].secret);
		ck_assert_int_eq(pthread_create(&tid[i], NULL, free_one, h[i + 1].secret), 0);
		pthread_join(tid[i], NULL);
	}
	ck_assert_int_eq(secbuf_totals(&after), 0);
	ck_assert_uint_eq(after.secrets, before.secrets);
	ck_assert_uint_eq(after.bytes, before.bytes);
	pthread_barrier_destroy(&all_made);
	pthread_barrier_destroy(&counted);
}
END_TEST

/* A forked child starts at zero, and counts its own secrets from there. */
START_TEST(totals_fork_child_counts_from_zero)
{
	unsigned char *p = secbuf_alloc_flags(32, packed_flags());
	pid_t pid;
	int status;

	sbt_need_method();
	ck_assert_ptr_nonnull(p);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct secbuf_totals t0, t1;
		void *q;

		if (secbuf_totals(&t0) != 0 || t0.secrets != 0 || t0.bytes != 0)
			_exit(1);
		q = secbuf_alloc_flags(48, packed_flags());
		if (!q || secbuf_totals(&t1) != 0 || t1.secrets != 1 || t1.bytes != 48)
			_exit(2);
		secbuf_free(q);
		_exit(secbuf_totals(&t1) == 0 && t1.secrets == 0 && t1.bytes == 0 ? 0 : 3);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the child's totals: status 0x%x (1: not zero at start, 2: not its own "
		      "secret, 3: not back to zero)",
		      status);
	secbuf_free(p);
}
END_TEST

START_TEST(totals_null_is_einval)
{
	errno = 0;
	ck_assert_int_eq(secbuf_totals(NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

const struct sbt_test totals_tests[] = {
	SBT(totals_count_every_secret),
	SBT(totals_sum_across_threads),
	SBT(totals_fork_child_counts_from_zero),
	SBT(totals_null_is_einval),
	SBT_END,
};
