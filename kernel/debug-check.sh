#!/bin/bash
# The series under the kernel's own checkers: boot the patched debug kernel
# of each version (kernel/build.sh patched-debug: KASAN, lockdep,
# DEBUG_VM, see kernel/config/debug/) and run on it
#   - the kernel suite: the series' selftests, upstream's mlock tests and
#     the ABI twins, 64-bit and i386;
#   - the libsecbuf suite, the proofs without swap, the swap proof of
#     MAP_LOCKONFAULT and the secret tier's;
#   - lof-fuzz, the model-checked fuzzer of the new calls, 10 minutes
#     (7 as root, 3 as nobody under a small RLIMIT_MEMLOCK);
#   - trinity on the memory-management calls, 10 minutes.
# Every run fails on a splat in the console (qemu/results.awk counts them);
# the logs stay in build/logs/SUITE@debug-KVER/.  Then it writes the table
# of kernel/debug-results/KVER.md.  Not part of make check: 20 min of fuzzing
# per version plus the suites, under TCG.
#
# usage: kernel/debug-check.sh [KVER...]    (default: 6.1 6.12)
# env DEBUG_SUITES="kernel lof-fuzz": run only these suites (the table
#     keeps the other suites' rows of its last full run)
set -euo pipefail

# shellcheck source=kernel/common.sh
. "$(dirname "$0")/common.sh"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(6.1 6.12)
# SUITE TIMEOUT [run-guest options]: timeouts generous, debug kernels run slower
# (check's per-test timeouts too).  The library's stress tests skip
# (SBT_QUICK): they make tens of thousands of VMAs, and DEBUG_VM_MAPLE_TREE
# checks the whole tree at every change, so one took over 20 minutes.
suites=(
	"kernel 3600 --swap 64M"
	"libsecbuf 5400 --mem 2G --env CK_TIMEOUT_MULTIPLIER=10 --env SBT_QUICK=1"
	"proof 2400 --mem 1G"
	"proof-swap-maplockonfault 2400 --swap 256M --post qemu/scan-swap"
	"proof-secret 1200 --mem 512M"
	"lof-fuzz 1500"
	"trinity 1500"
)
wanted=${DEBUG_SUITES:-}

# wanted_suite SUITE: whether DEBUG_SUITES (a list of whole names) has it
wanted_suite() { [ -z "$wanted" ] || [[ " $wanted " == *" $1 "* ]]; }

make -s -C "$top" guest-image >/dev/null
rc=0
for kver in "${versions[@]}"; do
	kver_select "$kver"
	kernel=patched-debug-$kver
	"$top/kernel/build.sh" "$kernel" >/dev/null
	out=$kernel_dir/debug-results/$kver.md
	rows=()
	for line in "${suites[@]}"; do
		read -r suite timeout opts <<<"$line"
		if ! wanted_suite "$suite"; then
			# a partial run keeps the row of the suite's last run
			row=$(grep -F "| $suite |" "$out" 2>/dev/null || true)
			[ -z "$row" ] || rows+=("$row")
			continue
		fi
		name=$suite@debug-$kver
		logs=$top/build/logs/$name
		t0=$SECONDS
		src=0
		# shellcheck disable=SC2086 # the options are words
		"$top/qemu/run-guest" --kernel "$kernel" --timeout "$timeout" $opts "$name" ||
			src=$?
		[ $src -eq 0 ] || rc=1
		counts=$(tail -n 1 "$logs/results.txt" 2>/dev/null || echo "no results")
		splats=$(cat "$logs/splats.txt" 2>/dev/null || echo "?")
		measured=$(sed 's/^[^:]*: //' "$logs/report.txt" 2>/dev/null | grep -E 'syscalls|steps' |
			paste -sd ';' - || true)
		rows+=("| $suite | $(date -u +%Y-%m-%d) | $(( (SECONDS - t0) / 60 )) min | $counts | $splats | ${measured:-} |")
	done
	mkdir -p "$(dirname "$out")"
	{
		echo "# Linux $kver, patched, debug kernel: results"
		echo
		echo "Written by kernel/debug-check.sh on $(date -u +%Y-%m-%d) from the series of"
		echo "kernel/patches/$kver ($(basename "$("$top/kernel/build.sh" "$kernel")")), under QEMU TCG."
		echo "Options (kernel/config/debug/): $(grep -h '^CONFIG_' "$kernel_dir"/config/debug/*.config |
			sed 's/=y$//; s/^CONFIG_//' | paste -sd ' ' -)."
		echo
		echo "| suite | run on | time | results | splats | measured |"
		echo "|---|---|---|---|---|---|"
		printf '%s\n' "${rows[@]}"
	} >"$out"
	echo "==> debug-check($kver): table in ${out#"$top"/}"
	cat "$out"
done
exit $rc
