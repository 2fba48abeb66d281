# shellcheck shell=bash
# manifests.sh - where the guest suites' manifests are (sourced by
# run-guest and mkimage).  Each component keeps its NAME.suite files next
# to its code (tests/guest/, demo/, bench/); the runner finds them by name
# in the tree, knowing none of the components.  Needs $top, the tree.
# shellcheck disable=SC2154 # top is the sourcing script's
manifests() {	# every manifest of the tree, one path a line
	find "$top" -mindepth 2 -maxdepth 3 -name '*.suite' -not -path "$top/build/*" \
		-not -path "$top/kernel/*" -not -path "$top/.git/*" | LC_ALL=C sort
}
manifest() {	# manifest NAME: the path of NAME.suite; fails unless exactly one
	local found
	found=$(manifests | grep "/$1\.suite\$")
	case "$(grep -c . <<<"$found")" in
	1) echo "$found" ;;
	0) echo "run-guest: no manifest $1.suite in the tree" >&2; return 1 ;;
	*) echo "run-guest: several manifests $1.suite:" $found >&2; return 1 ;;
	esac
}
