#!/bin/bash
# Debian's own OpenSSL programs and Python's cryptography, unmodified,
# under secbuf-run: openssl genpkey, req, and a TLS handshake between
# s_server and s_client; the server's private key values, found in its
# memory as root through /proc/PID/mem (memscan, with a masked needle),
# sit only in locked (where the method locks), non-dumpable mappings;
# secbuf-audit selects and passes the drop-in's mappings;
# python3-cryptography's Ed25519 and RSA keys count in CRYPTO_secure_used().
# Also secbuf-run's own options.  TAP; run by make -C tests/host check-programs.
#
# usage: openssl-programs.sh BUILD AUDIT   (BUILD: where bin/secbuf-run and
#        tests/memscan are; AUDIT: secbuf-audit)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
build=${1:?usage: openssl-programs.sh BUILD AUDIT}
audit=${2:?usage: openssl-programs.sh BUILD AUDIT}
run=$build/bin/secbuf-run
memscan=$build/tests/memscan
py=/usr/bin/python3
dir=$(mktemp -d)
server=
cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

# ---- secbuf-run's options ----
ok "secbuf-run -V: one line, NAME (secbuf) VERSION" \
	sh -c '[ "$("$1" -V | wc -l)" = 1 ] && "$1" --version | grep -qx "secbuf-run (secbuf) [0-9][0-9.]*"' _ "$run"
ok "secbuf-run --help: exit 0, lists the exit codes" \
	sh -c '"$1" --help | grep -q "Exit status" && "$1" -h | grep -q "^usage: secbuf-run"' _ "$run"
ok "secbuf-run --bogus: one line, exit 2" sh -c '
	msg=$("$1" --bogus true 2>&1); rc=$?
	[ $rc = 2 ] && [ "$msg" = "secbuf-run: unknown option --bogus; try secbuf-run --help" ]' _ "$run"
ok "secbuf-run -- PROGRAM: -- ends the options" \
	sh -c '"$1" -q -- /bin/sh -c "exit 7"; [ $? = 7 ]' _ "$run"
ok "secbuf-run without PROGRAM: exit 2" sh -c '"$1" 2>/dev/null; [ $? = 2 ]' _ "$run"
ok "a program loading neither library: one warning, and it runs unaffected" sh -c '
	msg=$("$1" /bin/echo hello 2>&1 >/dev/null); out=$("$1" /bin/echo hello 2>/dev/null)
	[ "$out" = hello ] && [ "$(echo "$msg" | grep -c warning)" = 1 ] &&
		echo "$msg" | grep -q "loads none of libsodium.so or libcrypto.so"' _ "$run"
ok "a program loading libcrypto: no warning; both drop-ins preloaded" sh -c '
	msg=$("$1" openssl version 2>&1 >/dev/null)
	pre=$("$1" /bin/sh -c "echo \$LD_PRELOAD" 2>/dev/null)
	[ -z "$msg" ] && case $pre in *libsecbuf-sodium.so:*libsecbuf-openssl.so) ;; *) false ;; esac' _ "$run"
ok "--openssl preloads the OpenSSL drop-in only" sh -c '
	pre=$("$1" -q --openssl /bin/sh -c "echo \$LD_PRELOAD")
	case $pre in *libsecbuf-sodium*) false ;; *libsecbuf-openssl.so) ;; *) false ;; esac' _ "$run"
ok "secbuf-run nosuchprog: \"secbuf-run: nosuchprog: command not found\", exit 127" sh -c '
	msg=$("$1" nosuchprog-secbuf 2>&1); rc=$?
	[ $rc = 127 ] && [ "$msg" = "secbuf-run: nosuchprog-secbuf: command not found" ]' _ "$run"
: >"$dir/plain-file"
ok "secbuf-run of a file that is not executable: one line, exit 126" sh -c '
	msg=$("$1" "$2" 2>&1); rc=$?
	[ $rc = 126 ] && [ "$msg" = "secbuf-run: $2: cannot run: not executable" ]' _ "$run" "$dir/plain-file"
ok "secbuf-run: LD_BIND_NOW=1 (no lazy-binding register spills) and glibc's freed chunks overwritten" sh -c '
	env=$("$1" -q /bin/sh -c "echo \$LD_BIND_NOW \$GLIBC_TUNABLES")
	[ "$env" = "1 glibc.malloc.tcache_count=0:glibc.malloc.perturb=165" ]' _ "$run"
ok "secbuf-run: the caller's GLIBC_TUNABLES kept, a tunable it names left as set" sh -c '
	env=$(GLIBC_TUNABLES=glibc.malloc.perturb=7:glibc.malloc.check=0 "$1" -q /bin/sh -c "echo \$GLIBC_TUNABLES")
	[ "$env" = "glibc.malloc.perturb=7:glibc.malloc.check=0:glibc.malloc.tcache_count=0" ]' _ "$run"

# ---- openssl genpkey, req, s_server and s_client ----
ok "secbuf-run openssl genpkey: an RSA-2048 key" \
	"$run" openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/key.pem" -quiet
