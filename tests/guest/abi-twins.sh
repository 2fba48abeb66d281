#!/bin/sh
# The kernel suites run each test program twice in one boot, built for
# x86-64 (NAME) and for i386 (NAME-32).  "run" shows a program's output
# and keeps it; "check" then proves that each 32-bit build reported what
# its 64-bit twin did: the same exit status and the same sequence of
# passed, failed and skipped results.  A guest of another machine (arm64)
# has no i386 ABI: its twins and the check skip, saying so.
#
# usage: abi-twins.sh run NAME CMD...
#        abi-twins.sh check
dir=/tmp/abi-twins
machine=$(uname -m)

# One word per TAP result line: pass, fail or skip.
results() {
	awk '/^not ok /{ print "fail"; next }
	     /^ok .*# *(SKIP|skip)/{ print "skip"; next }
	     /^ok /{ print "pass" }' "$1"
}

summary() {	# NAME: "P passed, F failed, S skipped, exit RC"
	echo "$("$(dirname "$0")/tally" "$dir/$1.out"), exit $(cat "$dir/$1.rc")"
}

case "$1" in
run)
	name=$2
	shift 2
	if [ "$machine" != x86_64 ] && [ "${name%-32}" != "$name" ]; then
		echo "1..1"
		echo "ok 1 $name # SKIP no i386 ABI on $machine"
		exit 0
	fi
	mkdir -p "$dir"
	{ "$@" 2>&1; echo $? >"$dir/$name.rc"; } | tee "$dir/$name.out"
	exit "$(cat "$dir/$name.rc")"
	;;
check)
	if [ "$machine" != x86_64 ]; then
		echo "1..1"
		echo "ok 1 same-as-64 # SKIP no i386 twins on $machine"
		exit 0
	fi
	n=0
	for out in "$dir"/*-32.out; do
		[ -e "$out" ] || break
		twin=$(basename "$out" .out)
		name=${twin%-32}
		n=$((n + 1))
		if [ ! -e "$dir/$name.out" ]; then
			echo "not ok $n $twin: no 64-bit run of $name to compare with"
			continue
		fi
		results "$dir/$name.out" >"$dir/$name.seq"
		results "$out" >"$dir/$twin.seq"
		a=$(summary "$name") b=$(summary "$twin")
		if [ "$a" = "$b" ] && cmp -s "$dir/$name.seq" "$dir/$twin.seq"; then
			echo "ok $n $twin reports what $name does: $b"
		else
			echo "not ok $n $twin: 64-bit $a; 32-bit $b"
			diff "$dir/$name.seq" "$dir/$twin.seq" | sed 's/^/# /'
		fi
	done
	[ "$n" -gt 0 ] || echo "not ok 1 no 32-bit run was kept"
	echo "1..$((n > 0 ? n : 1))"
	;;
*)
	echo "usage: abi-twins.sh run NAME CMD... | check" >&2
	exit 2
	;;
esac
