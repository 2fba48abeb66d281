#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Every fenced block of the README is run or compiled, or says why not.
# The line just before each block is its marker, one of:
#
#   <!-- readme: runs -->              sh: run by bash -eo pipefail; python:
#                                      by /usr/bin/python3 on the tree's
#                                      binding (build/python); c, go, rust:
#                                      compiled against the tree, then run
#   <!-- readme: compiles -->          c, go, rust: compiled, not run
#   <!-- readme: saves as FILE -->     written to FILE (~ is HOME) for the
#                                      blocks after it
#   <!-- readme: fragment of LANG with NAME -->
#                                      wrapped in the prelude NAME of this
#                                      script (below: what it declares), then
#                                      compiled and run as "runs" does
#   <!-- readme: excerpt: REASON -->   not run; the reason is required and
#                                      printed (root, apt, QEMU, systemd)
#
# or the marker of another test that runs the block in make check:
# "<!-- demo/tests/readme.sh runs this block -->" (and "... saves this
# block as FILE"), the same for bindings/go/out-of-tree and
# bindings/rust/out-of-tree.  Those are skipped here, but for a C, Go or
# Rust file they save, which is compiled here too.  A block without a
# marker, or with one this script does not know, fails.
#
# The blocks run in README order, each in its own process, in one scratch
# directory (files one block makes are there for the next), with a fresh
# HOME, build/bin and build/demo first in PATH, and none of the caller's
# PKG_CONFIG_PATH or LD_LIBRARY_PATH.  C: cc -std=gnu11 -Wall -Wextra
# -Werror, -Iinclude -Lbuild/lib -lsecbuf (and -lsecbuf-seal -lsodium
# for a block that includes secbuf-seal.h).  Go: a module of its own,
# secbuf replaced by bindings/go, libsecbuf.a through a pkg-config file of
# its own.  Rust: a crate of its own on bindings/rust (SECBUF_LIB_DIR,
# Debian's libc crate), its target directory kept in
# build/readme-blocks/rust so that libc is built once.
#
# One TAP line per block, with its line and language; then the counts by
# language and by marker, and "N passed, N failed, N skipped".
# usage: tests/readme-blocks.sh BINDIR [README]   (BINDIR is not used;
#        another README: to see it fail)
set -u
# shellcheck source=tree.sh
. "$(dirname "$0")/tree.sh" readme-blocks
readme=${2:-$top/README.md}
unset PKG_CONFIG_PATH LD_LIBRARY_PATH PYTHONPATH
cache=$top/build/readme-blocks
work=$tmp/work
home=$tmp/home
mkdir -p "$cache" "$work" "$home" "$tmp/b" || exit 1
blockpath=$top/build/bin:$top/build/demo:$PATH

# The preludes: the program a fragment becomes.  @BODY@ is the block;
# @HOIST@ its lines that must stay at file scope (C: # lines; Go: import;
# Rust: use).
prelude() {	# prelude LANG NAME: print the template; 1 if there is none
	case $1/$2 in
	# The API at a glance: each declaration must match secbuf.h's.
	c/secbuf.h) cat <<'EOF' ;;
#include <secbuf.h>
@HOIST@
@BODY@

int main(void)
{
	return 0;
}
EOF
	# plain: 32 bytes of key; sign_with: the callback, given msg; the
	# fragment seals plain, uses and frees the sealed key; main then
	# checks that the callback saw the key and the message.
	c/seal) cat <<'EOF' ;;
#include <stdio.h>
#include <string.h>
@HOIST@

struct message {
	const char *text;
};

static int used;

static int sign_with(void *key, size_t len, void *arg)
{
	const unsigned char *k = key;
	const struct message *m = arg;

	used = len == 32 && k[0] == 0x42 && k[31] == 0x42 && strcmp(m->text, "hello") == 0;
	return used ? 0 : -1;
}

int main(void)
{
	unsigned char plain[32];
	struct message msg = { "hello" };

	memset(plain, 0x42, sizeof(plain));
	{
@BODY@
	}
	if (!used) {
		fprintf(stderr, "sign_with was not called with the key and the message\n");
		return 1;
	}
	return plain[0] == 0 && plain[31] == 0 ? 0 : 2;	/* the plaintext wiped */
}
EOF
	# f: key.bin (32 bytes) open for reading; the fragment is the body of a
	# function returning error; its mac is then used.
	go/key-file) cat <<'EOF' ;;
package main

@HOIST@

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"os"
)

