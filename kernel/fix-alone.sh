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
# The tree is keyed by what goes into it (not by this script, whose
# checks can change without a rebuild).
stock=$("$top/kernel/build.sh" stock "$kver")
hash=$( { echo "fix-alone tree: bzImage, headers_install"; cat "${fixes[@]}" "$stock/.config"; } |
	sha256sum | cut -c1-16)
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
GUEST_BIN=$bins SELFTESTS=mlock2-tests "$top/kernel/selftests.sh" "$kver" "$tree" 2>/dev/null ||
	fail "mlock2-tests of the fix tree does not build"
cp "$bins/linux-$kver/mlock2-tests" "$top/build/guest/bin/linux-$kver/mlock2-tests-fix"
"$top/qemu/mkimage" >/dev/null

echo "1..3"
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
# run KERNEL: run-guest's lines for the remap-fix suite (PASS/FAIL/SKIP
# suite/test: TAP line), which runs mlock2-tests-fix and remap-onfault;
# the programs' own output is left in $log
log=$(mktemp)
trap 'rm -rf "$bins" "$log"' EXIT
run() {
	"$top/qemu/run-guest" --kernel "$1" --timeout 300 remap-fix 2>&1 || true
	tr -d '\r' <"$top/build/logs/remap-fix/tests.log" >"$log"
}
# the lines of one program; the selftest's own lines name remap_file_pages
of() { grep -E "^(PASS|FAIL|SKIP) remap-fix/$1: " <<<"$2" || true; }
# mlock2-tests' own output: 6.12's is TAP, one line per case; 6.1's
# prints only what failed, one message per case, and exits non-zero then.
selftest_out() { sed -n '/^SECBUF-BEGIN mlock2-tests-fix$/,/^SECBUF-END mlock2-tests-fix /p' "$log" | sed '1d;$d'; }
# ROUND: "bug" if the fix's case failed and no other did, "fixed" if
# every case passed, "other" if another case failed
verdict() {
	local out rc tap
	out=$(selftest_out)
	rc=$(sed -n 's/^SECBUF-END mlock2-tests-fix rc=//p' "$log")
	tap=$(grep -E '^(not )?ok [0-9]+ ' <<<"$out" || true)
	if [ -n "$tap" ]; then
		if grep -v remap_file_pages <<<"$tap" | grep -q '^not ok'; then echo other
		elif grep remap_file_pages <<<"$tap" | grep -q '^not ok'; then echo bug
		elif grep remap_file_pages <<<"$tap" | grep -q '^ok' && [ "$rc" = 0 ]; then echo fixed
		else echo other; fi
	elif [ "$rc" = 0 ] && [ -z "$(grep -v '^#' <<<"$out")" ]; then
		echo fixed
	elif [ "$rc" != 0 ] && grep -q remap_file_pages <<<"$out" &&
	     [ "$(grep -vc '^#' <<<"$out")" -eq "$(grep -c remap_file_pages <<<"$out")" ]; then
		echo bug
	else
		echo other
	fi
}

out=$(run "stock-$kver")
sed 's/^/# stock: /' <<<"$out"
selftest_out | sed 's/^/# stock, mlock2-tests-fix: /'
v=$(verdict)
ok=0
if [ "$v" = bug ] && of remap-onfault "$out" | grep -q '^FAIL'; then ok=1; fi
tap_result $ok "stock $kver has the bug: the fix's own selftest fails (mlock2-tests-fix: $v), and remap-onfault"
ok=0; [ "$v" = bug ] && ok=1
tap_result $ok "stock $kver fails no other case of mlock2-tests"

out=$(run "$tree/arch/x86/boot/bzImage")
sed 's/^/# fix alone: /' <<<"$out"
selftest_out | sed 's/^/# fix alone, mlock2-tests-fix: /'
v=$(verdict)
ok=0
if [ "$v" = fixed ] && of remap-onfault "$out" | grep -q '^PASS' && ! grep -q '^FAIL' <<<"$out"; then ok=1; fi
tap_result $ok "$kver with the fix set alone passes the fix's selftest and every other case of mlock2-tests (mlock2-tests-fix: $v), and remap-onfault"
tap_counts
exit "$tap_failed"
