# shellcheck shell=bash
# tap.sh - TAP for the demo's shell tests (sourced): numbered results and
# the plan, as tap.c prints them for the C tests.
n=0 failed=0
ok() {	# ok DESC CMD...: CMD must succeed
	local desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=1; fi
}
skip() {	# skip WHY DESC
	n=$((n + 1))
	echo "ok $n - $2 # SKIP $1"
}
tap_done() {
	echo "1..$n"
	exit $failed
}
