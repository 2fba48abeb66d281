#!/bin/bash
# Build the kernel's guest test programs, static, into build/guest/bin/:
#   - the series' own tests: lock-on-fault, lock-on-fault-abi,
#     lock-on-fault-limit and lock-on-fault-probe (abi and the probe also
#     run on the stock kernel);
#   - upstream 6.1 tests, unmodified: mlock2-tests, mlock-random-test and
#     on-fault-limit.
# Each is built twice: for x86-64, and as NAME-32 for i386 (gcc -m32),
# which goes through the kernel's ia32 syscall table and compat paths.
# mlock-random-test has no 32-bit build: it links libcap, and Debian has
# a 32-bit libcap only as a multiarch package (libcap-dev:i386).
# All come from tools/testing/selftests/vm of the patched tree and compile
# against its installed uapi headers (kernel/build.sh patched builds it).
#
# usage: kernel/selftests.sh [TREE]     (default: the patched tree)
# env GUEST_BIN=DIR builds into DIR instead.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-$("$top/kernel/build.sh" patched)}
vm=$tree/tools/testing/selftests/vm
bin=${GUEST_BIN:-$top/build/guest/bin}
cc=${CC:-gcc}
fail() { echo "selftests: error: $*" >&2; exit 1; }

[ -d "$tree/usr/include/asm" ] || fail "$tree has no installed uapi headers: run kernel/build.sh patched"
[ -f "$vm/lock-on-fault.c" ] || fail "$vm has no lock-on-fault tests: is the series applied?"
mkdir -p "$bin"

# Flags of the selftests Makefile (-I top_srcdir, KHDR_INCLUDES), static.
base=(-O2 -static -I "$tree" -isystem "$tree/usr/include")

build() {	# NAME SUFFIX "CFLAGS" LIBS...
	local name=$1 suffix=$2 flags=$3
	shift 3
	echo "==> selftests: $name$suffix" >&2
	# shellcheck disable=SC2086
	"$cc" "${base[@]}" $flags -o "$bin/$name$suffix.tmp" "$vm/$name.c" "$@" -lrt -lpthread ||
		fail "$name$suffix does not build"
	mv "$bin/$name$suffix.tmp" "$bin/$name$suffix"
}

# Ours are held to -Werror; upstream's are built as upstream builds them.
# On i386 the 6.1 kselftest harness casts pointers to uintmax_t in its
# ASSERT_*() macros, which gcc warns about: that one warning is let pass.
ours="lock-on-fault lock-on-fault-abi lock-on-fault-limit lock-on-fault-probe"
for t in $ours; do
	build "$t" "" "-Wall -Werror"
	build "$t" -32 "-m32 -Wall -Werror -Wno-pointer-to-int-cast"
done
for t in mlock2-tests on-fault-limit; do
	build "$t" "" "-Wall"
	build "$t" -32 "-m32 -Wall"
done
build mlock-random-test "" "-Wall" -lcap
echo "selftests: built into ${bin#"$top"/}" >&2
