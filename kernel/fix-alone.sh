#!/bin/bash
# The remap_file_pages() fix of the 6.12 series, alone: build 6.12 with
# only its first patch (the fix, which needs no new uAPI), boot it and
# stock 6.12, and run tests/guest/remap-onfault on both.  Stock must show
# the bug (the VMA comes back locked and populated), the fix alone must
# not.  Not part of make check: it builds a kernel of its own (about 7
# minutes, cached like the others by a hash of patch, config and this
# script).  Prints TAP and "N passed, N failed, N skipped".
#
# usage: kernel/fix-alone.sh
set -euo pipefail

# shellcheck source=kernel/common.sh
. "$(dirname "$0")/common.sh"
kver_select 6.12
fix=$series_dir/$(series_patches | head -1)
fail() { echo "fix-alone: error: $*" >&2; exit 1; }
grep -q '^Fixes: ' "$fix" || fail "$(basename "$fix") is not the fix (no Fixes: tag)"

# Same config as the stock kernel of this version: only the patch differs.
stock=$("$top/kernel/build.sh" stock "$kver")
hash=$( { cat "$0" "$fix" "$stock/.config"; } | sha256sum | cut -c1-16)
tree=$kout/fix-alone-$hash
if [ ! -f "$tree/.secbuf-built" ]; then
	exec 9>"$kcache/.lock"
	flock 9
	rm -rf "$kout"/fix-alone-*
	mkdir -p "$tree"
	echo "==> fix-alone: unpack, apply $(basename "$fix"), build bzImage" >&2
	tar -xJf "$src_tar" -C "$tree" --strip-components=1
	patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -N <"$fix" >/dev/null ||
		fail "$(basename "$fix") does not apply alone"
	cp "$stock/.config" "$tree/.config"
	make -C "$tree" -s olddefconfig >"$tree/build.log" 2>&1
	make -C "$tree" -j"$(nproc)" bzImage >>"$tree/build.log" 2>&1 ||
		{ tail -40 "$tree/build.log" >&2; fail "build failed"; }
	touch "$tree/.secbuf-built"
	exec 9>&-
fi

make -s -C "$top" guest-image >/dev/null
echo "1..2"
# run KERNEL: the guest's TAP of remap-onfault
run() {
	"$top/qemu/run-guest" --kernel "$1" --timeout 300 remap-fix >/dev/null 2>&1 || true
	cat "$top/build/logs/remap-fix/tests.log" 2>/dev/null
}
out=$(run stock-6.12)
sed 's/^/# stock: /' <<<"$out"
if grep -q '^not ok 2 ' <<<"$out" && grep -q '^not ok 3 ' <<<"$out"; then
	echo "ok 1 stock 6.12 has the bug: the VMA comes back locked and populated"
	s1=1
else
	echo "not ok 1 stock 6.12 did not show the bug the fix is for"
	s1=0
fi
out=$(run "$tree/arch/x86/boot/bzImage")
sed 's/^/# fix alone: /' <<<"$out"
if grep -q '^ok 1 ' <<<"$out" && grep -q '^ok 2 ' <<<"$out" && grep -q '^ok 3 ' <<<"$out" &&
   ! grep -q '^not ok' <<<"$out"; then
	echo "ok 2 6.12 with $(basename "$fix") alone keeps the VMA locked on fault, unpopulated"
	s2=1
else
	echo "not ok 2 6.12 with $(basename "$fix") alone"
	s2=0
fi
echo "$((s1 + s2)) passed, $((2 - s1 - s2)) failed, 0 skipped"
[ $((s1 + s2)) -eq 2 ]
