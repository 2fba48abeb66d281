#!/bin/sh
# Smoke test: the guest offers what the real tests rely on.
# shellcheck source=../lib/tap.sh
. "$(dirname "$0")/tap.sh"
quiet() { "$@" >/dev/null 2>&1; }

echo "TAP version 13"
ok "/proc/kpageflags is readable" quiet dd if=/proc/kpageflags of=/dev/null bs=8 count=1
ok "/proc/self/pagemap is readable" quiet dd if=/proc/self/pagemap of=/dev/null bs=8 count=1
ok "a swap device is active" quiet grep -q '^/dev/vda' /proc/swaps
ok "cgroup v2 offers the memory controller" quiet grep -qw memory /sys/fs/cgroup/cgroup.subtree_control
ok "nobody exists and runas drops to it" quiet sh -c '[ "$(runas 65534 id -u)" = 65534 ]'
ok "smaps reports VmFlags" quiet grep -q '^VmFlags:' /proc/self/smaps
ok "booted with secretmem.enable=1" quiet grep -q 'secretmem.enable=1' /proc/cmdline
echo "# REPORT: $(grep -c . /proc/swaps) line(s) in /proc/swaps; MemTotal $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
tap_done
