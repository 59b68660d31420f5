#!/usr/bin/env bash
# resourcequota-kcm.t - kube-controller-manager 1.36's resourcequota-controller ends in the
# states resourcequota.t asserts for sqlkcm's resourcequota: the same scenario (a quota on
# pods, requests.cpu and count/configmaps refusing and freeing; a BestEffort quota) and the
# same checks, run under each (kcm with --controllers=resourcequota-controller), then each
# quota's status.used at the end compared between the two runs.
# e2e: locks resourcequota
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
state=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-rq-kcm.XXXXXX")
trap 'rm -rf "$state"' EXIT
E2E_RQ_STATE=$state/sqlkcm bash "$dir/resourcequota.t" >"$state/sqlkcm.tap" 2>&1
E2E_RQ_CM=kcm E2E_RQ_STATE=$state/kcm bash "$dir/resourcequota.t" >"$state/kcm.tap" 2>&1
. "$dir/lib.sh"
# kcm's results, one line each; sqlkcm's run as one.
while read -r line; do
	case $line in
	ok\ *) pass "kcm: ${line#ok * - }" ;;
	not\ ok\ *) fail "kcm: ${line#not ok * - }" ;;
	esac
done <"$state/kcm.tap"
if grep -q '^not ok' "$state/sqlkcm.tap" || ! grep -q '^1\.\.' "$state/sqlkcm.tap"; then
	fail "the same scenario passes under sqlkcm"
	sed 's/^/# /' "$state/sqlkcm.tap" | tail -n 20
else
	pass "the same scenario passes under sqlkcm"
fi
if [ -s "$state/kcm" ] && cmp -s "$state/sqlkcm" "$state/kcm"; then
	pass "each quota's status.used ends the same under both"
else
	fail "each quota's status.used ends the same under both" \
	    "sqlkcm: $(tr '\n' ';' <"$state/sqlkcm" 2>/dev/null) kcm: $(tr '\n' ';' <"$state/kcm" 2>/dev/null)"
fi
tap_done