func use(f *os.File) error {
@BODY@
	mac.Write([]byte("message"))
	fmt.Printf("%x\n", mac.Sum(nil))
	return nil
}

func main() {
	f, err := os.Open("key.bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	if err := use(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
EOF
	# key.bin (32 bytes) in the directory; the fragment is the body of a
	# function returning Result<(), Box<dyn Error>>.
	rust/key-file) cat <<'EOF' ;;
#![allow(unused)]
@HOIST@

fn run() -> Result<(), Box<dyn std::error::Error>> {
@BODY@
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("{}", e);
        std::process::exit(1);
    }
}
EOF
	# key.bin (32 bytes) written first.
	python/key-file) cat <<'EOF' ;;
with open("key.bin", "wb") as _f:
    _f.write(bytes(range(32)))
@BODY@
EOF
	# minisign's key pair (no password) and a file to sign made first; the
	# signature checked after.
	sh/minisign) cat <<'EOF' ;;
command -v minisign >/dev/null || { echo "no minisign on PATH (.ci/deps guest)"; exit 77; }
minisign -G -W -f -p key.pub -s key.sec >/dev/null
echo 'a file to sign' >file
@BODY@
minisign -V -p key.pub -m file
EOF
	# A TLS server on s_server's port, 4433: started in a session of its
	# own, given 10 s to listen, asked for its page by s_client, stopped.
	sh/tls-server) cat <<'EOF' ;;
command -v openssl >/dev/null || { echo "no openssl on PATH (.ci/deps openssl)"; exit 77; }
if ! command -v ss >/dev/null || ss -Hltn 'sport = :4433' | grep -q .; then
	echo "port 4433 is in use by another process (or no ss to tell)"
	exit 77
fi
setsid bash -e @BODYFILE@ </dev/null >server.out 2>&1 &
server=$!
trap 'kill -- -$server 2>/dev/null' EXIT
for _ in $(seq 200); do
	grep -q '^ACCEPT' server.out && break
	kill -0 $server 2>/dev/null || break
	sleep 0.05
done
cat server.out
printf 'GET / HTTP/1.0\r\n\r\n' | timeout 10 openssl s_client -connect 127.0.0.1:4433 -quiet >page.out 2>&1 || true
grep -m1 's_server' page.out
EOF
	*) return 1 ;;
	esac
}

# The blocks: BODY files and one index line each, LINE LANG MARKER, the
# marker the line before the fence (empty when that is not a comment).
awk -v dir="$tmp/b" '
	function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
	!inblock && /^ ? ? ?(```|~~~)/ {
		inblock = 1; n++; start = NR
		fence = $0; sub(/^ +/, "", fence); fence = substr(fence, 1, 3)
		lang = $0; sub(/^ *(```|~~~)/, "", lang); lang = trim(lang); sub(/[ {].*/, "", lang)
		marker = trim(prev) ~ /^<!--/ ? trim(prev) : ""
		printf "%d\t%s\t%s\n", start, (lang == "" ? "plain" : lang), marker > (dir "/index")
		body = dir "/" start ".body"; printf "" > body
		next
	}
	inblock && index($0, fence) == 1 && trim(substr($0, 4)) == "" { inblock = 0; close(body); prev = $0; next }
	inblock { print > body; next }
	{ prev = $0 }
	END { if (inblock) { print "unclosed fence at line " start > "/dev/stderr"; exit 1 } }
' "$readme" || { ok "the README's fences are closed" false; tap_done; }
[ -s "$tmp/b/index" ] || { ok "the README has fenced blocks" false; tap_done; }

# fill TEMPLATE BODY HOISTRE OUT BODYPATH: the prelude with the block in place
fill() {
	awk -v bodyfile="$2" -v hoist="$3" -v bodypath="$5" '
		BEGIN {
			while ((getline l < bodyfile) > 0) {
				if (inimport) {
					h = h l "\n"
					if (l ~ /^\)/) inimport = 0
				} else if (hoist != "" && l ~ hoist) {
					h = h l "\n"
					if (l ~ /^import \($/) inimport = 1
				} else
					b = b l "\n"
			}
		}
		/^@HOIST@$/ { printf "%s", h; next }
		/^@BODY@$/ { printf "%s", b; next }
		{ gsub(/@BODYFILE@/, bodypath); print }
	' "$1" >"$4"
}

# show FILE: its last lines as TAP comments
show() { tail -n 25 "$1" | sed 's/^/#   /'; }

