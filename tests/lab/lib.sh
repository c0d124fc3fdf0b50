# lib.sh - shared setup for the lab tests (sourced, not run)
#
# Each test gets its own state directory and a trap that takes the fabric
# down whatever happens. The fabric's names (hs-*) are global, so lab tests
# serialise on a lock file even under 'make -j check'.

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
LAB=$top_builddir/hopscope-lab
TRAFFIC=$top_builddir/hs-traffic
HOPSCOPE=$top_builddir/hopscope
TEST=$(basename "$0" .sh)
# the tests' files live in root-only temporary directories: keep root
# (tests/lab/privsep.sh and tests/lab/load.sh test the drop)
HOPSCOPE_USER=root
export HOPSCOPE_USER

fail() { echo "FAIL: $TEST: $*" >&2; exit 1; }
hard() { echo "ERROR: $TEST: $*" >&2; exit 99; }

# need_built PROG...: the programs a test runs, built in top_builddir
# (hs-agent mirrors the fabric's packets: without it nothing is captured)
need_built() {
	local p
	for p in "$@"; do
		[ -x "$top_builddir/$p" ] || hard "'$top_builddir/$p' is not built"
	done
}
ok() { echo "ok: $*"; }

# own_ns NAME: a network namespace of the test's own, hscap-NAME<pid> (not
# the lab's hs-* names, so no lab lock), in which in_ns runs a command, and
# a temporary directory $tmp; both go when the test ends, however it ends,
# and so do the processes the test lists in $pids. Where no namespace can
# be made (not root, no namespace support) the test is skipped, saying so.
own_ns() {
	ns=hscap-$1$$
	if ! ip netns add "$ns" 2>/dev/null; then
		echo "SKIP: $TEST: cannot create a network namespace (not root, or no namespace support)" >&2
		exit 77
	fi
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-$TEST.XXXXXX") || { ip netns del "$ns"; hard "no temporary directory"; }
	pids=
	trap own_ns_end EXIT
	trap 'exit 130' INT TERM
}
own_ns_end() {
	local st=$?
	[ -n "$pids" ] && kill $pids 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
	exit "$st"
}
in_ns() { ip netns exec "$ns" "$@"; }
# ns_replay PCAP DEV LOG: netsniff-ng sends a capture's frames out of DEV
# in the test's namespace, as fast as it can. -k 1000: its default flushes
# its ring at every tick of a 10 us timer signal, which on a virtual
# machine can stretch a replay of 14,000 frames to minutes (and fail it)
ns_replay() {
	in_ns netsniff-ng --in "$1" --out "$2" --silent -S 8MiB -k 1000 >"$3" 2>&1 &&
		! grep -q "Cannot allocate\|failed" "$3"
}
# running FILE...: until the console writing each FILE has said that its
# capture runs (a runbook starting 'set format json; capture status'),
# 60 s at most, so that nothing is sent before every reader is there
running() {
	local f i
	for f; do
		for ((i = 0; i < 600; i++)); do
			grep -q '"state":"running"' "$f" 2>/dev/null && continue 2
			sleep 0.1
		done
		hard "the console writing $f never said its capture runs: $(tail -c 600 "$f" 2>/dev/null)"
	done
}

