#!/bin/bash
# Run scripts/checkpatch.pl --strict over every patch of the series of
# kernel/patches/KVER, with the checkpatch of that version, in a pristine
# linux-source-KVER tree (unpacked once into the kernel cache).
# Prints one TAP line per patch and exits non-zero on any error, warning
# or check that kernel/checkpatch.allow does not accept (and says why).
#
# usage: kernel/lint.sh [KVER]     KVER: 6.1 (default) or 6.12
set -euo pipefail

# shellcheck source=kernel/common.sh
. "$(dirname "$0")/common.sh"
kver_select "${1:-}"
tree=$kout/lint
fail() { echo "lint($kver): error: $*" >&2; exit 1; }

[ -r "$src_tar" ] || fail "$src_tar missing: run 'make deps'"
if [ ! -f "$tree/.secbuf-unpacked" ]; then
	echo "==> lint($kver): unpack $src_tar" >&2
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

mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || fail "${series_dir#"$top"/}/series is empty"

echo "1..${#patches[@]}"
n=0 passed=0 failed=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	# --no-signoff: the series is an RFC that carries no DCO sign-off; a
	# person adds theirs before posting (see the cover letters).
	out=$(cd "$tree" && perl scripts/checkpatch.pl --strict --no-signoff \
		--showfile "$series_dir/$p" 2>&1) || true
	summary=$(grep -E '^total: ' <<<"$out" | tail -1) || true
	# Every finding must be one that kernel/checkpatch.allow accepts.
	found=$(grep -E '(ERROR|WARNING|CHECK): ' <<<"$out" |
		grep -vEf <(grep -v '^#' "$kernel_dir/checkpatch.allow")) || true
	if [ -n "$summary" ] && [ -z "$found" ] &&
	   ! grep -q Traceback <<<"$out"; then
		echo "ok $n $kver/$p: $summary"
		passed=$((passed + 1))
	else
		sed 's/^/# /' <<<"$out"
		echo "not ok $n $kver/$p: ${summary:-checkpatch gave no summary}"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
