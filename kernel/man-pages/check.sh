#!/bin/bash
# Check the man-pages patch series of this directory against a man-pages
# tree: clone the tree into a temporary directory, apply the series there
# with git am, and lint every page that the series adds or changes.
#
# usage: kernel/man-pages/check.sh MAN_PAGES_TREE
#
# MAN_PAGES_TREE is a git repository of the Linux man-pages project (a work
# tree or a bare mirror); only its committed history is used, and it is not
# modified.  The series is applied to the commit named by the base-commit
# line of 0000-cover-letter.patch if the tree has it, else to the tree's
# HEAD; set BASE=<commit> to choose another commit.
#
# Tests, printed as TAP:
#   - one per patch: git am applies it;
#   - per changed page: groff -man -Tutf8 -ww -z (with -t for pages that
#     need tbl) and, if mandoc is installed, mandoc -Tlint give no warning
#     that the page did not already give before the series (line numbers
#     aside), and man -l renders it;
#   - per changed page, if the tree has its GNUmakefile: the man-pages
#     project's own lint-man.mandoc, lint-man.tbl and check-catman targets
#     pass (skipped for a page that the project lists as an expected
#     failure of that target);
#   - per added .so link page: the target exists and man -l renders it.
# Exits non-zero if any test fails.
set -euo pipefail

