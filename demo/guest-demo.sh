#!/bin/sh
# secbuf-demo: the guest half of `make demo` (installed as /usr/local/bin/secbuf-demo).
# Runs secbufd with keys whose bytes it knows, two controls (a second secbufd
# with SECBUF_LOCK=none, and a process holding secrets in plain malloc
# memory), and memory pressure inside a cgroup
# with a small memory.max; then audits the daemon.  The secrets to look for
# in the swap device are printed as "# KEEP: secret|control NAME HEX", after
# "# KEEP: expect secret absent" and "expect control present", for the host's
# scan (qemu/scan-swap), the figures as "# KEEP: stat KEY VALUE".
# Env: DEMO_MEMMAX (cgroup memory.max, default 24M), DEMO_PRESSURE_MB (96).
memmax=${DEMO_MEMMAX:-24M}
pressure=${DEMO_PRESSURE_MB:-96}
cg=/sys/fs/cgroup/secbuf-demo
export SECBUFD_SOCKET=/run/secbufd.sock
work=$(mktemp -d /tmp/secbuf-demo.XXXXXX)
daemon='' control='' unlocked=''
# shellcheck source=../tests/lib/tap.sh
. "$(dirname "$0")/tap.sh"	# installed beside it (tests/guest/Makefile)
# Run a command inside the memory-limited cgroup: sh enters it, then execs
# the command, so that $! of "sh -c "$incg" sh CMD &" is the command's pid.
incg='echo $$ >'"$cg"'/cgroup.procs && exec "$@"'
hex32() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
keep() { echo "# KEEP: $*"; }
finish() {
	[ -n "$control" ] && kill "$control" 2>/dev/null
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	[ -n "$unlocked" ] && kill "$unlocked" 2>/dev/null
	wait 2>/dev/null
	rmdir "$cg" 2>/dev/null
	rm -rf "$work"
	tap_done
}

echo "TAP version 13"
ok "a swap device is active" grep -q '^/dev/vda' /proc/swaps
mkdir -p "$cg" && echo "$memmax" >"$cg/memory.max"
ok "cgroup $cg with memory.max $memmax" test "$(cat "$cg/memory.max")" -gt 0

# 1. The daemon, strict by default: it refuses to run with unlocked secrets.
# Its keys stay in the lock tier (--secret-memory=off): this is the proof
# of locking under pressure; the secret tier has its own (proof-secret).
sh -c "$incg" sh secbufd --secret-memory=off 2>"$work/secbufd.log" &
daemon=$!
for _ in $(seq 200); do secbufctl list >/dev/null 2>&1 && break; sleep 0.1; done
ok "secbufd is up inside the cgroup, its memory locked" sh -c "secbufctl list >/dev/null &&
	grep -q 'memory locked with' $work/secbufd.log"
[ "$tap_failed" = 0 ] || { sed 's/^/# /' "$work/secbufd.log"; finish; }
method=$(secbufctl stats | sed -n 's/^# lock method \([a-z0-9]*\),.*/\1/p')
keep "stat method $method"
keep "stat kernel $(uname -r)"

# 2. Keys: imported ones whose bytes the host will look for, and generated ones.
keep "expect secret absent"
keep "expect control present"
for name in sign1 sign2; do
	s=$(hex32)
	ok "import ed25519 $name" sh -c "echo $s | secbufctl import ed25519 $name >/dev/null"
	keep "secret $name $s"
done
for name in box1 box2; do
	s=$(hex32)
	ok "import x25519 $name" sh -c "echo $s | secbufctl import x25519 $name >/dev/null"
	keep "secret $name $s"
done
ok "keygen ed25519 gen1" sh -c 'secbufctl keygen ed25519 gen1 >/dev/null'

# Control 1: the same daemon with locking switched off (SECBUF_LOCK=none),
# which it only accepts with --allow-unlocked.
SECBUF_LOCK=none SECBUFD_SOCKET=/run/secbufd-unlocked.sock \
	sh -c "$incg" sh secbufd --allow-unlocked --secret-memory=off 2>"$work/unlocked.log" &
unlocked=$!
for _ in $(seq 200); do SECBUFD_SOCKET=/run/secbufd-unlocked.sock secbufctl list >/dev/null 2>&1 && break; sleep 0.1; done
ok "the SECBUF_LOCK=none control runs (--allow-unlocked) and says UNLOCKED" grep -q 'UNLOCKED' "$work/unlocked.log"
for spec in ed25519:usign1 x25519:ubox1; do
	s=$(hex32)
	ok "import ${spec%%:*} ${spec#*:} into the unlocked secbufd" sh -c \
		"echo $s | SECBUFD_SOCKET=/run/secbufd-unlocked.sock secbufctl import ${spec%%:*} ${spec#*:} >/dev/null"
	keep "control unlocked-${spec#*:} $s"
done

