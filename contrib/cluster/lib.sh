# lib.sh - helpers shared by contrib/cluster/up, down and the end-to-end tests.
# Sourced, not run.

# cluster_log MESSAGE: progress on stderr, so stdout stays for what callers capture.
cluster_log() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

# cluster_free_port: prints a TCP port on 127.0.0.1 that nothing listens on now, drawn at
# random from below the kernel's ephemeral range. Not from the ephemeral range itself: a
# client retrying a stopped server's port there can be given that very port as its own
# local port (a TCP self-connect), and the restarted server then cannot bind it. Random
# draws keep two clusters started at once apart.
cluster_free_port() {
	python3 -c 'import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(1000):
    port = random.randrange(10000, low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("no free port below the ephemeral range")'
}

# cluster_wait_until SECONDS WHAT COMMAND...: runs COMMAND every half second until it
# succeeds; fails with a message naming WHAT after SECONDS.
cluster_wait_until() {
	local seconds=$1 what=$2 deadline
	shift 2
	deadline=$(($(date +%s) + seconds))
	until "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			cluster_log "timed out after ${seconds}s waiting for $what"
			return 1
		fi
		sleep 0.5
	done
}

# cluster_pid_alive DIR NAME: true when the process recorded as NAME in DIR still runs
# and is ours (its command line names DIR, so a reused pid is never taken for it).
cluster_pid_alive() {
	local dir=$1 name=$2 pid
	[ -f "$dir/pids/$name.pid" ] || return 1
	pid=$(cat "$dir/pids/$name.pid")
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir/"
}

# cluster_pid_gone DIR NAME: true once the process recorded as NAME has fully exited.
# Not the same as "not alive" above: a process being killed empties its
# /proc/PID/cmdline when its memory goes, before its sockets are closed, and the leader
# thread of a multithreaded process (every Go program) is a zombie while its other threads
# still hold the open files. Only a zombie with no thread left, or a reaped process, has
# let go of its ports.
cluster_pid_gone() {
	local dir=$1 name=$2 pid state
	[ -f "$dir/pids/$name.pid" ] || return 0
	pid=$(cat "$dir/pids/$name.pid")
	[ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 0
	state=$(sed 's/^.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null) || return 0
	if [ "$state" = Z ]; then
		[ "$(ls "/proc/$pid/task" 2>/dev/null | wc -l)" -le 1 ]
		return
	fi
	# A live process that is not ours (the pid was reused) counts as gone.
	if [ -s "/proc/$pid/cmdline" ] && ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir/"; then
		return 0
	fi
	return 1
}

# cluster_port_free PORT: true when nothing holds 127.0.0.1:PORT.
cluster_port_free() {
	python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}

# cluster_processes DIR: prints the pids of the control plane processes (etcd,
# kube-apiserver, kube-scheduler, kwok, kube-controller-manager) whose command line
# names DIR/: what `down` must leave none of.
cluster_processes() {
	local dir=$1 p exe
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		case "${exe##*/}" in
		etcd | kube-apiserver | kube-scheduler | kwok | kube-controller-manager) ;;
		*) continue ;;
		esac
		if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$dir/"; then
			echo "${p#/proc/}"
		fi
	done
}
