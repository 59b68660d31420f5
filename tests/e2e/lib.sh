# lib.sh - TAP helpers for the end-to-end tests (sourced by tests/e2e/*.t).
#
# A test script calls `ok CONDITION-COMMAND... -- NAME`-style helpers below, one line of
# TAP per assertion, and `tap_done` at the end, which prints the plan and sets the exit
# status. The runner (tests/run-all) counts the lines.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$top/contrib/cluster/lib.sh"

tap_n=0
tap_failed=0

# pass NAME / fail NAME [WHY]: one TAP result line.
pass() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1"
}
fail() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $1${2:+: $2}"
}

# check NAME COMMAND...: passes when COMMAND succeeds; on failure its output is shown
# as TAP diagnostics.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name"
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
	fi
}

# tap_done: the plan line; the exit status says whether every assertion passed.
tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" = 0 ]
}
