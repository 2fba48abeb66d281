#!/bin/bash
# Run scripts/checkpatch.pl --strict over every patch of kernel/patches/series
# in a pristine linux-source-6.1 tree (unpacked once into build/kernel/lint).
# Prints one TAP line per patch and exits non-zero on any error, warning or
# check.
#
# usage: kernel/lint.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src_tar=/usr/src/linux-source-6.1.tar.xz
tree=$top/build/kernel/lint
fail() { echo "lint: error: $*" >&2; exit 1; }

[ -r "$src_tar" ] || fail "$src_tar missing: run 'make deps'"
if [ ! -f "$tree/.secbuf-unpacked" ]; then
	echo "==> lint: unpack $src_tar" >&2
	rm -rf "$tree"
	mkdir -p "$tree"
	tar -xJf "$src_tar" -C "$tree" --strip-components=1
	touch "$tree/.secbuf-unpacked"
fi

# checkpatch runs scripts/spdxcheck.py, which needs python3 ply; a python3
# without it makes the SPDX check fail silently, so insist on one that has it.
if ! python3 -c 'import ply' 2>/dev/null; then
	/usr/bin/python3 -c 'import ply' 2>/dev/null ||
		fail "python3 module ply missing: apt-get install python3-ply"
	PATH=/usr/bin:$PATH
fi

patches=()
while read -r p; do
	p=${p%%#*}; p=${p//[[:space:]]/}
	[ -n "$p" ] && patches+=("$p")
done < "${SERIES:-$top/kernel/patches/6.1/series}"
[ ${#patches[@]} -gt 0 ] || fail "kernel/patches/series is empty"

echo "1..${#patches[@]}"
n=0 passed=0 failed=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	out=$(cd "$tree" && perl scripts/checkpatch.pl --strict --showfile \
		"$top/kernel/patches/6.1/$p" 2>&1) || true
	summary=$(grep -E '^total: ' <<<"$out" | tail -1) || true
	if [[ "$summary" == "total: 0 errors, 0 warnings, 0 checks,"* ]] &&
	   ! grep -q Traceback <<<"$out"; then
		echo "ok $n $p: $summary"
		passed=$((passed + 1))
	else
		sed 's/^/# /' <<<"$out"
		echo "not ok $n $p: ${summary:-checkpatch gave no summary}"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
