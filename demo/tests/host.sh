#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# secbuf-audit --host: every process, counted.  Processes that hold
# secret memory under names of their own (secbuf-hold): locked, unlocked,
# memfd_secret, locked DONTDUMP, an odd name; one that exits while its
# smaps is read; processes it may not read; the text, JSON and Prometheus
# outputs (promtool); usage errors; --output replaced whole, its counter
# carried; exact exit codes in a PID namespace of its own; and a full or
# read-only textfile directory, and an unreadable /proc, in a mount
# namespace.  usage: tests/host.sh BINDIR   (prints TAP)
set -u
bin=$(cd "$1" && pwd)
# shellcheck source=../../tests/lib/tap.sh
. "$(dirname "$0")/../../tests/lib/tap.sh"
dir=$(mktemp -d /tmp/secbuf-host-test.XXXXXX)
chmod 0755 "$dir"
# shellcheck source=holders.sh
. "$(dirname "$0")/holders.sh"
trap 'unhold; rm -rf "$dir"' EXIT
audit() { "$bin/secbuf-audit" "$@"; }
have_promtool=$(command -v promtool)

# py EXPR FILE: the Python expression holds for the JSON in FILE, with
# h = its holdings by pid, and the environment in e.
py() {
	python3 -c 'import json, os, sys
d = json.load(open(sys.argv[2], "rb"))
h = {x["pid"]: x for x in d.get("holdings", [])}
e = os.environ
sys.exit(0 if eval("(" + sys.argv[1] + ")") else 1)' "$1" "$2"
}
# sample FILE NAME{LABELS}: the value of that series in FILE, or nothing.
sample() {
	awk -v s="$2" 'index($0, s " ") == 1 { print substr($0, length(s) + 2) }' "$1"
}
export -f py sample
promtool_ok() {	# promtool_ok FILE: promtool check metrics is silent
	local out
	out=$(promtool check metrics <"$1" 2>&1) && [ -z "$out" ] && return 0
	echo "$out" | sed 's/^/# /'
	return 1
}
rc_of() {	# rc_of WANT CMD...: CMD exits WANT
	local want=$1
	shift
	"$@"
	local rc=$?
	[ $rc -eq "$want" ] || { echo "# exit $rc, not $want"; return 1; }
}

# Names of this run only: other tests on the host hold secbuf memory too.
lk=sbt-lk-$$ un=sbt-un-$$ sm=sbt-sm-$$ dd=sbt-dd-$$
odd=$(printf 'o"d\\d\001\377)%s' $$)
hold "$lk" || echo "# cannot start the locked holder"
export LK=$held
hold "$un" --unlocked || echo "# cannot start the unlocked holder"
export UN=$held
hold "$odd" || echo "# cannot start the oddly named holder"
export ODD=$held
hold "$dd" --dontdump || echo "# cannot start the DONTDUMP holder"
export DD=$held
hold "$sm" --secretmem
sm_rc=$? SM=$held
export SM

audit --host --format=json >"$dir/host.json"
rc=$?
ok "--host --format=json: exit 1, a leak (the unlocked holder) (exit $rc)" test $rc -eq 1
ok "the JSON parses and counts the processes scanned" py 'd["processes"]["scanned"] > 0' "$dir/host.json"
ok "the locked holder: secbuf memory, locked, clean, nothing unlocked, swapped, dumpable or inherited" \
	py '(x := h[int(e["LK"])])["kind"] == "secbuf" and x["clean"] and x["locked"]["bytes"] > 0 and
	    all(x[s]["bytes"] == 0 for s in ("unlocked", "swapped", "dumpable", "inheritable"))' \
	"$dir/host.json"
ok "the unlocked holder (SECBUF_LOCK=none): a leak, its used pages unlocked" \
	py '(x := h[int(e["UN"])])["kind"] == "secbuf" and not x["clean"] and x["unlocked"]["bytes"] > 0 and
	    "none" in x["lock"]' "$dir/host.json"
ok "the lock method comes from VmFlags: the unlocked holder's mappings are partly not locked" \
	py 'h[int(e["UN"])]["unlocked"]["mappings"] > 0 and h[int(e["LK"])]["unlocked"]["mappings"] == 0' \
	"$dir/host.json"
export ODD_SUFFIX=$$
ok "a name with a quote, a backslash, a control byte and a non-UTF-8 byte comes back as JSON" \
	py 'h[int(e["ODD"])]["comm"] == "o\"d\\d\x01\xff)" + e["ODD_SUFFIX"]' "$dir/host.json"
