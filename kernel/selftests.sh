#!/bin/bash
# Build the kernel's guest test programs, static, into build/guest/bin/:
#   - the series' own tests: lock-on-fault, lock-on-fault-limit and
#     lock-on-fault-probe (the probe also runs on the stock kernel);
#   - upstream 6.1 tests, unmodified: mlock2-tests, mlock-random-test and
#     on-fault-limit.
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

build() {	# NAME WARNFLAGS LIBS...
	local name=$1 warn=$2
	shift 2
	echo "==> selftests: $name" >&2
	# shellcheck disable=SC2086
	"$cc" "${base[@]}" $warn -o "$bin/$name.tmp" "$vm/$name.c" "$@" -lrt -lpthread ||
		fail "$name does not build"
	mv "$bin/$name.tmp" "$bin/$name"
}

# Ours are held to -Werror; upstream's are built as upstream builds them.
for t in lock-on-fault lock-on-fault-limit lock-on-fault-probe; do
	build "$t" "-Wall -Werror"
done
build mlock2-tests "-Wall"
build mlock-random-test "-Wall" -lcap
build on-fault-limit "-Wall"
echo "selftests: built into ${bin#"$top"/}" >&2
