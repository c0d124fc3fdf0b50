#!/bin/sh
# export.sh - 'export ndjson' gives the traces 'traces --json' gives (same
# keys, same selection) and one packet record per hop; 'export pcap' writes a
# pcapng tshark reads, one inner packet per hop copy with its comment, the
# bytes matching the record; on the bundled sample and a synthetic capture.
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo
SYNTH=$top_builddir/tests/tools/hs-synth
command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
command -v tshark >/dev/null 2>&1 || skip "tshark is missing"
[ -x "$SYNTH" ] || hard "'$SYNTH' is not built"

same_ids() { [ -n "$2" ] && [ "$1" = "$2" ]; }
# each run reads the sample into a history of its own, as session 1: a
# trace is named 1:N in all of them
run() { rm -f "$tmp/h.db"*; hs --db "$tmp/h.db" -r "$PCAP" --topo "$TOPO" "$@"; }

# --- ndjson to standard output -----------------------------------------------------
run --json -c 'traces limit 100000'
cp "$tmp/out" "$tmp/traces.json"
ntraces=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["traces"]))' "$tmp/traces.json")
run -c 'export ndjson -'
check "export ndjson - (status $st)" [ "$st" -eq 0 ]
cp "$tmp/out" "$tmp/all.ndjson"
python3 - "$tmp/traces.json" "$tmp/all.ndjson" >"$tmp/cmp" <<'PY'
import json, sys
traces = json.load(open(sys.argv[1]))["traces"]
lines = [json.loads(l) for l in open(sys.argv[2])]
bad = []
tr = [o for o in lines if o.get("type") == "trace"]
pk = [o for o in lines if o.get("type") == "packet"]
if len(tr) + len(pk) != len(lines):
    bad.append("lines of another type")
if len(tr) != len(traces):
    bad.append("%d traces, 'traces' lists %d" % (len(tr), len(traces)))
by_id = {t["trace"]: t for t in traces}
for t in tr:
    want = dict(by_id.get(t["trace"], {}), type="trace")
    if t != want or list(t)[0] != "type" or list(t)[1:] != list(by_id[t["trace"]]):
        bad.append("trace %s differs from 'traces --json'" % t["trace"])
        break
# oldest first by the time 'traces' shows (the switches' when it has
# them), which is not the order of the ids
when = [(t.get("switch_ts_ns", t["ts_ns"]), t["id"]) for t in tr]
if when != sorted(when):
    bad.append("traces not oldest first")
keys = ["type", "ts_ns", "switch", "addr", "src", "dst", "proto", "sport", "dport", "len",
        "tcp_flags", "ttl", "dscp", "trace", "hop"]
for p in pk:
    if list(p) != keys:
        bad.append("packet keys %s" % list(p))
        break
    h = by_id[p["trace"]]["hops"][p["hop"] - 1]
    if (h["switch"], h["ttl"], h["ts_ns"], h["addr"]) != (p["switch"], p["ttl"], p["ts_ns"], p["addr"]):
        bad.append("packet %s is not hop %d of trace %s" % (p, p["hop"], p["trace"]))
        break
nhops = sum(len(t["hops"]) for t in traces)
if len(pk) != nhops:
    bad.append("%d packet records for %d hops" % (len(pk), nhops))
# each trace's packets follow it
cur = None
for o in lines:
    if o["type"] == "trace":
        cur = o["trace"]
    elif o["trace"] != cur:
        bad.append("packet of trace %s after trace %s" % (o["trace"], cur))
        break
print("ok %d %d" % (len(tr), len(pk)) if not bad else "\n".join("#   " + b for b in bad[:5]))
PY
check "ndjson: every trace as 'traces --json' has it, then one record per hop: $(head -c 30 "$tmp/cmp")" \
	grep -q '^ok' "$tmp/cmp"
grep '^#' "$tmp/cmp"
check "ndjson: the sample has traces ($ntraces)" [ "$ntraces" -gt 100 ]

# --- the traces filters select the same traces ------------------------------------------
for f in "outcome dropped" "switch spine2" "flow 10.1.1.11" "outcome looped limit 7" "limit 5"; do
	run --json -c "traces $f limit 100000"
	# 'traces' with its own limit given twice: the last one wins
	case $f in *limit*) run --json -c "traces $f" ;; esac
	want=$(python3 -c 'import json,sys; print(" ".join(str(t["id"]) for t in json.load(open(sys.argv[1]))["traces"]))' "$tmp/out" |
		tr ' ' '\n' | sort -n | tr '\n' ' ')
	run -c "export ndjson - $f records traces"
	got=$(python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["id"]) for l in open(sys.argv[1])))' "$tmp/out" | tr ' ' '\n' | sort -n | tr '\n' ' ')
	check "export ndjson - $f: the traces 'traces $f' lists ($(echo $want | wc -w))" \
		same_ids "$got" "$want"
