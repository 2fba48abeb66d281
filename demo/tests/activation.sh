#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# secbufd on a socket passed as systemd passes it (LISTEN_PID, LISTEN_FDS,
# fd 3): systemd-socket-activate holds the socket and starts the daemon at
# the first connection, as secbufd.socket does; python3 passes the sockets
# no service manager would, which the daemon must refuse by name.
# usage: tests/activation.sh BINDIR   (prints TAP)
set -u
bin=$1
# shellcheck source=../../tests/lib/tap.sh
. "$(dirname "$0")/../../tests/lib/tap.sh"
dir=$(mktemp -d /tmp/secbufd-activation.XXXXXX)
sock=$dir/a.sock
export SECBUFD_SOCKET=$sock
holder=
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

if ! command -v systemd-socket-activate >/dev/null; then
	skip "no systemd-socket-activate (package systemd)" "secbufd serves the socket systemd passes"
	tap_done
fi

# pass.py KIND [ENV...]: secbufd started with fd 3 a socket of KIND
# (stream, unlistened, dgram, inet, file) and LISTEN_PID its own pid.
cat >"$dir/pass.py" <<'PY'
import os, socket, sys
daemon, path, kind, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
if kind == "file":
    s = os.open(os.devnull, os.O_RDONLY)
else:
    fam = socket.AF_INET if kind == "inet" else socket.AF_UNIX
    typ = socket.SOCK_DGRAM if kind == "dgram" else socket.SOCK_STREAM
    sk = socket.socket(fam, typ)
    sk.bind(("127.0.0.1", 0) if kind == "inet" else path)
    if kind in ("stream", "inet"):
        sk.listen()
    s = sk.fileno()
os.dup2(s, 3)
os.set_inheritable(3, True)  # a no-op dup2 (s already 3) keeps CLOEXEC
env = dict(os.environ, LISTEN_PID=str(os.getpid()), LISTEN_FDS="1")
env.update(e.split("=", 1) for e in extra)
os.execve(daemon, [daemon, "--buffer", "4M", "--socket", path + ".own"], env)
PY

# 1. Only the socket, as secbufd.socket holds it: no daemon until a client.
systemd-socket-activate -l "$sock" "$bin/secbufd" --buffer 4M 2>"$dir/log" &
holder=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
ok "systemd-socket-activate holds $sock" test -S "$sock"
ok "no secbufd runs before the first client" sh -c "! pgrep -P $holder >/dev/null && ! grep -q secbufd: '$dir/log'"
ok "the first request (secbufctl list) is answered" "$bin/secbufctl" list
ok "by secbufd, which took the passed socket" grep -q "^secbufd: listening on $sock, passed by systemd" "$dir/log"
ok "it locked its memory as ever" grep -q "memory locked with" "$dir/log"
ok "keygen and sign over the passed socket" sh -c \
	"'$bin/secbufctl' keygen ed25519 k1 >/dev/null && echo m >'$dir/m' && '$bin/secbufctl' sign k1 '$dir/m' >/dev/null"
kill -TERM "$holder"
wait "$holder"
rc=$?
holder=
ok "SIGTERM: it wipes and exits 0 ($rc)" sh -c "[ $rc = 0 ] && grep -q 'keys wiped, exiting' '$dir/log'"
ok "the socket file stays: it is the socket unit's, for the next start" test -S "$sock"
[ "$tap_failed" = 0 ] || sed 's/^/# /' "$dir/log"
rm -f "$sock"

# 2. What a socket unit could pass by mistake: refused, each by name.
refused() {	# refused WHAT TEXT PASS-ARGS...: exit 1, TEXT on stderr, nothing bound
	local what=$1 text=$2 rc
	shift 2
	rm -f "$dir/p.sock" "$dir/p.sock.own"
	timeout 10 python3 "$dir/pass.py" "$bin/secbufd" "$dir/p.sock" "$@" >/dev/null 2>"$dir/err"
	rc=$?
	ok "$what: exit 1 ($rc), naming it" sh -c "[ $rc = 1 ] && grep -qF -- '$text' '$dir/err'"
	ok "$what: no socket of its own bound instead" test ! -e "$dir/p.sock.own"
	[ "$tap_failed" = 0 ] || sed 's/^/# /' "$dir/err"
}
refused "two sockets (LISTEN_FDS=2)" "secbufd serves one" stream LISTEN_FDS=2
refused "a datagram socket" "is not a stream socket" dgram
refused "a socket bound but not listening" "is not listening" unlistened
refused "a TCP socket" "is not an AF_UNIX socket" inet
refused "fd 3 not a socket" "is not a socket: Socket operation on non-socket" file
refused "LISTEN_FDS=x" "LISTEN_FDS=x is not a number" stream LISTEN_FDS=x

# 3. LISTEN_FDS meant for another process (LISTEN_PID 1): ignored, and the
# daemon binds its own socket as without systemd.
rm -f "$dir/p.sock" "$dir/p.sock.own"
python3 "$dir/pass.py" "$bin/secbufd" "$dir/p.sock" stream LISTEN_PID=1 2>"$dir/err" &
pid=$!
for _ in $(seq 100); do
	SECBUFD_SOCKET=$dir/p.sock.own "$bin/secbufctl" list >/dev/null 2>&1 && break
	sleep 0.05
done
ok "LISTEN_PID of another process: ignored, said so" grep -q "LISTEN_FDS is meant for pid 1, not this one" "$dir/err"
ok "and it serves on its own --socket" sh -c "SECBUFD_SOCKET='$dir/p.sock.own' '$bin/secbufctl' list"
kill -TERM "$pid" 2>/dev/null
wait "$pid"
ok "which it removes at exit" test ! -e "$dir/p.sock.own"
[ "$tap_failed" = 0 ] || sed 's/^/# /' "$dir/err"
tap_done
