#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# The build as a packager drives it, in a copy of the tree: CFLAGS and
# LDFLAGS reach every program and library of libsecbuf/, demo/, bench/
# and tests/host/, our hardening survives them, and a changed library
# source is rebuilt and relinked (never a stale libsecbuf.a).
# usage: tests/build.sh BINDIR   (prints TAP; BINDIR is not used)
set -u
# shellcheck source=tree.sh
. "$(dirname "$0")/tree.sh" build
src=$tmp/src
rsync -a --exclude=/build --exclude=.git "$top/" "$src/"

# Marks that can be seen in the results: the flags recorded in the
# objects, and a run path only LDFLAGS can have put there.
cflags="-O1 -g -frecord-gcc-switches"
ldflags="-Wl,-rpath,/secbuf-ldflags-probe"
b=$src/build
build() {	# build DIR [TARGET...]
	make -s -C "$src/$1" CFLAGS="$cflags" LDFLAGS="$ldflags" "${@:2}" >"$tmp/make.log" 2>&1 ||
		{ sed 's/^/# /' "$tmp/make.log" | tail -20; return 1; }
}
ok "libsecbuf builds with the user's CFLAGS and LDFLAGS" build libsecbuf
ok "demo builds with them" build demo "$b/demo/secbufd" "$b/demo/secbufctl"
ok "bench builds with them" build bench "$b/bench/bench-alloc"
ok "tests/host builds with them" build tests/host "$b/tests/secbuf-tests"

honoured() {	# honoured FILE: both marks present
	readelf -p .GCC.command.line "$1" 2>/dev/null | grep -q -- '-O1' || { echo "# $1: CFLAGS lost"; return 1; }
	readelf -dW "$1" | grep -q 'secbuf-ldflags-probe' || { echo "# $1: LDFLAGS lost"; return 1; }
}
for f in lib/libsecbuf.so.1 demo/secbufd demo/secbufctl bench/bench-alloc tests/secbuf-tests; do
	ok "$f: the user's CFLAGS and LDFLAGS are in it" honoured "$b/$f"
done
ok "demo/secbufd keeps full RELRO and the stack protector under the user's flags" bash -c \
	'readelf -dW "$1" | grep -qE "BIND_NOW|FLAGS_1.* NOW" && readelf --dyn-syms -W "$1" | grep -q __stack_chk_fail' \
	_ "$b/demo/secbufd"

# The archive and the shared library export exactly the functions the
# header declares: libsecbuf's internal sb_* names stay inside.
public_api() {	# public_api FILE: defined global symbols == secbuf.h's functions
	local want got
	want=$(grep -oE '\bsecbuf_[a-z_]+\(' "$src/include/secbuf.h" | tr -d '(' | sort -u)
	got=$(nm -g --defined-only "$1" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
	if [ -z "$want" ] || [ "$got" != "$want" ]; then
		diff <(echo "$want") <(echo "$got") | sed 's/^/# /'
		return 1
	fi
}
for f in lib/libsecbuf.a lib/libsecbuf.so.1; do
	ok "$f exports only the public API of secbuf.h" public_api "$b/$f"
done

# A library source newer than the archive: demo and bench rebuild it and relink.
sleep 1
touch "$src/libsecbuf/guarded/region.c"
build demo "$b/demo/secbufd"
build bench "$b/bench/bench-alloc"
ok "a touched libsecbuf source rebuilds libsecbuf.a (from demo's make)" test "$b/lib/libsecbuf.a" -nt "$src/libsecbuf/guarded/region.c"
ok "and relinks demo/secbufd" test "$b/demo/secbufd" -nt "$src/libsecbuf/guarded/region.c"
ok "and bench/bench-alloc" test "$b/bench/bench-alloc" -nt "$src/libsecbuf/guarded/region.c"
tap_done
