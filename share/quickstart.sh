#!/bin/sh
# quickstart.sh - install what is missing, build, then open the console or run the tests.
#
#   sh share/quickstart.sh console   build, start the lab's analyzer as a daemon and attach a
#                                    console to it (or open the bundled sample)
#   sh share/quickstart.sh test      build and run the whole test suite, then again under ASan/UBSan
#
# Meant for a fresh Debian 12 machine, run as root from the top of the source tree.
set -eu

cd "$(dirname "$0")/.."
mode=${1:-console}
case "$mode" in
console|test) ;;
*) echo "usage: sh share/quickstart.sh console|test" >&2; exit 2 ;;
esac

# build tools and libraries, then what the tests and the lab drive
PKGS="build-essential autoconf automake pkg-config
libuv1-dev libedit-dev libncurses-dev libpcap-dev libnet1-dev libsqlite3-dev libpq-dev libcmocka-dev
libnetfilter-log-dev libcap-ng-dev libhiredis-dev libjansson-dev libssl-dev
iproute2 iptables iputils-ping procps"
TEST_PKGS="tshark tcpdump netsniff-ng mandoc python3 sqlite3 postgresql tmux util-linux clang libclang-rt-14-dev openssl
redis-server redis-tools libyang2-tools python3-jsonschema"

need=""
for p in $PKGS $( [ "$mode" = test ] && echo "$TEST_PKGS" ); do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		need="$need $p"
	fi
done
if [ -n "$need" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "quickstart: missing packages:$need (run as root, or install them first)" >&2
		exit 1
	fi
	echo "quickstart: installing$need"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $need >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
	autoreconf -fi
fi
if [ ! -f Makefile ] || [ configure -nt Makefile ]; then
	./configure --enable-werror
fi
make -j"$jobs"

if [ "$mode" = console ]; then
	# the live lab where root and namespaces allow it, the bundled capture otherwise
	if [ "$(id -u)" -eq 0 ] && ip netns add hs-probe-ns 2>/dev/null; then
		ip netns del hs-probe-ns
		# the lab's analyzer as a daemon: it keeps watching after the console
		# leaves ('./hopscope-lab down' stops it with the fabric)
		./hopscope-lab up --serve
		# an hour of traffic, so that a console attached later still sees some
		./hopscope-lab traffic start --duration 3600 >/dev/null 2>&1 || true
		sock=$(./hopscope-lab status | sed -n 's/^analyzer daemon: .*consoles attach at //p')
		exec ./hopscope --attach "$sock"
	fi
	echo "quickstart: no root or no network namespaces here: opening the bundled sample capture"
	exec ./hopscope -r share/sample/sample.pcap --topo share/sample/sample.topo
fi

# the whole suite, then the unit and end-to-end tests again under ASan/UBSan.
# The lab tests take the lab's lock in turn (tests/lab/lib.sh): once what
# the tests need is built, they run one after another beside the others,
# rather than each hold one of make's jobs while it waits for the lock;
# those timed against the lab's own load (LAB_ALONE) run after, alone.
status=0
make -j"$jobs" check TESTS= || status=1
if [ $status -eq 0 ]; then
	make check TESTS='$(filter-out $(LAB_ALONE),$(LAB_TESTS))' TEST_SUITE_LOG=lab-suite.log \
		>lab-check.log 2>&1 &
	lab=$!
	make -j"$jobs" check TESTS='$(UNIT_TESTS) $(SCRIPT_TESTS)' || status=1
	wait $lab || status=1
	cat lab-check.log
	make check TESTS='$(LAB_ALONE)' TEST_SUITE_LOG=lab-alone-suite.log || status=1
fi
sh tests/summary.sh test-suite.log tests
sh tests/summary.sh lab-suite.log "lab tests"
sh tests/summary.sh lab-alone-suite.log "lab tests run alone"
[ $status -eq 0 ] || grep -h -A40 '^FAIL\|^ERROR' test-suite.log lab-suite.log lab-alone-suite.log \
	2>/dev/null | head -200
make -j"$jobs" check-sanitizers || status=1
exit $status
