#!/bin/sh
# Smoke test: the guest offers what the real tests rely on.
n=0 failed=0
check() {
	n=$((n + 1))
	desc=$1; shift
	if "$@" >/dev/null 2>&1; then echo "ok $n $desc"; else echo "not ok $n $desc"; failed=1; fi
}

echo "TAP version 13"
echo "1..7"
check "/proc/kpageflags is readable" dd if=/proc/kpageflags of=/dev/null bs=8 count=1
check "/proc/self/pagemap is readable" dd if=/proc/self/pagemap of=/dev/null bs=8 count=1
check "a swap device is active" grep -q '^/dev/vda' /proc/swaps
check "cgroup v2 offers the memory controller" grep -qw memory /sys/fs/cgroup/cgroup.subtree_control
check "nobody exists and runas drops to it" sh -c '[ "$(runas 65534 id -u)" = 65534 ]'
check "smaps reports VmFlags" grep -q '^VmFlags:' /proc/self/smaps
check "booted with secretmem.enable=1" grep -q 'secretmem.enable=1' /proc/cmdline
echo "# REPORT: $(grep -c . /proc/swaps) line(s) in /proc/swaps; MemTotal $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
exit $failed
