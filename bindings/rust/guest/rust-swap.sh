#!/bin/sh
# The Rust binding's swap proof in the guest: rust-swap-proof runs in a
# cgroup with a small memory.max (its pressure pushes the group to swap),
# and qemu/scan-swap then searches the swap image on the host for its keys.
# shellcheck source=../../../tests/lib/tap.sh
. tap.sh
cg=/sys/fs/cgroup/rust-swap
memmax=32M
ok "cgroup $cg with memory.max $memmax" sh -c "mkdir -p $cg && echo $memmax >$cg/memory.max"
# sh enters the group, then execs the proof: all its memory is charged there.
ok "rust-swap-proof: keys by from_reader and by Vec under pressure" \
	sh -c "echo \$\$ >$cg/cgroup.procs && exec rust-swap-proof"
tap_done
