#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# The libraries' man pages as a programmer uses them: every section-3 page
# (but the .so links) has an EXAMPLES section whose program compiles as
# pasted (C99, -pedantic, every warning an error) against the tree's
# libsecbuf (and libsecbuf-seal) and runs to exit 0; every function of
# secbuf.h (and secbuf-seal.h) has a page.
# usage: tests/man-examples.sh BINDIR   (prints TAP; BINDIR is not used)
set -u
# shellcheck source=tree.sh
. "$(dirname "$0")/tree.sh" man-examples
lib=$top/build/lib

ok "the library is built" make -s -C "$top" lib

# One library's pages: those in MANDIR, the functions of HEADER, and the
# libraries its examples link.  The rpath is DT_RPATH (old dtags), which
# the loader also follows for a library's own needs (libsecbuf under
# libsecbuf-seal), where DT_RUNPATH is the executable's only.
pages() {	# pages MANDIR HEADER -lLIB...
	local man=$1 header=$2 missing='' f page name target count src bin rc
	shift 2
	for f in $(sed -n 's/^[a-z].*[ *]\(secbuf_[a-z_]*\)(.*/\1/p' "$header" | sort -u); do
		[ -f "$man/$f.3" ] || missing="$missing $f"
	done
	ok "every function of ${header##*/} has a section-3 page${missing:+ (missing:$missing)}" \
		test -z "$missing"

	# Each page's programs: the .EX blocks of EXAMPLES that open with #include,
	# roff's escapes undone (\e, \-, \(aq, \(dq).
	for page in "$man"/*.3; do
		name=$(basename "$page" .3)
		if grep -q '^\.so ' "$page"; then
			target=$(sed -n 's/^\.so man3\///p' "$page")
			ok "$name(3) is a link to $target, which exists" test -f "$man/$target"
			continue
		fi
		awk -v dir="$tmp" -v name="$name" '
			/^\.SH / { ex = ($0 ~ /^\.SH EXAMPLES/) }
			ex && /^\.EX$/ { inblock = 1; text = ""; next }
			ex && inblock && /^\.EE$/ {
				inblock = 0
				if (text ~ /^#include/) { n++; printf "%s", text > (dir "/" name "-" n ".c") }
				next
			}
			inblock { text = text $0 "\n" }
			END { print n + 0 > (dir "/" name ".count") }
		' "$page"
		count=$(cat "$tmp/$name.count")
		ok "$name(3) has an EXAMPLES program ($count)" test "$count" -ge 1
		for src in "$tmp/$name"-*.c; do
			[ -f "$src" ] || continue
			sed -i 's/\\e/\\/g; s/\\-/-/g; s/\\(aq/'"'"'/g; s/\\(dq/"/g' "$src"
			bin=${src%.c}
			ok "$name(3)'s example compiles as C99, -pedantic, warning-free" \
				cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$top/include" -o "$bin" "$src" \
				-L"$lib" -Wl,--disable-new-dtags,-rpath,"$lib" "$@"
			"$bin" >"$bin.out" 2>&1
			rc=$?
			ok "$name(3)'s example runs to exit 0 (exit $rc)" test $rc -eq 0
			[ $rc -eq 0 ] || sed 's/^/# /' "$bin.out"
		done
	done
}
pages "$top/libsecbuf/man" "$top/include/secbuf.h" -lsecbuf
pages "$top/libsecbuf/seal" "$top/include/secbuf-seal.h" -lsecbuf-seal -lsecbuf
tap_done
