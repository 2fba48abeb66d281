#!/bin/bash
# The ABI of the series must be the same on every kernel version it is
# ported to.  Compare what the series of each version adds for it: the
# lines for munlock2() and munlockall2() in every syscall table the
# versions share (number, ABI, name, entry points), and the values of
# MAP_LOCKONFAULT and MLOCK_LOCKED in every uapi header that defines them.
# Prints TAP, one line per table or header, and "N passed, N failed, N
# skipped"; exits non-zero on a difference.
#
# usage: kernel/abi-same.sh [KVER_A KVER_B]    (default: 6.1 6.12)
set -euo pipefail

dir=$(cd "$(dirname "$0")" && pwd)/patches
a=${1:-6.1} b=${2:-6.12}

# added ABI lines of one series, as "FILE<TAB>LINE" with whitespace squeezed
# (every track of it: upstream/, seed/, local/)
abi_lines() {
	local patches
	mapfile -t patches < <(find "$dir/$1" -name '0*.patch' ! -name '0000-*' | sort)
	awk '
		/^\+\+\+ b\// { file = substr($2, 3); next }
		/^\+[0-9]+[ \t]+[a-z0-9]+[ \t]+munlock(all)?2[ \t]/ ||
		/^\+#define[ \t]+(MAP_LOCKONFAULT|MLOCK_LOCKED)[ \t]/ {
			line = substr($0, 2); sub(/[ \t]*\/\*.*/, "", line)
			gsub(/[ \t]+/, " ", line); print file "\t" line
		}' "${patches[@]}" | sort -u
}

A=$(abi_lines "$a") B=$(abi_lines "$b")
files=$(comm -12 <(cut -f1 <<<"$A" | sort -u) <(cut -f1 <<<"$B" | sort -u))
[ -n "$files" ] || { echo "not ok 1 no shared ABI file between $a and $b"; exit 1; }
n=0 passed=0 failed=0
echo "1..$(wc -l <<<"$files")"
while read -r f; do
	n=$((n + 1))
	if diff <(grep -P "^\Q$f\E\t" <<<"$A" | cut -f2) \
		<(grep -P "^\Q$f\E\t" <<<"$B" | cut -f2) >/tmp/abi-same.$$ 2>&1; then
		echo "ok $n $f: same in $a and $b"
		passed=$((passed + 1))
	else
		sed 's/^/# /' /tmp/abi-same.$$
		echo "not ok $n $f: $a and $b differ"
		failed=$((failed + 1))
	fi
done <<<"$files"
rm -f /tmp/abi-same.$$
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
