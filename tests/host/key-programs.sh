#!/bin/bash
# Where the private key is, in unmodified programs under secbuf-run, as
# secbuf-audit --key says it (issue 49 §3): each program serves or signs,
# then its present pages are searched for every private value of its key
# (RSA d, p, q, dP, dQ, qInv; the EC scalar; big-endian, BIGNUM limbs, the
# PEM lines) and each copy classed protected (locked and not dumpable) or
# exposed.  Under secbuf-run every copy must be protected (PROTECTED, 0
# exposed); each case has its control, the same program as it is, which
# must be EXPOSED (or the test could not fail):
#   - Debian's openssl s_server with an RSA-2048 key, and with an EC P-256
#     key, after one TLS handshake of s_client;
#   - nginx, a master and 2 workers on a throwaway configuration, after
#     HTTPS fetches (curl) until both workers have served: each process;
#   - /usr/bin/python3's ssl: SSLContext.load_cert_chain() with the EC key,
#     one TLS connection served;
#   - python3-cryptography: load_pem_private_key() and sign, RSA and EC.
#     The script reads the PEM file into a bytearray and zeroes it once
#     loaded: a program's own copy of the file (open().read(): a bytes
#     object that nothing wipes) is beyond any preload, and is measured
#     in bench/results/openssl-escapes-key.md, not here.
#     With RSA, cryptography calls EVP_PKEY_get1_RSA(), which builds a
#     legacy RSA from the provider's key through OSSL_PARAM_get_BN(): in
#     OpenSSL 3.0 its BN_native2bn() makes each value a plain BN_new() (d,
#     p, q, dP, dQ, qInv once each, limbs in [heap]) although the params it
#     reads are in the drop-in's secure memory.  The drop-in's own
#     OSSL_PARAM_get_BN() (dropin/openssl/bignum.c) reads secure params into
#     secure BIGNUMs; without it test 12 fails.
# Then the drop-in preloaded alone (LD_PRELOAD: lazy binding, no glibc
# tunables) against secbuf-run's defaults, for s_server RSA and nginx:
# exposed copies by class, as comments, and secbuf-run leaving no more.
# Every audit's summary is shown as comments (one line per target, one per
# class of exposed copy: value, encoding, whole or part, mapping).
# Needs root (the audit reads other processes' memory), nginx and curl.
# TAP; run by make -C tests/host check-programs.
#
# usage: key-programs.sh BUILD AUDIT   (BUILD: where bin/secbuf-run and
#        lib/libsecbuf-openssl.so are; AUDIT: secbuf-audit)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
build=${1:?usage: key-programs.sh BUILD AUDIT}
audit=${2:?usage: key-programs.sh BUILD AUDIT}
run=$build/bin/secbuf-run
dropin=$build/lib/libsecbuf-openssl.so
py=/usr/bin/python3
# The controls run the programs as they are: nothing inherited from the caller.
unset LD_PRELOAD LD_BIND_NOW GLIBC_TUNABLES SECBUF_STRICT SECBUF_SECRET SECBUF_LOCK
dir=$(mktemp -d)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	skip "needs root to read another process's memory" "key-level proofs of openssl, nginx and python3"
	tap_done
fi

# ---- helpers ----

# start OUT VARIANT CMD...: CMD in the background, its output in OUT, its
# pid (the program's: secbuf-run and env exec it) in $pid.  VARIANT: run
# (secbuf-run), ctl (as it is), preload (LD_PRELOAD of the drop-in alone).
start() {
	local out=$1 v=$2
	shift 2
	case $v in
	run) set -- "$run" -q "$@" ;;
	preload) set -- env LD_PRELOAD="$dropin" "$@" ;;
	esac
	"$@" >"$out" 2>&1 &
	pid=$!
	pids="$pids $pid"
}

stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# A TCP port free on 127.0.0.1 a moment ago.
free_port() {
	"$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# listening PORT: wait (20 s at most) until something listens on 127.0.0.1:PORT.
listening() {
	local hex _
	hex=$(printf '0100007F:%04X 00000000:0000 0A' "$1")
	for _ in $(seq 200); do
		grep -q "$hex" /proc/net/tcp && return 0
		sleep 0.1
	done
	return 1
}

# until_line FILE REGEX: wait (20 s at most) until FILE has a line matching REGEX.
until_line() {
	local _
	for _ in $(seq 200); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# One line per target, one per class of exposed copy, from a --json report.
cat >"$dir/summary.py" <<'EOF'
import collections, json, sys
report = json.load(open(sys.argv[1]))
for t in report.get("targets", []):
    v = (t.get("verdicts") or [{}])[0]
    print("target pid=%s comm=%s verdict=%s exposed=%s protected=%s error=%s"
          % (t.get("pid"), t.get("comm"), v.get("verdict", "NONE"), v.get("exposed", "?"),
             v.get("protected", "?"), t.get("error")))
    classes = collections.Counter()
    for h in t.get("hits", []):
        if h["class"] == "exposed":
            m = h.get("mapping") or {}
            classes[(h["value"], h["encoding"], "whole" if h["whole"] else "part",
                     h["where"], m.get("name") or "-")] += 1
    for (value, enc, whole, where, name), n in sorted(classes.items()):
        print("  exposed %d: %s, %s (%s) in %s %s" % (n, value, enc, whole, where, name))
    if t.get("hits_unlisted"):
        print("  unlisted hits: %d" % t["hits_unlisted"])
EOF

# audit NAME KEY PID...: secbuf-audit --json --key KEY PID... into
# NAME.json, its exit status in NAME.rc, its summary in NAME.sum (shown).
audit_key() {
	local name=$1 key=$2
	shift 2
	"$audit" --json --key "$key" "$@" >"$dir/$name.json" 2>"$dir/$name.err"
	echo $? >"$dir/$name.rc"
	"$py" "$dir/summary.py" "$dir/$name.json" >"$dir/$name.sum" 2>&1 ||
		echo "report unreadable" >>"$dir/$name.sum"
	sed "s/^/# $name: /" "$dir/$name.sum" "$dir/$name.err"
}

# verdicts NAME VERDICT N: the report has N targets, each audited and
# VERDICT; PROTECTED also with 0 exposed copies and the audit's exit 0,
# EXPOSED with its exit 1.
verdicts() {
	local sum=$dir/$1.sum rc
	rc=$(cat "$dir/$1.rc")
	[ "$(grep -c '^target ' "$sum")" = "$3" ] &&
		[ "$(grep -c "^target .* verdict=$2 .* error=None\$" "$sum")" = "$3" ] || return 1
	case $2 in
	PROTECTED) [ "$rc" = 0 ] && ! grep '^target ' "$sum" | grep -qv ' exposed=0 ' ;;
	EXPOSED) [ "$rc" = 1 ] ;;
	esac
}

# exposed NAME: the exposed copies over every target of the report.
exposed() {
	sed -n 's/^target .* exposed=\([0-9]*\) .*/\1/p' "$dir/$1.sum" | awk '{ n += $1 } END { print n + 0 }'
}

# ---- the keys: RSA-2048 and EC P-256, each with a self-signed certificate ----
rsa=$dir/rsa.pem ec=$dir/ec.pem
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$rsa" -quiet 2>"$dir/keys.err" &&
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$ec" 2>>"$dir/keys.err" &&
	openssl req -new -x509 -key "$rsa" -subj /CN=localhost -days 1 -out "$dir/rsa.crt" 2>>"$dir/keys.err" &&
	openssl req -new -x509 -key "$ec" -subj /CN=localhost -days 1 -out "$dir/ec.crt" 2>>"$dir/keys.err"
ok "an RSA-2048 and an EC P-256 key, each with a self-signed certificate" [ -s "$dir/ec.crt" ]

# ---- openssl s_server, one handshake of s_client ----

# s_server NAME VARIANT KEY CERT: serve, one handshake, audit, stop.
s_server() {
	local name=$1 v=$2 key=$3 cert=$4 port
	port=$(free_port)
	start "$dir/$name.log" "$v" openssl s_server -accept "127.0.0.1:$port" -key "$key" -cert "$cert" \
		-www -quiet
	listening "$port"
	printf 'GET / HTTP/1.0\r\n\r\n' |
		openssl s_client -connect "127.0.0.1:$port" -brief -ign_eof >"$dir/$name.client" 2>&1
	audit_key "$name" "$key" "$pid"
	stop "$pid"
}

# handshake_then NAME VERDICT: the handshake served the page, and the audit's verdict.
handshake_then() {
	grep -q "HTTP/1.0 200 ok" "$dir/$1.client" && verdicts "$1" "$2" 1
}

