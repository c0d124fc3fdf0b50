#!/bin/sh
# sample.sh - the bundled sample, two seconds recorded from the lab's mirror
# network with a lossy link (leaf1 to spine2, 30%) and a routing loop
# (spine1 and leaf3 for 10.1.3.12), reads back as what happened there:
# traces between leaves go leaf > spine > leaf, the lossy link's flows end at
# leaf1 with spine2 expected next, the loop names spine1 and leaf3, and the
# history holds the flows and the anomalous traces with their hops. Frames
# with no IP packet on the mirror port (ARP and the like) are counted apart
# from decode errors.
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
HS=$top_builddir/hopscope
PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo

[ -x "$HS" ] || { echo "SKIP: $HS is not built"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-sample.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

timeout 120 "$HS" --db "$tmp/h.db" -r "$PCAP" --topo "$TOPO" \
	-c 'capture status --json; traces --json limit 100000; topo show --json' \
	>"$tmp/out" 2>"$tmp/err" </dev/null
st=$?
if [ "$st" -ne 0 ]; then
	echo "not ok - hopscope read the sample with status $st"
	sed 's/^/# /' "$tmp/err"
	exit 1
fi

python3 - "$tmp/out" "$tmp/h.db" <<'PY'
import json, sqlite3, sys

lines = [json.loads(l) for l in open(sys.argv[1])]
status = lines[0]
topo = lines[-1]
traces = lines[1]["traces"]
role = {s["name"]: s["role"] for s in topo["switches"]}
leaf_of = {h["addr"]: h["leaf"] for h in topo["hosts"]}
n = fails = 0

def check(ok, what):
    global n, fails
    n += 1
    if not ok:
        fails += 1
    print(("ok" if ok else "not ok"), n, "-", what)

check(status.get("decode_errors") == 0, "no decode errors in the sample")
check(len(traces) > 300, "hundreds of traces (%d)" % len(traces))
out = {}
for t in traces:
    out[t["outcome"]] = out.get(t["outcome"], 0) + 1
check(all(out.get(o, 0) > 0 for o in ("delivered", "dropped", "looped")),
      "delivered, dropped and looped traces: %r" % out)

# delivered between leaves: leaf > spine > leaf, the destination's leaf last
bad = []
for t in traces:
    if t["outcome"] != "delivered":
        continue
    path = [h["switch"] for h in t["hops"]]
    a, b = leaf_of.get(t["src"]), leaf_of.get(t["dst"])
    if a and b and a != b:
        if [role.get(s) for s in path] != ["leaf", "spine", "leaf"] or path[0] != a or path[-1] != b:
            bad.append((t["id"], path))
    ttls = [h["ttl"] for h in t["hops"]]
    if ttls != sorted(ttls, reverse=True):
        bad.append((t["id"], "ttl order", ttls))
check(not bad, "delivered traces go source leaf > spine > destination leaf, TTL falling %r" % bad[:3])

# per-flow ECMP: every trace of one flow crosses the same spine
spine = {}
split = set()
for t in traces:
    if t["outcome"] != "delivered" or len(t["hops"]) != 3:
        continue
    k = (t["src"], t["sport"], t["dst"], t["dport"])
    s = t["hops"][1]["switch"]
    if spine.setdefault(k, s) != s:
        split.add(k)
check(not split, "each flow keeps its spine (%d flows split)" % len(split))
check(len(set(spine.values())) == 2, "flows spread over both spines")

# the lossy link: drops at leaf1 on the way to spine2 are there
lossy = [t for t in traces if t["outcome"] == "dropped" and t.get("last") == "leaf1"
         and "spine2" in t.get("expected_next", [])]
check(len(lossy) > 0, "dropped traces end at leaf1 with spine2 expected next (%d)" % len(lossy))

# the loop: spine1 and leaf3 repeat
loops = [t for t in traces if t["outcome"] == "looped"]
ok = loops and all({"spine1", "leaf3"} <= {h["switch"] for h in t["hops"]} for t in loops)
check(bool(ok), "looped traces bounce between spine1 and leaf3 (%d)" % len(loops))
check(all(t["dst"] == "10.1.3.12" for t in loops), "only the looped prefix loops")

db = sqlite3.connect(sys.argv[2])
q = lambda s: db.execute(s).fetchone()[0]
check(q("SELECT count(*) FROM flows") > 0, "the history holds the flows")
check(q("SELECT count(*) FROM traces WHERE outcome = 'dropped'") == out["dropped"],
      "the history holds every dropped trace")
check(q("SELECT count(*) FROM traces WHERE outcome = 'looped'") == out["looped"],
      "the history holds every looped trace")
check(q("SELECT count(*) FROM hops h JOIN traces t ON t.id = h.trace WHERE t.outcome = 'looped'")
      >= 16 * out["looped"], "and their hops")
print("1..%d" % n)
sys.exit(1 if fails else 0)
PY
st=$?

# the sample with five ARP frames after it: "not IP", not decode errors
python3 - "$PCAP" "$tmp/arp.pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
arp = (b"\xff" * 6 + bytes.fromhex("020000000001") + b"\x08\x06" +
       bytes.fromhex("0001080006040001020000000001") + bytes([10, 255, 0, 1]) +
       b"\x00" * 6 + bytes([10, 255, 0, 2]) + b"\x00" * 18)
off, ts = 24, None
while off + 16 <= len(data):
    sec, frac, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    ts = (sec, frac)
    off += 16 + incl
out = bytearray(data)
for i in range(5):
    out += struct.pack("<IIII", ts[0] + 1, ts[1], len(arp), len(arp)) + arp
open(sys.argv[2], "wb").write(bytes(out))
PY
timeout 60 "$HS" --db "$tmp/a.db" -r "$tmp/arp.pcap" --topo "$TOPO" \
	-c 'capture status --json; capture status' >"$tmp/arp.out" 2>"$tmp/arp.err" </dev/null ||
	{ echo "not ok - reading the sample with ARP frames"; sed 's/^/# /' "$tmp/arp.err"; exit 1; }
python3 - "$tmp/arp.out" <<'PY' || st=1
import json, sys
lines = open(sys.argv[1]).read().split("\n")
status = json.loads(lines[0])
text = "\n".join(lines[1:])
ok = (status["not_ip"] == 5 and status["decode_errors"] == 0 and
      "not-ip" not in status["decode_errors_by_reason"] and
      "decode errors  0\n" in text and "not IP         5 " in text)
print(("ok" if ok else "not ok") + " - ARP frames are counted as not IP, not decode errors: %s" %
      {k: status[k] for k in ("not_ip", "decode_errors", "decode_errors_by_reason")})
sys.exit(0 if ok else 1)
PY
exit $st
