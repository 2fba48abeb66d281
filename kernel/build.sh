#!/bin/bash
# Build the guest kernel: unpack Debian's linux-source-KVER, apply the series
# of kernel/patches/KVER (patched) or not (stock), configure tinyconfig +
# kernel/config/*.config (+ kernel/config/KVER/*.config, options only that
# version has, kernel/config/ARCH/ those of the machine) and build the boot
# image: bzImage, or Image for arm64 (KARCH=arm64 [KPAGES=64k], cross-built,
# see common.sh).  Trees are cached outside the clone
# (~/.cache/secbuf/kernel/KVER/, see common.sh) by a hash of everything that
# goes into them, so an unchanged rebuild, in any clone, is a lookup.
#
# The debug variants (patched-debug, stock-debug) add kernel/config/debug/:
# KASAN, lockdep, DEBUG_VM and friends, for kernel/debug-check.sh.
#
# usage: kernel/build.sh VARIANT [KVER]   VARIANT: patched, stock, patched-debug
#                                         or stock-debug; KVER: 6.1 (default) or 6.12
#        kernel/build.sh VARIANT-KVER     the names tests/guest/suites uses
#        KARCH=arm64 [KPAGES=64k] kernel/build.sh ...   the arm64 guest kernel
# Prints the tree's path.
set -euo pipefail

variant=${1:?usage: kernel/build.sh VARIANT [KVER]} kver=${2:-}
case "$variant" in
*-[0-9]*) kver=${variant##*-} variant=${variant%-*} ;;
esac
case "$variant" in
patched|stock|patched-debug|stock-debug) ;;
*) echo "kernel: unknown variant $variant" >&2; exit 2 ;;
esac
# shellcheck source=kernel/common.sh
. "$(dirname "$0")/common.sh"
kver_select "$kver"
if [ "${variant#*-}" = debug ]; then
	config_fragments+=("$kernel_dir"/config/debug/*.config)
	if [ -d "$kernel_dir/config/debug/$kver" ]; then
		config_fragments+=("$kernel_dir/config/debug/$kver"/*.config)
	fi
fi
kdir=$kernel_dir
out=$kout
mkdir -p "$out"

t0=$SECONDS
label="$variant $kver${KARCH:+ $karch/$kpages}"
stage() { echo "==> kernel($label): $*" >&2; }
fail() { echo "kernel($label): error: $*" >&2; exit 1; }

[ -r "$src_tar" ] || fail "$src_tar missing: run 'make deps'"
src_version=$(dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null || echo unknown)

# Patches in series order; stock builds apply none.
patches=()
if [ "${variant%-debug}" = patched ]; then
	while read -r p; do
		patches+=("$series_dir/$p")
	done < <(series_patches)
fi
for p in "${patches[@]}"; do [ -r "$p" ] || fail "series names missing patch $p"; done

hash=$( {
	echo "$variant $kver $karch $kpages $src_version $(stat -c %s "$src_tar")"
	cat "$kdir/build.sh" "$kdir/common.sh" "${config_fragments[@]}"
	for p in "${patches[@]}"; do basename "$p"; cat "$p"; done
} | sha256sum | cut -c1-16)
tree=$out/$variant-$hash

if [ -f "$tree/.secbuf-built" ]; then
	ln -sfn "$(basename "$tree")" "$out/$variant"
	stage "cached $(basename "$tree")"
	echo "$tree"
	exit 0
fi

# One build at a time, of any version: two cores cannot take more, and
# trees must not race.
exec 9>"$kcache/.lock"
flock 9
if [ -f "$tree/.secbuf-built" ]; then
	ln -sfn "$(basename "$tree")" "$out/$variant"
	echo "$tree"
	exit 0
fi

rm -rf "$tree"
mkdir -p "$tree"
log=$tree/build.log

stage "unpack $src_tar ($src_version)"
tar -xJf "$src_tar" -C "$tree" --strip-components=1

for p in "${patches[@]}"; do
	name=$(basename "$p")
	stage "apply $name"
	if ! res=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -N < "$p" 2>&1); then
		echo "$res" >&2
		fail "patch $name does not apply"
	fi
	if grep -Eq 'with fuzz|offset|FAILED|reject' <<<"$res"; then
		echo "$res" >&2
		fail "patch $name applies only with fuzz or offset; regenerate it"
	fi
done

stage "configure tinyconfig + ${config_fragments[*]#"$kdir/config/"}"
"${kmake[@]}" -C "$tree" -s tinyconfig >>"$log" 2>&1 || { tail -50 "$log" >&2; fail "tinyconfig failed (log: $log)"; }
(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "${config_fragments[@]}") >>"$log" 2>&1 ||
	{ tail -50 "$log" >&2; fail "merge_config failed (log: $log)"; }
"${kmake[@]}" -C "$tree" -s olddefconfig >>"$log" 2>&1 || { tail -50 "$log" >&2; fail "olddefconfig failed"; }

# Kconfig silently drops options whose dependencies are unmet; refuse that.
dropped=()
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) grep -qxF "$line" "$tree/.config" || dropped+=("$line") ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		grep -q "^$opt=" "$tree/.config" && dropped+=("$line") ;;
	esac
done < <(cat "${config_fragments[@]}")
if [ ${#dropped[@]} -gt 0 ]; then
	printf '  %s\n' "${dropped[@]}" >&2
	fail "${#dropped[@]} option(s) of kernel/config did not land in .config (unmet dependencies?)"
fi

target=${kimage##*/}
stage "build $target with -j$(nproc) (log: ${log#"$top"/})"
tb=$SECONDS
if ! "${kmake[@]}" -C "$tree" -j"$(nproc)" "$target" >>"$log" 2>&1; then
	tail -60 "$log" >&2
	fail "kernel build failed (full log: $log)"
fi
stage "$target built in $((SECONDS - tb)) s"

# Userspace test programs compile against this tree's uapi headers.
"${kmake[@]}" -C "$tree" -s headers_install INSTALL_HDR_PATH="$tree/usr" >>"$log" 2>&1 ||
	{ tail -20 "$log" >&2; fail "headers_install failed"; }

touch "$tree/.secbuf-built"
ln -sfn "$(basename "$tree")" "$out/$variant"
# A tree is ~1 GiB; keep the two newest of each variant, so that two
# clones (a branch and main) do not evict each other's on every run.
# (patched-HASH, not patched-debug-HASH: a hash is 16 hex digits)
find "$out" -maxdepth 1 -regextype posix-extended -regex ".*/$variant-[0-9a-f]{16}" -printf '%T@ %p\n' | sort -rn | tail -n +3 |
	cut -d' ' -f2- | while IFS= read -r old; do rm -rf "$old"; done
stage "done in $((SECONDS - t0)) s"
echo "$tree"
