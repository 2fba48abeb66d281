#!/bin/bash
# The one step a person takes before posting: certify the Developer's
# Certificate of Origin (Documentation/process/submitting-patches.rst) for
# every patch of the tracks meant for posting, by adding their
# Signed-off-by: as the last trailer and making them the From: of each
# patch and letter.  The series carries no sign-off until then, because a
# project name cannot certify the DCO.  Run it only if you can.
#
# usage: kernel/sign-off.sh "Full Name <address>" [KVER/TRACK...]
#        (default: upstream and seed of every version; local/ is never
#        posted, so never signed)
# The letters' patch lists name the new author: kernel/letters.sh redoes
# them (it runs here).  Then post with
#   git send-email kernel/patches/KVER/TRACK/*.patch
set -euo pipefail

person=${1:-}
if ! [[ $person =~ ^[^\<\>]+\ \<[^@\<\>\ ]+@[^@\<\>\ ]+\>$ ]]; then
	sed -n '2,/^set /s/^# \{0,1\}//p' "$0" >&2
	echo "sign-off: give your name and address as \"Full Name <address>\"" >&2
	exit 2
fi
shift
patches=$(cd "$(dirname "$0")" && pwd)/patches
tracks=("$@")
if [ ${#tracks[@]} -eq 0 ]; then
	mapfile -t tracks < <(cd "$patches" && ls -d -- */upstream */seed 2>/dev/null)
fi

n=0
for t in "${tracks[@]}"; do
	case "$t" in */local) echo "sign-off: $t is never posted" >&2; exit 2 ;; esac
	[ -d "$patches/$t" ] || { echo "sign-off: no track $t" >&2; exit 2; }
	for f in "$patches/$t"/0*.patch; do
		# From: of the mail; Signed-off-by: last, after the other
		# trailers (a blank line first if there are none); once only.
		cover=0
		[ "$(basename "$f")" = 0000-cover-letter.patch ] && cover=1
		awk -v who="$person" -v cover=$cover '
			!head_done && /^From: / { print "From: " who; next }
			!head_done && /^$/ { head_done = 1 }
			head_done && !cover && !cut && /^---$/ {
				cut = 1
				if (!signed) {
					if (last !~ /^[A-Za-z-]+: /) print ""
					print "Signed-off-by: " who
				}
			}
			!cut && $0 == "Signed-off-by: " who { signed = 1 }
			{ print; if (!cut) last = $0 }
		' "$f" >"$f.tmp"
		mv "$f.tmp" "$f"
		n=$((n + 1))
	done
done
echo "sign-off: $n files of ${tracks[*]} now from and signed off by $person"
mapfile -t kvers < <(printf '%s\n' "${tracks[@]%%/*}" | sort -u)
"$(dirname "$0")/letters.sh" "${kvers[@]}" | tail -1
