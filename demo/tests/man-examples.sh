#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# The libraries' man pages as a programmer uses them: every section-3 page
# (but the .so links) has an EXAMPLES section whose program compiles as
# pasted (C99, -pedantic, every warning an error) against the tree's
# libsecbuf (and libsecbuf-seal) and runs to exit 0; every function of
# secbuf.h (and secbuf-seal.h) has a page.  secbuf-audit(8), secbufd(8)
# and secbuf(7) have EXAMPLES too, shell sessions: the user's run as
# written, root's on a live system are skipped (sessions, below).
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

# The programs' pages and the threat model's: each has EXAMPLES, whose .EX
# blocks are shell sessions.  A session of the user's ("$ " prompts) runs
# as written, the prompts taken off and the output lines left out, in one
# bash -e, in a scratch directory that is also HOME, with the tree's
# programs (build/demo, build/bin) first in PATH and site.key, an Ed25519
# key, for secbuf-audit's --key; whatever it left running is stopped
# after it.  A session with root's "# " prompt is a command on a live
# system (nginx, systemd, sysctl): skipped, and said.
sessions() {	# sessions PAGE...
	local page base name dir n i rc
	for page; do
		base=$(basename "$page")
		name="${base%.*}(${base##*.})"
		dir=$tmp/session-$base
		mkdir -p "$dir" || return 1
		sed 's/\\e/\\/g; s/\\-/-/g; s/\\(aq/'"'"'/g; s/\\(dq/"/g; s/\\[&%]//g' "$page" |
			awk -v dir="$dir" '
			/^\.SH / { ex = ($0 ~ /^\.SH EXAMPLES/) }
			ex && /^\.EX$/ { inblock = 1; n++; kind = "user"; cont = 0; out = dir "/" n ".sh"; printf "" > out; next }
			ex && inblock && /^\.EE$/ { inblock = 0; print kind > (dir "/" n ".kind"); close(out); next }
			inblock && /^# / && kind != "root" { kind = "root"; print > (dir "/" n ".first") }
			inblock {
				if (sub(/^\$ /, "")) print > out
				else if (cont) print > out
				else next
				cont = /\\$/
			}
			END { print n + 0 > (dir "/count") }'
		n=$(cat "$dir/count")
		ok "$name has EXAMPLES ($n sessions)" test "$n" -ge 1
		for ((i = 1; i <= n; i++)); do
			if [ "$(cat "$dir/$i.kind")" = root ]; then
				skip "root's commands on a live system: $(cat "$dir/$i.first")" \
					"$name's EXAMPLES session $i"
				continue
			fi
			sed 's/^/#   $ /' "$dir/$i.sh"
			if grep -q site.key "$dir/$i.sh" && [ ! -f "$dir/site.key" ] &&
				! openssl genpkey -algorithm ed25519 -out "$dir/site.key" 2>/dev/null; then
				skip "no openssl to make site.key" "$name's EXAMPLES session $i"
				continue
			fi
			# A session of its own (setsid: not a group leader here, so no
			# fork), so that its background jobs can be stopped after it.
			(cd "$dir" && HOME=$dir PATH=$top/build/demo:$top/build/bin:$PATH \
				exec setsid timeout --foreground 60 bash -e "$dir/$i.sh") >"$dir/$i.out" 2>&1 &
			wait $!
			rc=$?
			kill -- -$! 2>/dev/null # most often no one is left to stop
			ok "$name's EXAMPLES session $i runs as written (exit $rc)" test $rc -eq 0
			[ $rc -eq 0 ] || tail -n 20 "$dir/$i.out" | sed 's/^/# /'
		done
	done
}
ok "the programs are built" make -s -C "$top/demo" all
sessions "$top/demo/man/secbuf-audit.8" "$top/demo/man/secbufd.8" "$top/libsecbuf/man/secbuf.7"
tap_done
