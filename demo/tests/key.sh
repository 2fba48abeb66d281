#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# secbuf-audit --key: keys of every type made with openssl (RSA-2048, EC
# P-256, P-384, P-521, Ed25519, X25519) in PEM and DER, PKCS#8 and the
# traditional forms, decoded and named; copies planted by secbuf-keyplant
# in the heap, the stack, anonymous memory, a shared file mapping and a
# secbuf buffer, each found with its class; controls (no key, the public
# key alone, the key in secbuf memory alone); the audit's own memory; a
# core file, an image (a copy across a chunk boundary), swap areas (plain
# files, through a /proc/swaps of the test's own in a mount namespace);
# no page faulted in; memfd_secret memory named unreadable; a process that
# exits mid-scan; bad keys and bad usage, each exit 2 naming its file,
# never a prompt.  usage: tests/key.sh BINDIR   (prints TAP)
set -u
bin=$(cd "$1" && pwd)
# shellcheck source=../../tests/lib/tap.sh
. "$(dirname "$0")/../../tests/lib/tap.sh"
dir=$(mktemp -d /tmp/secbuf-key-test.XXXXXX)
planted=() plants=0
alive() {	# alive PID: running, not a zombie
	[[ $(ps -o stat= -p "$1") == [^Z]* ]]
}
stop() {	# stop PID: SIGTERM, at most 5 s, then SIGKILL
	local i
	kill "$1" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do alive "$1" || break; sleep 0.05; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
cleanup() {
	local p
	for p in "${planted[@]}"; do stop "$p"; done
	rm -rf "$dir"
}
trap cleanup EXIT

# plant FILE ENCODING PLACE...: a keyplant; its pid in $pid, its line
# ("ready len=N PLACE=ADDRESS...") in $PLANT; 0 once planted, 77 without
# what it needs, 1 otherwise.
plant() {
	local out=$dir/plant.$((plants++)) i
	"$bin/secbuf-keyplant" "$@" >"$out" 2>&1 </dev/null &
	pid=$!
	planted+=("$pid")
	for ((i = 0; i < 200; i++)); do
		if grep -qs '^ready' "$out"; then
			PLANT=$(head -1 "$out")
			export PLANT
			return 0
		fi
		if ! alive "$pid"; then
			wait "$pid"
			[ $? -eq 77 ] && return 77
			sed 's/^/# /' "$out"
			return 1
		fi
		sleep 0.05
	done
	echo "# keyplant $*: not ready in 10 s"
	return 1
}
# audit ARGS...: the audit, never with a terminal or input; JSON or text
# in $dir/out, stderr in $dir/err, the exit status in $rc.
audit() {
	timeout 60 "$bin/secbuf-audit" "$@" >"$dir/out" 2>"$dir/err" </dev/null
	rc=$?
}
# py EXPR: the Python expression holds for the JSON in $dir/out (d), with
# t = the first target, h = its hits, e = the environment, and at(PLACE)
# the hits in the copy planted at PLACE (by its address, from $PLANT).
py() {
	python3 -c 'import json, os, sys
d = json.load(open(sys.argv[2], "rb"))
t = d["targets"][0] if d.get("targets") else {}
h = t.get("hits") or []
e = os.environ
P = dict(w.split("=", 1) for w in e.get("PLANT", "ready").split()[1:])
def at(place):
	a = int(next(v for k, v in P.items() if k.startswith(place)), 16)
	return [x for x in h if "address" in x and a <= int(x["address"], 16) < a + int(P["len"])]
sys.exit(0 if eval("(" + sys.argv[1] + ")") else 1)' "$1" "$dir/out" ||
		{ sed 's/^/# /' "$dir/err"; head -c 3000 "$dir/out" | sed 's/^/# /'; echo; return 1; }
}
rc_is() {	# rc_is WANT: the last audit exited WANT
	[ "$rc" -eq "$1" ] || { echo "# exit $rc, not $1"; sed 's/^/# /' "$dir/err"; return 1; }
}
check() {	# check WANT EXPR: the last audit exited WANT and EXPR holds for its JSON
	rc_is "$1" && py "$2"
}
says() {	# says WANT FILE PATTERN: the last audit exited WANT and FILE has PATTERN
	rc_is "$1" && grep -q -e "$3" "$dir/$2" || { sed 's/^/# /' "$dir/$2"; return 1; }
}

# The keys, in every form.
cd "$dir" || exit 1
# Where malloc's memory is: [heap], or anonymous mappings of ASan's allocator.
HEAP=heap
grep -q __asan_init "$bin/secbuf-keyplant" && HEAP=anonymous
export HEAP
gen() { openssl genpkey "$@" 2>/dev/null; }
made=1
gen -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem || made=0
for c in 256 384 521; do
	gen -algorithm EC -pkeyopt "ec_paramgen_curve:P-$c" -out "ec$c.pem" || made=0
	openssl ec -in "ec$c.pem" -out "ec$c.sec1.pem" 2>/dev/null || made=0
	openssl ec -in "ec$c.pem" -outform DER -out "ec$c.sec1.der" 2>/dev/null || made=0
done
gen -algorithm ED25519 -out ed.pem || made=0
gen -algorithm X25519 -out x.pem || made=0
gen -algorithm ED448 -out ed448.pem || made=0
for k in rsa ec256 ec384 ec521 ed x; do
	openssl pkcs8 -topk8 -nocrypt -in "$k.pem" -outform DER -out "$k.p8.der" || made=0
done
openssl rsa -in rsa.pem -traditional -out rsa.p1.pem 2>/dev/null || made=0
openssl rsa -in rsa.pem -traditional -outform DER -out rsa.p1.der 2>/dev/null || made=0
ok "openssl makes RSA-2048, EC P-256/384/521, Ed25519 and X25519 keys, PKCS#8, PKCS#1 and SEC1" \
	test $made = 1
: >empty.img

# Every form decodes, and names its key and form.
decodes() {	# decodes FILE TYPE FORM
	audit --json --key "$1" --image empty.img
	rc_is 0 && T="$2" F="$3" py 'd["keys"][0]["type"] == e["T"] and
		d["keys"][0]["files"][0]["form"] == e["F"] and
		d["keys"][0]["name"].startswith("SHA256:") and len(d["keys"][0]["name"]) == 71'
}
export T F
for f in "rsa.pem RSA-2048 PEM PKCS#8" "rsa.p8.der RSA-2048 DER PKCS#8" \
	"rsa.p1.pem RSA-2048 PEM PKCS#1" "rsa.p1.der RSA-2048 DER PKCS#1" \
	"ec256.pem EC_P-256 PEM PKCS#8" "ec256.p8.der EC_P-256 DER PKCS#8" \
	"ec256.sec1.pem EC_P-256 PEM SEC1" "ec256.sec1.der EC_P-256 DER SEC1" \
	"ec384.pem EC_P-384 PEM PKCS#8" "ec384.sec1.der EC_P-384 DER SEC1" \
	"ec521.p8.der EC_P-521 DER PKCS#8" "ec521.sec1.pem EC_P-521 PEM SEC1" \
	"ed.pem Ed25519 PEM PKCS#8" "ed.p8.der Ed25519 DER PKCS#8" \
	"x.pem X25519 PEM PKCS#8" "x.p8.der X25519 DER PKCS#8" "ed448.pem Ed448 PEM PKCS#8"; do
	read -ra w <<<"$f"
	set -- "${w[@]}"
	ok "$1 decodes: ${2/_/ }, $3 $4, named SHA256: and 64 hex digits" decodes "$1" "${2/_/ }" "$3 $4"
done
# The name is the SHA-256 of the DER public key, as openssl computes it.
spki=$(openssl pkey -in rsa.pem -pubout -outform DER | sha256sum | cut -d' ' -f1)
audit --json --key rsa.pem --image empty.img
export S=$spki
ok "the name is SHA256: of the SubjectPublicKeyInfo (openssl pkey -pubout -outform DER | sha256sum)" \
	check 0 'd["keys"][0]["name"] == "SHA256:" + e["S"]'
audit --json --key rsa.pem --key rsa.p1.der --key rsa.p8.der --image empty.img
ok "the same key in three files is one key with three files" \
	py 'len(d["keys"]) == 1 and len(d["keys"][0]["files"]) == 3 and d["keys"][0]["values"] == 6'

# Copies in every place: found, each with its class.
places() {	# places KEYFILE: the DER planted in five places, each found
	plant "$1" der heap stack anon "file:$dir/plant.map" secbuf || return 1
	audit --json --key "$1" "$pid"
	rc_is 1 && M="$dir/plant.map" py '
(vals := d["keys"][0]["values"]) > 0 and t["verdicts"][0]["verdict"] == "EXPOSED" and
all(len({x["value"] for x in at(p) if x["whole"]}) == vals
    for p in ("heap", "stack", "anon", "file:", "secbuf")) and
sum(len(at(p)) for p in ("heap", "stack", "anon", "file:", "secbuf")) == len(h) and
all(x["where"] == e["HEAP"] and x["class"] == "exposed" for x in at("heap")) and
all(x["where"] == "stack" and x["class"] == "exposed" for x in at("stack")) and
all(x["where"] == "anonymous" and x["class"] == "exposed" for x in at("anon")) and
all(x["where"] == "file-backed" and x["mapping"]["name"] == e["M"] and x["class"] == "exposed"
    for x in at("file:")) and
all(x["where"] == "secbuf" and x["class"] == "protected" for x in at("secbuf")) and
all(("lo" in x["mapping"]["vmflags"].split() and "dd" in x["mapping"]["vmflags"].split())
    == (x["class"] == "protected") for x in h)'
	local r=$?
	stop "$pid"
	return $r
}
export M
for k in rsa ec256 ec384 ec521 ed x; do
	ok "$k: planted in heap, stack, anonymous, a shared file mapping (exposed) and secbuf (protected): each found whole, EXPOSED, exit 1" \
		places "$k.pem"
done

# Encodings: limbs, OpenSSL's own key, PEM text, raw keys.
found() {	# found KEYFILE ENCODING PLACE EXPR: planted, audited, EXPR holds
	plant "$1" "$2" "$3" || return 1
	audit --json --key "$1" "$pid"
	rc_is 1 && py "$4"
	local r=$?
	stop "$pid"
	return $r
}
ok "RSA limbs (8-aligned, zero-padded words) in the heap: d, p, q, dP, dQ, qInv as limbs64" \
	found rsa.pem limbs heap 'sorted(x["value"] for x in h if x["encoding"] == "limbs64" and x["whole"]) ==
		sorted(["RSA d", "RSA p", "RSA q", "RSA dP", "RSA dQ", "RSA qInv"]) and
		len(at("heap")) == len(h) == 6 and all(x["where"] == e["HEAP"] for x in h)'
ok "an EC P-384 scalar as limbs in anonymous memory: limbs64, exposed" \
	found ec384.pem limbs anon 'len(at("anon")) == len(h) == 1 and h[0]["encoding"] == "limbs64" and
		h[0]["value"] == "EC scalar" and h[0]["where"] == "anonymous" and h[0]["class"] == "exposed"'
ok "a key OpenSSL keeps loaded (its EVP_PKEY): every RSA value in the heap as limbs64" \
	found rsa.pem live - 'len({x["value"] for x in h if x["encoding"] == "limbs64"}) == 6 and
		all(x["where"] == e["HEAP"] for x in h)'
ok "the PEM text in anonymous memory: one copy, its base64 lines with private bytes in one run" \
	found rsa.pem bytes anon 'len(at("anon")) == len(h) == 1 and h[0]["encoding"] == "base64" and
		h[0]["lines"][1] - h[0]["lines"][0] + 1 == d["keys"][0]["pem_lines"] > 10'
ok "an Ed25519 seed on the stack: raw, exposed" \
	found ed.pem raw stack 'len(at("stack")) == len(h) == 1 and h[0]["encoding"] == "raw" and
		h[0]["where"] == "stack" and
		h[0]["value"] == "Ed25519 seed"'
ok "an X25519 key in the heap: raw" \
	found x.pem raw heap 'len(at("heap")) == len(h) == 1 and h[0]["encoding"] == "raw" and
		h[0]["where"] == e["HEAP"]'

# Controls.
control() {	# control KEYFILE ENCODING PLACE VERDICT: exit 0 and that verdict
	plant "$1" "$2" "$3" || return 1
	audit --json --key "$1" "$pid"
	rc_is 0 && V="$4" py 't["verdicts"][0]["verdict"] == e["V"] and
		all(x["class"] == "protected" for x in h) and t["read_bytes"] > 0'
	local r=$?
	stop "$pid"
	return $r
}
export V
ok "a process that loaded the key and holds no copy: NOT FOUND, exit 0" control rsa.pem none - "NOT FOUND"
ok "a process with the key in a secbuf buffer only: PROTECTED, exit 0" control ec521.pem der secbuf PROTECTED
ok "a process with the public key alone (DER and PEM): NOT FOUND" control rsa.pem public heap "NOT FOUND"
ok "... and for EC and Ed25519 public keys" \
	eval 'control ec256.pem public heap "NOT FOUND" && control ed.pem public anon "NOT FOUND"'

# Only present pages: the secbuf buffer's untouched pages stay untouched.
residency() {	# the plain audit's counts of a process's secbuf memory, as JSON
	"$bin/secbuf-audit" --json "$1" | python3 -c 'import json, sys
s = json.load(sys.stdin)["summary"]
print(s["resident"], s["zero"], s["swapped"])'
}
untouched() {
	local before after
	plant ec256.pem der secbuf || return 1
	before=$(residency "$pid")
	audit --key ec256.pem "$pid"
	after=$(residency "$pid")
	stop "$pid"
	echo "# resident, zero, swapped pages of its secbuf memory: before $before, after $after"
	rc_is 0 && [ -n "$before" ] && [ "$before" = "$after" ]
}
ok "the scan faults nothing in: a 16-page secbuf buffer, one page used, has as many resident pages and no zero page after it" untouched

# The audit's own memory: patterns masked, libcrypto's frees wiped.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >secret.hex
echo >>secret.hex
audit --json --key rsa.pem --key ec256.pem --key ec384.pem --key ec521.pem --key ed.pem --key x.pem \
	--key rsa.p1.der --secret-file secret.hex --self
ok "--self with every key and a secret: no copy outside its secbuf memory (NOT FOUND or PROTECTED), exit 0" \
	check 0 't["target"] == "self" and t["read_bytes"] > (1 << 20) and t["mappings"] > 10 and
		len(d["keys"]) == 7 and all(v["verdict"] != "EXPOSED" for v in t["verdicts"])'

# Files: a core, an image, copies at a chunk boundary, at offset 0.
written() {	# written KEYFILE ENCODING AT OUT: a file with the copy at AT
	KEYPLANT_AT=$3 "$bin/secbuf-keyplant" "$1" "$2" "write:$4" >/dev/null 2>&1 </dev/null
}
written rsa.p1.der der 5000 core.1
audit --json --key rsa.pem --core core.1
ok "--core: the six RSA values, whole, big-endian, exposed, in the planted range; exit 1" \
	check 1 't["target"] == "core" and len(h) == 6 and t["verdicts"][0]["verdict"] == "EXPOSED" and
		all(x["whole"] and x["encoding"] == "big-endian" and x["class"] == "exposed" and
		    5000 < x["offset"] < 5000 + 1200 for x in h)'
# RSA d sits 277 bytes into the DER: its middle 32 bytes after the chunk
# boundary, across it, and before it with the rest of d after it.
boundary() {
	local back
	for back in 300 400 500; do
		written rsa.pem der $(((1 << 20) - back)) image.1
		audit --json --key rsa.pem --image image.1
		check 1 'len(h) == 6 and all(x["whole"] for x in h) and
			any(x["value"] == "RSA d" and x["offset"] < (1 << 20) < x["offset"] + x["bytes"]
			    for x in h)' || { echo "# the copy $back bytes before 1 MiB"; return 1; }
	done
}
ok "--image: d across the 1 MiB chunk boundary, its window after, across and before it, is found whole, as are the rest" \
	boundary
written ec521.pem limbs 0 image.2
audit --json --key ec521.pem --image image.2
ok "--image: a P-521 scalar at offset 0 as limbs64 (72 bytes, zero-padded)" \
	check 1 'len(h) == 1 and h[0]["offset"] == 0 and h[0]["encoding"] == "limbs64" and
		h[0]["bytes"] == 72'
written x.pem raw 100 image.x
for ((i = 0; i < 1500; i++)); do cat image.x; done >many.img
audit --json --key x.pem --image many.img
ok "1500 copies: 1000 listed, the rest counted, every one in the verdict" \
	check 1 'len(h) == 1000 and t["hits_unlisted"] == 500 and t["verdicts"][0]["exposed"] == 1500'
written secret.hex bytes 777 image.3
audit --json --secret-file secret.hex --image image.3
nowhere() {	# the secret, and the SHA-256 of it with and without its newline, not in the output
	! grep -qi -e "$(head -c 64 secret.hex)" -e "$(head -c 64 secret.hex | sha256sum | cut -c1-64)" \
		-e "$(sha256sum <secret.hex | cut -c1-64)" "$dir/out"
}
ok "--secret-file: found at its offset; named by its file, its bytes and hash nowhere in the report" \
	eval 'check 1 "d[\"keys\"][0][\"name\"] == \"secret.hex\" and d[\"keys\"][0][\"bytes\"] == 64 and
		len(h) == 1 and h[0][\"offset\"] == 777" && nowhere'

# Swap areas: plain files, through a /proc/swaps of this test's own.
if unshare -m true 2>/dev/null; then
	written ec256.pem limbs 8192 swap.1
	head -c 65536 /dev/urandom >swap.clean
	printf 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n' >swaps.none
	{ cat swaps.none; printf '%s\tfile\t\t64\t\t0\t\t-2\n' "$dir/swap.1" "$dir/gone\\040area"; } >swaps.two
	inns() {	# inns SWAPS ARGS...: the audit with SWAPS as /proc/swaps
		local swaps=$1
		shift
		timeout 60 unshare -m sh -c 'mount --bind "$1" /proc/swaps && shift && exec "$@"' \
			sh "$swaps" "$bin/secbuf-audit" "$@" >"$dir/out" 2>"$dir/err" </dev/null
		rc=$?
	}
	inns swaps.two --json --key ec256.pem --swap
	ok "--swap: an active area holding the key: its offset, exposed, the advice (rotate, then scrub); a vanished area counted, not an error; exit 1" \
		check 1 'len(d["targets"]) == 2 and t["listed"] and [x["offset"] for x in h] == [8192] and
			"rotate the key" in t["advice"] and "swapoff" in t["advice"] and
			d["targets"][1]["error"] and d["targets"][1]["file"].endswith("gone area") and
			d["summary"]["failed"] == 0'
	inns swaps.none --json --key ec256.pem --swap "$dir/swap.clean"
	ok "--swap AREA with no active area: the named area read whole, NOT FOUND, exit 0" \
		check 0 'len(d["targets"]) == 1 and t["read_bytes"] == 65536 and
			t["verdicts"][0]["verdict"] == "NOT FOUND"'
	inns swaps.none --key ec256.pem --swap
	ok "--swap with no active swap area and none named: NOTHING AUDITED, exit 3" \
		says 3 out "NOTHING AUDITED"
else
	for d in "--swap: an active area" "--swap AREA" "--swap with none"; do
		skip "no mount namespace (unshare -m)" "$d"
	done
fi

# What cannot be read is named; a process that exits mid-scan is counted.
plant rsa.pem der secret
r=$?
if [ $r = 77 ]; then
	skip "no memfd_secret here" "memfd_secret memory: named unreadable, not clean"
else
	audit --json --key rsa.pem "$pid"
	ok "memfd_secret memory: named unreadable (the kernel refuses), NOT FOUND; exit 0" \
		check 0 'any("memfd_secret" in u["reason"] and u["mapping"]["name"] == "/secretmem (deleted)"
			for u in t["unreadable"]) and t["verdicts"][0]["verdict"] == "NOT FOUND"'
	audit --key rsa.pem "$pid"
	ok "... and the text verdict says it holds for what could be read only" \
		says 0 out "in what could be read only"
	stop "$pid"
fi
vanish() {	# the audit stops itself after the first mapping (the test hook); the planter is killed
	local audit_pid i
	plant rsa.pem der heap || return 1
	SECBUF_AUDIT_TEST_STOP_IN=$pid "$bin/secbuf-audit" --json --key rsa.pem "$pid" \
		>"$dir/out" 2>"$dir/err" </dev/null &
	audit_pid=$!
	planted+=("$audit_pid")
	for ((i = 0; i < 200; i++)); do
		[[ $(ps -o stat= -p "$audit_pid") == T* ]] && break
		sleep 0.05
	done
	[[ $(ps -o stat= -p "$audit_pid") == T* ]] || echo "# the audit did not stop itself"
	stop "$pid"
	kill -CONT "$audit_pid"
	for ((i = 0; i < 400; i++)); do alive "$audit_pid" || break; sleep 0.05; done
	alive "$audit_pid" && { echo "# the audit still runs after 20 s"; stop "$audit_pid"; }
	wait "$audit_pid"
	rc=$?
	check 0 't["vanished"] and t["error"] is None and t["read_bytes"] > 0'
}
ok "a process that exits mid-scan: counted (vanished), the scan goes on, not an error" vanish

# Errors: one line on stderr naming the file, exit 2, never a prompt.
gen -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -aes256 -pass pass:x -out enc.pem
openssl rsa -in rsa.pem -aes256 -passout pass:x -traditional -out enc1.pem 2>/dev/null
head -c 300 rsa.p1.der >trunc.der
head -c 600 rsa.pem >trunc.pem
head -c 700 /dev/urandom >garbage.bin
openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:1024 -out dsa.param 2>/dev/null
gen -paramfile dsa.param -out dsa.pem
openssl pkey -in rsa.pem -pubout -out public.pem
printf 'too short\n' >short.secret
refused() {	# refused FILE WORDS [--secret-file]: exit 2, one line naming FILE with WORDS
	audit "${3:---key}" "$1" --self
	rc_is 2 && [ "$(wc -l <"$dir/err")" = 1 ] && grep -q "^secbuf-audit: $1: .*$2" "$dir/err" ||
		{ sed 's/^/# /' "$dir/err"; return 1; }
}
ok "an encrypted PKCS#8 PEM: exit 2, \"encrypted\", the pipe to use" refused enc.pem "encrypted.*<(openssl pkey -in enc.pem)"
ok "an encrypted traditional PEM (Proc-Type): exit 2, \"encrypted\"" refused enc1.pem encrypted
ok "a truncated DER key: exit 2" refused trunc.der "truncated"
ok "a truncated PEM key: exit 2" refused trunc.pem "truncated"
ok "garbage: exit 2" refused garbage.bin "not a key file"
ok "a DSA key: exit 2, unsupported" refused dsa.pem "unsupported key type DSA"
ok "a public key: exit 2, not a private key" refused public.pem "not a private key"
ok "an empty file: exit 2" refused empty.img "empty"
ok "no such file: exit 2" refused nosuch.pem "No such file"
ok "a secret of 9 bytes: exit 2, 16 bytes or more" refused short.secret "16 to" --secret-file
audit --json --key enc.pem --self
ok "--json: the error is a JSON object too" check 2 '"enc.pem" in d["error"]'
if command -v script >/dev/null; then
	timeout 20 script -qec "$bin/secbuf-audit --key enc.pem --self" /dev/null >"$dir/tty" 2>&1
	rc=$?
	ok "on a terminal an encrypted key is refused, not prompted for" \
		eval 'rc_is 2 && ! grep -qi "enter.*pass *phrase" "$dir/tty" && grep -q encrypted "$dir/tty"'
else
	skip "no script(1) to give it a terminal" "on a terminal an encrypted key is refused"
fi
echo | timeout 20 "$bin/secbuf-audit" --key /dev/stdin --self >/dev/null 2>"$dir/err"
rc=$?
ok "its own standard input is never read" says 2 err "standard input"
audit --key <(cat ed.pem) --image empty.img
ok "a key through a pipe (--key <(openssl pkey ...)) is read" rc_is 0

# Usage.
audit --key rsa.pem
ok "--key without a target: exit 2, where?" says 2 err "where?"
audit --core core.1
ok "--core without a key: exit 2, which key?" says 2 err "which key"
audit --key rsa.pem --host
ok "--key with --host: exit 2" rc_is 2
audit --key rsa.pem core.1
ok "a file where a PID goes: exit 2, --core or --image" says 2 err "not a PID"
audit --key rsa.pem 2147483646
ok "no such process: exit 2" says 2 err "no such process"
audit --key rsa.pem 2147483646 --core core.1
ok "an exposed copy outweighs a target that failed: exit 1" rc_is 1

# One pass for every pattern: its rate against reading the same bytes.
head -c $((64 << 20)) /dev/urandom >big.img
start=$(date +%s%N)
cat big.img >/dev/null
raw=$((($(date +%s%N) - start) / 1000000))
start=$(date +%s%N)
audit --key rsa.pem --key ec256.pem --key ec384.pem --key ec521.pem --key ed.pem --key x.pem --image big.img
scan=$((($(date +%s%N) - start) / 1000000))
echo "# REPORT: 64 MiB image, 6 keys ($(grep -o '[0-9]* patterns' "$dir/out" | awk '{ n += $1 } END { print n }') patterns): scan $scan ms, cat $raw ms"
ok "64 MiB of noise and six keys: nothing found, in one pass (exit $rc)" rc_is 0
tap_done