for k in rsa ec; do
	case $k in rsa) what=RSA-2048 ;; ec) what="EC P-256" ;; esac
	s_server "s_server-$k" run "$dir/$k.pem" "$dir/$k.crt"
	ok "secbuf-run openssl s_server, $what key, after a handshake: PROTECTED, 0 exposed copies" \
		handshake_then "s_server-$k" PROTECTED
	s_server "s_server-$k-control" ctl "$dir/$k.pem" "$dir/$k.crt"
	ok "control: openssl s_server, $what key, as it is: EXPOSED" \
		handshake_then "s_server-$k-control" EXPOSED
done

# ---- nginx: a master and 2 workers ----

# nginx_run NAME VARIANT: nginx on the RSA key, HTTPS fetches (40 at most)
# until both workers have answered, the master and each worker audited.
nginx_run() {
	local name=$1 v=$2 port prefix=$dir/$1 workers="" i
	port=$(free_port)
	mkdir -p "$prefix"
	cat >"$prefix/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
user nobody nogroup;
error_log $prefix/error.log notice;
pid $prefix/nginx.pid;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $prefix/body;
	proxy_temp_path $prefix/proxy;
	fastcgi_temp_path $prefix/fastcgi;
	uwsgi_temp_path $prefix/uwsgi;
	scgi_temp_path $prefix/scgi;
	server {
		# reuseport: a socket per worker, so that fetches reach both
		listen 127.0.0.1:$port ssl reuseport;
		ssl_certificate $dir/rsa.crt;
		ssl_certificate_key $rsa;
		location / { return 200 "worker \$pid\n"; }
	}
}
EOF
	start "$prefix/out" "$v" nginx -e "$prefix/error.log" -p "$prefix/" -c "$prefix/nginx.conf"
	listening "$port"
	for i in $(seq 100); do
		workers=$(pgrep -P "$pid" | sort)
		[ "$(echo "$workers" | grep -c .)" -ge 2 ] && break
		sleep 0.1
	done
	echo "$workers" >"$prefix/workers"
	: >"$prefix/fetches"
	for i in $(seq 40); do
		curl -sk --max-time 10 "https://127.0.0.1:$port/" >>"$prefix/fetches"
		[ "$i" -ge 4 ] && [ "$(sort -u "$prefix/fetches" | grep -c '^worker')" -ge 2 ] && break
	done
	echo "# $name: $(grep -c '^worker' "$prefix/fetches") fetches, by worker: $(sort "$prefix/fetches" |
		uniq -c | awk '{ printf "%s%s: %s", sep, $3, $1; sep = ", " }')"
	# shellcheck disable=SC2086 # workers: pids
	audit_key "$name" "$rsa" "$pid" $workers
	stop "$pid"
}

# both_served NAME: 2 workers, and each answered a fetch.
both_served() {
	local w
	[ "$(grep -c . "$dir/$1/workers")" = 2 ] || return 1
	for w in $(cat "$dir/$1/workers"); do
		grep -qx "worker $w" "$dir/$1/fetches" || return 1
	done
}

if ! command -v nginx >/dev/null || ! command -v curl >/dev/null; then
	skip "no nginx or no curl" "nginx under secbuf-run: master and 2 workers PROTECTED"
	skip "no nginx or no curl" "control: nginx as it is: EXPOSED"
else
	nginx_run nginx run
	ok "secbuf-run nginx: a master and 2 workers, HTTPS fetches answered by both workers" \
		both_served nginx
	ok "secbuf-run nginx: the master and both workers PROTECTED, 0 exposed copies" \
		verdicts nginx PROTECTED 3
	nginx_run nginx-control ctl
	ok "control: nginx as it is, fetches answered by both workers" both_served nginx-control
	ok "control: nginx as it is: the master and both workers EXPOSED" verdicts nginx-control EXPOSED 3
fi

# ---- /usr/bin/python3: ssl, load_cert_chain() with the EC key ----
cat >"$dir/pyserve.py" <<'EOF'
import signal, socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print("port", s.getsockname()[1], flush=True)
c, _ = s.accept()
with ctx.wrap_socket(c, server_side=True) as t:
    t.recv(100)
    t.sendall(b"HTTP/1.0 200 ok\r\n\r\nserved\n")
print("served", flush=True)
signal.pause()
EOF

