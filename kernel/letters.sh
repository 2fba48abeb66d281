#!/bin/bash
# The cover letters and diffstats of every track, from the patches.
#
# Each version's series is in tracks (kernel/patches/KVER/TRACK/, in the
# order of KVER/series); a track with a 0000-cover-letter.patch is one
# posting.  This applies the series with `git am` to a git tree of the
# pristine linux-source-KVER (kept in the kernel cache) and runs
# `git format-patch --cover-letter` over each track's range.  What git
# writes below the prose, the patch list and the diffstat, replaces the
# letter's; each patch's own diffstat is compared too, and its subject's
# N/M against its place in the track.  Each patch of a posted track is
# addressed as scripts/get_maintainer.pl says (To: the maintainers, Cc:
# the reviewers and lists), with linux-api@ and linux-arch@ for the new
# uAPI; its letter to all of them.
#
#   kernel/letters.sh [KVER...]          rewrite the letters' lists and
#                                        diffstats (default: every version)
#   kernel/letters.sh --check [KVER...]  change nothing; one TAP line per
#                                        letter and per patch, failing where
#                                        a file differs from what git makes
#
# The prose (subject, body, To:/Cc:) stays as written.  Nothing here signs
# off: kernel/sign-off.sh is the one step a person takes before posting.
set -euo pipefail