ok "secbuf-run openssl req: a self-signed certificate" \
	"$run" openssl req -new -x509 -key "$dir/key.pem" -subj /CN=localhost -days 1 -out "$dir/cert.pem"

port=$((20000 + $$ % 20000))
"$run" openssl s_server -accept "127.0.0.1:$port" -key "$dir/key.pem" -cert "$dir/cert.pem" \
	-www -quiet >"$dir/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do
	grep -q ":$(printf '%04X' "$port") " /proc/net/tcp 2>/dev/null && break
	sleep 0.1
done
printf 'GET / HTTP/1.0\r\n\r\n' |
	"$run" openssl s_client -connect "127.0.0.1:$port" -brief -ign_eof >"$dir/client.log" 2>&1
ok "a TLS handshake between secbuf-run s_server and secbuf-run s_client" sh -c '
	grep -q "Protocol version: TLSv1.3" "$1" && grep -q "HTTP/1.0 200 ok" "$1"' _ "$dir/client.log"

# Each private value of the key, in little-endian limb order (a BIGNUM's
# bytes in memory) and big-endian (DER): "NAME ORDER MASK MASKED", 32 bytes
# from the middle of each.
"$py" - "$dir/key.pem" >"$dir/needles" <<'EOF' || true
import os, sys
from cryptography.hazmat.primitives.serialization import load_pem_private_key
k = load_pem_private_key(open(sys.argv[1], "rb").read(), None).private_numbers()
for name, v in (("d", k.d), ("p", k.p), ("q", k.q), ("dmp1", k.dmp1), ("dmq1", k.dmq1), ("iqmp", k.iqmp)):
    be = v.to_bytes((v.bit_length() + 7) // 8, "big")
    for order, b in (("le", be[::-1]), ("be", be)):
        mid = b[len(b) // 2 - 16:len(b) // 2 + 16]
        mask = os.urandom(32)
        print(name, order, mask.hex(), bytes(x ^ y for x, y in zip(mid, mask)).hex())
EOF

if [ "$(id -u)" != 0 ]; then
	skip "needs root to read another process's memory" "the server's key values sit in locked, non-dumpable mappings"
elif [ ! -s "$dir/needles" ]; then
	ok "the key's private values were read (python3-cryptography)" false
else
	while read -r name order mask masked; do
		"$memscan" "$server" "$mask" "$masked" >"$dir/scan.$name.$order" 2>&1
	done <"$dir/needles"
	# Where each BIGNUM copy lies: in a mapping both locked and left out of
	# core dumps, and at least one is found (the scan can fail).  p and q
	# include the copies in the Montgomery contexts OpenSSL builds for them
	# (secure through the drop-in's BN_copy(), dropin/openssl/bignum.c).
	for name in d p q dmp1 dmq1 iqmp; do
		ok "the server holds $name (limb order) only in locked, non-dumpable memory" sh -c '
			grep -q "^hits [1-9]" "$1" && ! grep "^0x" "$1" | grep -qv " lo=1 dd=1 "' _ \
			"$dir/scan.$name.le"
	done
fi
"$audit" "$server" >"$dir/audit.txt" 2>&1
rc=$?
sed 's/^/# /' "$dir/audit.txt"
ok "secbuf-audit PID: the drop-in's mappings selected (by name or as a drop-in's), all locked: exit 0" \
	sh -c '[ "$1" = 0 ] && grep -Eq "drop-in memory +ok" "$2" && grep -q ": CLEAN" "$2" &&
		! grep -E "^[0-9a-f]+-" "$2" | grep -vq " ok"' _ "$rc" "$dir/audit.txt"
# The scan above read the server's untouched pages, which maps the zero
# page there (issue 49): counted apart, never as evictable.
ok "secbuf-audit PID: pages the scan read but nobody wrote count as zero pages, not evictable" \
	sh -c '[ "$(id -u)" != 0 ] || grep -Eq "ok: [0-9]+ zero pages?, rest locked" "$1"' _ "$dir/audit.txt"
ok "secbuf-audit PID: its header names the OpenSSL drop-in the server has loaded" \
	grep -q "^secbuf-audit: pid [0-9]* (openssl) under secbuf-run (.*libsecbuf-openssl" "$dir/audit.txt"
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
server=

# ---- Python's cryptography ----
ok "python3-cryptography under secbuf-run: Ed25519 and RSA keys in CRYPTO_secure_used()" \
	"$run" -q "$py" - <<'EOF'
import ctypes, gc, sys
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa
used = ctypes.CDLL(None).CRYPTO_secure_used  # the preloaded definition, as libcrypto calls it
used.restype = ctypes.c_size_t
u0 = used()
ed = ed25519.Ed25519PrivateKey.generate()
u1 = used()
ed.public_key().verify(ed.sign(b"m"), b"m")
r = rsa.generate_private_key(public_exponent=65537, key_size=2048)
u2 = used()
pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
r.public_key().verify(r.sign(b"m", pss, hashes.SHA256()), b"m", pss, hashes.SHA256())
del ed, r
gc.collect()
u3 = used()
print("# used:", u0, u1, u2, u3)
sys.exit(0 if u0 < u1 < u2 and u3 < u2 else 1)
EOF

tap_done
