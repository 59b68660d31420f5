#!/bin/sh
# replay.sh - `sqlkcm replay` on the recorded logs of tests/data/replay (TAP output).
#
# For every LOG.log there: the replay's output equals LOG.expected, a second replay is
# byte-identical, and damaged copies (cut short, a line corrupted) are replayed with
# line-numbered errors and no crash, while --strict stops at the first with exit 1.
# Needs SQLKCM, the built program (set by make check). With --regenerate, rewrites the
# expected outputs instead (check the diff before committing it).
: "${SQLKCM:?SQLKCM must name the sqlkcm program}"

data=$(cd "$(dirname "$0")/data/replay" && pwd)
n=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = "--regenerate" ]; then
	for log in "$data"/*.log; do
		"$SQLKCM" replay "$log" >"${log%.log}.expected" || exit 1
	done
	exit 0
fi

# result NAME WHY: prints the TAP line for a test that failed with WHY ("" passes).
result() {
	n=$((n + 1))
	if [ -z "$2" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1: $2"
		failed=$((failed + 1))
	fi
}

# replay LOG ARGS...: runs sqlkcm replay LOG ARGS, output in $tmp/out, $tmp/err; the
# exit status in $status.
replay() {
	"$SQLKCM" replay "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
}

for log in "$data"/*.log; do
	name=$(basename "$log" .log)
	expected=${log%.log}.expected

	replay "$log"
	why=""
	[ "$status" = 0 ] || why="exit status $status"
	[ -s "$tmp/err" ] && why="$why; stderr: $(head -n 3 "$tmp/err")"
	if [ ! -f "$expected" ]; then
		why="$why; no $(basename "$expected")"
	elif ! cmp -s "$tmp/out" "$expected"; then
		why="$why; output differs from $(basename "$expected"):
$(diff "$expected" "$tmp/out" | head -n 10 | cut -c 1-200 | sed 's/^/# /')"
	fi
	result "$name: replays to its expected actions" "${why#; }"

	cp "$tmp/out" "$tmp/first"
	replay "$log"
	why=""
	cmp -s "$tmp/out" "$tmp/first" || why="a second replay printed other bytes"
	result "$name: a second replay is byte-identical" "$why"

	"$SQLKCM" replay - <"$log" >"$tmp/out" 2>"$tmp/err"
	why=""
	cmp -s "$tmp/out" "$tmp/first" || why="stdin gave other output"
	result "$name: '-' reads the log from stdin" "$why"

	# Cut short in the middle of its last third.
	size=$(wc -c <"$log")
	head -c $((size * 5 / 6)) "$log" >"$tmp/truncated.log"
	replay "$tmp/truncated.log"
	why=""
	[ "$status" = 0 ] || why="exit status $status"
	grep -q "truncated.log:[0-9][0-9]*: truncated record" "$tmp/err" ||
	    why="$why; no line-numbered truncation error: $(head -n 2 "$tmp/err")"
	[ -s "$tmp/out" ] || why="$why; no output before the cut"
	result "$name: a truncated copy names the cut record's line" "${why#; }"

	replay "$tmp/truncated.log" --strict
	why=""
	[ "$status" = 1 ] || why="exit status $status, want 1"
	grep -q "stopped at the first bad record" "$tmp/err" || why="$why; no --strict message"
	result "$name: --strict stops at the truncated record with exit 1" "${why#; }"

	# Line 4 replaced by garbage, line 9 by a JSON array, a quote dropped on line 6.
	awk 'NR == 4 { print "garbage, not JSON"; next }
	     NR == 9 { print "[1, 2, 3]"; next }
	     NR == 6 { sub(/"/, ""); print; next } { print }' "$log" >"$tmp/corrupt.log"
	replay "$tmp/corrupt.log"
	why=""
	[ "$status" = 0 ] || why="exit status $status"
	grep -q "corrupt.log:[0-9][0-9]*: " "$tmp/err" ||
	    why="$why; no line-numbered error: $(head -n 2 "$tmp/err")"
	grep -q "corrupt.log:4: \|the error is on line 4" "$tmp/err" ||
	    why="$why; line 4 not reported: $(head -n 3 "$tmp/err")"
	[ -s "$tmp/out" ] || why="$why; no output"
	result "$name: a corrupted copy is replayed with line-numbered errors" "${why#; }"

	replay "$tmp/corrupt.log" --strict
	why=""
	[ "$status" = 1 ] || why="exit status $status, want 1"
	[ "$(grep -c "corrupt.log:" "$tmp/err")" = 1 ] ||
	    why="$why; want exactly one bad record reported"
	result "$name: --strict stops at the first corrupted record with exit 1" "${why#; }"

	# Pretty-printed: the first record loses its closing line; the next still reads.
	if grep -qx '}' "$log"; then
		awk '!done && $0 == "}" { done = 1; next } { print }' "$log" >"$tmp/cut.log"
		replay "$tmp/cut.log"
		why=""
		[ "$status" = 0 ] || why="exit status $status"
		grep -q "cut.log:1: truncated record (the next one starts on line [0-9]*)" \
		    "$tmp/err" || why="$why; not reported: $(head -n 2 "$tmp/err")"
		[ "$(wc -l <"$tmp/err")" = 1 ] || why="$why; more than one error"
		result "$name: a record cut short before the next is reported, the next read" \
		    "${why#; }"
	fi
done

# --db keeps the cache, and never clobbers a file.
log=$data/scale.log
replay "$log" --db "$tmp/cache.db"
why=""
[ "$status" = 0 ] || why="exit status $status: $(head -n 2 "$tmp/err")"
[ -s "$tmp/cache.db" ] || why="$why; no database written"
cmp -s "$tmp/out" "$data/scale.expected" || why="$why; output differs with --db"
result "--db keeps the replayed cache in a new file" "${why#; }"

# A replayed cache of resources named by "metadataOf" is one plan knows the kinds of: the
# collector's deletion of the ConfigMap whose Secret the log deleted is still to do.
replay "$data/gc.log" --db "$tmp/gc.db"
why=""
[ "$status" = 0 ] || why="replay: exit status $status: $(head -n 2 "$tmp/err")"
"$SQLKCM" plan --db "$tmp/gc.db" --controllers garbagecollector >"$tmp/plan" 2>"$tmp/err" ||
    why="$why; plan: exit status $?: $(head -n 2 "$tmp/err")"
grep -q '"action":"delete","resource":"configmaps","namespace":"gc","name":"c1"' \
    "$tmp/plan" || why="$why; plan lacks the deletion of c1: $(head -n 3 "$tmp/plan")"
result "plan knows the resources of a replayed cache (metadataOf)" "${why#; }"

replay "$log" --db "$tmp/cache.db"
why=""
[ "$status" = 1 ] || why="exit status $status, want 1"
grep -q "the file exists" "$tmp/err" || why="$why; stderr does not say why"
[ -s "$tmp/out" ] && why="$why; printed actions"
result "--db refuses an existing file" "${why#; }"

replay "$log" --controllers ''
why=""
[ "$status" = 0 ] || why="exit status $status"
[ -s "$tmp/out" ] && why="$why; printed actions with no controller"
result "--controllers '' only fills the cache" "${why#; }"

replay "$log" --controllers bogus
why=""
[ "$status" = 2 ] || why="exit status $status, want 2"
grep -q 'unknown controller "bogus"' "$tmp/err" || why="$why; the name is not reported"
result "an unknown controller is a usage error" "${why#; }"

replay "$tmp/missing.log"
why=""
[ "$status" = 1 ] || why="exit status $status, want 1"
grep -q "cannot open .*missing.log" "$tmp/err" || why="$why; stderr does not name the file"
result "a missing log is an error naming it" "${why#; }"

replay
why=""
[ "$status" = 2 ] || why="exit status $status, want 2"
result "no log is a usage error" "$why"

# An empty log is an error that says so (exit 1), from a file or from stdin, never a
# silent success or a crash.
: >"$tmp/empty.log"
printf '\n  \n\t\n' >"$tmp/blank.log"
for f in empty blank; do
	replay "$tmp/$f.log"
	why=""
	[ "$status" = 1 ] || why="exit status $status, want 1"
	grep -q "^sqlkcm replay: $tmp/$f.log: the log is empty: no events to replay\$" \
	    "$tmp/err" || why="$why; stderr: $(head -n 2 "$tmp/err")"
	[ -s "$tmp/out" ] && why="$why; printed actions"
	result "$f.log, with no record, says it has no events, exit 1" "${why#; }"
done
"$SQLKCM" replay - </dev/null >"$tmp/out" 2>"$tmp/err"
status=$?
why=""
[ "$status" = 1 ] || why="exit status $status, want 1"
grep -q "^sqlkcm replay: -: the log is empty" "$tmp/err" || why="$why; stderr: $(head -n 2 "$tmp/err")"
result "an empty log on stdin says it has no events, exit 1" "${why#; }"
replay "$tmp/empty.log" --strict
why=""
[ "$status" = 1 ] || why="exit status $status, want 1"
grep -q "the log is empty" "$tmp/err" || why="$why; stderr: $(head -n 2 "$tmp/err")"
result "--strict: an empty log says it has no events, exit 1" "${why#; }"

replay "$log" --bogus
why=""
[ "$status" = 2 ] || why="exit status $status, want 2"
grep -q "unknown flag --bogus" "$tmp/err" || why="$why; the flag is not named"
result "an unknown flag is a usage error" "${why#; }"

echo "1..$n"
[ "$failed" = 0 ]
