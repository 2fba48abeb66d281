#!/bin/bash
# Prove the series of kernel/patches/KVER bisectable: in one pristine tree
# (KVER/bisect in the kernel cache), apply its patches one at a time, exactly as
# kernel/build.sh does, and build bzImage after each, with the .config of
# the patched kernel (kernel/build.sh patched KVER makes it).  The
# selftests of the series are compiled too once they exist.  One TAP line
# per patch; logs in KVER/bisect-logs there.
#
# usage: kernel/bisect.sh [KVER]     KVER: 6.1 (default) or 6.12
set -euo pipefail

# shellcheck source=kernel/common.sh
. "$(dirname "$0")/common.sh"
kver_select "${1:-}"
out=$kout
tree=$out/bisect
fail() { echo "bisect($kver): error: $*" >&2; exit 1; }

config=$("$top/kernel/build.sh" patched "$kver")/.config
[ -r "$config" ] || fail "no $config"

mapfile -t patches < <(series_patches)

# Same lock as kernel/build.sh: one kernel build at a time.
exec 9>"$kcache/.lock"
flock 9

# Warnings of the pristine tree, keyed without line numbers, so that only
# warnings a patch brings count against it.
warnings() { { grep -E 'warning:' "$1" || true; } | sed -E 's/:[0-9]+:[0-9]+:/:/' | sort -u; }

# The pristine tree, built once, is kept for the next run (.secbuf-baseline).
# A run patches and builds it where it was built, since in a copy elsewhere
# objtool, which records its path, and with it every object would be
# rebuilt; a copy taken first is moved back when the run ends.
pristine=$out/bisect-pristine
logs=$out/bisect-logs
if [ -d "$pristine" ]; then
	echo "==> bisect($kver): put back the baseline of a run that was cut short" >&2
	rm -rf "$tree"
	mv "$pristine" "$tree"
fi
if [ ! -f "$tree/.secbuf-baseline" ] || ! cmp -s "$config" "$tree/.secbuf-baseline"; then
	echo "==> bisect($kver): unpack $src_tar" >&2
	rm -rf "$tree"
	mkdir -p "$tree"
	tar -xJf "$src_tar" -C "$tree" --strip-components=1
	cp "$config" "$tree/.config"
	make -C "$tree" -s olddefconfig
	echo "==> bisect($kver): baseline build" >&2
	make -C "$tree" -j2 bzImage >"$tree/bisect-0.log" 2>&1 || fail "pristine tree does not build"
	warnings "$tree/bisect-0.log" >"$tree/warnings-0"
	cp "$config" "$tree/.secbuf-baseline"
fi
echo "==> bisect($kver): keep a copy of the baseline tree" >&2
rm -rf "$logs"
mkdir -p "$logs"
cp "$tree/warnings-0" "$logs/warnings-0"
cp -a "$tree" "$pristine"
trap 'rm -rf "$tree" && mv "$pristine" "$tree"' EXIT

echo "1..${#patches[@]}"
n=0 passed=0 failed=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	log=$logs/bisect-$n.log
	t0=$SECONDS
	res=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -N \
		< "$series_dir/$p" 2>&1) || { echo "$res" | sed 's/^/# /'; fail "$p does not apply"; }
	if grep -Eq 'with fuzz|offset|FAILED|reject' <<<"$res"; then
		echo "$res" | sed 's/^/# /'
		fail "$p applies only with fuzz or offset"
	fi
	ok=1
	make -C "$tree" -j2 bzImage >"$log" 2>&1 || ok=0
	if [ $ok = 1 ] && warnings "$log" | comm -23 - "$logs/warnings-0" |
			sed 's/^/# new: /' | grep .; then
		ok=0
	fi
	if [ $ok = 1 ] && compgen -G "$tree/tools/testing/selftests/*/lock-on-fault.c" >/dev/null; then
		{ make -C "$tree" -s headers_install INSTALL_HDR_PATH="$tree/usr" &&
		  GUEST_BIN=$tree/guest-bin "$top/kernel/selftests.sh" "$kver" "$tree"; } >>"$log" 2>&1 || ok=0
	fi
	if [ $ok = 1 ]; then
		echo "ok $n $p builds ($((SECONDS - t0)) s)"
		passed=$((passed + 1))
	else
		tail -20 "$log" | sed 's/^/# /'
		echo "not ok $n $p does not build (log: ${log#"$top"/})"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
