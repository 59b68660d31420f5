#!/bin/sh
# cli.sh - the sqlkcm program's command line, as a user meets it (TAP output).
# Needs SQLKCM, the path of the built program (set by make check).
: "${SQLKCM:?SQLKCM must name the sqlkcm program}"

n=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME EXPECTED-STATUS STDOUT-PATTERN STDERR-PATTERN -- ARGS...
# Runs sqlkcm ARGS; passes when the status matches and each output matches its grep
# pattern ("" means the output must be empty).
check() {
	name=$1 want=$2 outpat=$3 errpat=$4
	shift 5
	n=$((n + 1))
	"$SQLKCM" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	why=""
	[ "$status" = "$want" ] || why="exit status $status, want $want"
	if [ -z "$outpat" ]; then
		[ -s "$tmp/out" ] && why="$why; stdout not empty"
	else
		grep -q -- "$outpat" "$tmp/out" || why="$why; stdout lacks '$outpat'"
	fi
	if [ -z "$errpat" ]; then
		[ -s "$tmp/err" ] && why="$why; stderr not empty"
	else
		grep -q -- "$errpat" "$tmp/err" || why="$why; stderr lacks '$errpat'"
	fi
	if [ -z "$why" ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name: ${why#; }"
		sed 's/^/# stderr: /' "$tmp/err"
		failed=$((failed + 1))
	fi
}

check "version prints the program version" 0 "^sqlkcm [0-9]" "" -- version
check "--version is version" 0 "^sqlkcm [0-9]" "" -- --version
check "version names the TLS library libcurl uses" 0 "^libcurl .*OpenSSL" "" -- version
check "--help lists the commands on stdout" 0 "^  replay " "" -- --help
check "no command prints usage on stderr, exit 2" 2 "" "usage: sqlkcm COMMAND" --
check "unknown command is named, exit 2" 2 "" "no such command: bogus" -- bogus
for cmd in run plan replay shell; do
	check "$cmd --help documents $cmd" 0 "usage: sqlkcm $cmd" "" -- "$cmd" --help
	if "$SQLKCM" help "$cmd" | grep -q "not built yet"; then
		check "$cmd, not built yet, says so and exits 2" 2 "" "$cmd: not built yet" -- "$cmd"
	fi
done

# Leader election flags: kube-controller-manager's names, Go durations, its validation.
check "run --help documents --leader-elect and its default" 0 "leader-elect\[=BOOL\].*" "" -- run --help
check "run --help gives the lease duration's default" 0 "(default: 15s)" "" -- run --help
check "a bad --leader-elect value is named" 2 "" "invalid value \"maybe\" for --leader-elect:" -- \
	run --leader-elect=maybe
check "a bad duration is named with its flag" 2 "" "\"10\" for --leader-elect-retry-period" -- \
	run --leader-elect-retry-period 10
check "lease duration must exceed the renew deadline" 2 "" "lease-duration must be greater than --leader-elect-renew-deadline" -- \
	run --leader-elect-lease-duration 10s
check "renew deadline must exceed retry period times 1.2" 2 "" "times 1.2" -- \
	run --leader-elect-renew-deadline 2s --leader-elect-retry-period 1m
check "only leases locks" 2 "" "only leases" -- run --leader-elect-resource-lock endpoints
check "an unknown flag is named" 2 "" "unknown flag --leader-elect-bogus" -- run --leader-elect-bogus=1

echo "1..$n"
[ "$failed" = 0 ]