lab_cleanup() {
	local st=$?
	if [ -n "${LAB_STATE:-}" ]; then
		if [ "$st" != 0 ] && [ -d "$LAB_STATE/logs" ]; then
			for f in "$LAB_STATE"/logs/*.log; do
				[ -s "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
			done >&2
		fi
		"$LAB" --state "$LAB_STATE" down >/dev/null 2>&1 || true
		rm -rf "$LAB_STATE"
	fi
	exit "$st"
}

# lab_init: skip only when namespaces cannot be made; then lock and trap
lab_init() {
	local probe=hslabprobe$$
	if ! ip netns add "$probe" 2>/dev/null; then
		echo "SKIP: $TEST: cannot create a network namespace ('ip netns add' failed:" \
			"not root, or no namespace support); the lab tests need both" >&2
		exit 77
	fi
	ip netns del "$probe"
	[ -x "$LAB" ] || hard "'$LAB' is not built"
	[ -x "$TRAFFIC" ] || hard "'$TRAFFIC' is not built"
	exec 9>"${TMPDIR:-/tmp}/hopscope-lab-tests.lock"
	flock -w 600 9 || hard "another lab test holds the lab test lock"
	# someone else's fabric (a user, a test not using this lock): wait a while
	local i
	for ((i = 0; i < 120; i++)); do
		"$LAB" status >/dev/null 2>&1 || break
		((i % 30 == 0)) && echo "$TEST: waiting for the fabric that is up to go down" >&2
		sleep 1
	done
	if "$LAB" status >/dev/null 2>&1; then
		hard "a fabric is already up on this machine; run 'hopscope-lab down' before the lab tests"
	fi
	LAB_STATE=$(mktemp -d "${TMPDIR:-/tmp}/hs-$TEST.XXXXXX")
	# the test's own history where it names none, not a ./hopscope.db
	# shared with every test run in the same directory
	HOPSCOPE_DB=$LAB_STATE/hopscope.db
	export HOPSCOPE_DB
	trap lab_cleanup EXIT
	trap 'exit 130' INT TERM
}

lab() { "$LAB" --state "$LAB_STATE" "$@"; }

# run hs-traffic in a host's namespace: on h1 ping 10.1.4.12
on() { local h=$1; shift; ip netns exec "hs-$h" "$TRAFFIC" "$@"; }

# host address from the topology file
host_addr() { awk -v h="$1" '$1 == "host" && $2 == h { print $4 }' "$LAB_STATE/topo"; }

# which switch owns an address (any interface of any switch namespace)
declare -A OWNER=()
map_addresses() {
	local sw a
	OWNER=()
	for sw in $(awk '$1 == "switch" { print $2 }' "$LAB_STATE/topo"); do
		for a in $(ip -n "hs-$sw" -o -4 addr show | awk '{ sub(/\/.*/, "", $4); print $4 }'); do
			OWNER[$a]=$sw
		done
	done
}

# switches on the way: "trace ..." output -> "leaf1 spine2 leaf4 =10.1.4.12"
trace_path() {
	local what addr rest out=""
	while read -r _ what addr rest; do
		case $what in
		exceeded) out+="${OWNER[$addr]:-?$addr} " ;;
		reply) out+="=$addr" ;;
		timeout) out+="* " ;;
		*) out+="!$addr " ;;
		esac
	done
	echo "$out"
}

role_of() { awk -v s="$1" '$1 == "switch" && $2 == s { print $4 }' "$LAB_STATE/topo"; }

# a lab with SONiC switches (hopscope-lab up --sonic): redis's tools, the
# tree's agent and driver
sonic_init() {
	local t
	for t in redis-server redis-cli python3; do
		command -v $t >/dev/null 2>&1 ||
			{ echo "SKIP: $TEST: $t is missing (share/quickstart.sh test installs it)" >&2; exit 77; }
	done
	lab_init
	need_built hopscope hs-agent hs-driver-sonic
}
# redis-cli ARGS on the CONFIG_DB of SONiC lab switch SW
config_db() { local sw=$1; shift; redis-cli --raw -s "$LAB_STATE/sonic/$sw/redis.sock" -n 4 "$@"; }

# flows CLIENT SERVER PORT COUNT: COUNT short TCP flows from host CLIENT to a
# server on host SERVER at PORT, 50 a second
flows() {	# client host, server host, port, count
	local sa; sa=$(host_addr "$2")
	ip netns exec "hs-$2" "$TRAFFIC" serve --bind "$sa" --port "$3" --duration 6s >/dev/null &
	local srv=$!
	sleep 0.2
	on "$1" client --dst "$sa" --port "$3" --rate 50 --flows 0 --count "$4" --duration 5s || true
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
}
