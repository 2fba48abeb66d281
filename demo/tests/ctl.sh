#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# secbufctl end to end on files: outputs, exit codes (0 ok, 1 refused,
# 2 usage, 3 no daemon).  usage: tests/ctl.sh BINDIR   (prints TAP)
set -u
bin=$1
# shellcheck source=../../tests/lib/tap.sh
. "$(dirname "$0")/../../tests/lib/tap.sh"
dir=$(mktemp -d /tmp/secbufctl-test.XXXXXX)
export SECBUFD_SOCKET=$dir/s.sock
rc_is() {	# rc_is WANT CMD...: CMD must exit WANT
	local want=$1; shift
	"$@" >/dev/null 2>&1
	[ $? -eq "$want" ]
}

err_is() {	# err_is WANT_RC TEXT CMD...: CMD must exit WANT_RC with TEXT in its stderr
	local want=$1 text=$2; shift 2
	"$@" >/dev/null 2>"$dir/err"
	local rc=$?
	[ $rc -eq "$want" ] && grep -qF -- "$text" "$dir/err" && return 0
	echo "# exit $rc, stderr: $(cat "$dir/err")"
	return 1
}

# Arguments are checked before connecting: none of these needs a daemon.
ok "--version without a daemon: exit 0, the version" \
	bash -c '"$0/secbufctl" --version | grep -q "^secbufctl (secbuf) [0-9]"' "$bin"
ok "--help without a daemon: exit 0, usage on stdout" \
	bash -c '"$0/secbufctl" --help | grep -q "^usage: secbufctl"' "$bin"
ok "an unknown option is a usage error without a daemon (exit 2)" err_is 2 "unknown option --bogus" \
	"$bin/secbufctl" --bogus list
ok "an unknown command exits 2" rc_is 2 "$bin/secbufctl" frobnicate
ok "missing arguments: exit 2 naming what the command takes" err_is 2 "sign takes NAME FILE [SIGFILE]" \
	"$bin/secbufctl" sign k1
ok "a bad key type: exit 2 naming the types" err_is 2 "ed25519 (signing) or x25519 (sealing)" \
	"$bin/secbufctl" keygen rsa k1
ok "a bad key name: exit 2 with the naming rule" err_is 2 "names are 1 to 64 characters of A-Z a-z 0-9 . _ -" \
	"$bin/secbufctl" keygen ed25519 bad/name
ok "a short secret for import: exit 2 before connecting" err_is 2 "expected 64 hex digits" \
	bash -c 'echo abcd | "$0/secbufctl" import x25519 k2' "$bin"
ok "a missing input file: exit 3 before connecting" err_is 3 "$dir/nonexistent" \
	"$bin/secbufctl" sign k1 "$dir/nonexistent"
ok "with arguments right but no daemon: exit 3" err_is 3 "cannot connect" "$bin/secbufctl" list

"$bin/secbufd" --buffer 4M 2>"$dir/log" &
daemon=$!
# The socket file appears at bind(), before listen(): wait for an answer.
for _ in $(seq 100); do "$bin/secbufctl" list >/dev/null 2>&1 && break; sleep 0.05; done

ok "a second secbufd refuses the live socket (exit 1)" rc_is 1 "$bin/secbufd" -s "$SECBUFD_SOCKET"
head -c 300000 /dev/urandom >"$dir/msg"
ok "keygen prints a 64-digit public key" \
	bash -c '[[ $("$0/secbufctl" keygen ed25519 sig1) =~ ^[0-9a-f]{64}$ ]]' "$bin"
ok "keygen x25519" rc_is 0 "$bin/secbufctl" keygen x25519 box1
ok "sign writes a 64-byte signature file" \
	bash -c '"$0/secbufctl" sign sig1 "$1/msg" "$1/msg.sig" && [ "$(stat -c %s "$1/msg.sig")" = 64 ]' "$bin" "$dir"
ok "verify of the signature exits 0" rc_is 0 "$bin/secbufctl" verify sig1 "$dir/msg" "$dir/msg.sig"
"$bin/secbufctl" sign sig1 "$dir/msg" >"$dir/msg.hex"
ok "a hex signature from stdout verifies too" rc_is 0 "$bin/secbufctl" verify sig1 "$dir/msg" "$dir/msg.hex"
cp "$dir/msg" "$dir/msg2"; printf 'x' >>"$dir/msg2"
ok "verify of a changed file exits 1" rc_is 1 "$bin/secbufctl" verify sig1 "$dir/msg2" "$dir/msg.sig"
ok "seal then open gives the file back" bash -c '"$0/secbufctl" seal box1 "$1/msg" "$1/box" &&
	"$0/secbufctl" open box1 "$1/box" "$1/out" && cmp -s "$1/msg" "$1/out"' "$bin" "$dir"
