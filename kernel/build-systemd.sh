#!/bin/bash
# Build the Debian guest's kernel: the patched tree of kernel/build.sh
# (built or found in the cache first) with kernel/config/systemd/*.config
# merged on top: what systemd needs as PID 1 and for secbufd.service's
# sandbox.  The tinyconfig test kernels stay as they are; this variant is a
# copy of the patched tree, rebuilt only where the new options reach.  It
# is cached beside them (~/.cache/secbuf/kernel/KVER/systemd-HASH, see
# common.sh) by a hash of the patched tree's name (itself a content hash),
# this script and the fragments.
#
# usage: kernel/build-systemd.sh [KVER]     KVER: 6.1 (default)
# Prints the tree's path.
set -euo pipefail

kdir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=kernel/common.sh
. "$kdir/common.sh"
kver_select "${1:-}"
out=$kout

stage() { echo "==> kernel(systemd $kver): $*" >&2; }
fail() { echo "kernel(systemd $kver): error: $*" >&2; exit 1; }

base=$("$kdir/build.sh" patched "$kver")
fragments=("$kdir"/config/systemd/*.config)
[ -r "${fragments[0]}" ] || fail "no fragment in $kdir/config/systemd"
hash=$( {
	basename "$base"
	cat "$kdir/build-systemd.sh" "${fragments[@]}"
} | sha256sum | cut -c1-16)
tree=$out/systemd-$hash

if [ -f "$tree/.secbuf-built" ]; then
	ln -sfn "$(basename "$tree")" "$out/systemd"
	stage "cached $(basename "$tree")"
	echo "$tree"
	exit 0
fi

# The same lock as kernel/build.sh: one kernel build at a time.
exec 9>"$kcache/.lock"
flock 9
if [ -f "$tree/.secbuf-built" ]; then
	ln -sfn "$(basename "$tree")" "$out/systemd"
	echo "$tree"
	exit 0
fi

t0=$SECONDS
rm -rf "$tree"
stage "copy $(basename "$base") (objects too: only what the new options touch is rebuilt)"
cp -a --reflink=auto "$base" "$tree"
rm -f "$tree/.secbuf-built"
log=$tree/build-systemd.log
: >"$log"

stage "configure: the patched tree's .config + ${fragments[*]#"$kdir/config/"}"
(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "${fragments[@]}") >>"$log" 2>&1 ||
	{ tail -50 "$log" >&2; fail "merge_config failed (log: $log)"; }
make -C "$tree" -s olddefconfig >>"$log" 2>&1 || { tail -50 "$log" >&2; fail "olddefconfig failed"; }

# Every option of every fragment the tree was built from must still hold.
dropped=()
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) grep -qxF "$line" "$tree/.config" || dropped+=("$line") ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		grep -q "^$opt=" "$tree/.config" && dropped+=("$line") ;;
	esac
done < <(cat "${config_fragments[@]}" "${fragments[@]}")
if [ ${#dropped[@]} -gt 0 ]; then
	printf '  %s\n' "${dropped[@]}" >&2
	fail "${#dropped[@]} option(s) did not land in .config (unmet dependencies?)"
fi

# Niced: the machine's two cores are shared.
stage "build bzImage with -j$(nproc), niced (log: $log)"
tb=$SECONDS
if ! nice make -C "$tree" -j"$(nproc)" bzImage >>"$log" 2>&1; then
	tail -60 "$log" >&2
	fail "kernel build failed (full log: $log)"
fi
stage "bzImage built in $((SECONDS - tb)) s"

touch "$tree/.secbuf-built"
ln -sfn "$(basename "$tree")" "$out/systemd"
# Keep the two newest, as kernel/build.sh does for its variants.
find "$out" -maxdepth 1 -name "systemd-*" -printf '%T@ %p\n' | sort -rn | tail -n +3 |
	cut -d' ' -f2- | while IFS= read -r old; do rm -rf "$old"; done
stage "done in $((SECONDS - t0)) s"
echo "$tree"