done
run -c 'export ndjson - outcome dropped records packets'
check "records packets: only packet records" \
	[ "$(grep -c '"type":"packet"' "$tmp/out")" -eq "$(wc -l <"$tmp/out")" ]
check "records packets: some" [ "$(wc -l <"$tmp/out")" -gt 0 ]

# --- ndjson to a file -----------------------------------------------------------------------
run -c "export ndjson $tmp/all.file.ndjson"
check "export ndjson FILE (status $st)" [ "$st" -eq 0 ]
check "the file holds what '-' printed" cmp -s "$tmp/all.file.ndjson" "$tmp/all.ndjson"
check "a summary line names the file and the counts" \
	has "exported to '$tmp/all.file.ndjson': ndjson, $ntraces traces, " "$tmp/out"
run --json -c "export ndjson $tmp/x.ndjson outcome dropped"
check "--json: the summary is one object" \
	python3 -c 'import json,sys; o=json.loads(open(sys.argv[1]).read()); assert o["format"]=="ndjson" and o["traces"]>0' "$tmp/out"

# --- pcapng read back by tshark ---------------------------------------------------------------
run -c "export ndjson - outcome dropped records packets; export pcap $tmp/drops.pcapng outcome dropped"
check "export pcap (status $st)" [ "$st" -eq 0 ]
grep '"type":"packet"' "$tmp/out" >"$tmp/drops.ndjson"
tshark -r "$tmp/drops.pcapng" -V >"$tmp/drops.V" 2>"$tmp/tshark.err"
check "tshark reads the pcapng (status $?)" [ -s "$tmp/drops.V" ]
check "tshark sees comments" has 'Packet comments' "$tmp/drops.V"
tshark -r "$tmp/drops.pcapng" -T fields -E separator=/t -e frame.comment -e pkt_comment \
	-e ip.src -e ip.dst -e ip.ttl -e tcp.srcport -e tcp.dstport -e frame.time_epoch \
	>"$tmp/drops.fields" 2>>"$tmp/tshark.err"