# The toolchains, set up at first use.
ccflags=(-std=gnu11 -Wall -Wextra -Werror -I"$top/include")
cc_build() {	# cc_build SRC BIN LOG
	local libs=(-lsecbuf)
	grep -q '^#include <secbuf-seal.h>' "$1" && libs=(-lsecbuf-seal -lsodium -lsecbuf)
	cc "${ccflags[@]}" -o "$2" "$1" -L"$top/build/lib" \
		-Wl,--disable-new-dtags,-rpath,"$top/build/lib" "${libs[@]}" >"$3" 2>&1
}

gomod=$tmp/go
go_ready=
go_setup() {
	[ -z "$go_ready" ] || return "$go_ready"
	go_ready=77
	command -v go >/dev/null || { echo "no go on PATH (.ci/deps go)"; return 77; }
	mkdir -p "$gomod" "$cache/go/pkgconfig" || return 1
	# libsecbuf.a, linked static: the programs need no LD_LIBRARY_PATH.
	printf '%s\n' 'Name: secbuf' 'Description: libsecbuf of the build tree' 'Version: 0' \
		"Libs: $top/build/lib/libsecbuf.a -pthread" "Cflags: -I$top/include" \
		>"$cache/go/pkgconfig/secbuf.pc.$$" &&
		mv "$cache/go/pkgconfig/secbuf.pc.$$" "$cache/go/pkgconfig/secbuf.pc" || return 1
	printf '%s\n' 'module example.com/readme' '' 'go 1.19' '' 'require secbuf v0.0.0' '' \
		"replace secbuf => $top/bindings/go" >"$gomod/go.mod" || return 1
	go_ready=0
}
go_build() {	# go_build SRC BIN LOG
	local pkg
	pkg=$gomod/$(basename "$2")
	mkdir -p "$pkg" && cp "$1" "$pkg/main.go" || return 1
	# Go's cache keeps cgo's flags without asking pkg-config again: the
	# library's hash in CGO_CFLAGS rebuilds the package when it changes.
	(cd "$gomod" && GOFLAGS=-mod=mod GOPROXY=off CGO_ENABLED=1 \
		PKG_CONFIG_PATH="$cache/go/pkgconfig" \
		CGO_CFLAGS="-O2 -g -DSECBUF_LIB_HASH=$(sha1sum <"$top/build/lib/libsecbuf.a" | cut -c1-16)" \
		timeout 300 go build -o "$2" "./$(basename "$2")") >"$3" 2>&1
}

crate=$tmp/rust
rust_ready=
rust_setup() {
	[ -z "$rust_ready" ] || return "$rust_ready"
	rust_ready=77
	command -v cargo >/dev/null || { echo "no cargo on PATH (.ci/deps rust)"; return 77; }
	compgen -G '/usr/share/cargo/registry/libc-0.2.*' >/dev/null ||
		{ echo "no libc crate in /usr/share/cargo/registry (.ci/deps rust)"; return 77; }
	rust_ready=1
	mkdir -p "$crate/src/bin" "$crate/.cargo" "$cache/rust" || return 1
	printf '%s\n' '[package]' 'name = "readme"' 'version = "0.1.0"' 'edition = "2021"' '' \
		'[dependencies]' "secbuf = { path = \"$top/bindings/rust\" }" >"$crate/Cargo.toml" || return 1
	printf '%s\n' '[source.crates-io]' 'replace-with = "debian"' '[source.debian]' \
		'directory = "/usr/share/cargo/registry"' '[net]' 'offline = true' \
		>"$crate/.cargo/config.toml" || return 1
	# The lock file of the last run: the same libc every time.
	[ ! -f "$cache/rust/Cargo.lock" ] || cp "$cache/rust/Cargo.lock" "$crate/"
	rust_ready=0
}
rust_n=0
rust_build() {	# rust_build SRC BIN LOG
	local name
	# Named by their order, not their line: the kept target directory
	# holds one program per Rust block, not one per line it ever was on.
	rust_n=$((rust_n + 1))
	name=block$rust_n
	cp "$1" "$crate/src/bin/$name.rs" || return 1
	(cd "$crate" && CARGO_TARGET_DIR=$cache/rust SECBUF_LIB_DIR=$top/build/lib \
		timeout 600 nice cargo build --offline --quiet --bin "$name") >"$3" 2>&1 &&
		cp "$cache/rust/debug/$name" "$2" && cp "$crate/Cargo.lock" "$cache/rust/"
}