check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
# shellcheck source=kernel/common.sh
. "$(dirname "$0")/common.sh"
kvers=("$@")
if [ ${#kvers[@]} -eq 0 ]; then
	mapfile -t kvers < <(cd "$kernel_dir/patches" && for d in */series; do dirname "$d"; done)
fi
fail() { echo "letters: error: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Each version's git tree is shared by every clone (the kernel cache):
# two runs at once would apply patches over each other.
exec 8>"$kcache/.letters-lock"
flock 8
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"

# A git tree of the pristine source, its one commit tagged "pristine".
# Debian's tarball ignores everything (its .gitignore ends in "/*"): add -f.
git_tree() {
	local tree=$kout/letters
	if [ ! -f "$tree/.secbuf-letters" ]; then
		echo "==> letters($kver): a git tree of $src_tar" >&2
		rm -rf "$tree"
		mkdir -p "$tree"
		tar -xJf "$src_tar" -C "$tree" --strip-components=1
		(cd "$tree" && git init -q && git add -f -A . &&
		 git -c user.name=pristine -c user.email=pristine@invalid \
			commit -q -m "linux-source-$kver" && git tag pristine) >&2
		touch "$tree/.git/secbuf-letters" "$tree/.secbuf-letters"
	fi
	echo "$tree"
}

# The addressees of a patch: "To: ..." and "Cc: ..." lines, folded.
fold() {	# HEADER: the stdin's lines as one header, one address a line
	awk -v h="$1" 'NF { a[n++] = $0 } END { if (n) for (i = 0; i < n; i++)
		printf "%s%s%s\n", i ? "    " : h ": ", a[i], i < n - 1 ? "," : "" }'
}
addressees() {	# PATCH...
	local f to cc gm=(--no-git --no-git-fallback --no-rolestats)
	# The authors of a Fixes: commit cannot be looked up in this tree.
	grep -q "'fixes!'" "$tree/scripts/get_maintainer.pl" && gm+=(--no-fixes)
	to=$(for f in "$@"; do
		(cd "$tree" && perl scripts/get_maintainer.pl "${gm[@]}" --m --no-r --no-l "$f"); done | awk '!seen[$0]++')
	cc=$( { for f in "$@"; do
		(cd "$tree" && perl scripts/get_maintainer.pl "${gm[@]}" --no-m --r --l "$f"); done
		echo linux-api@vger.kernel.org; echo linux-arch@vger.kernel.org; } |
		awk '!seen[$0]++' | grep -vxF -f <(echo "$to"))
	# get_maintainer.pl's order varies from run to run: sort.
	LC_ALL=C sort <<<"$to" | fold To
	LC_ALL=C sort <<<"$cc" | fold Cc
}
# The To: and Cc: headers a file has, and the file with others instead.
headers_of() { sed -n '1,/^$/p' "$1" | awk 'NF == 0 { exit } /^[^ \t]/ { keep = /^(To|Cc): / } keep'; }
readdress() {	# FILE HEADERS
	awk -v hdr="$2" 'done { print; next }
		/^$/ { if (hdr != "") print hdr; done = 1; print; next }
		/^[^ \t]/ { skip = /^(To|Cc): / } !skip' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}

# The tail git writes under a letter's prose: from "AUTHOR (N):" to "-- ".
tail_of() { sed -n '/^[^ ].* ([0-9]*):$/,/^-- $/p' "$1" | sed '$d'; }
# A patch's diffstat: from its "---" to the first "diff --git".
stat_of() { sed -n '/^---$/,/^diff --git /p' "$1" | sed '1d;$d'; }

for kver in "${kvers[@]}"; do
	kver_select "$kver"
	mapfile -t series < <(series_patches)
	tree=$(git_tree)
	git_() { git -C "$tree" -c user.name=secbuf -c user.email=dev@secbuf.invalid "$@"; }
	git_ am --abort >/dev/null 2>&1 || true
	git_ reset -q --hard pristine
	git_ clean -qfdx -e .secbuf-letters
	# Apply track by track; a track's range starts where the last ended.
	track='' start=pristine
	for p in "${series[@]}" ''; do
		t=${p%%/*}
		if [ -n "$track" ] && [ "$t" != "$track" ]; then
			dir=$series_dir/$track out=$tmp/$kver-$track
			letter=$dir/0000-cover-letter.patch
			if [ -f "$letter" ]; then
				# To: and Cc: of each patch, and of the letter
				patches=()
				for f in "$dir"/0*.patch; do
					[ "$f" = "$letter" ] || patches+=("$f")
				done
				for f in "$dir"/0*.patch; do
					if [ "$f" = "$letter" ]; then
						want=$(addressees "${patches[@]}")
					else
						want=$(addressees "$f")
					fi
					ok=1
					[ "$(headers_of "$f")" = "$want" ] || ok=0
					if [ $ok = 0 ] && [ $check = 0 ]; then
						readdress "$f" "$want"
						ok=1
					fi
					[ $ok = 1 ] || diff <(headers_of "$f") <(echo "$want") | sed 's/^/# /' || true
					tap_result $ok "$kver/$track/$(basename "$f"): To: and Cc: are get_maintainer.pl's, with linux-api@ and linux-arch@"
				done
				git_ format-patch -q --cover-letter -o "$out" "$start..HEAD"
				want=$(tail_of "$out/0000-cover-letter.patch")
				have=$(tail_of "$letter")
				count=$(git_ rev-list --count "$start..HEAD")
				subj=$(grep -m1 '^Subject: ' "$letter")
				ok=1
				[ "$want" = "$have" ] || ok=0
				grep -q " 0/$count\]" <<<"$subj" || ok=0
				if [ $ok = 0 ] && [ $check = 0 ]; then
					{ sed '/^[^ ].* ([0-9]*):$/,$d' "$letter"
					  printf '%s\n\n-- \n' "$want"; sed -n '/^-- $/,$p' "$letter" | sed 1d
					} >"$tmp/letter" && cp "$tmp/letter" "$letter"
					sed -i -E "1,/^$/s|^(Subject: \[[^]]* )0/[0-9]+\]|\10/$count]|" "$letter"
					ok=1
				fi
				if [ $ok = 0 ]; then
					diff <(echo "$have") <(echo "$want") | sed 's/^/# /' || true
				fi
				tap_result $ok "$kver/$track: the letter's subject, patch list and diffstat are git's ($count patches)"
			else
				git_ format-patch -q -o "$out" "$start..HEAD"
			fi
			count=$(git_ rev-list --count "$start..HEAD")
			i=0
			for f in "$dir"/0*.patch; do
				[ "$(basename "$f")" = 0000-cover-letter.patch ] && continue
				i=$((i + 1))
				g=$(find "$out" -name "$(printf %04d "$i")-*.patch" | head -1)
				[ -n "$g" ] || fail "$kver/$track: git made no patch $i"
				ok=1
				[ "$(stat_of "$f")" = "$(stat_of "$g")" ] || ok=0
				subj=$(grep -m1 '^Subject: ' "$f")
				if [ -f "$letter" ] && ! grep -q " $i/$count\]" <<<"$subj"; then
					echo "# $subj: not patch $i of the track"
					ok=0
				fi
				if [ $ok = 0 ] && [ $check = 0 ] && [ "$(stat_of "$f")" != "$(stat_of "$g")" ]; then
					{ sed '/^---$/,$d' "$f"; echo '---'; stat_of "$g"; sed -n '/^diff --git /,$p' "$f"; } >"$tmp/p"
					cp "$tmp/p" "$f"
					ok=1
				fi
				[ $ok = 1 ] || diff <(stat_of "$f") <(stat_of "$g") | sed 's/^/# /' || true
				tap_result $ok "$kver/$track/$(basename "$f"): its diffstat is git's"
			done
			start=$(git_ rev-parse HEAD)
		fi
		[ -n "$p" ] || break
		track=$t
		git_ am -q --keep-cr "$series_dir/$p" >"$tmp/am.log" 2>&1 ||
			{ cat "$tmp/am.log" >&2; fail "$kver/$p does not apply with git am"; }
	done
	git_ reset -q --hard pristine
done
tap_plan
tap_counts
exit "$tap_failed"