check_pcap() { # NDJSON FIELDS: one packet per record, comment and bytes agree
	python3 - "$1" "$2" <<'PY'
import json, sys
# times as the comments write them, nine decimals
recs = {(o["trace"], o["hop"]): o for o in (json.loads(l) for l in open(sys.argv[1]))}
for o in recs.values():
    o["ts"] = "%d.%09d" % (o["ts_ns"] // 10**9, o["ts_ns"] % 10**9)
seen, bad = set(), []
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    comment = f[0] or f[1]
    w = comment.split()
    # trace [S:]N hop I/N switch S ts T ttl X outcome O
    key = (w[1], int(w[3].split("/")[0]))
    r = recs.get(key)
    if r is None:
        bad.append("no record for %s" % comment)
        continue
    if key in seen:
        bad.append("twice: %s" % comment)
    seen.add(key)
    if w[5] != r["switch"] or int(w[9]) != r["ttl"] or w[7] != r["ts"]:
        bad.append("comment %s, record %s" % (comment, r))
    if (f[2], f[3], int(f[4]), int(f[5] or 0), int(f[6] or 0)) != \
       (r["src"], r["dst"], r["ttl"], r["sport"], r["dport"]):
        bad.append("packet %s, record %s" % (f[2:7], r))
    if abs(float(f[7]) - float(w[7])) > 1e-6:
        bad.append("time %s, comment %s" % (f[7], w[7]))
if seen != set(recs):
    bad.append("%d packets for %d records" % (len(seen), len(recs)))
print("ok %d" % len(seen) if not bad else "\n".join("#   " + b for b in bad[:5]))
PY
}
check_pcap "$tmp/drops.ndjson" "$tmp/drops.fields" >"$tmp/cmp"
check "pcap: one packet per hop copy, comment and inner bytes match the records: $(head -c 20 "$tmp/cmp")" \
	grep -q '^ok' "$tmp/cmp"
grep '^#' "$tmp/cmp"
check "pcap: the summary counts the packets" \
	has "exported to '$tmp/drops.pcapng': pcapng, [0-9]* traces, $(wc -l <"$tmp/drops.ndjson") packets" "$tmp/out"
check "pcap: the comment format" \
	grep -q 'trace 1:[0-9]* hop [0-9]*/[0-9]* switch [a-z0-9]* ts [0-9]*\.[0-9]\{9\} ttl [0-9]* outcome dropped' "$tmp/drops.V"

"$SYNTH" --flows 5 --seed 2 -w "$tmp/s0.pcap" 2>"$tmp/synth.err" || hard "hs-synth failed: $(cat "$tmp/synth.err")"

# --- writes that fail, sources that changed --------------------------------------------------
for fmt in ndjson pcap; do
	run -c "export $fmt /dev/full"
	check "export $fmt /dev/full: fails (status $st)" [ "$st" -eq 1 ]
	check "export $fmt /dev/full: says why" has "cannot write '/dev/full': No space left on device" "$tmp/err"
	check "export $fmt /dev/full: the device is still there" [ -c /dev/full ]
done
cp "$PCAP" "$tmp/self.pcap"
hs --db "$tmp/self.db" -r "$tmp/self.pcap" -c "export pcap $tmp/self.pcap"
check "export pcap onto its own capture file: refused (status $st)" [ "$st" -eq 1 ]
check "export pcap onto its own capture file: says so" has "it is the capture file being read" "$tmp/err"
check "export pcap onto its own capture file: the file is intact" cmp -s "$PCAP" "$tmp/self.pcap"

# the capture file changes after it was read: commands come on a pipe, and
# the file is cut short (then replaced) between the capture and the export
cp "$PCAP" "$tmp/moving.pcap"
moved() { # what to do to the file between the two commands
	{ echo "capture start $tmp/moving.pcap"; echo "traces limit 1"; sleep 2; "$@"
	  echo "export pcap $tmp/moved.pcapng"; } |
		timeout 60 "$HS" --db "$tmp/m.db" --topo "$TOPO" >"$tmp/out" 2>"$tmp/err"
	st=$?
}
moved sh -c 'head -c 300000 "$1" >"$2"' sh "$PCAP" "$tmp/moving.pcap"
check "source cut short: export pcap fails (status $st)" [ "$st" -eq 1 ]
check "source cut short: the error names the source" has "export pcap: '$tmp/moving.pcap': truncated dump file" "$tmp/err"
check "source cut short: no partial pcapng is left" [ ! -e "$tmp/moved.pcapng" ]
cp "$PCAP" "$tmp/moving.pcap"
moved cp "$tmp/s0.pcap" "$tmp/moving.pcap"
check "source replaced: export pcap still writes (status $st)" [ "$st" -eq 0 ]
check "source replaced: the copies not found are counted" has "hop copies were not found in '$tmp/moving.pcap'" "$tmp/err"

# --- a synthetic capture: every hop of every trace --------------------------------------------
"$SYNTH" --flows 30 --seed 11 --mss 400 --drop-link leaf2-spine1:0.3 -w "$tmp/s.pcap" \
	-t "$tmp/s.topo" 2>"$tmp/synth.err" || hard "hs-synth failed: $(cat "$tmp/synth.err")"
hs --db "$tmp/s.db" -r "$tmp/s.pcap" --topo "$tmp/s.topo" \
	-c "export ndjson $tmp/s.ndjson records packets; export pcap $tmp/s.pcapng"
check "synthetic: export ndjson and pcap (status $st)" [ "$st" -eq 0 ]
tshark -r "$tmp/s.pcapng" -T fields -E separator=/t -e frame.comment -e pkt_comment \
	-e ip.src -e ip.dst -e ip.ttl -e tcp.srcport -e tcp.dstport -e frame.time_epoch \
	>"$tmp/s.fields" 2>>"$tmp/tshark.err"
frames=$(capinfos -c -M "$tmp/s.pcap" 2>/dev/null | awk '/Number of packets/ { print $NF }')
check_pcap "$tmp/s.ndjson" "$tmp/s.fields" >"$tmp/cmp"
check "synthetic: every hop copy in the pcapng: $(head -c 20 "$tmp/cmp") of ${frames:-?} frames" \
	grep -q "^ok ${frames:-x}\$" "$tmp/cmp"
grep '^#' "$tmp/cmp"

finish
