# Turn one guest run into one line per test result and a closing count.
#
# Inputs, in order: the suite manifest (expected test names), the guest's
# result port log (TAP between SECBUF-BEGIN/END markers), the kernel console
# log, and optionally the --post script's TAP output.  The run fails when a
# test fails, a result is missing (a test or, against its TAP plan, a
# result of one), or the console shows a kernel bug.
#
# usage: awk -v suite=NAME -v only=TEST -v report=FILE [-v splats=FILE] \
#            -f results.awk MANIFEST tests.log console.log [post.log]
# splats: where to write the number of splat lines the console showed

function emit(kind, text) {
	printf "%s %s\n", kind, text
	count[kind]++
}

# One TAP line of test t; indented (nested KTAP) lines roll up to their parent.
function tap(t, line,    desc) {
	if (line ~ /^not ok /) {
		emit("FAIL", suite "/" t ": " line)
		taps[t]++
		failed[t] = 1
	} else if (line ~ /^ok /) {
		desc = line
		if (desc ~ /# *(SKIP|skip)/)
			emit("SKIP", suite "/" t ": " desc)
		else
			emit("PASS", suite "/" t ": " desc)
		taps[t]++
	} else if (line ~ /^1\.\.[0-9]+/) {
		split(line, plan_n, /[. ]+/)
		plans[t] += plan_n[2]
		planned[t] = 1
	} else if (line ~ /^# REPORT:/) {
		sub(/^# REPORT: ?/, "", line)
		print suite "/" t ": " line >> report
	}
}

FILENAME == ARGV[1] {
	if ($0 ~ /^[ \t]*(#|$)/)
		next
	if (only != "" && $1 != only)
		next
	expected[++nexpected] = $1
	next
}

FILENAME == ARGV[2] {
	sub(/\r$/, "")
	if ($1 == "SECBUF-BEGIN") { cur = $2; began[cur] = 1; next }
	if ($1 == "SECBUF-END") {
		rc = $3; sub(/^rc=/, "", rc)
		ended[$2] = 1; status[$2] = rc + 0
		cur = ""
		next
	}
	if ($1 == "SECBUF-DONE") { done = 1; next }
	if ($1 == "SECBUF-ERROR") { emit("FAIL", suite ": " $0); next }
	if (cur != "")
		tap(cur, $0)
	next
}

# A splat's first line: what the debug kernels (KASAN, lockdep, DEBUG_VM)
# and every kernel print when they find a bug.  Each is counted, the first
# five are shown, and any fails the run.
FILENAME == ARGV[3] {
	sub(/\r$/, "")
	if ($0 ~ /(Kernel panic|BUG: |WARNING: |Oops|Bad page|general protection fault|KASAN: |UBSAN: |possible circular locking|possible recursive locking|suspicious RCU usage|inconsistent lock state|\[ cut here \])/) {
		if (nkernel++ < 5)
			emit("FAIL", suite ": kernel console: " $0)
	}
	next
}

FILENAME == ARGV[4] {
	tap("post", $0)
	next
}

END {
	for (i = 1; i <= nexpected; i++) {
		t = expected[i]
		if (!ended[t]) {
			emit("FAIL", suite "/" t ": no result (" (began[t] ? "started, never finished" : "never started") ")")
		} else if (status[t] != 0 && !failed[t]) {
			emit("FAIL", suite "/" t ": exit status " status[t])
		} else if (!taps[t]) {
			emit("PASS", suite "/" t ": exit status 0 (no TAP)")
		}
		# A program that stopped early may exit 0 with fewer results than planned.
		if (ended[t] && planned[t] && plans[t] != taps[t])
			emit("FAIL", suite "/" t ": " taps[t] " results for a plan of " plans[t])
	}
	if (ARGC > 4 && !taps["post"])
		emit("FAIL", suite "/post: host post-processing printed no result")
	if (!done && nexpected)
		emit("FAIL", suite ": guest did not finish the suite")
	if (nkernel > 5)
		emit("FAIL", suite ": kernel console: " nkernel - 5 " more splat lines (console.log)")
	if (splats != "")
		print nkernel + 0 > splats
	printf "%d passed, %d failed, %d skipped\n", count["PASS"], count["FAIL"], count["SKIP"]
	exit count["FAIL"] > 0
}
