#!/bin/bash
# Build the kernel's guest test programs for one kernel version, static,
# into build/guest/bin/linux-KVER/ (the guest puts the directory of the
# kernel it booted first in PATH):
#   - the series' own tests: lock-on-fault, lock-on-fault-abi,
#     lock-on-fault-limit and lock-on-fault-probe (abi and the probe also
#     run on the stock kernel);
#   - mlock2-tests, upstream's test of mlock2() that the series extends with
#     a case for each of its calls alone (they skip on the stock kernel);
#   - upstream's tests of that version, unmodified: mlock-random-test and
#     on-fault-limit.
# Each is built twice: for x86-64, and as NAME-32 for i386 (gcc -m32),
# which goes through the kernel's ia32 syscall table and compat paths.
# With KARCH=arm64 they are cross-built once, for aarch64, from the arm64
# tree, into build/arm64/guest/bin/linux-KVER/.
# mlock-random-test has no 32-bit build: it links libcap, and Debian has
# a 32-bit libcap only as a multiarch package (libcap-dev:i386).
# All come from the selftests of the patched tree (tools/testing/selftests
# vm on 6.1, mm on 6.12) and compile against its installed uapi headers
# (kernel/build.sh patched KVER builds it), with the flags of that
# version's selftests Makefile.
#
# usage: kernel/selftests.sh [KVER [TREE]]   (default: 6.1, its patched tree)
# env GUEST_BIN=DIR builds into DIR/linux-KVER instead.
# env SELFTESTS="NAME..." builds only those, 64-bit (kernel/fix-alone.sh
# builds mlock2-tests from a tree with the fix alone, which has no
# lock-on-fault tests).
set -euo pipefail

# shellcheck source=kernel/common.sh
. "$(dirname "$0")/common.sh"
kver_select "${1:-}"
tree=${2:-$("$top/kernel/build.sh" patched "$kver")}
abis=("" -32) guest=$top/build/guest
cc=${CC:-gcc}
if [ "$karch" = arm64 ]; then
	abis=("") guest=$top/build/arm64/guest
	cc=${CC:-aarch64-linux-gnu-gcc}
fi
bin=${GUEST_BIN:-$guest/bin}/linux-$kver
fail() { echo "selftests($kver): error: $*" >&2; exit 1; }

[ -d "$tree/usr/include/asm" ] || fail "$tree has no installed uapi headers: run kernel/build.sh patched $kver"
src=$(dirname "$(compgen -G "$tree/tools/testing/selftests/*/mlock2-tests.c" | head -1)")
only=${SELFTESTS:-}
if [ -z "$only" ] && [ ! -f "$src/lock-on-fault.c" ]; then
	fail "$tree has no lock-on-fault tests: is the series applied?"
fi
mkdir -p "$bin"

# The flags of the selftests Makefile of each version, static.  6.12's
# links vm_util.c and thp_settings.c into every program, as upstream does;
# 6.1's links vm_util.c only into the programs it names in a
# "$(OUTPUT)/NAME: vm_util.c" line, ours and mlock2-tests among them.
base=(-O2 -static -I "$tree" -isystem "$tree/usr/include")
helpers=(vm_util) libs=(-lrt -lpthread)
case "$kver" in
6.12)
	base+=(-isystem "$tree/tools/include/uapi" -U_FORTIFY_SOURCE)
	helpers=(vm_util thp_settings) libs+=(-lm)
	;;
esac
links_helpers() {	# NAME: whether the Makefile links the helpers into it
	[ "$kver" = 6.12 ] ||
		grep -qxF "\$(OUTPUT)/$1: vm_util.c" "$src/Makefile"
}

obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
objs() {	# SUFFIX: the helpers' objects for one ABI
	local o
	for o in "${helpers[@]}"; do echo "$obj/$o$1.o"; done
}
for abi in "${abis[@]}"; do
	for o in "${helpers[@]}"; do
		# shellcheck disable=SC2046
		"$cc" "${base[@]}" -Wall ${abi:+-m32} -c -o "$obj/$o$abi.o" "$src/$o.c" ||
			fail "$o.c does not build${abi:+ for i386}"
	done
done

build() {	# NAME SUFFIX "CFLAGS" LIBS...
	local name=$1 suffix=$2 flags=$3 with=()
	shift 3
	echo "==> selftests($kver): $name$suffix" >&2
	if links_helpers "$name"; then
		mapfile -t with < <(objs "$suffix")
	fi
	# shellcheck disable=SC2086
	"$cc" "${base[@]}" $flags -o "$bin/$name$suffix.tmp" "$src/$name.c" \
		"${with[@]}" "$@" "${libs[@]}" ||
		fail "$name$suffix does not build"
	mv "$bin/$name$suffix.tmp" "$bin/$name$suffix"
}

if [ -n "$only" ]; then
	for t in $only; do
		build "$t" "" "-Wall -Werror"
	done
	exit 0
fi

# Ours, mlock2-tests with them, are held to -Werror; upstream's are built
# as upstream builds them.  On i386 the kselftest harness of both versions
# casts pointers to uintmax_t in its ASSERT_*() macros, which gcc warns
# about: that one warning is let pass.
ours="lock-on-fault lock-on-fault-abi lock-on-fault-limit lock-on-fault-probe"
for t in $ours mlock2-tests; do
	build "$t" "" "-Wall -Werror"
done
build on-fault-limit "" "-Wall"
if [ ${#abis[@]} -gt 1 ]; then
	for t in $ours mlock2-tests; do
		build "$t" -32 "-m32 -Wall -Werror -Wno-pointer-to-int-cast"
	done
	build on-fault-limit -32 "-m32 -Wall"
fi
build mlock-random-test "" "-Wall" -lcap
echo "selftests($kver): built into ${bin#"$top"/}" >&2
