#!/bin/sh
# conformance.sh - hopscope's decode of every capture against TShark's:
#  (a) the shared corpus, with TShark's reference decodes made beforehand
#      ($top_srcdir/../shared/corpus/expected/<FILE>.tsv)
#  (b) our golden captures, decoded by the tshark found here at test time
# Either half is skipped loudly when its input is missing; exit 77 when both are.
: "${top_srcdir:=.}" "${top_builddir:=.}"
py=$top_srcdir/tests/e2e/conformance.py
export top_builddir
corpus=$top_srcdir/../shared/corpus
fail=0 ran=0

if ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP: python3 not found" >&2
	exit 77
fi
if [ ! -x "$top_builddir/hopscope" ]; then
	echo "FAIL: '$top_builddir/hopscope' not built" >&2
	exit 1
fi

# The exact command of corpus/expected/README.txt
FIELDS="frame.number frame.time_epoch frame.len frame.cap_len frame.protocols eth.type
ieee8021ad.id vlan.id gre.flags.checksum gre.flags.key gre.flags.sequence_number
gre.flags.version gre.proto gre.key gre.sequence_number erspan.version erspan.vlan
erspan.cos erspan.encap erspan.truncated erspan.spanid erspan.index erspan.timestamp
erspan.sgt erspan.p erspan.ft erspan.hw erspan.direction erspan.gra erspan.o erspan.bso
erspan.platid erspan.pid1.port_index erspan.pid3.port_index erspan.pid3.timestamp
erspan.pid5.port_index erspan.pid5.timestamp erspan.pid7.source_index erspan.pid7.timestamp
ip.version ip.hdr_len ip.len ip.id ip.flags.df ip.flags.mf ip.frag_offset ip.ttl ip.proto
ip.src ip.dst ipv6.src ipv6.dst ipv6.nxt ipv6.hlim tcp.srcport tcp.dstport tcp.flags
tcp.seq tcp.ack tcp.len udp.srcport udp.dstport udp.length icmp.type icmp.code
icmpv6.type vxlan.vni _ws.malformed"
# and for our own captures (the corpus's decodes predate it)
GOLDEN_FIELDS="geneve.vni mpls.label"
tshark_tsv() {
	set -- "$1"
	for fld in $FIELDS $GOLDEN_FIELDS; do set -- "$@" -e "$fld"; done
	file=$1; shift
	tshark -n -r "$file" \
		-o ip.defragment:FALSE -o ipv6.defragment:FALSE \
		-o tcp.relative_sequence_numbers:FALSE -o tcp.desegment_tcp_streams:FALSE \
		-o tcp.analyze_sequence_numbers:FALSE \
		-T fields -E header=y -E separator=/t -E occurrence=a -E aggregator=, \
		"$@" 2>/dev/null
}

# (a) the shared corpus
if [ -d "$corpus/expected" ]; then
	for f in "$corpus"/*.pcap; do
		b=${f##*/}
		ran=$((ran + 1))
		if out=$(python3 "$py" "$f" "$corpus/expected/$b.tsv" 2>&1); then
			printf '%s\n' "$out" | tail -n 1
		else
			printf '%s\n' "$out" | grep -v quirk >&2
			fail=1
		fi
	done
else
	echo "SKIP (corpus): '$corpus' is absent; the conformance corpus was not checked" >&2
fi

# (b) the golden captures against this machine's tshark
if command -v tshark >/dev/null 2>&1; then
	tmp=$(mktemp -d) || exit 1
	trap 'rm -rf "$tmp"' EXIT
	for f in "$top_srcdir"/tests/golden/*.pcap "$top_srcdir"/tests/golden/*.pcapng; do
		[ -e "$f" ] || continue
		b=${f##*/}
		ran=$((ran + 1))
		tshark_tsv "$f" >"$tmp/$b.tsv"
		if ! python3 "$py" "$f" "$tmp/$b.tsv" >"$tmp/out" 2>&1; then
			cat "$tmp/out" >&2
			fail=1
		else
			tail -n 1 "$tmp/out"
		fi
	done
else
	echo "SKIP (golden): tshark not found; the golden captures were not checked against it" >&2
fi

[ "$ran" -eq 0 ] && exit 77
exit $fail
