#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# One option convention for every program make install installs (bin and
# sbin, whatever they are):
#   -h, --help      exit 0, usage on stdout, its exit codes listed;
#   -V, --version   exit 0, one line "NAME (secbuf) VERSION";
#   an unknown option: nothing on stdout, one line on stderr,
#                   "NAME: unknown option X; try NAME --help", exit 2;
#   its man page has an EXIT STATUS section.
# usage: tests/options.sh BINDIR   (prints TAP)
set -u
# shellcheck source=tree.sh
. "$(dirname "$0")/tree.sh" options
version=$(sed -n 's/^VERSION *:= *//p' "$top/mk/common.mk")
dest=$tmp/dest
ok "make install DESTDIR=... PREFIX=/usr" make -s -C "$top" install DESTDIR="$dest" PREFIX=/usr
progs=$(cd "$dest/usr" && find bin sbin -type f -perm -u+x 2>/dev/null | sort)
ok "make install installs programs ($(echo $progs))" test -n "$progs"

# follows NAME PATH: every rule, the first broken one on stdout.
follows() {
	local name=$1 p=$2 out err rc opt man
	for opt in -h --help; do
		out=$("$p" "$opt" 2>/dev/null)
		rc=$?
		[ $rc = 0 ] || { echo "$opt exits $rc"; return 1; }
		grep -qi '^usage' <<<"$out" || { echo "$opt prints no usage on stdout"; return 1; }
		grep -qiE 'exit (status|codes?)' <<<"$out" || { echo "$opt lists no exit codes"; return 1; }
	done
	for opt in -V --version; do
		out=$("$p" "$opt" 2>&1)
		rc=$?
		[ $rc = 0 ] && [ "$out" = "$name (secbuf) $version" ] ||
			{ echo "$opt: exit $rc, \"$(head -c 200 <<<"$out" | tr '\n' '|')\""; return 1; }
	done
	for opt in --no-such-option -@; do
		out=$("$p" "$opt" 2>"$tmp/err" </dev/null)
		rc=$?
		err=$(cat "$tmp/err")
		[ $rc = 2 ] && [ -z "$out" ] && [ "$err" = "$name: unknown option $opt; try $name --help" ] ||
			{ echo "$opt: exit $rc, stderr \"$(head -c 200 <<<"$err" | tr '\n' '|')\""; return 1; }
	done
	man=$(find "$dest/usr/share/man" -name "$name.[1-8]" | head -1)
	[ -n "$man" ] || { echo "no man page"; return 1; }
	grep -q '^\.SH "*EXIT STATUS' "$man" || { echo "man page ${man##*/} has no EXIT STATUS"; return 1; }
}

for rel in $progs; do
	name=${rel##*/}
	why=$(follows "$name" "$dest/usr/$rel")
	ok "$name: -h/--help, -V/--version, unknown options, EXIT STATUS${why:+ ($why)}" test $? = 0
done
tap_done
