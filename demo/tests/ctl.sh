#!/bin/bash
# secbufctl end to end on files: outputs, exit codes (0 ok, 1 refused,
# 2 usage, 3 no daemon).  usage: tests/ctl.sh BINDIR   (prints TAP)
set -u
bin=$1
dir=$(mktemp -d /tmp/secbufctl-test.XXXXXX)
export SECBUFD_SOCKET=$dir/s.sock
n=0 failed=0
ok() {	# ok DESC CMD...: CMD must succeed
	local desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=1; fi
}
rc_is() {	# rc_is WANT CMD...: CMD must exit WANT
	local want=$1; shift
	"$@" >/dev/null 2>&1
	[ $? -eq "$want" ]
}

"$bin/secbufd" --strict --buffer 4M 2>"$dir/log" &
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
ok "an unknown command exits 2" rc_is 2 "$bin/secbufctl" frobnicate
ok "a missing file exits 3" rc_is 3 "$bin/secbufctl" sign sig1 "$dir/nonexistent"
kill -TERM $daemon
wait $daemon
ok "the daemon exits 0 on SIGTERM" test $? -eq 0
ok "with no daemon secbufctl exits 3" rc_is 3 "$bin/secbufctl" list
if grep -qiE '[0-9a-f]{64}' "$dir/log"; then
	echo "not ok $((n += 1)) - the daemon log holds no 64-digit hex strings"; failed=1
else
	echo "ok $((n += 1)) - the daemon log holds no 64-digit hex strings"
fi
echo "1..$n"
rm -rf "$dir"
exit $failed
