#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# End to end, as a fleet sees it: Debian's prometheus-node-exporter, on
# 127.0.0.1 only and a free port, reads the host audit's file from a
# textfile directory of the test's own; the test fetches /metrics over
# HTTP and finds a real secbufd locked and a leaky process (secbuf memory
# with SECBUF_LOCK=none) unlocked.  Every process is started here and
# stopped by pid, with bounded waits.  usage: tests/exporter.sh BINDIR
# (prints TAP)
set -u
bin=$(cd "$1" && pwd)
# shellcheck source=../../tests/lib/tap.sh
. "$(dirname "$0")/../../tests/lib/tap.sh"
dir=$(mktemp -d /tmp/secbuf-exporter-test.XXXXXX)
chmod 0755 "$dir"
# shellcheck source=holders.sh
. "$(dirname "$0")/holders.sh"
exporter=/usr/bin/prometheus-node-exporter
pids=()
stop() {	# stop PID: SIGTERM, at most 5 s, then SIGKILL
	local i
	kill "$1" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do alive "$1" || break; sleep 0.05; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
cleanup() {
	local p
	for p in "${pids[@]}"; do stop "$p"; done
	unhold
	rm -rf "$dir"
}
trap cleanup EXIT
if [ ! -x $exporter ] || ! command -v curl >/dev/null; then
	skip "no $exporter or curl (Debian's prometheus-node-exporter and curl)" \
		"node_exporter serves the audit's series"
	tap_done
fi

# A secbufd of this run's own name (comm is the name it was run by).
sbd=sbd-$$ leak=sbt-leak-$$
ln -s "$bin/secbufd" "$dir/$sbd"
"$dir/$sbd" -s "$dir/s.sock" --buffer 4M >"$dir/secbufd.log" 2>&1 &
pids+=($!)
for ((i = 0; i < 100; i++)); do "$bin/secbufctl" -s "$dir/s.sock" list >/dev/null 2>&1 && break; sleep 0.05; done
ok "a secbufd of its own ($sbd) answers, with one key" \
	bash -c '"$0/secbufctl" -s "$1" keygen ed25519 k >/dev/null' "$bin" "$dir/s.sock"
ok "a leaky process of its own ($leak): secbuf memory, SECBUF_LOCK=none" hold "$leak" --unlocked

mkdir "$dir/textfile"
"$bin/secbuf-audit" --host --format=prometheus --output "$dir/textfile/secbuf.prom"
rc=$?
ok "the host audit writes secbuf.prom into the textfile directory: exit 1, the leak (exit $rc)" \
	test $rc -eq 1 -a -s "$dir/textfile/secbuf.prom"

# A free port on loopback: asked of the kernel, then given to the
# exporter; another process may take it in between, so three tries.
up=
for try in 1 2 3; do
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	$exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$dir/textfile" >"$dir/exporter.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	for ((i = 0; i < 100; i++)); do
		curl -sf --max-time 2 "http://127.0.0.1:$port/metrics" -o "$dir/metrics" && { up=1; break; }
		alive "$pid" || break
		sleep 0.1
	done
	[ -n "$up" ] && break
	echo "# try $try: no exporter on 127.0.0.1:$port: $(tail -n 1 "$dir/exporter.log")"
	stop "$pid"
done
ok "node_exporter answers on 127.0.0.1:$port/metrics (pid $pid)" test -n "$up"

# value NAME{LABELS}: the sample as the exporter serves it.
value() { awk -v s="$1" 'index($0, s " ") == 1 { print $2 }' "$dir/metrics"; }
ok "the exporter read the file: node_textfile_scrape_error 0" test "$(value node_textfile_scrape_error)" = 0
ok "secbuf_audit_success 1, with its HELP and TYPE" bash -c \
	'grep -qx "secbuf_audit_success 1" "$0" && grep -q "^# HELP secbuf_audit_success " "$0" &&
	 grep -qx "# TYPE secbuf_audit_success gauge" "$0"' "$dir/metrics"
ok "the scan errors are a counter" grep -qx "# TYPE secbuf_audit_scan_errors_total counter" "$dir/metrics"
b="secbuf_secret_memory_bytes{comm=\"$sbd\",kind=\"secbuf\",state"
ok "secbufd: its secret memory locked, none unlocked or swapped" bash -c \
	'[ "${1:-0}" -gt 0 ] && [ "$2" = 0 ] && [ "$3" = 0 ]' _ \
	"$(value "$b=\"locked\"}")" "$(value "$b=\"unlocked\"}")" "$(value "$b=\"swapped\"}")"
b="secbuf_secret_memory_bytes{comm=\"$leak\",kind=\"secbuf\",state"
ok "the leaky process: its used secret pages unlocked" bash -c '[ "${1:-0}" -gt 0 ]' _ \
	"$(value "$b=\"unlocked\"}")"
# method: the library's names, "unnamed" on a kernel without CONFIG_ANON_VMA_NAME.
ok "one process of each name, with the lock method in words" bash -c \
	'grep -q "^secbuf_secret_processes{comm=\"$1\",kind=\"secbuf\",lock=\"[a-z+]*\",method=\"[a-z0-9+]*\"} 1$" "$0" &&
	 grep -Eq "^secbuf_secret_processes\{comm=\"$2\",kind=\"secbuf\",lock=\"[a-z+]*none\",method=\"(none|unnamed)\"\} 1$" "$0"' \
	"$dir/metrics" "$sbd" "$leak"
ok "no series is labelled by pid" bash -c '! grep -q "^secbuf_.*pid=" "$0"' "$dir/metrics"
tap_done
