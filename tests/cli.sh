#!/bin/sh
# cli.sh - the sqlkcm program's command line, as a user meets it (TAP output).
# Needs SQLKCM, the path of the built program (set by make check).
: "${SQLKCM:?SQLKCM must name the sqlkcm program}"

n=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME EXPECTED-STATUS STDOUT-PATTERN STDERR-PATTERN -- ARGS...
# Runs sqlkcm ARGS; passes when the status matches (!0: any failure) and each output matches its grep
# pattern ("" means the output must be empty).
check() {
	name=$1 want=$2 outpat=$3 errpat=$4
	shift 5
	n=$((n + 1))
	"$SQLKCM" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	why=""
	if [ "$want" = "!0" ]; then
		[ "$status" != 0 ] || why="exit status 0, want a failure"
	else
		[ "$status" = "$want" ] || why="exit status $status, want $want"
	fi
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

# shell: the cache read-only in sqlite3, with headers and columns.
check "shell names a missing cache, exit 1" 1 "" "cannot open the cache $tmp/none.db" -- \
    shell --db "$tmp/none.db"
printf 'not a database, just text that is long enough to be a header and more\n' >"$tmp/text.db"
check "shell refuses a file that is not SQLite, exit 1" 1 "" "not a readable SQLite database" -- \
    shell --db "$tmp/text.db"
sqlite3 "$tmp/other.db" "CREATE TABLE t(a)"
check "shell refuses a database sqlkcm did not make, exit 1" 1 "" "not an sqlkcm cache" -- \
    shell --db "$tmp/other.db"
sqlite3 "$tmp/cache.db" "PRAGMA journal_mode=WAL; PRAGMA user_version=2;
    CREATE TABLE pods(name, phase); INSERT INTO pods VALUES ('web-1', 'Running');" >/dev/null
check "shell runs SQL with headers and columns" 0 "^name  *phase" "" -- \
    shell --db "$tmp/cache.db" "SELECT name, phase FROM pods"
check "shell shows the rows" 0 "^web-1  *Running" "" -- \
    shell --db "$tmp/cache.db" "SELECT name, phase FROM pods"
check "shell opens the cache read-only" '!0' "" "readonly" -- \
    shell --db "$tmp/cache.db" "DELETE FROM pods"
check "shell left the cache as it was" 0 "^web-1" "" -- \
    shell --db "$tmp/cache.db" "SELECT name FROM pods"
check "shell names a sqlite3 it cannot run, exit 127" 127 "" "cannot run $tmp/no-sqlite3" -- \
    shell --db "$tmp/cache.db" --sqlite3 "$tmp/no-sqlite3" "SELECT 1"
check "shell rejects an unknown flag, exit 2" 2 "" "unknown flag --bogus" -- \
    shell --bogus
check "run rejects a --secure-port out of range" 2 "" 'invalid value "70000" for --secure-port' \
	-- run --secure-port 70000
check "run rejects a --port that is not a number" 2 "" 'invalid value "http" for --port' \
	-- run --port http
check "run rejects a --bind-address that is not an IP address" 2 "" \
	'invalid value "example.com" for --bind-address' -- run --bind-address example.com
check "run wants --tls-cert-file and --tls-private-key-file together" 2 "" \
	"--tls-cert-file and --tls-private-key-file go together" -- run --tls-cert-file c.pem
check "run refuses the same port for HTTPS and HTTP" 2 "" \
	"--secure-port and --port are both 8080" -- run --secure-port 8080 --port 8080
check "run --help documents the HTTPS port and its default" 0 "HTTPS off (default: 10257)" "" -- run --help
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

# An empty or blank kubeconfig: client-go's message naming the file, exit 1, never an abort.
# --db names a directory that does not exist, so that a kubeconfig wrongly accepted fails
# at the cache with another message instead of running the daemon.
nodb=$tmp/no-such-dir/run.db
: >"$tmp/zero-length"
printf '\n  \n# a fresh kubeconfig\n' >"$tmp/comments-only"
printf -- '---\n' >"$tmp/document-marker-only"
printf '{}\n' >"$tmp/empty-mapping"
for f in zero-length comments-only document-marker-only empty-mapping; do
	check "run --kubeconfig $f: no configuration has been provided, exit 1" 1 "" \
	    "^sqlkcm run: kubeconfig $tmp/$f: invalid configuration: no configuration has been provided" \
	    -- run --kubeconfig "$tmp/$f" --db "$nodb"
done
check "run --kubeconfig zero-length --master: runs on --master alone (here: fails at --db)" 1 "" \
	"sqlkcm run: .*no-such-dir" -- run --kubeconfig "$tmp/zero-length" \
	--master http://127.0.0.1:1 --db "$nodb"
printf 'hello\n' >"$tmp/scalar"
check "run --kubeconfig with a scalar document names what it is, exit 1" 1 "" \
	"kubeconfig $tmp/scalar: not a kubeconfig: the top level is a scalar" \
	-- run --kubeconfig "$tmp/scalar" --db "$nodb"
: >"$tmp/empty-ca"
printf 'clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\n    certificate-authority: %s\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\ncurrent-context: c\n' \
	"$tmp/empty-ca" >"$tmp/empty-ca-config"
check "run --kubeconfig naming an empty CA file names it, exit 1" 1 "" \
	"certificate-authority: $tmp/empty-ca is empty" \
	-- run --kubeconfig "$tmp/empty-ca-config" --db "$nodb"

echo "1..$n"
[ "$failed" = 0 ]
