# shellcheck shell=sh
# tap.sh - TAP for the shell tests, host and guest (sourced; POSIX sh):
# numbered results and the closing plan, as tests/lib/tap.c prints them.
tap_n=0 tap_failed=0 tap_passed=0 tap_skipped=0
ok() {	# ok DESC CMD...: CMD must succeed
	tap_desc=$1
	shift
	tap_n=$((tap_n + 1))
	if "$@"; then
		echo "ok $tap_n $tap_desc"
		tap_passed=$((tap_passed + 1))
	else
		echo "not ok $tap_n $tap_desc"
		tap_failed=1
	fi
}
skip() {	# skip WHY DESC
	tap_n=$((tap_n + 1))
	echo "ok $tap_n $2 # SKIP $1"
	tap_skipped=$((tap_skipped + 1))
}
tap_result() {	# tap_result PASSED DESC: a verdict reached first (PASSED is 1 or 0)
	ok "$2" [ "$1" = 1 ]
}
tap_counts() {	# print "N passed, N failed, N skipped", the line make check sums
	echo "$tap_passed passed, $((tap_n - tap_passed - tap_skipped)) failed, $tap_skipped skipped"
}
tap_plan() {	# print the plan "1..N"
	echo "1..$tap_n"
}
tap_done() {	# print the plan and exit: 1 if anything failed
	tap_plan
	exit $tap_failed
}
