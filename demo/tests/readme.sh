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
ok "everything the README installed is under the temporary HOME, user tools in bin, the daemon in sbin" \
	test -x "$tmp/home/.local/sbin/secbufd" -a -x "$tmp/home/.local/bin/secbuf-audit" \
	-a -x "$tmp/home/.local/bin/secbufctl" -a -s "$tmp/home/.local/lib/pkgconfig/secbuf.pc"

# The first screen: what it is for, the comparison, no patch needed, every
# way in, what else one would use; the kernel series' details below it.
sed -n '1,/^## Quick start/p' "$top/README.md" | sed '$d' >"$tmp/first"
lines=$(wc -l <"$tmp/first")
ok "the first screen, before the quick start, fits a screen ($lines lines, at most 45)" test "$lines" -le 45
ok "it says what secbuf is for" grep -qi 'memory for keys and other secrets' "$tmp/first"
ok "it says no kernel patch is needed: mlock2(MLOCK_ONFAULT) on stock kernels, the patch adds MAP_LOCKONFAULT" \
	bash -c 'tr "\n" " " <"$0" | grep -qiE "no kernel patch needed.*mlock2\(MLOCK_ONFAULT\).*MAP_LOCKONFAULT"' "$tmp/first"
ok "it leaves the series' details (munlock2, syscall numbers, Originally-by) to later" \
	bash -c '! grep -qE "munlock2|syscalls 900|Originally-by" "$0"' "$tmp/first"
# The README's anchors as GitHub makes them from the headings.
anchors=$(sed -n 's/^##* //p' "$top/README.md" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 -]//g; s/ /-/g')
# Every way in: a row of the "Every way in" table, with a command and a
# link to a section that exists.
for way in 'secbuf_alloc()' 'secbuf-run openssl' 'nginx' 'secbuf.SecretBuffer' 'secbuf.NewBuffer' \
	'SecretBuf::new' 'secbufd' 'secbuf-audit PID'; do
	line=$(grep -F -- "| " "$tmp/first" | grep -F -m1 -- "$way" || true)
	links=$(grep -o '](#[a-z0-9-]*)' <<<"$line" | sed 's/^](#//; s/)$//')
	bad=0
	for l in $links; do grep -qx -- "$l" <<<"$anchors" || bad=1; done
	ok "a way in: $way, a command in backquotes and a link to its section (${links//$'\n'/ })" \
		bash -c '[ -n "$0" ] && [ -n "$1" ] && [ "$2" = 0 ] && grep -q "\`" <<<"$0"' "$line" "$links" "$bad"
done
# The "instead of" table: what each alternative protects and misses.
for alt in 'encrypted swap' 'swapoff' 'memory.swap.max=0' '| `sodium_malloc` |' "OpenSSL's secure arena" 'memguard'; do
	cells=$(grep -F -- "| " "$tmp/first" | grep -F -m1 -- "$alt" | awk -F'|' '{ print NF - 2 }')
	ok "instead of ${alt//|/}: a row with swap, core dump, forked child, freed memory, hibernation, lock budget ($cells cells)" \
		test "${cells:-0}" -eq 7
done
ok "the lock budget in one sentence: the whole size is charged to RLIMIT_MEMLOCK" \
	bash -c 'tr "\n" " " <"$0" | grep -qE "charges a buffer.s whole size to .RLIMIT_MEMLOCK"' "$tmp/first"

# The comparison: three rows, each figure as bench/results/headline.md has it.
headline=$top/bench/results/headline.md
col() {	# col ROW-LABEL COLUMN: the headline table's figure
	awk -F'|' -v row="$1" -v want="$2" '
		/^\| 1 GiB capacity/ { for (i = 2; i < NF; i++) { h = $i; gsub(/^ +| +$/, "", h); c[h] = i } }
		index($0, "| " row " |") == 1 { v = $(c[want]); gsub(/ /, "", v); print v }' "$headline"
}
rows=$(awk '/^\| 1 GiB buffer, 4 KiB of it used/ { t = 1; next } t && /^\|---/ { next }
	t && /^\|/ { n++ } t && !/^\|/ { t = 0 } END { print n + 0 }' "$tmp/first")
ok "the comparison has 3 rows ($rows)" test "$rows" -eq 3
# readme_figure LABEL COLUMN-NUMBER: a row's figure in ms or kB (GiB -> kB)
readme_figure() {
	awk -F'|' -v label="$1" -v k="$2" 'index($2, label) {
		v = $(k); gsub(/[* ]/, "", v)
		if (v ~ /GiB$/) { sub(/GiB$/, "", v); v *= 1048576 } else sub(/(ms|kB)$/, "", v)
		print v; exit }' "$tmp/first"
}
for pair in "**secbuf**:secbuf" "sodium_malloc:sodium_malloc" "secure heap:openssl_secure"; do
	label=${pair%%:*} column=${pair#*:}
	ms=$(readme_figure "$label" 3) kb=$(readme_figure "$label" 4)
	hms=$(col "alloc + use + free, ms" "$column") hkb=$(col "peak locked resident, kB" "$column")
	ok "row $column: ${ms:-?} ms and ${kb:-?} kB locked, as measured (${hms:-?} ms, ${hkb:-?} kB)" \
		awk -v a="$ms" -v b="$hms" -v c="$kb" -v d="$hkb" 'BEGIN {
			if (a == "" || b == "" || c == "" || d == "") exit 1
			exit !((a - b) ^ 2 <= (b * 0.01) ^ 2 + 0.0001 && (c - d) ^ 2 <= (d * 0.01) ^ 2) }'
done
ok "the quick start installs the host set only, not make deps" \
	bash -c 'q=$(sed -n "/^## Quick start/,/^## /p" "$0" | sed -n "/^\`\`\`sh/,/^\`\`\`/p" | head -5)
		grep -q "make deps-host" <<<"$q" && ! grep -qE "make deps( |$)" <<<"$q"' "$top/README.md"
ok "no \"this host\" where the authors' machine is meant" \
	bash -c '! grep -n "(this host" "$0"' "$top/README.md"
tap_done
