#!/bin/bash
# An X25519 private scalar left on the stack by ld.so's lazy binding, and
# secbuf-run's LD_BIND_NOW=1 against it.  x25519-spill, linked -z lazy,
# makes a key (in the drop-in's locked memory), does one derive and waits;
# its memory is then read as root (memscan, a masked needle).  After the
# derive the scalar is still in two vector registers (xmm3, xmm4), and the
# program's next first call of a function runs _dl_runtime_resolve_xsavec,
# which saves them to the stack: the control, the drop-in preloaded by
# hand without LD_BIND_NOW, must show that copy (or this test could not
# fail); the same with LD_BIND_NOW=1, and under secbuf-run, no copy outside
# locked, non-dumpable memory.  TAP and the closing line; run by
# make -C tests/host check-programs.
#
# usage: spill-programs.sh BUILD   (where bin/secbuf-run, lib/libsecbuf-openssl.so,
#        tests/memscan and tests/x25519-spill are)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
build=${1:?usage: spill-programs.sh BUILD}
run=$build/bin/secbuf-run
dropin=$build/lib/libsecbuf-openssl.so
memscan=$build/tests/memscan
prog=$build/tests/x25519-spill
dir=$(mktemp -d)
pid=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

# spill NAME CMD...: runs CMD (x25519-spill under some preload), waits for
# its "ready", scans it into NAME.scan (the whole scalar) and NAME.mid (its
# bytes 1 to 30, which the clamped copy shares), then ends it.  Each hit is
# shown as a comment.  Fails if the program never got ready.
spill() {
	local name=$1 mask masked rc=0 _
	shift
	mkfifo "$dir/$name.in"
	"$@" <"$dir/$name.in" >"$dir/$name.out" 2>"$dir/$name.err" &
	pid=$!
	exec 3>"$dir/$name.in"
	for _ in $(seq 200); do
		grep -qx ready "$dir/$name.out" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if grep -qx ready "$dir/$name.out"; then
		mask=$(sed -n 's/^mask //p' "$dir/$name.out")
		masked=$(sed -n 's/^masked //p' "$dir/$name.out")
		"$memscan" "$pid" "$mask" "$masked" >"$dir/$name.scan" 2>&1 || rc=1
		"$memscan" "$pid" "${mask:2:60}" "${masked:2:60}" >"$dir/$name.mid" 2>&1 || rc=1
		sed "s/^/# $name: /" "$dir/$name.scan"
		sed -n "s/^0x/# $name, bytes 1-30: 0x/p" "$dir/$name.mid"
	else
		rc=1
		sed "s/^/# $name: /" "$dir/$name.out" "$dir/$name.err"
	fi
	exec 3>&-
	wait "$pid" || rc=1
	pid=
	return $rc
}
on_stack() {	# on_stack FILE: the hits in [stack]
	grep -c '^0x.* \[stack\]$' "$1"
}
unlocked() {	# unlocked FILE: the hits outside locked, non-dumpable mappings
	grep '^0x' "$1" | grep -vc ' lo=1 dd=1 '
}
held() {	# held FILE: the scan found the key where the drop-in keeps it
	grep -q '^0x.* lo=1 dd=1 ' "$1"
}

# Neither -z now nor a toolchain's default of it: else the control would
# pass for want of lazy binding, whatever secbuf-run does.
ok "x25519-spill is bound lazily: no BIND_NOW in FLAGS, no NOW in FLAGS_1" sh -c '
	d=$(readelf -d "$1") && echo "$d" | grep -q NEEDED &&
		! echo "$d" | grep -E "\((FLAGS|FLAGS_1|BIND_NOW)\)" | grep -qw -e BIND_NOW -e NOW' _ "$prog"

# verdict NAME RC WANT: 1 if the run went well, the scan found the key in
# the drop-in's memory (so that it can find it at all) and WANT holds of
# the copies: "stack" at least one on the stack, "none" none unlocked.
verdict() {
	local s=$dir/$1.scan m=$dir/$1.mid
	if [ "$2" != 0 ] || ! held "$s"; then
		echo 0
		return
	fi
	case $3 in
	stack) [ "$(on_stack "$s")" -ge 1 ] ;;
	none) [ "$(unlocked "$s")" = 0 ] && [ "$(unlocked "$m")" = 0 ] ;;
	esac && echo 1 || echo 0
}

if [ "$(id -u)" != 0 ]; then
	skip "needs root to read another process's memory" "the control leaves the scalar on the stack"
	skip "needs root to read another process's memory" "LD_BIND_NOW=1 leaves it nowhere unlocked"
	skip "needs root to read another process's memory" "secbuf-run leaves it nowhere unlocked"
else
	spill control env -u LD_BIND_NOW LD_PRELOAD="$dropin" "$prog"
	rc=$?
	echo "# control: $(on_stack "$dir/control.scan") on the stack, $(unlocked "$dir/control.scan") unlocked in all"
	# The trampoline and the registers it saves are x86-64's here.
	if [ "$(uname -m)" != x86_64 ]; then
		skip "the spill is traced on x86-64 only" "the control leaves the scalar on the stack"
	else
		tap_result "$(verdict control $rc stack)" \
			"the control (drop-in preloaded, lazy binding) leaves the scalar on the stack"
	fi
	spill bindnow env LD_BIND_NOW=1 LD_PRELOAD="$dropin" "$prog"
	tap_result "$(verdict bindnow $? none)" \
		"the drop-in preloaded with LD_BIND_NOW=1: the scalar nowhere unlocked"
	spill secbuf-run env -u LD_BIND_NOW "$run" -q --openssl "$prog"
	tap_result "$(verdict secbuf-run $? none)" \
		"secbuf-run --openssl: the scalar nowhere unlocked after a derive"
fi

tap_plan
tap_counts
exit "$tap_failed"