ok "locked DONTDUMP anonymous memory (as sodium_malloc makes it): kind dontdump, inherited by fork" \
	py '(x := h[int(e["DD"])])["kind"] == "dontdump" and x["locked"]["bytes"] > 0 and
	    x["inheritable"]["bytes"] > 0' "$dir/host.json"
if [ $sm_rc -eq 77 ]; then
	skip "this kernel has no memfd_secret (secretmem.enable=0 or no CONFIG_SECRETMEM)" \
		"memfd_secret memory: kind secretmem"
else
	ok "memfd_secret memory: kind secretmem, locked by the kernel, not dumpable" \
		py '(x := h[int(e["SM"])])["kind"] == "secretmem" and x["locked"]["bytes"] > 0 and
		    x["dumpable"]["bytes"] == 0' "$dir/host.json"
fi
ok "no holding of the audit itself" py 'all(x["comm"] != "secbuf-audit" for x in h.values())' \
	"$dir/host.json"

audit --host >"$dir/host.txt"
rc=$?
ok "--host as text: exit 1, a LEAK row for the unlocked holder, ok for the locked one (exit $rc)" \
	bash -c '[ $0 -eq 1 ] && grep -qE "^ *$1 .* LEAK +$2\$" "$3" && grep -qE "^ *$4 .* ok +$5\$" "$3" &&
		 grep -q "^summary: host: .*: LEAK\$" "$3"' "$rc" "$UN" "$un" "$dir/host.txt" "$LK" "$lk"

audit --host --format=prometheus >"$dir/host.prom"
rc=$?
ok "--format=prometheus: exit 1 as the other formats (exit $rc)" test $rc -eq 1
if [ -n "$have_promtool" ]; then
	ok "promtool check metrics: no error, no lint" promtool_ok "$dir/host.prom"
else
	skip "no promtool (Debian's prometheus package)" "promtool check metrics"
fi
ok "secbuf_audit_success 1 and a duration in seconds" bash -c \
	'grep -qx "secbuf_audit_success 1" "$0" && grep -qE "^secbuf_audit_duration_seconds [0-9]+\.[0-9]+$" "$0"' \
	"$dir/host.prom"
