#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# trinity, Debian's system call fuzzer, on the memory-management calls, for
# a fixed time from a printed seed (kernel/debug-check.sh runs it on the
# debug kernels, whose console qemu/results.awk reads for splats).  As
# root (--dangerous): no RLIMIT_MEMLOCK, so mlockall() and mlock2() lock
# what they ask.  trinity cannot be told of munlock2() and munlockall2()
# without a change to its source, and it never fuzzes fork() and brk()
# (its "AVOID" list: it forks its own children all the time); lof-fuzz
# covers those.  Replay: the same seed, calls and children.  No socket
# fds (--disable-fds=sockets): they play no part in these calls, and on
# 6.1, stock or patched, trinity dies of SIGBUS while it makes them.
#
# usage: trinity-mm.sh [SEED [SECONDS]]
# shellcheck source=../lib/tap.sh
. tap.sh
seed=${1:-1}
secs=${2:-600}
calls="mmap munmap mremap mprotect madvise mlock mlock2 munlock mlockall munlockall remap_file_pages"
args=""
for c in $calls; do args="$args -c $c"; done
work=$(mktemp -d /tmp/trinity.XXXXXX)
cd "$work" || exit 1
echo "# trinity -s $seed -C 2 --disable-fds=sockets for $secs s on: $calls"
# SIGINT: trinity stops its children and prints its count
# shellcheck disable=SC2086 # one word per option
timeout -s INT "$secs" trinity --dangerous -q -l off -s "$seed" -C 2 --disable-fds=sockets $args >out.txt 2>&1
rc=$?
sed 's/^/# /' out.txt | tail -n 20
ran=$(sed -n 's/.*Ran \([0-9]*\) syscalls.*/\1/p' out.txt | tail -n 1)
echo "# REPORT: trinity seed $seed, $secs s: ${ran:-no} syscalls"
# Stopped by the timeout's SIGINT, which is the plan (busybox timeout
# returns trinity's own status, 0, so the log says how it ended); any
# other end (a taint trinity saw, a crash) came early
ran_to_time() {
	grep -q 'Bailing main loop because ctrl-c' out.txt && [ "${ran:-0}" -gt 0 ]
}
ok "trinity ran $secs s from seed $seed (exit $rc) and issued ${ran:-no} syscalls" ran_to_time
tap_done
