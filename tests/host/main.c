/* The libsecbuf test binary: every group, run once per lock method. */
#include "tests.h"

int main(int argc, char **argv)
{
	static const struct sbt_test *const groups[] = {
		/* clang-format off */
		lock_tests,
		probe_tests,
		explain_tests,
		totals_tests,
		alloc_tests,
		guard_tests,
		wipe_cost_tests,
		inject_tests,
		thread_fork_tests,
		key_tests,
		packed_tests,
		packed_slab_tests,
		packed_guard_tests,
		packed_lock_tests,
		packed_capacity_tests,
		packed_thread_tests,
		burst_tests,
		harden_tests,
		purge_tests,
		secret_tests,
		inherit_tests,
		NULL,
		/* clang-format on */
	};
	static const struct sbt_mode modes[] = {
		/* clang-format off */
		{ "--bogus-env", bogus_env_main },
		{ "--first-use", first_use_main },
		{ "--probe-check", probe_check_main },
		{ "--no-memlock", no_memlock_main },
		{ "--explain-limit", explain_limit_main },
		{ "--explain-budget", explain_budget_main },
		{ "--explain-sandbox", explain_sandbox_main },
		{ "--explain-no-kernel", explain_no_kernel_main },
		{ "--explain-packed", explain_packed_main },
		{ "--explain-secret-limit", explain_secret_limit_main },
		{ "--free-one", free_one_main },
		{ "--check-on-exit", check_on_exit_main },
		{ "--busy-budget", busy_budget_main },
		{ "--fork-signal", fork_signal_main },
		{ "--name-refused", name_refused_main },
		{ "--no-mlock", no_mlock_main },
		{ "--secret-memlock", secret_memlock_main },
		{ NULL, NULL },
		/* clang-format on */
	};

	return sbt_main(argc, argv, "libsecbuf", groups, modes);
}