ok "the unlocked holder's unlocked bytes are its used pages; the locked holder's are 0" bash -c \
	'[ "$(sample "$0" "secbuf_secret_memory_bytes{comm=\"$1\",kind=\"secbuf\",state=\"unlocked\"}")" -gt 0 ] &&
	 [ "$(sample "$0" "secbuf_secret_memory_bytes{comm=\"$2\",kind=\"secbuf\",state=\"unlocked\"}")" = 0 ] &&
	 [ "$(sample "$0" "secbuf_secret_memory_bytes{comm=\"$2\",kind=\"secbuf\",state=\"locked\"}")" -gt 0 ]' \
	"$dir/host.prom" "$un" "$lk"
ok "one series per name and state, every state present, and no pid label" bash -c \
	'[ "$(grep -c "^secbuf_secret_memory_bytes{comm=\"$1\"," "$0")" = 5 ] && ! grep -q "pid=" "$0"' \
	"$dir/host.prom" "$lk"
want=$(printf 'o\\"d\\\\d\\\\x01\\\\xff)%s' $$)
ok "the odd name as a label: \\\" and \\\\, other bytes as a literal \\xNN" \
	grep -qF "secbuf_secret_processes{comm=\"$want\",kind=\"secbuf\"," "$dir/host.prom"

# --output: the file replaced whole, readable by the exporter's user, the
# counter carried over from the file it replaces.
printf 'secbuf_audit_scan_errors_total{reason="vanished"} 41\n' >"$dir/secbuf.prom"
(umask 022 && audit --host --format=prometheus --output "$dir/secbuf.prom")
rc=$?
ok "--output replaces the file: the same exit status as on stdout (exit $rc)" test $rc -eq 1
ok "the new file is mode 0644 (umask 022), and no temporary file is left" bash -c \
	'[ "$(stat -c %a "$0/secbuf.prom")" = 644 ] && [ -z "$(ls -A "$0" | grep "^\.secbuf\.prom\.")" ]' "$dir"
ok "the error counter goes on from the file it replaced (41 + this scan's)" bash -c \
	'[ "$(sample "$0" "secbuf_audit_scan_errors_total{reason=\"vanished\"}")" = \
	   $((41 + $(sample "$0" "secbuf_audit_processes{outcome=\"vanished\"}"))) ]' "$dir/secbuf.prom"
head -c 4096 /dev/urandom >"$dir/secbuf.prom"
audit --host --format=prometheus --output "$dir/secbuf.prom"
ok "a previous file of garbage: the counter starts again, the new file is whole" bash -c \
	'[ "$(sample "$0" "secbuf_audit_scan_errors_total{reason=\"denied\"}")" = \
	   "$(sample "$0" "secbuf_audit_processes{outcome=\"denied\"}")" ] &&
	 grep -qx "secbuf_audit_success 1" "$0"' "$dir/secbuf.prom"

unhold

# A process that exits while the audit reads it (the test hooks stop the
# audit after the first secret mapping of that pid has been counted), and
# one that exits once it was read, before the audit checks it is still
# the same process.
vanish() {	# vanish HOOK: the hook's pid, the audit's exit status and stopped state
	hold "sbt-vn-$$"
	victim=$held
	env "$1=$victim" "$bin/secbuf-audit" --host --format=json >"$dir/vanish.json" &
	local auditor=$! i
	for ((i = 0; i < 100; i++)); do [[ $(ps -o stat= -p $auditor) == T* ]] && break; sleep 0.05; done
	stopped=$(ps -o stat= -p $auditor)
	{ kill -KILL "$victim" && wait "$victim"; } 2>/dev/null
	kill -CONT "$auditor"
	wait "$auditor"
	vanish_rc=$?
	export VICTIM=$victim
	unhold
}
for hook in SECBUF_AUDIT_TEST_STOP_IN SECBUF_AUDIT_TEST_STOP_AFTER; do
	vanish $hook
	when=$([ $hook = SECBUF_AUDIT_TEST_STOP_IN ] && echo "while its smaps was read" ||
		echo "after it was read")
	ok "$hook: the audit stopped (state ${stopped:-gone}), then the victim was killed" test "${stopped:0:1}" = T
	ok "a process that exited $when: counted as vanished, none of it reported (exit $vanish_rc)" \
		bash -c '[ $0 -ne 2 ] && py "d[\"processes\"][\"vanished\"] >= 1 and int(e[\"VICTIM\"]) not in h" "$1"' \
		"$vanish_rc" "$dir/vanish.json"
done

# Processes it may not read: as uid 65534 (as root) or as ourselves.
if [ "$(id -u)" = 0 ]; then
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
	as=()
fi
"${as[@]}" "$bin/secbuf-audit" --host --format=prometheus >"$dir/denied.prom" 2>"$dir/denied.err"
rc=$?
ok "processes it may not read are counted as denied, not an error (exit $rc)" bash -c \
	'[ $0 -ne 2 ] && [ "$(sample "$1" "secbuf_audit_processes{outcome=\"denied\"}")" -gt 0 ] &&
	 [ "$(sample "$1" "secbuf_audit_scan_errors_total{reason=\"denied\"}")" -gt 0 ] &&
	 grep -qx "secbuf_audit_success 1" "$1"' "$rc" "$dir/denied.prom"

# Usage errors: nothing written, exit 2, the reason on stderr.
usage() {	# usage TEXT ARGS...
	local text=$1
	shift
	audit "$@" --output "$dir/usage.prom" >/dev/null 2>"$dir/usage.err"
	local rc=$?
	[ $rc -eq 2 ] && grep -qF -- "$text" "$dir/usage.err" && [ ! -e "$dir/usage.prom" ] && return 0
	echo "# exit $rc: $(cat "$dir/usage.err")"
	return 1
}
ok "--format=prometheus for one PID: a usage error" usage "--format=prometheus needs --host" \
	--format=prometheus $$
ok "--host with a PID: a usage error" usage "--host audits every process: no PID" --host $$
ok "--host --range: a usage error" usage "--range is for one PID" --host --range 0-1000
ok "--host --all: a usage error" usage "--all is for one PID" --host --all
ok "--output without --host: a usage error" usage "--output needs --host" $$
ok "an unknown format: a usage error" usage "bad --format xml" --host --format=xml
audit --json --host $$ >"$dir/usage.json" 2>/dev/null
ok "with --json the usage error is JSON: host, error, clean null" \
	py 'd["host"] is True and d["clean"] is None and "no PID" in d["error"]' "$dir/usage.json"

# Exact exit codes need a /proc of known processes: a PID namespace.
ns() { unshare --pid --fork --mount-proc "$@"; }
inner='b=$1 o=$2/inner.$3; shift 3
if [ $# -gt 0 ]; then
	"$b/secbuf-hold" "$@" >"$o" &
	for i in $(seq 100); do grep -q ready "$o" && break; sleep 0.05; done
fi
"$b/secbuf-audit" --host >"$o.txt"'
if ns true 2>/dev/null; then
	ok "alone in a PID namespace: nothing audited, exit 3" rc_of 3 ns bash -c "$inner" _ "$bin" "$dir" 0
	ok "with one locked holder: clean, exit 0" rc_of 0 ns bash -c "$inner" _ "$bin" "$dir" 1 --name 6c6b
	ok "with one unlocked holder: a leak, exit 1" rc_of 1 ns bash -c "$inner" _ "$bin" "$dir" 2 --unlocked
else
	for t in "nothing audited, exit 3" "clean, exit 0" "a leak, exit 1"; do
		skip "cannot make a PID namespace here (unshare --pid: not root?)" "in a PID namespace: $t"
	done
fi

# A full or read-only textfile directory, and a /proc it cannot list: a
# tmpfs of its own in a mount namespace.  The file there must stay whole.
faults='d=$1 b=$2 what=$3
mount -t tmpfs -o size=64k,mode=0755 tmpfs "$d" || exit 99
cp "$d.before" "$d/secbuf.prom"
case $what in
full) dd if=/dev/zero of="$d/fill" bs=4k 2>/dev/null ;;
ro) mount -o remount,ro "$d" ;;
esac
"$b/secbuf-audit" --host --format=prometheus --output "$d/secbuf.prom" 2>"$d.err"
rc=$?
cmp -s "$d.before" "$d/secbuf.prom" || exit 98
ls -A "$d" | grep -q "^\.secbuf" && exit 97
exit $rc'
if unshare --mount true 2>/dev/null; then
	mkdir "$dir/tf"
	audit --host --format=prometheus --output "$dir/tf.before"
	for what in full ro; do
		unshare --mount bash -c "$faults" _ "$dir/tf" "$bin" $what
		rc=$?
		ok "a $what textfile directory: exit 2, the file there as it was, no temporary file left (exit $rc)" \
			bash -c '[ $0 -eq 2 ] && grep -q "cannot write .*: .*; the file there is left as it was" "$1"' \
			"$rc" "$dir/tf.err"
		sed 's/^/# /' "$dir/tf.err"
	done
else
	for what in full read-only; do
		skip "cannot make a mount namespace here (unshare --mount: not root?)" \
			"a $what textfile directory: the file there stays whole"
	done
fi
# Under check-asan the sanitizers read their options and, at exit, the
# threads from /proc: a build with them cannot run without it.
if readelf -sW "$bin/secbuf-audit" | grep -q __asan_init; then
	skip "an ASan build needs /proc itself" "a /proc it cannot list: secbuf_audit_success 0"
	skip "an ASan build needs /proc itself" "promtool accepts the file of a failed scan"
elif [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
	mkdir -m 1777 "$dir/np"
	unshare --mount bash -c 'mount -t tmpfs -o mode=0700 tmpfs /proc &&
		setpriv --reuid=65534 --regid=65534 --clear-groups "$0/secbuf-audit" --host \
			--format=prometheus --output "$1/np/secbuf.prom" 2>"$1/np.err"' "$bin" "$dir"
	rc=$?
	ok "a /proc it cannot list: exit 2, and a file that says secbuf_audit_success 0 (exit $rc)" bash -c \
		'[ $0 -eq 2 ] && grep -qx "secbuf_audit_success 0" "$1" && ! grep -q "^secbuf_secret" "$1"' \
		"$rc" "$dir/np/secbuf.prom"
	if [ -n "$have_promtool" ]; then
		ok "promtool accepts the file of a failed scan" promtool_ok "$dir/np/secbuf.prom"
	else
		skip "no promtool (Debian's prometheus package)" "promtool accepts the file of a failed scan"
	fi
else
	skip "needs root and a mount namespace" "a /proc it cannot list: secbuf_audit_success 0"
	skip "needs root and a mount namespace" "promtool accepts the file of a failed scan"
fi
tap_done
