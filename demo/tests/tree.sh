# shellcheck shell=bash source-path=SCRIPTDIR
# tree.sh - sourced by the tests of the source tree (install, build,
# readme): TAP (tests/lib/tap.sh), $top, a make that behaves as a user's, and $tmp,
# a fresh directory removed at exit.  usage: . tree.sh NAME
# shellcheck disable=SC2034 # here, top and tmp are for the sourcing test
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=../../tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
# Not the make running this test: no inherited OUT=, ASAN=, -s.
unset MAKEFLAGS MAKELEVEL MFLAGS
tmp=$(mktemp -d "/tmp/secbuf-$1.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