# Control 2: four other secrets of the same size in plain malloc memory.
: >"$work/control.in"
for name in ctl1 ctl2 ctl3 ctl4; do
	s=$(hex32)
	echo "$s" >>"$work/control.in"
	keep "control $name $s"
done
sh -c "$incg" sh secbuf-control <"$work/control.in" >"$work/control.out" &
control=$!
for _ in $(seq 100); do grep -q ready "$work/control.out" && break; sleep 0.1; done
ok "the control process holds 4 secrets in malloc memory" grep -q 'ready 4' "$work/control.out"
rm -f "$work/control.in"

# 3. Work through secbufctl: sign/verify and seal/open a 4 MiB message.
dd if=/dev/urandom of="$work/msg" bs=1M count=4 2>/dev/null
ok "sign a 4 MiB file" secbufctl sign sign1 "$work/msg" "$work/msg.sig"
ok "verify it" sh -c "secbufctl verify sign1 $work/msg $work/msg.sig >/dev/null"
ok "seal it" secbufctl seal box1 "$work/msg" "$work/msg.box"
ok "open it: the same bytes" sh -c "secbufctl open box1 $work/msg.box $work/msg.out && cmp -s $work/msg $work/msg.out"
rm -f "$work/msg.out"
secbufctl stats | sed 's/^/# /'

# 4. Memory pressure inside the cgroup pushes evictable pages to swap.
ok "memory pressure: $pressure MiB touched under memory.max $memmax" sh -c "$incg" sh secbuf-pressure "$pressure"
[ -w "$cg/memory.reclaim" ] && echo 64M >"$cg/memory.reclaim" 2>/dev/null
ctl_swap=$(awk '/^VmSwap:/ {print $2}' "/proc/$control/status")
ok "the control was pushed to swap (VmSwap ${ctl_swap:-?} kB)" test "${ctl_swap:-0}" -gt 0
d_swap=$(awk '/^VmSwap:/ {print $2}' "/proc/$daemon/status")
echo "# secbufd VmSwap ${d_swap:-?} kB (its ordinary, non-secret pages may go)"

# The audit catches the unlocked daemon.
secbuf-audit "$unlocked" | sed 's/^/# /'
secbuf-audit "$unlocked" >"$work/audit-unlocked.txt"
ok "secbuf-audit flags the SECBUF_LOCK=none secbufd (exit 1)" test $? -eq 1
ok "the audit names the control's lock method none, and VmFlags agree" \
	grep -Eq '^lock method: (.*, )?none on [0-9]+ mappings? \(named by libsecbuf\).*: ok$' "$work/audit-unlocked.txt"

# 5. The audit: every [anon:secbuf] page of the daemon resident, locked, unswapped.
secbuf-audit "$daemon" >"$work/audit.txt"
sed 's/^/# /' "$work/audit.txt"
# The library's word (the mappings' names) against its own report and the
# kernel's VmFlags: only the name tells MAP_LOCKONFAULT from mlock2.
ok "the audit names the daemon's lock method $method, and VmFlags agree" \
	grep -Eq "^lock method: (.*, )?$method on [0-9]+ mappings? \(named by libsecbuf\).*: ok\$" "$work/audit.txt"
secbuf-audit --json "$daemon" >"$work/audit.json"
arc=$?
ok "secbuf-audit on secbufd exits 0 (clean)" test $arc -eq 0
sum=$(sed 's/.*"summary":{//' "$work/audit.json")
num() { echo "$sum" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
maps=$(num mappings) pages=$(num pages) resident=$(num resident) locked=$(num locked) swapped=$(num swapped)
# The working buffer, libsecbuf's key page, the page keys are opened with
# and the sealed keys' prekey (locked, or memfd_secret memory): the keys
# themselves are sealed, in ordinary memory, and have no mapping.
ok "the audit found the daemon's secbuf mappings ($maps)" test "${maps:-0}" -ge 3
keep "stat secret_mappings $maps"
keep "stat secret_pages_capacity $pages"
keep "stat secret_pages_resident $resident"
keep "stat secret_pages_locked $locked"
keep "stat secret_pages_swapped $swapped"
keep "stat control_swap_kB $ctl_swap"
keep "stat memory_max $memmax"
echo "# REPORT: lock method $method; secret pages locked $locked of $pages capacity; swapped $swapped"
echo "# REPORT: control process VmSwap ${ctl_swap:-?} kB after $pressure MiB of pressure under memory.max $memmax"

# 6. The keys still work, and SIGTERM wipes them and exits 0.
ok "after the pressure the keys still sign" sh -c "secbufctl sign sign2 $work/msg $work/msg.sig2 &&
	secbufctl verify sign2 $work/msg $work/msg.sig2 >/dev/null"
kill -TERM "$daemon"
wait "$daemon"
ok "SIGTERM: secbufd exits 0" test $? -eq 0
daemon=
ok "secbufd said it wiped its keys" grep -q 'keys wiped' "$work/secbufd.log"
finish