ok "open of a sealed box written by seal is mode 0600" bash -c '[ "$(stat -c %a "$1/out")" = 600 ]' "$bin" "$dir"
ok "open with the wrong key type exits 1" rc_is 1 "$bin/secbufctl" open sig1 "$dir/box" "$dir/out2"
ok "import reads the secret from stdin" bash -c 'head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" |
	"$0/secbufctl" import ed25519 imp1 >/dev/null' "$bin"
ok "import of a short secret is a usage error (exit 2)" bash -c 'echo abcd | "$0/secbufctl" import x25519 imp2
	[ $? -eq 2 ]' "$bin"
ok "list shows three keys" bash -c '[ "$("$0/secbufctl" list | wc -l)" = 3 ]' "$bin"
ok "pubkey prints the type" bash -c '"$0/secbufctl" pubkey box1 | grep -q "^x25519 [0-9a-f]\{64\}$"' "$bin"
ok "stats lists totals, buffer and each key" bash -c '"$0/secbufctl" stats >"$1/stats" &&
	grep -q "^# lock method " "$1/stats" && [ "$(grep -c . "$1/stats")" = 7 ]' "$bin" "$dir"
sed 's/^/# /' "$dir/stats"
ok "delete then pubkey of it exits 1" bash -c '"$0/secbufctl" delete imp1 && ! "$0/secbufctl" pubkey imp1' "$bin"
ok "a missing file exits 3" rc_is 3 "$bin/secbufctl" sign sig1 "$dir/nonexistent"

# --socket/-s anywhere, the variable unset.
ok "--socket PATH before the command" rc_is 0 env -u SECBUFD_SOCKET "$bin/secbufctl" --socket "$SECBUFD_SOCKET" list
ok "list -s PATH: -s after the command" rc_is 0 env -u SECBUFD_SOCKET "$bin/secbufctl" list -s "$SECBUFD_SOCKET"
ok "list --socket=PATH" rc_is 0 env -u SECBUFD_SOCKET "$bin/secbufctl" list --socket="$SECBUFD_SOCKET"
ok "-s wins over \$SECBUFD_SOCKET" rc_is 0 env SECBUFD_SOCKET=/nonexistent "$bin/secbufctl" stats -s "$SECBUFD_SOCKET"

# '-' and pipes as input (the 300 kB message is larger than the first read buffer).
ok "sign - reads the message from stdin" bash -c '"$0/secbufctl" sign sig1 - "$1/stdin.sig" <"$1/msg" &&
	cmp -s "$1/stdin.sig" "$1/msg.sig"' "$bin" "$dir"
ok "sign from a pipe, signature to stdout as hex" bash -c 'cat "$1/msg" | "$0/secbufctl" sign sig1 - |
	cmp -s - "$1/msg.hex"' "$bin" "$dir"
ok "verify with the signature on stdin" bash -c '"$0/secbufctl" verify sig1 "$1/msg" - <"$1/msg.sig" >/dev/null' \
	"$bin" "$dir"
ok "verify with FILE and SIGFILE both stdin is a usage error" rc_is 2 "$bin/secbufctl" verify sig1 - -
ok "seal from a pipe, open to stdout: the same bytes" bash -c 'cat "$1/msg" | "$0/secbufctl" seal box1 - "$1/box2" &&
	"$0/secbufctl" open box1 "$1/box2" - | cmp -s - "$1/msg"' "$bin" "$dir"
ok "an empty stdin signs too (0 bytes)" bash -c '"$0/secbufctl" sign sig1 - </dev/null | grep -qE "^[0-9a-f]{128}$"' \
	"$bin"

# The daemon's refusals, one line each, saying what is wrong.
ok "signing with an X25519 key names both key types, once" bash -c '"$0/secbufctl" sign box1 "$1/msg" 2>"$1/err"
	[ $? -eq 1 ] && [ "$(cat "$1/err")" = "secbufctl: sign needs an ed25519 key; box1 is an x25519 key" ]' "$bin" "$dir"
ok "no repeated status text in a refusal" bash -c '"$0/secbufctl" open sig1 "$1/box" "$1/out2" 2>"$1/err"
	[ "$(grep -o "wrong key type" "$1/err" | wc -l)" -le 1 ] && [ "$(wc -l <"$1/err")" = 1 ]' "$bin" "$dir"
ok "a missing key: \"no key named ...\"" err_is 1 "secbufctl: no key named nosuch" "$bin/secbufctl" pubkey nosuch
ok "a bad signature names the key" err_is 1 "bad signature: it does not verify with key sig1" \
	"$bin/secbufctl" verify sig1 "$dir/msg2" "$dir/msg.sig"
kill -TERM $daemon
wait $daemon
ok "the daemon exits 0 on SIGTERM" test $? -eq 0
ok "the daemon log holds no 64-digit hex strings" bash -c '! grep -qiE "[0-9a-f]{64}" "$1"' _ "$dir/log"
rm -rf "$dir"
tap_done
