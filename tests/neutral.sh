#!/bin/sh
# neutral.sh - the shared layer names no controller (TAP output).
#
# A new controller is a file in src/controllers/ and one entry in the controller table:
# nothing else in src/ may name one, nor a kind only one controller acts on. Outside
# src/controllers/, with comments left out, only the table (src/registry.c), the resource
# registry (src/resource.c), kube-controller-manager's flags and controllers as data
# (src/kcmflags.c) and the shell's help on the views people query (src/shell.c) may say
# "replicaset". One test per source file.
src=$(cd "$(dirname "$0")/../src" && pwd)
n=0
failed=0
for f in "$src"/*.c "$src"/*.h; do
	name=${f##*/}
	case "$name" in
	registry.c | resource.c | kcmflags.c | shell.c | schema_sql.c) continue ;;
	esac
	n=$((n + 1))
	# The code without its comments, line numbers kept; the lines that name one.
	found=$(python3 - "$f" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))
code = re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)
for i, line in enumerate(code.split("\n"), 1):
    if re.search(r"replica_?set", line, re.I):
        print("%d: %s" % (i, line.strip()))
PY
)
	if [ -z "$found" ]; then
		echo "ok $n - $name names no controller"
	else
		failed=$((failed + 1))
		echo "not ok $n - $name names a controller"
		printf '%s\n' "$found" | sed 's/^/# /'
	fi
done
echo "1..$n"
[ "$failed" = 0 ]
