#!/bin/sh
# cli.sh - the sqlkcm program's command line, as a user meets it (TAP output).
# Needs SQLKCM, the path of the built program (set by make check).
: "${SQLKCM:?SQLKCM must name the sqlkcm program}"

n=0
failed=0
tmp=$(mktemp -d)
daemons=""
trap 'for pid in $daemons; do kill "$pid" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# check NAME EXPECTED-STATUS STDOUT-PATTERN STDERR-PATTERN -- ARGS...
# Runs sqlkcm ARGS; passes when the status matches (!0: any failure) and each output matches its grep
# pattern ("" means the output must be empty).
check() {
	name=$1 want=$2 outpat=$3 errpat=$4
	shift 5
	n=$((n + 1))
	# A command that should have stopped but serves on fails instead of hanging.
	timeout 30 "$SQLKCM" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
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
check "run rejects a --watch-batch-period past 10s" 2 "" \
	'--watch-batch-period must be from 0 to 10s' -- run --watch-batch-period 1m
check "a bad --watch-batch-period value is named" 2 "" \
	'invalid value "soon" for --watch-batch-period' -- run --watch-batch-period soon
# Leader election flags: kube-controller-manager's names, Go durations, its validation.
check "run --help documents --leader-elect and its default" 0 "leader-elect\[=BOOL\].*" "" -- run --help
check "run --help gives the lease duration's default" 0 "(default: 15s)" "" -- run --help
check "a bad --leader-elect value is named" 2 "" "invalid value \"maybe\" for --leader-elect:" -- \
	run --leader-elect=maybe
check "a bad --enable-garbage-collector value is named" 2 "" \
	'invalid value "maybe" for --enable-garbage-collector: want true or false' -- \
	run --enable-garbage-collector=maybe
check "a bad duration is named with its flag" 2 "" "\"10\" for --leader-elect-retry-period" -- \
	run --leader-elect-retry-period 10
check "lease duration must exceed the renew deadline" 2 "" "lease-duration must be greater than --leader-elect-renew-deadline" -- \
	run --leader-elect-lease-duration 10s
check "renew deadline must exceed retry period times 1.2" 2 "" "times 1.2" -- \
	run --leader-elect-renew-deadline 2s --leader-elect-retry-period 1m
check "only leases locks" 2 "" "only leases" -- run --leader-elect-resource-lock endpoints
check "an unknown flag is named" 2 "" "unknown flag --leader-elect-bogus" -- run --leader-elect-bogus=1

# A kube-controller-manager command line (kubeadm's static pod) is accepted as it is: the
# flags and controllers sqlkcm has no use for are named once and ignored; the run then stops
# at the missing kubeconfig (exit 1), not at the command line (exit 2).
check "kube-controller-manager's flags are accepted and named as ignored" 1 "" \
	"ignoring kube-controller-manager flags .*: --profiling, --cluster-name$" \
	-- run --allocate-node-cidrs=true --cluster-cidr=10.244.0.0/16 \
	--use-service-account-credentials=true --profiling --cluster-name kubernetes \
	--cluster-signing-duration 8760h0m0s \
	--bind-address=127.0.0.1 --leader-elect=false --kubeconfig "$tmp/no-such-kubeconfig"
check "kube-controller-manager's controllers sqlkcm does not run are named as ignored" 1 "" \
	"ignoring kube-controller-manager controllers sqlkcm does not run: bootstrapsigner, tokencleaner$" \
	-- run "--controllers=*,bootstrapsigner,tokencleaner" --kubeconfig "$tmp/no-such-kubeconfig"
check "kube's ValidatingAdmissionPolicy status controller is named as not run, and why" 1 "" \
	"does not run: validatingadmissionpolicy-status-controller (it type-checks .*no CEL implementation" \
	-- run "--controllers=*,validatingadmissionpolicy-status-controller" \
	--kubeconfig "$tmp/no-such-kubeconfig"
check "--use-service-account-credentials takes a Go bool" 2 "" \
	'invalid value "maybe" for --use-service-account-credentials' \
	-- run --use-service-account-credentials=maybe
check "a controller by kube-controller-manager's name" 1 "" "no-such-kubeconfig" \
	-- run --controllers=replicaset-controller --kubeconfig "$tmp/no-such-kubeconfig"
check "a flag of kube-controller-manager's without its value says so" 2 "" \
	'--horizontal-pod-autoscaler-sync-period needs a value' \
	-- run --horizontal-pod-autoscaler-sync-period
check "--concurrent-deployment-syncs is checked" 2 "" \
	'invalid value "0" for --concurrent-deployment-syncs: want a whole number from 1 to 10000' \
	-- run --concurrent-deployment-syncs=0
check "run --help lists the Deployment controller's workers flag" 0 \
	"^      --concurrent-deployment-syncs N" "" -- run --help
check "an ignored bool flag still wants a bool" 2 "" \
	'invalid value "maybe" for --configure-cloud-routes: want true or false' \
	-- run --configure-cloud-routes=maybe
check "a controller's bool flag wants a bool" 2 "" \
	'invalid value "maybe" for --allocate-node-cidrs: want true or false' \
	-- run --allocate-node-cidrs=maybe
check "a controller nobody has is an error" 2 "" 'unknown controller "bogus" (known: replicaset, replicationcontroller, deployment, garbagecollector' \
	-- run --controllers=replicaset,bogus
check "run --help lists each controller with its workers flag" 0 \
	"^      --concurrent-replicaset-syncs N" "" -- run --help
check "--concurrent-replicaset-syncs is checked" 2 "" \
	'invalid value "0" for --concurrent-replicaset-syncs: want a whole number from 1 to 10000' \
	-- run --concurrent-replicaset-syncs=0

# The cache file, with no cluster: sqlkcm run opens it before it contacts the apiserver,
# which here is an address nobody answers.
cat >"$tmp/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: nobody
  cluster: {server: "http://127.0.0.1:1"}
contexts:
- name: nobody
  context: {cluster: nobody, user: nobody}
users:
- name: nobody
  user: {}
current-context: nobody
EOF
run_flags="--kubeconfig $tmp/kubeconfig --leader-elect=false --secure-port 0"

# ok NAME CONDITION...: a test of a condition rather than of a command's output.
ok() {
	name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
	fi
}

# wait_for CONDITION...: true once the condition holds, false after 10 seconds.
wait_for() {
	i=0
	while ! "$@"; do
		i=$((i + 1))
		[ "$i" -le 100 ] || return 1
		sleep 0.1
	done
}

# start_daemon DB LOG [FLAGS...]: starts sqlkcm run on DB in the background, its pid in
# $daemon (killed at exit if not before).
start_daemon() {
	db=$1 log=$2
	shift 2
	# shellcheck disable=SC2086
	"$SQLKCM" run $run_flags --db "$db" "$@" >"$log" 2>&1 </dev/null &
	daemon=$!
	daemons="$daemons $daemon"
}

mode_of() { stat -c %a "$1"; }
lacks() { ! grep -q -- "$1" "$2"; }
lock_holds() { [ "$(cat "$1-lock" 2>/dev/null)" = "$2" ]; }
corrupt_file() { ls "$1".corrupt-* 2>/dev/null | grep -v -- '-wal$\|-shm$'; }
moved_aside() { corrupt_file "$1" >/dev/null; }
# Whether the daemon logging to $1 has opened its cache and installed its signal handlers.
started() { grep -q "starting server=" "$1"; }

printf 'not a database, just text that is long enough to be a header and more\n' >"$tmp/text.db"
cp "$tmp/text.db" "$tmp/text.orig"
# shellcheck disable=SC2086
check "run refuses a --db that is not SQLite, naming it, exit 1" 1 "" \
    "$tmp/text.db is not an sqlkcm cache: not an SQLite file" -- run $run_flags --db "$tmp/text.db"
ok "run left the file that is not SQLite as it was" cmp -s "$tmp/text.db" "$tmp/text.orig"
# shellcheck disable=SC2086
check "run names --rebuild-cache when it refuses a file" 1 "" "start with --rebuild-cache" -- \
    run $run_flags --db "$tmp/text.db"
cp "$tmp/other.db" "$tmp/other.orig"
# shellcheck disable=SC2086
check "run refuses another program's SQLite database, exit 1" 1 "" \
    "$tmp/other.db is not an sqlkcm database" -- run $run_flags --db "$tmp/other.db"
ok "run left the other program's database as it was" cmp -s "$tmp/other.db" "$tmp/other.orig"
check "run --help documents --rebuild-cache" 0 "^  --rebuild-cache" "" -- run --help

# A cache file left 0644: the daemon makes it 0600 and holds the lock; a second daemon on
# the same file is refused with the first one's pid; readers still read.
: >"$tmp/shared.db"
chmod 644 "$tmp/shared.db"
start_daemon "$tmp/shared.db" "$tmp/first.log"
first=$daemon
ok "a daemon locks its cache and writes its pid in FILE-lock" wait_for lock_holds "$tmp/shared.db" "$first"
wait_for started "$tmp/first.log"
ok "a daemon makes a 0644 cache file 0600" [ "$(mode_of "$tmp/shared.db")" = 600 ]
ok "a daemon says it made the file 0600" grep -q "shared.db was mode 0644: made it 0600" "$tmp/first.log"
ok "a daemon starting with no cache says it creates one" \
    grep -q "creating a new cache in $tmp/shared.db" "$tmp/first.log"
# shellcheck disable=SC2086
check "a second daemon on the same cache is refused with the holder's pid, exit 1" 1 "" \
    "$tmp/shared.db is in use by another sqlkcm (pid $first); only one daemon may write a cache" -- \
    run $run_flags --db "$tmp/shared.db"
ok "the refused daemon never started (nor contacted the apiserver)" lacks "starting server=" "$tmp/err"
ok "the first daemon still runs" kill -0 "$first"
check "plan reads the cache the daemon holds" 0 "" "" -- plan --db "$tmp/shared.db"
kill "$first"
wait "$first"
ok "the first daemon stops cleanly" [ $? = 0 ]
# The cache deleted while no daemon runs (its lock file left): a cold start.
rm "$tmp/shared.db"
start_daemon "$tmp/shared.db" "$tmp/again.log"
ok "once it stopped, the next daemon takes the cache" wait_for lock_holds "$tmp/shared.db" "$daemon"
wait_for started "$tmp/again.log"
ok "a deleted cache is a cold start, said in the log" \
    grep -q "creating a new cache in $tmp/shared.db" "$tmp/again.log"
kill "$daemon"
wait "$daemon"
ok "the daemon of the cold start stops cleanly" [ $? = 0 ]
check "the cold start made a new sqlkcm cache" 0 "" "" -- plan --db "$tmp/shared.db"

# --rebuild-cache: the file that is not a cache is moved aside and a new cache made.
start_daemon "$tmp/text.db" "$tmp/rebuild.log" --rebuild-cache
rebuilder=$daemon
ok "--rebuild-cache moves the file aside to FILE.corrupt-TIME" wait_for moved_aside "$tmp/text.db"
ok "the file moved aside is the one refused" cmp -s "$(corrupt_file "$tmp/text.db")" "$tmp/text.orig"
ok "--rebuild-cache starts a new cache in its place" wait_for lock_holds "$tmp/text.db" "$rebuilder"
ok "--rebuild-cache says what it did" grep -q "moved $tmp/text.db aside" "$tmp/rebuild.log"
wait_for started "$tmp/rebuild.log"
kill "$rebuilder"
wait "$rebuilder"
check "the rebuilt cache is an sqlkcm cache" 0 "" "" -- plan --db "$tmp/text.db"
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

# The controllers' own flags: declared by each controller, checked by type, taken by run,
# plan and replay alike.
check "run --help lists podgc's --terminated-pod-gc-threshold with its default" 0 \
	"terminated-pod-gc-threshold N" "" -- run --help
check "plan --help lists the controllers' flags" 0 "namespace-sync-period DURATION" "" \
	-- plan --help
check "replay --help lists the controllers' flags" 0 "root-ca-file VALUE" "" -- replay --help
check "a whole-number controller flag refuses a word, naming it" 2 "" \
	'invalid value "many" for --terminated-pod-gc-threshold: want a whole number' \
	-- run --terminated-pod-gc-threshold many
check "a duration controller flag wants a unit" 2 "" \
	'invalid value "300" for --namespace-sync-period: want a duration' \
	-- plan --db "$nodb" --namespace-sync-period 300
check "replay checks the controllers' flags before it reads the log" 2 "" \
	'invalid value "1e3" for --terminated-pod-gc-threshold' \
	-- replay /nonexistent.log --terminated-pod-gc-threshold 1e3
check "a controller flag needs its value" 2 "" "--root-ca-file needs a value" \
	-- plan --root-ca-file
printf 'clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\ncurrent-context: c\n' \
	>"$tmp/unreachable-config"
check "an unreadable --root-ca-file stops run with the file named" 1 "" \
	"root-ca-file at $tmp/no-such-ca.crt" \
	-- run --kubeconfig "$tmp/unreachable-config" --db "$tmp/rootca.db" --secure-port 0 \
	--controllers root-ca-cert-publisher --root-ca-file "$tmp/no-such-ca.crt"

echo "1..$n"
[ "$failed" = 0 ]