usage() { echo "usage: $0 MAN_PAGES_TREE" >&2; exit 2; }
[ $# -eq 1 ] || usage
src=$1
here=$(cd "$(dirname "$0")" && pwd)

command -v git >/dev/null || { echo "$0: git is needed" >&2; exit 2; }
command -v groff >/dev/null || { echo "$0: groff is needed" >&2; exit 2; }
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 ||
	{ echo "$0: $src is not a git repository" >&2; exit 2; }

mapfile -t patches < <(grep -v -e '^#' -e '^[[:space:]]*$' "$here/series")
[ ${#patches[@]} -gt 0 ] || { echo "$0: $here/series is empty" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/man-pages-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree

results=()        # "ok|not ok|skip<TAB>description"
linted=()         # the pages (not .so links) that lint_page checked
diags=()          # diagnostics printed before the TAP lines
add() { results+=("$1	$2"); }
diag() { while IFS= read -r line; do diags+=("# $line"); done <<<"$1"; }

git clone -q --no-checkout "$src" "$tree"
base=${BASE:-$(sed -n 's/^base-commit: //p' "$here/0000-cover-letter.patch")}
if [ -z "$base" ] ||
   ! git -C "$tree" rev-parse -q --verify "$base^{commit}" >/dev/null; then
	diag "base commit ${base:-(none)} not in $src; applying to HEAD"
	base=HEAD
fi
base=$(git -C "$tree" rev-parse "$base^{commit}")
git -C "$tree" checkout -q --detach "$base"
diag "man-pages tree: $src, base commit $base"

# 1. git am, one patch at a time.
applied=yes
for p in "${patches[@]}"; do
	if [ "$applied" = no ]; then
		add "not ok" "git am $p (an earlier patch did not apply)"
		continue
	fi
	if out=$(git -C "$tree" -c user.name=check -c user.email=check@invalid \
			am -q --no-3way "$here/$p" 2>&1); then
		add "ok" "git am $p"
	else
		diag "$out"
		git -C "$tree" am --abort >/dev/null 2>&1 || true
		add "not ok" "git am $p"
		applied=no
	fi
done

# Warnings of a page, with file names and line numbers taken out so that
# those of the page before and after the series can be compared.
groff_warnings() {   # PAGE_FILE
	local t=()
	head -n1 "$1" | grep -q "^'\\\\\" t" && t=(-t)
	(cd "$(dirname "$1")" &&
	 groff "${t[@]}" -man -Tutf8 -ww -z <"$(basename "$1")" 2>&1) || true
}
mandoc_warnings() {  # PAGE_FILE
	mandoc -Tlint -man <"$1" 2>&1 || true
}
normalize() {
	sed -E -e 's/<standard input>|<stdin>/-/g' \
	       -e 's/:[0-9]+(:[0-9]+)?:/:L:/g' \
	       -e 's/(around )?line [0-9]+/line L/g' | sort
}
# Print the warnings of NEW that OLD does not have (as many times).
new_warnings() {     # OLD NEW
	comm -13 <(normalize <<<"$1") <(normalize <<<"$2") | grep -v '^$' || true
}

lint_page() {        # RELATIVE_PATH
	local f=$1 page=$tree/$1 old_page=$tmp/old/$1 old new extra
	mkdir -p "$(dirname "$old_page")"
	if git -C "$tree" cat-file -e "$base:$f" 2>/dev/null; then
		git -C "$tree" show "$base:$f" >"$old_page"
	else
		: >"$old_page"
	fi

	old=$(groff_warnings "$old_page")
	new=$(groff_warnings "$page")
	extra=$(new_warnings "$old" "$new")
	if [ -z "$extra" ]; then
		add "ok" "groff -man -Tutf8 -ww -z $f: no new warnings"
	else
		diag "$f (groff), new: $extra"
		diag "$f (groff), all warnings after the series: $new"
		add "not ok" "groff -man -Tutf8 -ww -z $f: new warnings"
	fi

	if command -v mandoc >/dev/null; then
		old=$(mandoc_warnings "$old_page")
		new=$(mandoc_warnings "$page")
		extra=$(new_warnings "$old" "$new")
		if [ -z "$extra" ]; then
			add "ok" "mandoc -Tlint $f: no new warnings"
		else
			diag "$f (mandoc), new: $extra"
			diag "$f (mandoc), all warnings after the series: $new"
			add "not ok" "mandoc -Tlint $f: new warnings"
		fi
	else
		add "skip" "mandoc -Tlint $f # SKIP mandoc not installed"
	fi

	render "$f"
	linted+=("$f")
}

# The man-pages project's own per-page checks (its lint-man and
# check-catman make targets), where the tree has them, in one make run
# (reading its makefiles takes seconds).  A page that the project lists as
# an expected failure of a check has no rule for that target: skipped.
project_lint() {     # RELATIVE_PATH...
	local f kind target out targets=() failed_make=
	[ $# -gt 0 ] || return 0
	if ! command -v make >/dev/null || [ ! -f "$tree/GNUmakefile" ]; then
		add "skip" "man-pages make targets # SKIP no make, or no GNUmakefile in the tree"
		return
	fi
	for f in "$@"; do
		for kind in lint-man.mandoc lint-man.tbl check-catman; do
			targets+=(".tmp/$f.$kind.touch")
		done
	done
	out=$(make -R -k -s -C "$tree" "${targets[@]}" 2>&1) || true
	for target in "${targets[@]}"; do
		if [ -f "$tree/$target" ]; then
			add "ok" "make $target (the man-pages project's check)"
		elif grep -qF "No rule to make target '$target'" <<<"$out"; then
			add "skip" "make $target # SKIP man-pages lists the page as an expected failure of this check"
		else
			add "not ok" "make $target (the man-pages project's check)"
			failed_make=yes
		fi
	done
	# Its progress lines ("MANDOC  .tmp/...") say nothing on a failure.
	[ -z "$failed_make" ] ||
		diag "make: $(grep -v -E '^[A-Z]+[[:space:]]+\.tmp/' <<<"$out")"
}

render() {           # RELATIVE_PATH (man -l resolves .so from man/)
	local f=$1 out
	# Drop the overstrike (bold, underline) that man leaves in piped output.
	if out=$(cd "$tree/man" && MANWIDTH=80 man -l "${f#man/}" 2>/dev/null |
			sed 's/.\x08//g') &&
	   grep -q '^NAME' <<<"$out"; then
		add "ok" "man -l $f renders ($(wc -l <<<"$out") lines)"
	else
		add "not ok" "man -l $f renders"
	fi
}

# 2. The pages that the series adds or changes.
if [ "$applied" = yes ]; then
	command -v man >/dev/null || { echo "$0: man is needed" >&2; exit 2; }
	mapfile -t pages < <(git -C "$tree" diff --name-only --diff-filter=AM \
		"$base" HEAD -- 'man/man*/*')
	for f in "${pages[@]}"; do
		so=$(sed -n '1s/^\.so[[:space:]]\{1,\}//p' "$tree/$f")
		if [ -n "$so" ] && [ "$(wc -l <"$tree/$f")" -eq 1 ]; then
			if [ -f "$tree/man/$so" ]; then
				add "ok" "$f: link to existing $so"
			else
				add "not ok" "$f: link target $so missing"
			fi
			render "$f"
		else
			lint_page "$f"
		fi
	done
	project_lint "${linted[@]}"
fi

for d in "${diags[@]}"; do echo "$d"; done
echo "1..${#results[@]}"
n=0 passed=0 failed=0 skipped=0
for r in "${results[@]}"; do
	n=$((n + 1))
	status=${r%%	*} text=${r#*	}
	case $status in
	ok)     echo "ok $n $text"; passed=$((passed + 1)) ;;
	skip)   echo "ok $n $text"; skipped=$((skipped + 1)) ;;
	*)      echo "not ok $n $text"; failed=$((failed + 1)) ;;
	esac
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
