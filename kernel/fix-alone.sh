#!/bin/bash
# The remap_file_pages() fix alone, with its own regression selftest: build
# KVER with only the patches of kernel/patches/KVER/fix (the fix, its
# selftest and, on 6.1, what they need), boot it and stock KVER, and run
# on both the selftest it adds to mlock2-tests (built from that tree) and
# tests/guest/remap-onfault.  Both use mainline calls only
# (mlock2(MLOCK_ONFAULT), remap_file_pages()).  Stock must show the bug
# (the VMA comes back locked and populated), the fix alone must not, and
# every other case of mlock2-tests must pass on both.  Not part of make
# check: it builds a kernel of its own (about 7 minutes, cached like the
# others by a hash of patches, config and this script).  Prints TAP and
# "N passed, N failed, N skipped".
#
# usage: kernel/fix-alone.sh [KVER]     KVER: 6.12 (default) or 6.1
set -euo pipefail

# shellcheck source=kernel/common.sh
. "$(dirname "$0")/common.sh"
kver_select "${1:-6.12}"
fail() { echo "fix-alone($kver): error: $*" >&2; exit 1; }
[ -f "$series_dir/fix" ] || fail "no ${series_dir#"$top"/}/fix"
fixes=()
while read -r p; do
	p=${p%%#*}; p=${p//[[:space:]]/}
	[ -n "$p" ] && fixes+=("$series_dir/$p")
done <"$series_dir/fix"
[ ${#fixes[@]} -gt 0 ] || fail "${series_dir#"$top"/}/fix lists no patch"
grep -l '^Fixes: ' "${fixes[@]}" >/dev/null || fail "no patch of the fix set has a Fixes: tag"
grep -l '^+.*remap_file_pages' "${fixes[@]}" | grep -q selftests ||
	grep -q 'selftests/.*mlock2-tests.c' "${fixes[@]}" || fail "the fix set has no selftest"

# Same config as the stock kernel of this version: only the patches differ.
stock=$("$top/kernel/build.sh" stock "$kver")
hash=$( { cat "$0" "${fixes[@]}" "$stock/.config"; } | sha256sum | cut -c1-16)
tree=$kout/fix-alone-$hash
if [ ! -f "$tree/.secbuf-built" ]; then
	exec 9>"$kcache/.lock"
	flock 9
	rm -rf "$kout"/fix-alone-*
	mkdir -p "$tree"
	echo "==> fix-alone($kver): unpack, apply ${#fixes[@]} patches, build bzImage" >&2
	tar -xJf "$src_tar" -C "$tree" --strip-components=1
	for p in "${fixes[@]}"; do
		patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -N <"$p" >/dev/null ||
			fail "$(basename "$p") does not apply on the fix set alone"
	done
	cp "$stock/.config" "$tree/.config"
	make -C "$tree" -s olddefconfig >"$tree/build.log" 2>&1
	make -C "$tree" -j"$(nproc)" bzImage >>"$tree/build.log" 2>&1 ||
		{ tail -40 "$tree/build.log" >&2; fail "build failed"; }
	make -C "$tree" -s headers_install INSTALL_HDR_PATH="$tree/usr" >>"$tree/build.log" 2>&1
	touch "$tree/.secbuf-built"
	exec 9>&-
fi

# mlock2-tests of the fix tree, as mlock2-tests-fix beside the guest's
# programs for this version.
make -s -C "$top" guest >/dev/null
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
GUEST_BIN=$bins SELFTESTS=mlock2-tests "$top/kernel/selftests.sh" "$kver" "$tree" 2>/dev/null ||
	fail "mlock2-tests of the fix tree does not build"
cp "$bins/linux-$kver/mlock2-tests" "$top/build/guest/bin/linux-$kver/mlock2-tests-fix"
"$top/qemu/mkimage" >/dev/null

echo "1..3"
n=0 passed=0
result() {	# OK TEXT
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n $2"
		passed=$((passed + 1))
	else
		echo "not ok $n $2"
	fi
}
# run KERNEL: run-guest's lines for the remap-fix suite (PASS/FAIL/SKIP
# suite/test: TAP line), which runs mlock2-tests-fix and remap-onfault
run() { "$top/qemu/run-guest" --kernel "$1" --timeout 300 remap-fix 2>&1 || true; }
# the lines of one program; the selftest's own lines name remap_file_pages
of() { grep -E "^(PASS|FAIL|SKIP) remap-fix/$1: " <<<"$2" || true; }

out=$(run "stock-$kver")
sed 's/^/# stock: /' <<<"$out"
own=$(of mlock2-tests-fix "$out" | grep remap_file_pages || true)
others=$(of mlock2-tests-fix "$out" | grep -v remap_file_pages || true)
ok=0
if grep -q '^FAIL' <<<"$own" && of remap-onfault "$out" | grep -q '^FAIL'; then ok=1; fi
result $ok "stock $kver has the bug: the fix's own selftest fails, and remap-onfault"
ok=0
if grep -q '^PASS' <<<"$others" && ! grep -q '^FAIL' <<<"$others"; then ok=1; fi
result $ok "stock $kver passes every other case of mlock2-tests ($(grep -c '^PASS' <<<"$others") passed)"

out=$(run "$tree/arch/x86/boot/bzImage")
sed 's/^/# fix alone: /' <<<"$out"
own=$(of mlock2-tests-fix "$out" | grep remap_file_pages || true)
ok=0
if grep -q '^PASS' <<<"$own" && ! grep -q '^FAIL' <<<"$own" &&
   of remap-onfault "$out" | grep -q '^PASS' && ! grep -q '^FAIL' <<<"$out"; then ok=1; fi
result $ok "$kver with the fix set alone passes the fix's selftest, remap-onfault and every other case ($(grep -c '^PASS' <<<"$out") passed)"
echo "$passed passed, $((n - passed)) failed, 0 skipped"
[ "$passed" -eq "$n" ]
