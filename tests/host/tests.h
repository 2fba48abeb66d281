/*
 * The libsecbuf tests, one file per concern of the library; main.c lists
 * them.  Each test derives what it expects from the lock method in effect.
 */
#ifndef SECBUF_TESTS_H
#define SECBUF_TESTS_H

#include <stddef.h>
#include "harness.h"

#define MiB (1024UL * 1024)
#define KB(pages) ((long)((pages) * sbt_page() / 1024))

/* secbuf_alloc_flags(size, flags) must fail with err1 or err2, mapping nothing. */
void expect_alloc_fails(size_t size, unsigned flags, int err1, int err2);
/* SECBUF_PACKED and what makes a packed secret succeed under the method in effect. */
unsigned packed_flags(void);
/* Whether packed_flags() secrets are locked (mlock locks populated slabs). */
int packed_locks(void);
/* Run fn(arg) in a child whose stderr, printed as a "# REPORT:" line, says
 * what it found; fails the test unless it exits 0 (packed-tests.c). */
void run_reported(void (*fn)(void *), void *arg, const char *what);

/*
 * fork() 1000 times while three threads run churn((void *)seed) as long as
 * keep_churning(); each child runs in_child() under alarm(10) and must exit
 * with its return value 0.  Fails the test otherwise (thread-fork-tests.c).
 */
void fork_while_churning(void *(*churn)(void *), int (*in_child)(void));
int keep_churning(void);

extern const struct sbt_test alloc_tests[];	/* alloc-tests.c */
extern const struct sbt_test guard_tests[];	/* guard-tests.c */
extern const struct sbt_test lock_tests[];	/* lock-tests.c */
extern const struct sbt_test wipe_cost_tests[];	/* wipe-cost-tests.c */
extern const struct sbt_test thread_fork_tests[]; /* thread-fork-tests.c */
extern const struct sbt_test inject_tests[];	/* inject-tests.c */
extern const struct sbt_test probe_tests[];	/* probe-tests.c */
extern const struct sbt_test explain_tests[];	/* explain-tests.c */
extern const struct sbt_test totals_tests[];	/* totals-tests.c */
extern const struct sbt_test key_tests[];	/* key-tests.c */
extern const struct sbt_test packed_tests[];	/* packed-tests.c */
extern const struct sbt_test packed_slab_tests[];     /* packed-slab-tests.c */
extern const struct sbt_test packed_guard_tests[];    /* packed-guard-tests.c */
extern const struct sbt_test packed_lock_tests[];     /* packed-lock-tests.c */
extern const struct sbt_test packed_capacity_tests[]; /* packed-capacity-tests.c */
extern const struct sbt_test packed_thread_tests[]; /* packed-thread-tests.c */
extern const struct sbt_test purge_tests[];	    /* purge-tests.c */
extern const struct sbt_test harden_tests[];	    /* harden-tests.c */
extern const struct sbt_test burst_tests[];	    /* burst-tests.c */
extern const struct sbt_test secret_tests[];
extern const struct sbt_test inherit_tests[]; /* inherit-tests.c */

/* Modes run in a fresh process (see sbt_run_self). */
int bogus_env_main(void);	/* lock-tests.c */
int first_use_main(void);	/* thread-fork-tests.c */
int probe_check_main(void);	/* probe-tests.c */
int no_memlock_main(void);	/* probe-tests.c */
int explain_limit_main(void);	/* explain-tests.c */
int explain_budget_main(void);
int explain_sandbox_main(void);
int explain_no_kernel_main(void);
int explain_packed_main(void);
int explain_secret_limit_main(void);
int free_one_main(void);	/* guard-tests.c */
int check_on_exit_main(void);	/* purge-tests.c */
int busy_budget_main(void);	/* harden-tests.c */
int fork_signal_main(void);	/* harden-tests.c */
int name_refused_main(void);	/* harden-tests.c */
int no_mlock_main(void);	/* harden-tests.c */
int secret_memlock_main(void);	/* secret-tests.c */

#endif
