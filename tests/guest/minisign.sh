#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# The libsodium drop-in with a program nobody here wrote: Debian's minisign,
# unmodified and dynamically linked, under secbuf-run.  Two key pairs, one
# per run: "secbuf" (the default lock method) and "none" (SECBUF_LOCK=none,
# the negative control).  Each run makes a key pair without a password
# (minisign -G -W), then signs a FIFO (minisign -S), which holds the process
# with its secret key loaded until the message is written.  While both are
# held inside a cgroup with a small memory.max, secbuf-audit checks their
# [anon:secbuf] pages, memory pressure pushes what can go to swap, and the
# audit runs again; then the messages are written and minisign -V verifies
# both signatures.  The secret keys' seeds go out as "# KEEP:" markers:
# qemu/scan-swap must find the control's in the swap image and not
# the locked one's.
# Env: MINISIGN_MEMMAX (memory.max, default 16M), MINISIGN_PRESSURE_MB (96).
# shellcheck source=../lib/tap.sh
. tap.sh
memmax=${MINISIGN_MEMMAX:-16M}
pressure=${MINISIGN_PRESSURE_MB:-96}
cg=/sys/fs/cgroup/secbuf-minisign
work=$(mktemp -d /tmp/minisign.XXXXXX)
# Run a command inside the cgroup: sh enters it, then execs the command
# (and secbuf-run execs minisign), so $! is minisign's pid.
incg='echo $$ >'"$cg"'/cgroup.procs && exec "$@"'
keep() { echo "# KEEP: $*"; }
pids='' pid=''

finish() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rmdir "$cg" 2>/dev/null
	rm -rf "$work"
	tap_done
}

# The 32-byte Ed25519 seed of a password-less minisign secret key file:
# after the 2+2+2 algorithm bytes, the 32-byte salt, the 8+8 KDF limits
# and the 8-byte key id, the 64-byte secret key starts with it.
seed() { sed -n 2p "$1" | base64 -d | od -An -v -tx1 -j62 -N32 | tr -d ' \n'; }

# start RUN [ENV...]: keys for RUN, then minisign -S held on a FIFO, in the cgroup.
start() {
	run=$1; shift
	d=$work/$run
	mkdir -p "$d"
	# Redirections inside: on ok itself they would swallow its TAP line.
	ok "$run: secbuf-run minisign -G -W makes a key pair" sh -c \
		'd=$1; shift; env "$@" secbuf-run minisign -G -W -p "$d/key.pub" -s "$d/key.sec" \
			>/dev/null 2>"$d/keygen.err"' sh "$d" "$@"
	s=$(seed "$d/key.sec")
	ok "$run: the secret key's seed is 32 bytes" test ${#s} -eq 64
	keep "minisign-$run $run-seed $s"
	mkfifo "$d/msg"
	env "$@" sh -c "$incg" sh secbuf-run minisign -S -s "$d/key.sec" -m "$d/msg" \
		-x "$d/msg.minisig" >/dev/null 2>"$d/sign.err" &
	eval "pid_$run=$!"
	pids="$pids $!"
}

# The process has its key loaded once the audit finds its secret mapping;
# a second more lets it decode the key and block opening the FIFO.
# shellcheck disable=SC2317 # run through ok
loaded() {
	for _ in $(seq 300); do
		secbuf-audit "$1" >/dev/null 2>&1
		if [ $? -ne 3 ] && [ "$(readlink "/proc/$1/exe")" = /usr/bin/minisign ]; then
			sleep 1
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# audit RUN: secbuf-audit's summary of the run's minisign, as "KEY VALUE" lines.
audit() {
	secbuf-audit --json "$1" >"$work/audit.json"
	echo "exit $?"
	sed 's/.*"summary":{//; s/}.*//; s/"//g; s/,/\n/g; s/:/ /g' "$work/audit.json"
}
field() { sed -n "s/^$2 //p" "$1"; }

echo "TAP version 13"
ok "a swap device is active" grep -q '^/dev/vda' /proc/swaps
ok "minisign is the dynamically linked Debian program" sh -c \
	'minisign -v 2>&1 | grep -q "^minisign" && [ -x /lib64/ld-linux-x86-64.so.2 ]'
mkdir -p "$cg" && echo "$memmax" >"$cg/memory.max"
ok "cgroup $cg with memory.max $memmax" test "$(cat "$cg/memory.max")" -gt 0
[ "$tap_failed" = 0 ] || finish

keep "expect minisign-secbuf absent"
keep "expect minisign-none present"
start secbuf
start none SECBUF_LOCK=none
# shellcheck disable=SC2154 # set by start through eval
ok "secbuf: minisign -S holds its secret key in libsecbuf memory" loaded "$pid_secbuf"
# shellcheck disable=SC2154
ok "none: minisign -S holds its secret key in libsecbuf memory" loaded "$pid_none"
ok "none: the drop-in warned once that the memory is not locked" \
	test "$(grep -c 'NOT locked' "$work/none/sign.err")" -eq 1
ok "secbuf: no warning" test ! -s "$work/secbuf/sign.err"
[ "$tap_failed" = 0 ] || { cat "$work"/*/*.err | sed 's/^/# /'; finish; }

secbuf-audit "$pid_secbuf" | sed 's/^/# /'
audit "$pid_secbuf" >"$work/before"
ok "secbuf: secbuf-audit is clean before the pressure" test "$(field "$work/before" exit)" = 0

ok "memory pressure: $pressure MiB touched under memory.max $memmax" \
	sh -c "$incg" sh secbuf-pressure "$pressure"
[ -w "$cg/memory.reclaim" ] && echo 64M >"$cg/memory.reclaim" 2>/dev/null

secbuf-audit "$pid_secbuf" | sed 's/^/# /'
audit "$pid_secbuf" >"$work/after"
locked=$(field "$work/after" locked) swapped=$(field "$work/after" swapped)
maps=$(field "$work/after" mappings)
ok "secbuf: secbuf-audit is clean after the pressure ($maps mappings, $locked pages locked, $swapped swapped)" \
	test "$(field "$work/after" exit)" = 0 -a "${locked:-0}" -gt 0 -a "${swapped:-1}" = 0
secbuf-audit "$pid_none" | sed 's/^/# /'
audit "$pid_none" >"$work/none.audit"
nswapped=$(field "$work/none.audit" swapped)
ok "none: secbuf-audit flags the unlocked key ($nswapped pages swapped, exit 1)" \
	test "$(field "$work/none.audit" exit)" = 1 -a "${nswapped:-0}" -gt 0
echo "# REPORT: minisign under secbuf-run: $locked secret pages locked, $swapped swapped;" \
	"SECBUF_LOCK=none: $nswapped swapped (memory.max $memmax, $pressure MiB of pressure)"
keep "summary minisign|secbuf-run|minisign-secbuf"
keep "summary minisign|none|minisign-none"

for run in secbuf none; do
	d=$work/$run
	echo "a message signed by minisign under secbuf-run ($run)" >"$d/message"
	cat "$d/message" >"$d/msg"
	eval "pid=\$pid_$run"
	wait "$pid"
	ok "$run: minisign -S finished signing (exit 0)" test $? -eq 0
	ok "$run: minisign -V verifies the signature" sh -c \
		'minisign -V -p "$1/key.pub" -m "$1/message" -x "$1/msg.minisig" >/dev/null' sh "$d"
done
pids=''
finish