# pyserve NAME VARIANT: one TLS connection served, then audited.
pyserve() {
	local name=$1 v=$2 port
	start "$dir/$name.out" "$v" "$py" "$dir/pyserve.py" "$dir/ec.crt" "$ec"
	until_line "$dir/$name.out" '^port '
	port=$(sed -n 's/^port //p' "$dir/$name.out")
	curl -sk --max-time 10 "https://127.0.0.1:$port/" >"$dir/$name.client"
	until_line "$dir/$name.out" '^served$'
	audit_key "$name" "$ec" "$pid"
	stop "$pid"
}

served_then() {
	grep -qx served "$dir/$1.client" && verdicts "$1" "$2" 1
}

pyserve pyssl run
ok "secbuf-run python3 ssl, load_cert_chain() with the EC key, one connection served: PROTECTED" \
	served_then pyssl PROTECTED
pyserve pyssl-control ctl
ok "control: python3 ssl as it is: EXPOSED" served_then pyssl-control EXPOSED

# ---- python3-cryptography: load_pem_private_key() and sign ----
cat >"$dir/pysign.py" <<'EOF'
import os, signal, sys
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
# The file's bytes in a bytearray, read unbuffered, zeroed once loaded:
# the program's own copy is its business, not the drop-in's.
with open(sys.argv[1], "rb", buffering=0) as f:
    pem = bytearray(os.fstat(f.fileno()).st_size)
    f.readinto(pem)
key = serialization.load_pem_private_key(pem, password=None)
pem[:] = bytes(len(pem))
if isinstance(key, rsa.RSAPrivateKey):
    how = (padding.PKCS1v15(), hashes.SHA256())
else:
    how = (ec.ECDSA(hashes.SHA256()),)
sig = key.sign(b"message", *how)
key.public_key().verify(sig, b"message", *how)
print("signed", flush=True)
signal.pause()
EOF

# pysign NAME VARIANT KEY: load, sign, verify; then audited.
pysign() {
	local name=$1 v=$2 key=$3
	start "$dir/$name.out" "$v" "$py" "$dir/pysign.py" "$key"
	until_line "$dir/$name.out" '^signed$'
	audit_key "$name" "$key" "$pid"
	stop "$pid"
}

signed_then() {
	grep -qx signed "$dir/$1.out" && verdicts "$1" "$2" 1
}

for k in rsa ec; do
	case $k in rsa) what=RSA-2048 ;; ec) what="EC P-256" ;; esac
	pysign "pysign-$k" run "$dir/$k.pem"
	ok "secbuf-run python3-cryptography, $what key loaded and signing: PROTECTED, 0 exposed copies" \
		signed_then "pysign-$k" PROTECTED
	pysign "pysign-$k-control" ctl "$dir/$k.pem"
	ok "control: python3-cryptography, $what key, as it is: EXPOSED" \
		signed_then "pysign-$k-control" EXPOSED
done

# ---- the drop-in preloaded alone against secbuf-run's defaults ----
s_server s_server-rsa-preload preload "$rsa" "$dir/rsa.crt"
echo "# exposed copies, s_server RSA: as it is $(exposed s_server-rsa-control)," \
	"LD_PRELOAD alone $(exposed s_server-rsa-preload), secbuf-run $(exposed s_server-rsa)"
ok "s_server RSA: secbuf-run leaves no more exposed copies than the drop-in preloaded alone" \
	sh -c '[ "$1" -le "$2" ] && grep -q "^target .* error=None$" "$3"' _ \
	"$(exposed s_server-rsa)" "$(exposed s_server-rsa-preload)" "$dir/s_server-rsa-preload.sum"
if command -v nginx >/dev/null && command -v curl >/dev/null; then
	nginx_run nginx-preload preload
	echo "# exposed copies, nginx (master and 2 workers): as it is $(exposed nginx-control)," \
		"LD_PRELOAD alone $(exposed nginx-preload), secbuf-run $(exposed nginx)"
	ok "nginx: secbuf-run leaves no more exposed copies than the drop-in preloaded alone" \
		sh -c '[ "$1" -le "$2" ] && [ "$(grep -c "^target .* error=None$" "$3")" = 3 ]' _ \
		"$(exposed nginx)" "$(exposed nginx-preload)" "$dir/nginx-preload.sum"
else
	skip "no nginx or no curl" "nginx: secbuf-run leaves no more exposed copies than the drop-in preloaded alone"
fi

tap_done