# in_work CMD...: CMD in the scratch directory, as a user of the README
in_work() {
	(cd "$work" && env HOME="$home" PATH="$blockpath" timeout 120 "$@")
}

# build LANG SRC BIN LOG: compile a C, Go or Rust program
build() {
	case $1 in
	c) cp "$2" "$3.c" && cc_build "$3.c" "$3" "$4" ;;
	go) go_setup >"$4" 2>&1 && go_build "$2" "$3" "$4" ;;
	rust) rust_setup >"$4" 2>&1 && rust_build "$2" "$3" "$4" ;;
	esac
}

# The tree's Python binding (build/python), built at the first Python block.
py_ready=
py_setup() {
	[ -z "$py_ready" ] || return "$py_ready"
	py_ready=77
	/usr/bin/python3 -c 'import os, sysconfig
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null ||
		{ echo "no Python.h for /usr/bin/python3 (.ci/deps python)"; return 77; }
	py_ready=1
	make -s -C "$top/bindings/python" && py_ready=0
	return $py_ready
}

# needs BODY: 77 and the reason when a shell block's first command is not
# installed (the .ci/deps group that has it is not this run's)
needs() {
	local cmd
	cmd=$(awk '!/^[ \t]*(#|$)/ { print $1; exit }' "$1")
	case $cmd in '' | *=* | cd | export | mkdir | cat | echo) return 0 ;; esac
	PATH=$blockpath command -v "$cmd" >/dev/null && return 0
	echo "no $cmd on PATH"
	return 77
}

declare -A bylang bykind
count() { bylang[$1]=$((${bylang[$1]:-0} + 1)); bykind[$2]=$((${bykind[$2]:-0} + 1)); }

# result DESC RC LOG: the block's TAP line (77: skipped, the log's last
# line the reason)
result() {
	if [ "$2" -eq 77 ]; then
		skip "$(tail -n 1 "$3")" "$1"
	else
		ok "$1" test "$2" -eq 0
		if [ "$2" -eq 0 ]; then
			[ ! -s "$3" ] || echo "#   last line: $(tail -n 1 "$3")"
		else
			show "$3"
		fi
	fi
}

