#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# The README as a new user follows it: every block marked
# "<!-- demo/tests/readme.sh runs this block -->" is run, in order, from the
# top of the tree, in one shell that stops at the first error; a block
# marked "saves this block as FILE" is saved there first.  HOME is a fresh
# directory, so "make install PREFIX=$HOME/.local" installs nothing outside
# it.  (Blocks that need root, apt or QEMU are not marked.)
# usage: tests/readme.sh BINDIR   (prints TAP; BINDIR is not used)
set -u
# shellcheck source=tree.sh
. "$(dirname "$0")/tree.sh" readme
unset PKG_CONFIG_PATH LD_LIBRARY_PATH
mkdir "$tmp/home"

# The marked blocks: "run" ones into script.sh, "saves" ones into their files.
awk -v home="$tmp/home" -v script="$tmp/script.sh" '
	/^<!-- demo\/tests\/readme.sh runs this block -->/ { want = "run"; next }
	/^<!-- demo\/tests\/readme.sh saves this block as / {
		want = "save"; file = $7; sub(/^~/, home, file); next
	}
	want != "" && /^```/ { inblock = 1; mode = want; want = ""; blocks++; next }
	inblock && /^```/ { inblock = 0; next }
	inblock && mode == "run" { print > script }
	inblock && mode == "save" { print > file }
	END { print blocks + 0 > "/dev/stderr" }
' "$top/README.md" 2>"$tmp/count"
ok "the README marks its runnable blocks ($(cat "$tmp/count") found; 3 expected)" test "$(cat "$tmp/count")" -ge 3
ok "the example is saved as ~/ex.c" test -s "$tmp/home/ex.c"
sed 's/^/# $ /' "$tmp/script.sh"

(cd "$top" && HOME=$tmp/home bash -eo pipefail "$tmp/script.sh") >"$tmp/out" 2>&1
rc=$?
ok "the README's commands run without an error, as written (exit $rc)" test $rc -eq 0
[ $rc -eq 0 ] || tail -20 "$tmp/out" | sed 's/^/# /'
last=$(tail -n 1 "$tmp/out")
echo "# last line: $last"
ok "the example prints what the README says it prints" \
	grep -qE '^32 bytes, 1 page\(s\) locked with (mlock2|maplockonfault)$' <<<"$last"
ok "make demo-host, as the README runs it, ends with a clean audit" grep -q '==> audit: CLEAN' "$tmp/out"
ok "everything the README installed is under the temporary HOME" \
	test -x "$tmp/home/.local/sbin/secbufd" -a -s "$tmp/home/.local/lib/pkgconfig/secbuf.pc"
tap_done
