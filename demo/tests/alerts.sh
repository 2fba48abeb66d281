#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# The example alerting rules (demo/audit/alerts.yml): promtool checks
# them, and alerts.test.yml fires each alert on a synthetic series and
# keeps it silent on a healthy one.  usage: tests/alerts.sh BINDIR
# (prints TAP; BINDIR is not used)
set -u
# shellcheck source=../../tests/lib/tap.sh
. "$(dirname "$0")/../../tests/lib/tap.sh"
rules=$(cd "$(dirname "$0")/../audit" && pwd)
quiet() {	# quiet CMD...: CMD succeeds; its output only when it fails
	local out
	out=$("$@" 2>&1) && return 0
	echo "$out" | sed 's/^/# /'
	return 1
}
if command -v promtool >/dev/null; then
	ok "promtool check rules alerts.yml: no error, no lint" quiet promtool check rules "$rules/alerts.yml"
	for a in SecbufSecretMemoryUnlocked SecbufSecretPagesSwapped SecbufAuditFailing; do
		ok "alerts.test.yml has a firing and a silent case of $a" bash -c \
			'[ "$(grep -c "alertname: $1$" "$0")" -ge 2 ]' "$rules/alerts.test.yml" "$a"
	done
	ok "promtool test rules alerts.test.yml: every alert fires as expected, and only then" \
		bash -c 'cd "$0" && out=$(promtool test rules alerts.test.yml 2>&1) || { echo "$out" | sed "s/^/# /"; exit 1; }' \
		"$rules"
else
	skip "no promtool (Debian's prometheus package)" "promtool check rules alerts.yml"
	skip "no promtool (Debian's prometheus package)" "promtool test rules alerts.test.yml"
fi
tap_done
