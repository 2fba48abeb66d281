# shellcheck shell=sh
# tap.sh - TAP for the shell tests, host and guest (sourced; POSIX sh):
# numbered results and the closing plan, as tests/lib/tap.c prints them.
tap_n=0 tap_failed=0
ok() {	# ok DESC CMD...: CMD must succeed
	tap_desc=$1
	shift
	tap_n=$((tap_n + 1))
	if "$@"; then
		echo "ok $tap_n $tap_desc"
	else
		echo "not ok $tap_n $tap_desc"
		tap_failed=1
	fi
}
skip() {	# skip WHY DESC
	tap_n=$((tap_n + 1))
	echo "ok $tap_n $2 # SKIP $1"
}
tap_plan() {	# print the plan "1..N"
	echo "1..$tap_n"
}
tap_done() {	# print the plan and exit: 1 if anything failed
	tap_plan
	exit $tap_failed
}