delegated='^<!-- (demo/tests/readme\.sh|bindings/go/out-of-tree|bindings/rust/out-of-tree) (runs this block|saves this block as (.+)) -->$'
# (The index on descriptor 3: a block that reads its standard input gets
# /dev/null, not the rest of the index.)
while IFS=$'\t' read -r line lang marker <&3; do
	body=$tmp/b/$line.body
	where="${readme##*/}:$line $lang"
	src=$tmp/b/$line.src
	bin=$tmp/b/b$line
	log=$tmp/b/$line.log
	case $lang in sh | bash) lang='sh' ;; esac
	kind='' arg='' name=''
	case $marker in
	'<!-- readme: runs -->') kind=runs ;;
	'<!-- readme: compiles -->') kind=compiles ;;
	'<!-- readme: saves as '*' -->')
		kind=saves arg=${marker#<!-- readme: saves as }
		arg=${arg% -->}
		;;
	'<!-- readme: fragment of '*' with '*' -->')
		kind=fragment arg=${marker#<!-- readme: fragment of }
		arg=${arg% -->}
		name=${arg#* with }
		arg=${arg%% with *}
		;;
	'<!-- readme: excerpt:'*' -->')
		kind=excerpt arg=${marker#<!-- readme: excerpt:}
		arg=${arg% -->}
		arg=${arg# }
		;;
	*)
		if [[ $marker =~ $delegated ]]; then
			kind=delegated arg=${BASH_REMATCH[1]} name=${BASH_REMATCH[3]}
		fi
		;;
	esac
	count "$lang" "${kind:-unmarked}"
	case $kind in
	'')
		ok "$where: a marker on the line before the block${marker:+ (not one: $marker)}" false
		echo "#   first line: $(head -n 1 "$body")"
		;;
	excerpt)
		if [ -n "$arg" ]; then
			skip "excerpt: $arg" "$where"
		else
			ok "$where: an excerpt says why it is not run" false
		fi
		;;
	delegated)
		if [ ! -x "$top/$arg" ]; then
			ok "$where: run by $arg, which exists" false
		elif [ -n "$name" ] && [[ $lang =~ ^(c|go|rust)$ ]]; then
			# What it saves, compiled here too.
			build "$lang" "$body" "$bin" "$log"
			result "$where: saved as $name by $arg, which runs it; it compiles here too" $? "$log"
		else
			skip "run by $arg${name:+ (saved as $name)}" "$where"
		fi
		;;
	saves)
		file=$arg
		case $file in \~/*) file=$home/${file#\~/} ;; /*) ;; *) file=$work/$file ;; esac
		mkdir -p "$(dirname "$file")" && cp "$body" "$file"
		ok "$where: saved as $arg" test $? -eq 0
		;;
	runs | compiles | fragment)
		desc="$where: $kind${name:+ of $arg with $name}"
		if [ "$kind" = fragment ]; then
			hoist=
			case $lang in
			c) hoist='^#' ;;
			go) hoist='^import ' ;;
			rust) hoist='^use ' ;;
			esac
			if [ "$arg" != "$lang" ] || ! prelude "$lang" "$name" >"$tmp/b/$line.prelude"; then
				ok "$desc: a prelude $name for $lang in this script" false
				continue
			fi
			fill "$tmp/b/$line.prelude" "$body" "$hoist" "$src" "$body"
		else
			cp "$body" "$src"
		fi
		case $lang/$kind in
		c/* | go/* | rust/*)
			build "$lang" "$src" "$bin" "$log"
			rc=$?
			if [ $rc -eq 77 ]; then
				result "$desc" "$rc" "$log"
			elif [ $rc -ne 0 ]; then
				result "$desc: compiles" "$rc" "$log"
			elif [ "$kind" = compiles ]; then
				result "$desc" 0 "$log"
			else
				in_work "$bin" >"$log" 2>&1
				rc=$?
				result "$desc: compiled, ran (exit $rc)" "$rc" "$log"
			fi
			;;
		sh/runs | sh/fragment)
			needs "$body" >"$log" && in_work bash -eo pipefail "$src" >"$log" 2>&1
			rc=$?
			result "$desc (exit $rc)" "$rc" "$log"
			;;
		python/runs | python/fragment)
			py_setup >"$log" 2>&1 && in_work env PYTHONPATH="$top/build/python" LD_LIBRARY_PATH="$top/build/lib" \
				PYTHONPYCACHEPREFIX="$tmp/pycache" /usr/bin/python3 "$src" >"$log" 2>&1
			rc=$?
			result "$desc (exit $rc)" "$rc" "$log"
			;;
		*)
			ok "$desc: a $lang block can be marked $kind" false
			;;
		esac
		;;
	esac
done 3<"$tmp/b/index" </dev/null

# The controls (on the tree's README only): a README with an unmarked
# block, a C block that does not compile, an excerpt without its reason
# and a prelude this script lacks fails each, and the whole.
if [ $# -lt 2 ]; then
	mkdir "$tmp/bad" || exit 1
	cat >"$tmp/bad/README.md" <<'EOF'
```sh
echo an unmarked block
```

<!-- readme: runs -->
```c
int main(void) { return undeclared; }
```

<!-- readme: excerpt: -->
```sh
echo an excerpt without its reason
```

<!-- readme: fragment of c with no-such-prelude -->
```c
int x;
```

<!-- readme: runs -->
```sh
echo a block that runs
```
EOF
	"$0" "$1" "$tmp/bad/README.md" >"$tmp/bad.out" 2>&1
	rc=$?
	sed 's/^/#   | /' "$tmp/bad.out"
	ok "control: an unmarked block fails" grep -q '^not ok 1 README.md:1 sh: a marker' "$tmp/bad.out"
	ok "control: a C block that does not compile fails" grep -q '^not ok 2 README.md:6 c: runs: compiles' "$tmp/bad.out"
	ok "control: an excerpt without its reason fails" grep -q '^not ok 3 README.md:11 sh: an excerpt says why' "$tmp/bad.out"
	ok "control: a fragment of a prelude this script lacks fails" grep -q '^not ok 4 README.md:16 c: fragment' "$tmp/bad.out"
	ok "control: a block that runs passes there" grep -q '^ok 5 README.md:21 sh: runs' "$tmp/bad.out"
	ok "control: that README fails (exit $rc, 1 passed, 4 failed)" \
		bash -c '[ "$0" = 1 ] && grep -qx "1 passed, 4 failed, 0 skipped" "$1"' "$rc" "$tmp/bad.out"
fi

for l in "${!bylang[@]}"; do echo "# $l: ${bylang[$l]}"; done | sort
for k in "${!bykind[@]}"; do echo "# $k: ${bykind[$k]}"; done | sort
tap_counts
tap_done
