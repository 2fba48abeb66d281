# shellcheck shell=bash disable=SC2034
# Sourced by kernel/*.sh: which kernel a script works on, and what belongs
# to that kernel.  Each version the project supports has its series in
# kernel/patches/KVER/ and its source in Debian's linux-source-KVER.
#
#   kver_select [KVER]   sets kver, src_pkg, src_tar, series_dir, kout
#                        (KVER in the cache) and config_fragments (those of
#                        kernel/config/, kernel/config/KVER/ if any, then
#                        kernel/config/ARCH/ and, on arm64, ARCH/PAGES/);
#                        KVER defaults to 6.1
#   series_patches       prints the patches of the series, in order
#
# The machine comes from the environment: KARCH=x86_64 (default) or arm64,
# and on arm64 KPAGES=4k (default) or 64k.  kmake is make for that machine
# (cross-compiling arm64), kimage the boot image's path inside a tree.

kernel_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$kernel_dir/.." && pwd)

# Kernel trees live outside the clone, keyed by content hash, so that a
# fresh clone (CI's) reuses what an earlier one built: each is ~1 GiB and
# ten minutes of both cores.  SECBUF_CACHE moves it; without a home, the
# clone's build/ is the cache.
if [ -n "${SECBUF_CACHE:-}" ]; then
	kcache=$SECBUF_CACHE/kernel
elif [ -n "${XDG_CACHE_HOME:-}" ] || [ -n "${HOME:-}" ]; then
	kcache=${XDG_CACHE_HOME:-$HOME/.cache}/secbuf/kernel
else
	kcache=$top/build/kernel
fi
mkdir -p "$kcache"

karch=${KARCH:-x86_64} kpages=${KPAGES:-4k}
case "$karch/$kpages" in
x86_64/4k)
	kmake=(make) kimage=arch/x86/boot/bzImage ;;
arm64/4k | arm64/64k)
	kmake=(make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-) kimage=arch/arm64/boot/Image ;;
*)
	echo "kernel: no build for KARCH=$karch KPAGES=$kpages (have x86_64/4k, arm64/4k, arm64/64k)" >&2
	exit 2 ;;
esac

kver_select() {
	kver=${1:-6.1}
	series_dir=$kernel_dir/patches/$kver
	if [ ! -f "$series_dir/series" ]; then
		echo "kernel: no series for Linux '$kver' (have: $(cd "$kernel_dir/patches" && echo */ | tr -d /))" >&2
		exit 2
	fi
	src_pkg=linux-source-$kver
	src_tar=/usr/src/$src_pkg.tar.xz
	kout=$kcache/$kver
	[ "$karch" = x86_64 ] || kout=$kcache/$karch-$kpages/$kver
	local d
	config_fragments=("$kernel_dir"/config/*.config)
	for d in "$kver" "$karch" "$karch/$kpages"; do
		if [ -d "$kernel_dir/config/$d" ]; then
			config_fragments+=("$kernel_dir/config/$d"/*.config)
		fi
	done
}

series_patches() {
	local p
	while read -r p; do
		p=${p%%#*}; p=${p//[[:space:]]/}
		[ -n "$p" ] && echo "$p"
	done < "$series_dir/series"
}
