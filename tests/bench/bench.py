#!/usr/bin/env python3
"""bench.py - 'make bench': hopscope's speed, memory and responsiveness

Everything is measured in one run, on one capture, next to reference tools
run the same way, so the figures are read as ratios and not as absolutes:

  input    a large mirrored capture of a fat-tree made by hs-synth (cached in
           tests/bench/cache/, made again when the generator or its options
           change), held in memory (mlock) while the bench runs; 256 MB
           of memory are touched and freed before every timed run (see
           warm_memory)
  ingest   whole-process wall and CPU time, median of BENCH_RUNS runs, pinned
           to one core: hopscope with one worker (--workers 1: the default is
           one per core) and 'set history off', 'default' and 'all';
           the bare libpcap loop (pcaploop), opening the file as hopscope
           does and again with hopscope's 128 KiB stdio buffer; tcpdump -w /dev/null;
           the runs of these take turns, one of each per round, and a ratio
           is the median of the rounds' ratios; then tshark on a slice of
           the file
  workers  the same capture read with --workers 1 and --workers 2, on every
           core, history off: the rate of each and their ratio
  memory   memtrace: bytes per open trace, peak RSS with 1M open traces and
           with 1M flows, through the tracer and flow table APIs
  respond  time from 'capture status' typed at the prompt to its answer
           while the file is replayed at full speed by one worker (respond.py)
  sim007   the 007 blame simulator table (see section_sim007)
  pg       the capture into a history on PostgreSQL (a server of the
           bench's own, share/lab/hs-pgserver) and into SQLite, one worker, default
           history then 'set history all', in turn: the rate of each and
           PostgreSQL's over SQLite's (on PostgreSQL the default keeps every
           trace too: the two settings write the same there)
  pgquery  10 million hops in a history on PostgreSQL (a fat-tree capture
           read once, its traces copied on the server a day apart each time):
           'history traces', 'drops', 'traces', 'history load; drops' and
           queries of drops ('sql'), each under a second; beside the load,
           psql counting the traces and reading every trace's row as the
           load reads it, and the load's time over the latter's
  live     a burst of ERSPAN II copies sent by trafgen at its top speed into
           a veth pair in a network namespace of its own, captured on the
           other end by tcpdump -w /dev/null and by hopscope ('capture start',
           default history, then 'set history all', each with one worker and
           with two), in turn: loss and CPU
           seconds per million frames of each, side by side, and with
           'history all' the share of the burst's traces the history did
           not keep (it fell behind: counted, not stored) (needs root and
           trafgen; BENCH_ONLY=live runs it alone, without the input)

Each figure is printed with PASS or MISS against its target; a miss never
fails the build. Results go to tests/bench/results/last.tsv (and last.json);
the previous results, when there are any, are shown as a change.

Given two programs (--hopscope NAME=PROGRAM twice, the first as before;
tests/bench/compare.sh builds two revisions and gives them), only the
ingest, workers and live figures are measured, the two builds taking turns within
each round, and each figure is printed as both medians, the median of the
rounds' ratios and their spread; results go to tests/bench/results/compare.tsv.

Environment (defaults in brackets):
  BENCH_PACKETS   original packets in the capture [1000000] (about 5 copies each)
  BENCH_SHAPE     hs-synth fabric [fattree:16]
  BENCH_RUNS      timed runs per tool, the median is kept [5]
  BENCH_SLICE     frames given to tshark [100000]
  BENCH_OPEN      open traces for memtrace [1000000]
  BENCH_FLOWS     flows for memtrace [1000000]
  BENCH_SAMPLES   prompt samples [40]
  BENCH_CPU       the core everything is pinned to [1]
  BENCH_ONLY      comma-separated sections to run [all]
  BENCH_LIVE_FRAMES  frames in each live burst [1000000]
  BENCH_PG_HOPS   hops stored for the PostgreSQL queries [10000000]
"""
import argparse
import contextlib
import fcntl
import hashlib
import json
import mmap
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import respond  # noqa: E402

MILLION = 1e6


def env_int(name, default):
    v = os.environ.get(name, "")
    try:
        return int(v) if v else default
    except ValueError:
        sys.exit("bench: %s must be an integer, got '%s'" % (name, v))


class Bench:
    def __init__(self, srcdir, builddir, hopscopes=None, live_lock=None):
        self.src = srcdir
        self.build = builddir
        # (name, program) of each build measured; two or more: compared
        self.hopscopes = hopscopes or [("hopscope", self.prog("hopscope"))]
        self.bin = self.hopscopes[0][1]
        self.live_lock = live_lock
        self.cpu = env_int("BENCH_CPU", 1)
        self.runs = max(1, env_int("BENCH_RUNS", 5))
        self.rows = []          # (key, label, value, unit, target, verdict)
        self.notes = []
        self.cache = os.path.join(srcdir, "tests", "bench", "cache")
        self.results = os.path.join(srcdir, "tests", "bench", "results")
        self.tmp = tempfile.mkdtemp(prefix="hs-bench-")
        self.capture = self.topo = None
        self.holder = None      # the process that keeps the capture in memory
        self.frames = 0
        self.config = {k: v for k, v in sorted(os.environ.items())
                       if k.startswith("BENCH_") and k not in ("BENCH_ONLY", "BENCH_CFLAGS")}
        self.compare = len(self.hopscopes) > 1
        self.prev = {} if self.compare else self.load_prev()

    # ---- helpers ------------------------------------------------------------

    def prog(self, *parts):
        return os.path.join(self.build, *parts)

    def pin(self, argv):
        if shutil.which("taskset"):
            return ["taskset", "-c", str(self.cpu)] + argv
        return argv

    def add(self, key, label, value, unit, target=None, ok=None):
        verdict = "" if ok is None else ("PASS" if ok else "MISS")
        self.rows.append((key, label, value, unit, target or "", verdict))
        change = ""
        old = self.prev.get(key)
        if old is not None and value is not None and old != 0:
            change = "%+.1f%%" % ((value - old) / old * 100.0)
        print("  %-44s %12s %-6s %-14s %-4s %s" % (
            label, fmt(value), unit, target or "", verdict, change))

    def note(self, text):
        self.notes.append(text)
        print("  note: " + text)

    def timed(self, argv, stdout=subprocess.DEVNULL):
        """run once: wall seconds, CPU seconds, peak RSS KiB, exit status, output"""
        out = tempfile.TemporaryFile(dir=self.tmp) if stdout is None else stdout
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read().decode("utf-8", "replace")
        p.stderr.close()
        p.returncode = os.waitstatus_to_exitcode(status)
        text = ""
        if stdout is None:
            out.seek(0)
            text = out.read().decode("utf-8", "replace")
            out.close()
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, p.returncode, text, err

    @contextlib.contextmanager
    def holding_live_lock(self):
        """the --live-lock file locked (flock, as the lab tests take it);
        nothing without the option"""
        if not self.live_lock:
            yield
            return
        def waited(signum, frame):
            raise RuntimeError("%s stayed locked for 15 minutes" % self.live_lock)
        with open(self.live_lock, "a") as f:
            # waits in line with the lab tests' flock(1), at most 15 minutes
            old = signal.signal(signal.SIGALRM, waited)
            signal.alarm(900)
            try:
                fcntl.flock(f, fcntl.LOCK_EX)
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, old)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    WARM_MB = 256

    def warm_memory(self):
        """Touch and free WARM_MB of memory just before a timed run, so that
        every run finds the kernel's free memory in the same state. A virtual
        machine may hand free memory back to its host (free page reporting,
        after about two seconds unused); the first touch of such a page then
        costs a fault in the host, 0.3 s per 100 MB here, paid by whichever
        run comes first to it: a tool that follows a pause or a smaller tool
        paid it, one that followed a larger run did not."""
        n = self.WARM_MB << 20
        m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(m, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
            m.madvise(mmap.MADV_HUGEPAGE)  # tools' large tables ask for huge pages
        for off in range(0, n, mmap.PAGESIZE):
            m[off] = 1
        m.close()

    def median_run(self, name, argv, before=None, stdout=subprocess.DEVNULL):
        return self.median_runs([(name, argv, before, stdout)])[name]

    def median_runs(self, jobs):
        """Run each job (name, argv, before, stdout) BENCH_RUNS times, taking
        turns: round after round, every tool once. A machine whose speed
        drifts (other tenants, a busy memory bus) then slows every tool of a
        round alike, and the ratios between them hold. Per job: the median
        wall and CPU time, peak RSS, the last output; None when a run failed."""
        acc = {name: {"walls": [], "cpus": [], "rss_kb": 0, "out": ""} for name, *_ in jobs}
        failed = set()
        for _ in range(self.runs):
            for name, argv, before, stdout in jobs:
                if name in failed:
                    continue
                if before:
                    before()
                self.warm_memory()
                wall, cpu, maxrss, rc, text, err = self.timed(argv, stdout)
                if rc != 0:
                    self.note("%s failed (exit %d): %s" % (name, rc, err.strip()[-300:]))
                    failed.add(name)
                    continue
                a = acc[name]
                a["walls"].append(wall)
                a["cpus"].append(cpu)
                a["rss_kb"] = max(a["rss_kb"], maxrss)
                a["out"] = text
        res = {}
        for name, a in acc.items():
            res[name] = None if name in failed else {
                "wall": statistics.median(a["walls"]), "cpu": statistics.median(a["cpus"]),
                "rss_kb": a["rss_kb"], "out": a["out"], "walls": a["walls"],
                "cpus": a["cpus"]}
        return res

    def load_prev(self):
        """figures of the last run, when it was made with the same sizes"""
        prev = {}
        try:
            with open(os.path.join(self.results, "last.json")) as f:
                if json.load(f).get("config") != self.config:
                    print("(the last results were made with other BENCH_* sizes: "
                          "no change shown)")
                    return prev
        except (OSError, ValueError):
            return prev
        path = os.path.join(self.results, "last.tsv")
        try:
            with open(path) as f:
                for line in f:
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) >= 3 and parts[0] != "key":
                        try:
                            prev[parts[0]] = float(parts[2])
                        except ValueError:
                            pass
        except OSError:
            pass
        return prev

    def save(self):
        os.makedirs(self.results, exist_ok=True)
        stem = "compare" if self.compare else "last"
        tsv = os.path.join(self.results, stem + ".tsv")
        with open(tsv + ".tmp", "w") as f:
            f.write("key\tlabel\tvalue\tunit\ttarget\tverdict\n")
            for key, label, value, unit, target, verdict in self.rows:
                f.write("%s\t%s\t%s\t%s\t%s\t%s\n" % (
                    key, label, "" if value is None else repr(float(value)), unit,
                    target, verdict))
        os.replace(tsv + ".tmp", tsv)
        doc = {
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "capture": self.capture, "frames": self.frames,
            "runs": self.runs, "cpu": self.cpu, "config": self.config,
            "hopscopes": self.hopscopes,
            "results": [dict(zip(("key", "label", "value", "unit", "target", "verdict"), r))
                        for r in self.rows],
            "notes": self.notes,
        }
        with open(os.path.join(self.results, stem + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
        print("\nresults written to %s" % os.path.relpath(tsv, self.src))

    # ---- input ----------------------------------------------------------------

    def section_input(self):
        packets = env_int("BENCH_PACKETS", 1000000)
        shape = os.environ.get("BENCH_SHAPE") or "fattree:16"
        args = ["--shape", shape, "--packets", str(packets), "--seed", "7"]
        if shape.startswith("fattree:"):
            # a few lossy links and a loop toward one ToR (all exist for k >= 8)
            args += ["--drop-link", "edge3-agg1:0.05", "--drop-link", "agg9-core2:0.02",
                     "--loop", "agg17-core5:edge20", "--loop-flows", "20"]
        # the generator's program, not its sources: it links the project's
        # libraries (topology, ECMP hashing), whose changes change the capture
        h = hashlib.sha256(" ".join(args).encode())
        with open(self.prog("tests", "tools", "hs-synth"), "rb") as fp:
            h.update(fp.read())
        key = h.hexdigest()[:12]
        os.makedirs(self.cache, exist_ok=True)
        base = os.path.join(self.cache, "fabric-" + key)
        self.capture, self.topo = base + ".pcap", base + ".topo"
        meta = base + ".json"
        if not (os.path.exists(meta) and os.path.exists(self.capture)):
            for f in os.listdir(self.cache):
                if f.startswith("fabric-"):
                    os.unlink(os.path.join(self.cache, f))
            print("  making the capture: hs-synth " + " ".join(args))
            rc = subprocess.call([self.prog("tests", "tools", "hs-synth")] + args +
                                 ["-w", self.capture + ".tmp", "-t", self.topo])
            if rc != 0:
                sys.exit("bench: hs-synth failed (exit %d)" % rc)
            os.replace(self.capture + ".tmp", self.capture)
            out = subprocess.check_output([self.prog("tests", "bench", "pcaploop"),
                                           self.capture]).decode()
            info = dict(line.split("\t") for line in out.splitlines())
            with open(meta, "w") as f:
                json.dump({"args": args, "frames": int(info["packets"]),
                           "bytes": int(info["bytes"]), "packets": packets}, f)
        with open(meta) as f:
            m = json.load(f)
        self.frames = m["frames"]
        print("  %s: %d mirrored copies of %d packets, %.0f MB (%s)" % (
            os.path.relpath(self.capture, self.src), self.frames, m["packets"],
            m["bytes"] / MILLION, shape))
        # warm the page cache so the first tool timed does not pay for the disk
        subprocess.call([self.prog("tests", "bench", "pcaploop"), self.capture],
                        stdout=subprocess.DEVNULL)
        self.hold(self.capture)

    # mmap and mlock argv[1], say so on stdout ("held" or why not), then wait
    # for stdin to close
    HOLDER = r"""
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
size = os.path.getsize(sys.argv[1])
with open(sys.argv[1], "rb") as f:
    addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
if addr in (None, ctypes.c_void_p(-1).value) or libc.mlock(addr, size) != 0:
    print(os.strerror(ctypes.get_errno()), flush=True)
else:
    print("held", flush=True)
sys.stdin.read()
"""

    def hold(self, path):
        """Keep the file's pages in memory until the bench ends, so every
        tool reads it from memory: a machine may drop cached pages of a file
        read a minute ago (a 2-core VM dropped a fifth of the capture in
        20 s, idle), and a tool then pays for the disk in some rounds and
        not in others.
        A process of its own holds it, not this one: a tool's peak RSS would
        count this one's mappings (the child shares them until its exec)."""
        self.holder = subprocess.Popen([sys.executable, "-c", self.HOLDER, path],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       text=True)
        said = self.holder.stdout.readline().strip()
        if said == "held":
            print("  held in memory (mlock): every tool reads it from memory")
        else:
            self.note("cannot hold the capture in memory (%s): a tool may read part of it "
                      "from the disk in some rounds" % (said or "the holder failed"))
        print("  %d MB touched and freed before each timed run: every run finds free "
              "memory alike" % self.WARM_MB)

    # ---- ingest ---------------------------------------------------------------

    def hopscope_argv(self, policy, db, prog=None):
        """one worker, on the one core it is pinned to (a build older than
        --workers reads with one)"""
        prog = prog or self.bin
        one = ["--workers", "1"] if self.knows_workers(prog) else []
        return self.pin([prog, "--db", db, "--topo", self.topo] + one + ["-c",
                         "set history %s; capture start %s; capture status" %
                         (policy, self.capture)])

    def section_ingest(self):
        F = self.frames
        results = {}
        print("  %-44s %12s %-6s %-14s %-4s %s" % ("", "copies/s", "", "target", "", "change"))

        pcaploop = self.prog("tests", "bench", "pcaploop")
        jobs = [("pcaploop", self.pin([pcaploop, self.capture]), None, subprocess.DEVNULL),
                ("pcaploop -b", self.pin([pcaploop, "-b", str(1 << 17), self.capture]), None,
                 subprocess.DEVNULL),
                ("tcpdump", self.pin(["tcpdump", "-n", "-r", self.capture, "-w", "/dev/null"]),
                 None, subprocess.DEVNULL)]
        dbs = {}
        for policy in ("off", "default", "all"):
            db = dbs[policy] = os.path.join(self.tmp, "ingest-%s.db" % policy)

            def fresh(db=db):
                for sfx in ("", "-wal", "-shm"):
                    if os.path.exists(db + sfx):
                        os.unlink(db + sfx)
            jobs.append(("hopscope (history %s)" % policy, self.hopscope_argv(policy, db),
                         fresh, None))
        runs = self.median_runs(jobs)
        loop, bufd, tcpd = runs["pcaploop"], runs["pcaploop -b"], runs["tcpdump"]
        for policy in ("off", "default", "all"):
            r = runs["hopscope (history %s)" % policy]
            if r:
                r["status"] = parse_status(r["out"])
                r["db"] = dbs[policy]
            results[policy] = r

        tshark = None
        nslice = min(env_int("BENCH_SLICE", 100000), F)
        if shutil.which("tshark") and nslice > 0:
            sl = os.path.join(self.tmp, "slice.pcap")
            subprocess.check_call([self.prog("tests", "bench", "pcaploop"), self.capture,
                                   "-w", sl, "-n", str(nslice)])
            tshark = self.median_run("tshark", self.pin(["tshark", "-n", "-r", sl]))

        def pps(r, n=F):
            return n / r["wall"] if r else None
        ref_loop, ref_tcpd = pps(loop), pps(tcpd)

        def rel(r, ref):
            """r's rate over ref's, on the same file: the median of the rounds'
            ratios, each of two runs made one after the other, so that a
            slow spell of the machine weighs on both sides of a ratio"""
            return statistics.median(w_ref / w for w, w_ref in zip(r["walls"], ref["walls"]))

        def ratios(key, r, n=F):
            if not r:
                return
            if ref_loop:
                self.add(key + ".vs_loop", "  ratio to the bare libpcap loop", rel(r, loop), "x")
            if ref_tcpd:
                self.add(key + ".vs_tcpdump", "  ratio to tcpdump -w /dev/null", rel(r, tcpd),
                         "x")

        self.add("ingest.loop.pps", "bare libpcap loop (pcaploop)", ref_loop, "pps")
        self.add("ingest.loop_buffered.pps", "  the same with hopscope's 128 KiB buffer", pps(bufd),
                 "pps")
        self.add("ingest.tcpdump.pps", "tcpdump -r FILE -w /dev/null", ref_tcpd, "pps")
        if tshark:
            self.add("ingest.tshark.pps", "tshark -r SLICE (%d frames)" % nslice,
                     pps(tshark, nslice), "pps")
        targets = {"off": 4 * MILLION, "default": 3 * MILLION, "all": 1 * MILLION}
        for policy in ("off", "default", "all"):
            r = results[policy]
            key = "ingest.hopscope_%s" % policy
            if not r:
                self.add(key + ".pps", "hopscope, 1 worker, history %s" % policy, None, "pps",
                         ">= %s" % fmt(targets[policy]), False)
                continue
            st = r["status"]
            if st.get("packets") != F:
                self.note("hopscope (history %s) read %s frames of %d" %
                          (policy, st.get("packets"), F))
            p = pps(r)
            self.add(key + ".pps", "hopscope, 1 worker, history %s" % policy, p, "pps",
                     ">= %s" % fmt(targets[policy]), p >= targets[policy])
            if policy == "off" and ref_loop:
                v = rel(r, loop)
                self.add(key + ".vs_loop", "  ratio to the bare libpcap loop", v,
                         "x", ">= 0.5", v >= 0.5)
                if bufd:
                    self.add(key + ".vs_loop_buffered", "  ratio to the buffered loop",
                             rel(r, bufd), "x")
                if ref_tcpd:
                    self.add(key + ".vs_tcpdump", "  ratio to tcpdump -w /dev/null",
                             rel(r, tcpd), "x")
            else:
                ratios(key, r)
            self.add(key + ".cpu_share", "  CPU time / wall time", r["cpu"] / r["wall"], "x")
            self.add(key + ".rss_mb", "  peak RSS", r["rss_kb"] / 1024.0, "MB")
            if policy == "all":
                self.check_all_stored(r)

        off = results.get("off")
        if off:
            st = off["status"]
            if st.get("evicted"):
                self.note("the tracer evicted %d of %d traces before their quiet timeout "
                          "(open-trace pool full)" % (st["evicted"], st.get("closed", 0)))
            if st.get("flows") and st.get("flows") & (st.get("flows") - 1) == 0:
                self.note("the flow table stopped at %d flows (full)" % st["flows"])
        spread = [(n, r) for n, r in (("loop", loop), ("buffered loop", bufd),
                                      ("tcpdump", tcpd)) +
                  tuple(results.items()) if r]
        worst = max(((max(r["walls"]) - min(r["walls"])) / r["wall"], n) for n, r in spread)
        if worst[0] > 0.15:
            self.note("runs of %s varied by %.0f%% (machine busy?)" % (worst[1], worst[0] * 100))

    @contextlib.contextmanager
    def pg_server(self, prefix):
        """a PostgreSQL server of the bench's own (share/lab/hs-pgserver) in a
        temporary directory: (hs-pgserver, its directory, its URL), or None
        (said) when none starts; stopped and removed on leaving"""
        pgs = os.path.join(self.src, "share", "lab", "hs-pgserver")
        d = tempfile.mkdtemp(prefix=prefix)
        p = subprocess.run([pgs, "start", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode != 0:
            self.note("no PostgreSQL server for the bench: %s" % p.stderr.strip()[-300:])
            shutil.rmtree(d, ignore_errors=True)
            yield None
            return
        try:
            yield pgs, d, p.stdout.strip()
        finally:
            subprocess.call([pgs, "stop", d])
            shutil.rmtree(d, ignore_errors=True)

    def section_pg(self):
        """the same capture into PostgreSQL and into SQLite, in turn; each run
        starts from an empty history (the same file read again adds
        nothing). The server runs beside hopscope, not pinned: its CPU is
        not in hopscope's, the wall time is the figure."""
        F = self.frames
        with self.pg_server("hs-bench-pg.") as server:
            if server is None:
                return
            pgs, d, url = server
            print("  %-44s %12s %-6s %-14s %-4s %s" % ("", "copies/s", "", "target", "", "change"))
            jobs = []
            for policy in ("default", "all"):
                db = os.path.join(self.tmp, "pg-lite-%s.db" % policy)

                def fresh_lite(db=db):
                    for sfx in ("", "-wal", "-shm"):
                        if os.path.exists(db + sfx):
                            os.unlink(db + sfx)

                def fresh_pg():
                    subprocess.check_call([pgs, "psql", d, "-q", "-c", "SET client_min_messages = warning",
                                           "-c", "DROP SCHEMA public CASCADE",
                                           "-c", "CREATE SCHEMA public"],
                                          stdout=subprocess.DEVNULL)
                jobs.append(("sqlite %s" % policy, self.hopscope_argv(policy, db), fresh_lite,
                             None))
                jobs.append(("pg %s" % policy, self.hopscope_argv(policy, url), fresh_pg, None))
            runs = self.median_runs(jobs)
            for policy in ("default", "all"):
                lite, pg = runs["sqlite %s" % policy], runs["pg %s" % policy]
                key = "pg.%s" % policy
                self.add(key + ".sqlite.pps", "hopscope > SQLite, 1 worker, history %s" % policy,
                         F / lite["wall"] if lite else None, "pps")
                self.add(key + ".pg.pps",
                         "hopscope > PostgreSQL, 1 worker, history %s" % policy,
                         F / pg["wall"] if pg else None, "pps")
                if lite and pg:
                    v = statistics.median(w_l / w for w, w_l in zip(pg["walls"], lite["walls"]))
                    self.add(key + ".vs_sqlite", "  PostgreSQL's rate over SQLite's", v, "x",
                             ">= 0.5", v >= 0.5)
                    st = parse_status(pg["out"])
                    if st.get("packets") != F:
                        self.note("hopscope > PostgreSQL (history %s) read %s frames of %d" %
                                  (policy, st.get("packets"), F))

    DAY_NS = 86400 * 10**9

    def section_pgquery(self):
        """10 million hops on PostgreSQL: a fat-tree capture (hs-synth) read
        into a history of the bench's own server once ('history all'), its
        traces then copied on the server (INSERT ... SELECT), each copy a
        day later, until the history holds BENCH_PG_HOPS hops over as many days;
        then 'history traces', 'drops' and 'traces' (a console with no
        traces of its own reads the newest from the store), 'history load;
        drops' and two queries of drops ('sql'), each timed whole, the
        console started to its answer, median of the runs."""
        want = env_int("BENCH_PG_HOPS", 10 * 1000 * 1000)
        with self.pg_server("hs-bench-pgq.") as server:
            if server is None:
                return
            pgs, d, url = server

            def psql(sql):
                return subprocess.check_output([pgs, "psql", d, "-qtA", "-c",
                                                "SET client_min_messages = warning", "-c", sql],
                                               text=True).strip()
            cap, topo = os.path.join(d, "q.pcap"), os.path.join(d, "q.topo")
            subprocess.check_call([self.prog("tests", "tools", "hs-synth"), "--shape",
                                   "fattree:8", "--packets", "200000", "--seed", "7",
                                   "--drop-link", "edge3-agg1:0.05", "-w", cap, "-t", topo],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall, _, _, rc, _, err = self.timed([self.bin, "--db", url, "--topo",
                                                 topo, "-c", "set history all; capture start "
                                                 + cap])
            if rc != 0:
                self.note("hopscope > PostgreSQL failed (exit %d): %s" % (rc, err[-300:]))
                return
            hops0 = int(psql("SELECT sum(nhops) FROM traces"))
            first, end = (int(v) for v in psql(
                "SELECT min(first_ts) / %d, max(first_ts) / %d FROM traces" %
                (self.DAY_NS, self.DAY_NS)).split("|"))
            cols = psql("SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum)"
                        " FROM pg_attribute WHERE attrelid = 'traces'::regclass"
                        " AND attnum > 0 AND NOT attisdropped AND attname <> 'id'")
            shifted = cols.replace("first_ts", "first_ts + %(k)d * %(day)d").replace(
                "last_ts", "last_ts + %(k)d * %(day)d")
            copies = -(-want // hops0) - 1
            t0 = time.perf_counter()
            for k in range(1, copies + 1):
                for day in range(first + k, end + k + 1):
                    name = time.strftime("traces_%Y%m%d", time.gmtime(day * 86400))
                    psql("CREATE TABLE IF NOT EXISTS %s PARTITION OF traces FOR VALUES"
                         " FROM (%d) TO (%d)" % (name, day * self.DAY_NS,
                                                 (day + 1) * self.DAY_NS))
                psql("INSERT INTO traces(%s) SELECT %s FROM traces WHERE first_ts < %d" %
                     (cols, shifted % {"k": k, "day": self.DAY_NS}, (end + 1) * self.DAY_NS))
            psql("ANALYZE")
            copy_s = time.perf_counter() - t0
            hops = int(psql("SELECT sum(nhops) FROM traces"))
            days = int(psql("SELECT count(*) FROM pg_inherits"
                            " WHERE inhparent = 'traces'::regclass")) - 1
            self.add("pgq.load.hops_s", "hopscope > PostgreSQL, hops/s (history all)",
                     hops0 / wall, "hops/s")
            self.add("pgq.copy.hops_s", "  copied on the server to %d days" % days,
                     (hops - hops0) / copy_s, "hops/s")
            self.add("pgq.hops", "hops stored", hops, "hops", ">= %s" % fmt(want),
                     hops >= want)
            last = (end + copies) * self.DAY_NS
            queries = [
                ("pgq.traces", "history traces (the newest)", "history traces"),
                ("pgq.drops_day", "drops of the newest day (sql)",
                 "sql \"SELECT session, trace_no, first_ts, src, dst, last_switch FROM traces"
                 " WHERE outcome = 'dropped' AND first_ts >= %d AND first_ts < %d"
                 " ORDER BY first_ts DESC LIMIT 100\"" % (last, last + self.DAY_NS)),
                ("pgq.drops", "drops (the newest, from the store)", "drops"),
                ("pgq.traces_verb", "traces (the newest, from the store)", "traces"),
                ("pgq.load_drops", "history load; drops (the newest traces)",
                 "history load; drops"),
                ("pgq.drops_all", "drops by switch, every day (sql)",
                 "sql \"SELECT last_switch, count(*) AS drops FROM traces"
                 " WHERE outcome <> 'delivered' GROUP BY last_switch ORDER BY 2 DESC\""),
            ]
            # beside 'history load', psql on the same server: the traces
            # counted, and every trace's row as the load reads it (its
            # columns, the hop list as stored) sent to psql and dropped
            refs = [
                ("pgq.ref_count", "  psql: count(*) of every trace",
                 "SELECT count(*) FROM traces"),
                ("pgq.ref_rows", "  psql: every trace's row as the load reads it",
                 "SELECT id, src, dst, proto, sport, dport, ip_id, seq, tcp_flags, len, flags,"
                 " probe_id, first_ts, first_hw_ts, hop_list, analyzer, session, trace_no"
                 " FROM traces"),
            ]
            runs = self.median_runs([(key, [self.bin, "--db", url, "--topo", topo,
                                            "-c", cmd],
                                      None, None) for key, _, cmd in queries] +
                                    [(key, [pgs, "psql", d, "-qtA", "-o", "/dev/null", "-c", sql],
                                      None, None) for key, _, sql in refs])
            for key, label, _ in queries:
                r = runs[key]
                self.add(key + ".s", label, r["wall"] if r else None, "s", "< 1",
                         bool(r) and r["wall"] < 1.0)
                if key != "pgq.load_drops":
                    continue
                self.add(key + ".cpu_s", "  its CPU time (hopscope's own)",
                         r["cpu"] if r else None, "s")
                for rkey, rlabel, _ in refs:
                    ref = runs[rkey]
                    self.add(rkey + ".s", rlabel, ref["wall"] if ref else None, "s")
                ref = runs["pgq.ref_rows"]
                if r and ref:
                    v = statistics.median(w / w_r for w, w_r in zip(r["walls"], ref["walls"]))
                    self.add(key + ".vs_rows", "  history load; drops over psql's rows", v, "x")

    def workers_argv(self, w, db, prog=None):
        """w workers, on every core (not pinned), history off"""
        return [prog or self.bin, "--db", db, "--topo", self.topo, "--workers", str(w), "-c",
                "set history off; capture start %s; capture status" % self.capture]

    def section_workers(self):
        """The file read with one worker and with two, on every core (not
        pinned), history off: the rate of each and their ratio, the median
        of the rounds' ratios"""
        F = self.frames
        cpus = os.cpu_count() or 1
        print("  %-44s %12s %-6s %-14s %-4s %s" % ("", "copies/s", "", "target", "", "change"))
        jobs = []
        for w in (1, 2):
            db = os.path.join(self.tmp, "workers-%d.db" % w)
            jobs.append(("%d" % w, self.workers_argv(w, db), None, None))
        runs = self.median_runs(jobs)
        one, two = runs["1"], runs["2"]
        for w, r in (("1", one), ("2", two)):
            if r and parse_status(r["out"]).get("packets") != F:
                self.note("hopscope --workers %s read %s frames of %d" %
                          (w, parse_status(r["out"]).get("packets"), F))
        self.add("workers.one.pps", "hopscope --workers 1, history off",
                 F / one["wall"] if one else None, "pps")
        self.add("workers.two.pps", "hopscope --workers 2, history off",
                 F / two["wall"] if two else None, "pps")
        if one and two:
            v = statistics.median(w1 / w2 for w1, w2 in zip(one["walls"], two["walls"]))
            self.add("workers.speedup", "  2 workers over 1 (%d CPUs)" % cpus, v, "x",
                     ">= 1.7", v >= 1.7 if cpus >= 2 else None)
            self.add("workers.cpu_per_copy", "  CPU time of 2 over 1", two["cpu"] / one["cpu"],
                     "x")

    def check_all_stored(self, r):
        st = r["status"]
        try:
            db = sqlite3.connect("file:%s?mode=ro" % r["db"], uri=True)
            sess = db.execute("SELECT max(id) FROM sessions").fetchone()[0]
            ntr, nh = db.execute("SELECT count(*), coalesce(sum(nhops), 0) FROM traces "
                                 "WHERE session = ?", (sess,)).fetchone()
            hops = db.execute("SELECT count(*) FROM hops JOIN traces ON traces.id = hops.trace "
                              "WHERE traces.session = ?", (sess,)).fetchone()[0]
            db.close()
        except sqlite3.Error as e:
            self.note("cannot read the history of the 'all' run: %s" % e)
            self.add("ingest.hopscope_all.hops_stored", "  hops stored / copies traced", None,
                     "x", "every hop", False)
            return
        copies = st.get("copies") or self.frames
        ok = ntr == st.get("closed") and hops == nh and hops > 0
        self.add("ingest.hopscope_all.traces_stored", "  traces stored", ntr, "",
                 "= %s closed" % fmt(st.get("closed")), ntr == st.get("closed"))
        self.add("ingest.hopscope_all.hops_stored", "  hops stored / copies traced",
                 hops / copies if copies else None, "x", "every hop", ok)
        if hops < copies:
            self.note("'all' stored %d hops for %d copies: copies beyond %d per trace "
                      "(loops) and duplicates are counted, not kept" % (hops, copies, 16))

    # ---- memory ---------------------------------------------------------------

    def memtrace(self, *args):
        out = subprocess.run([self.prog("tests", "bench", "memtrace")] + list(args),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if out.returncode != 0:
            self.note("memtrace %s failed: %s" % (" ".join(args),
                                                 out.stderr.decode().strip()))
            return {}
        return {k: float(v) for k, v in
                (line.split("\t") for line in out.stdout.decode().splitlines())}

    def section_memory(self):
        n_open = env_int("BENCH_OPEN", 1000000)
        n_flows = env_int("BENCH_FLOWS", 1000000)
        t = self.memtrace("traces", "-n", str(n_open), "--hops", "5")
        if t:
            self.add("mem.open_trace_bytes", "bytes per open trace (5 hops)",
                     t["bytes_per_open_trace"], "B", "<= 256", t["bytes_per_open_trace"] <= 256)
            self.add("mem.open_traces_rss_mb", "peak RSS, %s open traces" % fmt(n_open),
                     t["peak_rss_kb"] / 1024.0, "MB")
            self.add("mem.tracer_cold_cps", "  tracer alone, cold pool", t["tracer_add_mcps"] *
                     MILLION, "cps")
            if t["open_traces"] != n_open:
                self.note("memtrace kept %d of %d traces open" % (t["open_traces"], n_open))
        f = self.memtrace("flows", "-n", str(n_flows))
        if f:
            rss = f["peak_rss_kb"] / 1024.0
            full = n_flows >= 1000000
            self.add("mem.flows_rss_mb", "peak RSS, %s flows" % fmt(n_flows), rss, "MB",
                     "< 512 (1M)" if full else "", (rss < 512) if full else None)
            self.add("mem.flow_bytes", "  bytes per flow", f["bytes_per_flow"], "B")

    # ---- responsiveness ---------------------------------------------------------

    def section_respond(self):
        # -r FILE as a user runs it (default history), then with history off
        # started at the prompt: the difference is what history costs the
        # prompt. One worker, on the one core the console is pinned to.
        for key, label, policy in (("respond", "hopscope --workers 1 -r FILE", None),
                                   ("respond.history_off", "with 'set history off'", "off")):
            res = respond.measure(self.bin, self.topo, self.capture, self.cpu,
                                  env_int("BENCH_SAMPLES", 40), workdir=self.tmp,
                                  policy=policy, workers=1)
            if res["error"]:
                self.note("prompt probe (%s): %s" % (label, res["error"]))
            s = res["samples"]
            target = "< 50" if policy is None else ""
            if not s:
                self.add(key + ".median_ms", label + ": no answer while reading", None, "ms",
                         target, False if target else None)
                continue
            med, mx = statistics.median(s), max(s)
            self.add(key + ".median_ms", "%s: median of %d" % (label, len(s)), med, "ms",
                     target, med < 50 if target else None)
            self.add(key + ".max_ms", "%s: max" % label, mx, "ms", target,
                     mx < 50 if target else None)
            slow = [x for x in s if x >= 50]
            if slow:
                self.note("%s: %d of %d answers took 50 ms or more (%s ms)" % (
                    label, len(slow), len(s), ", ".join("%.0f" % x for x in slow[:8])))

    # ---- 007 ------------------------------------------------------------------

    def section_sim007(self):
        """The full 007 table: tests/tools/sim007 --full, one row per scenario.

        Accuracy is the share of failed links among the k links with the most
        votes (k failed links); precision and recall are of the links blame
        reports above its noise threshold. Targets from the paper: accuracy
        above 96% with one failed link, above 90% with up to 7.
        """
        sim = self.prog("tests", "tools", "sim007")
        if not os.path.exists(sim):
            self.note("%s is not built" % sim)
            return
        out = subprocess.run([sim, "--full"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if out.returncode != 0:
            self.note("sim007 failed: %s" % out.stderr.decode().strip())
            return
        for line in out.stdout.decode().splitlines():
            if line.startswith("#"):
                print("  " + line)
                continue
            f = line.split()
            if len(f) != 6 or "x" not in f[0]:
                continue
            name, failed = f[0], int(f[1])
            key = "sim007." + name.replace("%", "pct").replace(".", "_")
            acc = float(f[3].rstrip("%"))
            target = 96.0 if failed == 1 else 90.0 if failed <= 7 else None
            self.add(key + ".accuracy", "%s failed at %s: accuracy (top %d)" % (
                failed, name.split("x", 1)[1], failed), acc, "%",
                "> %g%%" % target if target else None,
                acc > target if target else None)
            if f[4] != "-":
                self.add(key + ".precision", "  precision above the noise",
                         float(f[4].rstrip("%")), "%")
            self.add(key + ".recall", "  recall above the noise", float(f[5].rstrip("%")), "%")

    # ---- live capture -----------------------------------------------------------

    @staticmethod
    def live_unfit():
        """why the live section cannot run here, or None"""
        if os.geteuid() != 0:
            return "needs root (a network namespace and packet sockets)"
        for tool, pkg in (("ip", "iproute2"), ("trafgen", "netsniff-ng"),
                          ("tcpdump", "tcpdump")):
            if not shutil.which(tool):
                return "needs %s (Debian package %s)" % (tool, pkg)
        return None

    def section_live(self):
        """Live capture against tcpdump on the same bursts. Not pinned: the
        sender and the capture need a core each. A tool's CPU is what all
        its threads ran (/proc/PID/task/*/schedstat) from just before the
        burst to a second after it, and for hopscope on until the burst's
        traces have closed (a trace-timeout after their last copy) and the
        history holds them: the whole of the burst's cost, not starting up.
        Each tool starts just after WARM_MB were touched and freed, as
        each timed run of the ingest does, so that every one finds free
        memory alike whichever ran before it (warm_memory)."""
        n = env_int("BENCH_LIVE_FRAMES", 1000000)
        why = self.live_unfit()
        if why:
            self.note("live: skipped, " + why)
            return
        live = Live(self, n)
        try:
            live.up()
        except RuntimeError as e:
            live.down()
            self.note("live: skipped, %s" % e)
            return
        try:
            runs = {"tcpdump": [], "default": [], "all": [], "default2": [], "all2": []}
            for _ in range(self.runs if os.environ.get("BENCH_RUNS") else 1):
                runs["tcpdump"].append(live.tcpdump())
                runs["default"].append(live.hopscope("default"))
                runs["all"].append(live.hopscope("all"))
                runs["default2"].append(live.hopscope("default", 2))
                runs["all2"].append(live.hopscope("all", 2))
        except RuntimeError as e:
            self.note("live: %s" % e)
        finally:
            live.down()
        print("  %-44s %12s %-6s %-14s %-4s %s" % ("", "", "", "target", "", "change"))
        med = {}
        for name, rs in runs.items():
            ok = [r for r in rs if r.get("error") is None]
            for r in rs:
                if r.get("error"):
                    self.note("live %s: %s" % (name, r["error"]))
            if not ok:
                med[name] = None
                continue
            med[name] = {k: statistics.median(r[k] for r in ok)
                         for k in ("read", "lost", "cpu", "kpps", "unkept") if k in ok[0]}
        td = med["tcpdump"]
        for name, label in (("tcpdump", "tcpdump -w /dev/null"),
                            ("default", "hopscope, default history, 1 worker"),
                            ("all", "hopscope, 'set history all', 1 worker"),
                            ("default2", "hopscope, default history, 2 workers"),
                            ("all2", "hopscope, 'set history all', 2 workers")):
            m = med[name]
            if m is None:
                self.add("live.%s.loss_pct" % name, "%s: failed" % label, None, "%")
                continue
            loss = 100.0 * m["lost"] / n
            cpu_m = m["cpu"] * MILLION / n
            self.add("live.%s.send_kpps" % name, "%s: sender rate" % label, m["kpps"], "kpps")
            if name == "tcpdump":
                self.add("live.tcpdump.loss_pct", "  lost", loss, "%")
                self.add("live.tcpdump.cpu_s_per_m", "  CPU per million frames", cpu_m, "s")
                continue
            clean = td is not None and td["lost"] == 0
            self.add("live.%s.loss_pct" % name, "  lost", loss, "%",
                     "<= 0.1%" if clean else "", loss <= 0.1 if clean else None)
            tcpu = td["cpu"] * MILLION / n if td else None
            self.add("live.%s.cpu_s_per_m" % name, "  CPU per million frames", cpu_m, "s",
                     "<= 2x tcpdump" if tcpu else "", cpu_m <= 2 * tcpu if tcpu else None)
            if tcpu:
                self.add("live.%s.cpu_ratio" % name, "  CPU, times tcpdump's", cpu_m / tcpu, "x")
            if "unkept" in m:
                # the history fell behind the burst: counted, not kept
                self.add("live.%s.unkept_pct" % name, "  traces not kept in the history",
                         m["unkept"], "%")

    # ---- two builds compared -----------------------------------------------------

    def compare_head(self, unit):
        (na, _), (nb, _) = self.hopscopes
        print("  %-36s %10s %10s %7s %13s  %s" % (unit, na[:10], nb[:10], "ratio",
                                                  "spread", "(median of rounds)"))

    def compare_row(self, key, label, unit, before, after, ratios, higher):
        """One figure of the two builds: the median of each, the median of
        the rounds' ratios (after over before, each ratio of two runs made
        one after the other) and their spread, lowest to highest. 'higher'
        says which way is better; a change of more than 3% either way is
        named."""
        med = statistics.median(ratios) if ratios else None
        spread = "%.3f-%.3f" % (min(ratios), max(ratios)) if ratios else "-"
        verdict = ""
        if med is not None:
            gain = (med - 1.0) if higher else (1.0 - med)
            verdict = ("within 3%" if abs(gain) <= 0.03 else
                       "%s by %.1f%%" % ("better" if gain > 0 else "WORSE", abs(gain) * 100))
        def num(v):     # three digits for seconds and percents
            return "%.3f" % v if v is not None and abs(v) < 10 else fmt(v)
        print("  %-36s %10s %10s %7s %13s  %s" % (
            label, num(before), num(after), "-" if med is None else "%.3f" % med, spread,
            verdict))
        for suffix, v in (("before", before), ("after", after), ("ratio", med),
                          ("ratio_min", min(ratios) if ratios else None),
                          ("ratio_max", max(ratios) if ratios else None)):
            self.rows.append(("%s.%s" % (key, suffix), label, v, unit, "", verdict))

    def section_compare_ingest(self):
        """The capture read by each build on one core, history off, default
        and all, from an empty history. A round reads it once per build and
        figure, the builds one after the other (A B A B ...), so a slow spell
        of the machine weighs on both sides of a round's ratio."""
        F = self.frames
        self.compare_head("copies/s")
        jobs = []
        for policy in ("off", "default", "all"):
            for name, prog in self.hopscopes:
                db = os.path.join(self.tmp, "compare-%s-%s.db" % (name, policy))
                jobs.append(("%s, history %s" % (name, policy),
                             self.hopscope_argv(policy, db, prog),
                             lambda db=db: remove_db(db), None))
        runs = self.median_runs(jobs)
        (na, _), (nb, _) = self.hopscopes
        for policy in ("off", "default", "all"):
            ra, rb = runs["%s, history %s" % (na, policy)], runs["%s, history %s" % (nb, policy)]
            for name, r in ((na, ra), (nb, rb)):
                if r and parse_status(r["out"]).get("packets") != F:
                    self.note("%s (history %s) read %s frames of %d" % (
                        name, policy, parse_status(r["out"]).get("packets"), F))
                if r and (max(r["walls"]) - min(r["walls"])) / r["wall"] > 0.15:
                    self.note("runs of %s (history %s) varied by %.0f%% (machine busy?)" % (
                        name, policy, (max(r["walls"]) - min(r["walls"])) / r["wall"] * 100))
            both = ra and rb
            self.compare_row("compare.ingest_%s.pps" % policy, "file, history %s" % policy,
                             "pps", F / ra["wall"] if ra else None,
                             F / rb["wall"] if rb else None,
                             [wa / wb for wa, wb in zip(ra["walls"], rb["walls"])]
                             if both else [], True)
            # the CPU time of all its threads: what a busy machine's waits leave out
            self.compare_row("compare.ingest_%s.cpu_s_per_m" % policy,
                             "  CPU s per M copies", "s",
                             ra["cpu"] * MILLION / F if ra else None,
                             rb["cpu"] * MILLION / F if rb else None,
                             [cb / ca for ca, cb in zip(ra["cpus"], rb["cpus"])]
                             if both else [], False)

    def section_compare_workers(self):
        """The capture read by each build with one worker and with two, on
        every core, history off, as in the workers section; a round reads it
        once per build and number of workers, in turn. Per build the rate of
        two workers and their speed-up over one (the median of the rounds'
        ratios), and the CPU time of two workers."""
        F = self.frames
        cpus = os.cpu_count() or 1
        self.compare_head("")
        jobs = []
        for name, prog in self.hopscopes:
            for w in (1, 2):
                db = os.path.join(self.tmp, "compare-%s-w%d.db" % (name, w))
                jobs.append(("%s, %d" % (name, w), self.workers_argv(w, db, prog),
                             lambda db=db: remove_db(db), None))
        runs = self.median_runs(jobs)
        for job, r in runs.items():
            if r and parse_status(r["out"]).get("packets") != F:
                self.note("%s workers read %s frames of %d" %
                          (job, parse_status(r["out"]).get("packets"), F))
        (na, _), (nb, _) = self.hopscopes
        one = {n: runs["%s, 1" % n] for n in (na, nb)}
        two = {n: runs["%s, 2" % n] for n in (na, nb)}
        both = all(one.values()) and all(two.values())

        def speedups(n):
            return [w1 / w2 for w1, w2 in zip(one[n]["walls"], two[n]["walls"])]
        self.compare_row("compare.workers_one.pps", "file, 1 worker, history off", "pps",
                         F / one[na]["wall"] if one[na] else None,
                         F / one[nb]["wall"] if one[nb] else None,
                         [a / b for a, b in zip(one[na]["walls"], one[nb]["walls"])]
                         if both else [], True)
        self.compare_row("compare.workers_two.pps", "file, 2 workers, history off", "pps",
                         F / two[na]["wall"] if two[na] else None,
                         F / two[nb]["wall"] if two[nb] else None,
                         [a / b for a, b in zip(two[na]["walls"], two[nb]["walls"])]
                         if both else [], True)
        self.compare_row("compare.workers_speedup", "  2 workers over 1 (%d CPUs)" % cpus, "x",
                         statistics.median(speedups(na)) if both else None,
                         statistics.median(speedups(nb)) if both else None,
                         [b / a for a, b in zip(speedups(na), speedups(nb))] if both else [],
                         True)
        self.compare_row("compare.workers_two.cpu_s_per_m", "  CPU s per M copies, 2 workers",
                         "s", two[na]["cpu"] * MILLION / F if two[na] else None,
                         two[nb]["cpu"] * MILLION / F if two[nb] else None,
                         [b / a for a, b in zip(two[na]["cpus"], two[nb]["cpus"])]
                         if both else [], False)

    @staticmethod
    def knows_workers(prog):
        """whether a build's capture takes 'workers N' (its --help names it)"""
        r = subprocess.run([prog, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return "--workers" in r.stdout

    def compare_live_rounds(self, live, workers, runs, gauge):
        """the rounds of section_compare_live, in the bench's namespace;
        RuntimeError when it cannot be made"""
        try:
            live.up()
        except RuntimeError:
            live.down()
            raise
        try:
            for _ in range(self.runs):
                gauge.append(live.tcpdump())
                for policy in ("default", "all"):
                    for name, prog in self.hopscopes:
                        runs[(name, policy)].append(
                            live.hopscope(policy, workers[name], prog, name))
        except RuntimeError as e:
            self.note("live: %s" % e)
        finally:
            live.down()

    def section_compare_live(self):
        """Live capture by each build on the same bursts, default history
        and 'set history all', one worker; a round sends a burst to tcpdump
        (the machine's gauge) and one per build and figure, the builds one
        after the other. CPU per million frames as in the live section."""
        n = env_int("BENCH_LIVE_FRAMES", 1000000)
        why = self.live_unfit()
        if why:
            self.note("live: skipped, " + why)
            return
        workers = {name: 1 if self.knows_workers(prog) else None
                   for name, prog in self.hopscopes}
        for name, w in workers.items():
            if w is None:
                self.note("live: %s takes no 'workers N': its capture is started "
                          "without (one worker)" % name)
        runs = {(name, policy): [] for name, _ in self.hopscopes for policy in ("default", "all")}
        gauge = []
        try:
            with self.holding_live_lock():
                self.compare_live_rounds(Live(self, n), workers, runs, gauge)
        except RuntimeError as e:
            self.note("live: skipped, %s" % e)
            return
        for (name, policy), rs in runs.items():
            for r in rs:
                if r.get("error"):
                    self.note("live %s, history %s: %s" % (name, policy, r["error"]))
        (na, _), (nb, _) = self.hopscopes
        self.compare_head("")
        td = [r["cpu"] * MILLION / n for r in gauge if r.get("error") is None]
        if td:
            print("  %-36s %10s  spread %.2f-%.2f s (the machine's load)" % (
                "tcpdump, CPU per million frames", fmt(statistics.median(td)), min(td), max(td)))
        for policy in ("default", "all"):
            pairs = [(a, b) for a, b in zip(runs[(na, policy)], runs[(nb, policy)])
                     if a.get("error") is None and b.get("error") is None]
            if not pairs:
                self.compare_row("compare.live_%s.cpu_s_per_m" % policy,
                                 "live, history %s: failed" % policy, "s", None, None, [], False)
                continue
            cpu = [(a["cpu"] * MILLION / n, b["cpu"] * MILLION / n) for a, b in pairs]
            lost = [(100.0 * a["lost"] / n, 100.0 * b["lost"] / n) for a, b in pairs]
            self.compare_row("compare.live_%s.cpu_s_per_m" % policy,
                             "live, history %s: CPU s per M" % policy, "s",
                             statistics.median(c[0] for c in cpu),
                             statistics.median(c[1] for c in cpu),
                             [b / a for a, b in cpu if a > 0], False)
            self.compare_row("compare.live_%s.loss_pct" % policy, "  lost, %", "%",
                             statistics.median(x[0] for x in lost),
                             statistics.median(x[1] for x in lost),
                             [b / a for a, b in lost if a > 0], False)
            unkept = [(a["unkept"], b["unkept"]) for a, b in pairs if "unkept" in a]
            if unkept:
                self.compare_row("compare.live_%s.unkept_pct" % policy,
                                 "  traces not kept in the history, %", "%",
                                 statistics.median(x[0] for x in unkept),
                                 statistics.median(x[1] for x in unkept),
                                 [b / a for a, b in unkept if a > 0], False)

    # ---- driver -----------------------------------------------------------------

    SECTIONS = (
        ("input", "input", section_input),
        ("ingest", "ingest, one core (median of %(runs)d runs)", section_ingest),
        ("workers", "ingest with 1 and 2 workers, every core (median of %(runs)d runs)",
         section_workers),
        ("memory", "memory, through the tracer and flow table APIs", section_memory),
        ("respond", "prompt: 'capture status' typed to answer while a file is replayed",
         section_respond),
        ("pg", "ingest into PostgreSQL and into SQLite, one core (median of %(runs)d runs)",
         section_pg),
        ("pgquery", "10 million hops on PostgreSQL: queries (median of %(runs)d runs)",
         section_pgquery),
        ("sim007", "007: blame of lossy links", section_sim007),
        ("live", "live capture: a burst into a veth, tcpdump and hopscope in turn",
         section_live),
    )
    NO_INPUT = ("sim007", "live", "pgquery")    # sections that do not read the capture
    # two builds compared: their file, workers and live figures only
    COMPARE_SECTIONS = (
        ("input", "input", section_input),
        ("ingest", "file: ingest, one core, the builds in turn (%(runs)d rounds)",
         section_compare_ingest),
        ("workers", "file: 1 and 2 workers, every core, the builds in turn (%(runs)d rounds)",
         section_compare_workers),
        ("live", "live: a burst into a veth per build in turn (%(runs)d rounds)",
         section_compare_live),
    )

    def run(self):
        only = [s for s in os.environ.get("BENCH_ONLY", "").split(",") if s]
        cflags = os.environ.get("BENCH_CFLAGS", "")
        print("hopscope bench: %s, %d CPUs, pinned to CPU %d" % (
            os.uname().machine, os.cpu_count() or 0, self.cpu))
        if "-fsanitize" in cflags or "-O0" in cflags:
            print("warning: built with '%s': figures are not comparable to an "
                  "optimized build" % cflags.strip())
        elif "-fprofile-use" not in cflags and not self.compare:
            print("note: hopscope was built without a profile of its packet path "
                  "(configure --disable-pgo, or a compiler without it)")
        if self.compare:
            print("comparing " + ", then ".join("%s (%s)" % h for h in self.hopscopes))
        try:
            for name, title, fn in self.COMPARE_SECTIONS if self.compare else self.SECTIONS:
                if only and name not in only and (
                        name != "input" or all(o in self.NO_INPUT for o in only)):
                    continue
                print("\n== %s" % (title % {"runs": self.runs}))
                fn(self)
            self.save()
        finally:
            if self.holder:
                self.holder.stdin.close()
                self.holder.wait()
            shutil.rmtree(self.tmp, ignore_errors=True)
        return 0


class Live:
    """A network namespace of the bench's own (hscap-bench<pid>: the lab and
    its tests own hs-*) with a veth pair; trafgen sends a burst into txa,
    a tool captures on rxa."""

    def __init__(self, bench, frames):
        self.b = bench
        self.n = frames
        self.ns = "hscap-bench%d" % os.getpid()
        self.cfg = os.path.join(bench.src, "tests", "lab", "erspan2.trafgen")
        self.made = False

    def sh(self, *argv):
        r = subprocess.run(["ip", "netns", "exec", self.ns] + list(argv),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            # trafgen's complaints that it may not tune the host's socket
            # memory from a namespace are not why it failed
            said = [ln for ln in r.stdout.splitlines() if "socket memory" not in ln]
            raise RuntimeError("'%s' failed: %s" % (" ".join(argv),
                                                    " ".join(said).strip()[-200:]))
        return r.stdout

    def up(self):
        if subprocess.call(["ip", "netns", "add", self.ns], stderr=subprocess.DEVNULL) != 0:
            raise RuntimeError("cannot create a network namespace")
        self.made = True
        # no IPv6 router solicitations on the capture
        self.sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1")
        self.sh("ip", "link", "add", "txa", "type", "veth", "peer", "name", "rxa")
        self.sh("ip", "link", "set", "txa", "up")
        self.sh("ip", "link", "set", "rxa", "up")

    def down(self):
        if self.made:
            subprocess.call(["ip", "netns", "del", self.ns])
            self.made = False

    def send(self):
        """the burst, at trafgen's top speed on one CPU: frames per second"""
        t0 = time.perf_counter()
        self.sh("trafgen", "-o", "txa", "-i", self.cfg, "-n", str(self.n), "-P", "1", "-Q")
        return self.n / (time.perf_counter() - t0) / 1e3

    def start(self, argv, **kw):
        return subprocess.Popen(["ip", "netns", "exec", self.ns] + argv, **kw)

    @staticmethod
    def cpu(p):
        """seconds on a CPU of all of p's threads so far"""
        ns = 0
        task = "/proc/%d/task" % p.pid
        for t in os.listdir(task):
            try:
                with open(os.path.join(task, t, "schedstat")) as f:
                    ns += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass    # a thread that just ended
        return ns / 1e9

    def burst(self, p, settled=None):
        """send the burst while p captures: sender kpps, p's CPU seconds
        until a second after it, or until settled() says p is done with it
        (30 s at most); when the sender fails, p is ended and RuntimeError
        raised"""
        c0 = self.cpu(p)
        try:
            kpps = self.send()
        except RuntimeError:
            p.kill()
            p.wait()
            raise
        time.sleep(1.0)        # what is still in the ring is read
        if settled:
            until = time.monotonic() + 30
            while not settled() and time.monotonic() < until:
                time.sleep(0.1)
        return kpps, self.cpu(p) - c0

    def tcpdump(self):
        self.b.warm_memory()
        p = self.start(["tcpdump", "-n", "-i", "rxa", "-w", "/dev/null"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)        # listening
        kpps, cpu = self.burst(p)
        p.send_signal(2)
        p.wait()
        err = p.stderr.read()
        got = re.search(r"(\d+) packets captured", err)
        drop = re.search(r"(\d+) packets dropped by kernel", err)
        if not got or not drop:
            return {"error": "tcpdump said: " + err.strip()[-200:]}
        read = int(got.group(1))
        return {"read": read, "lost": self.n - read, "cpu": cpu, "kpps": kpps,
                "error": None}

    def hopscope(self, policy, workers=1, prog=None, tag="hopscope"):
        """workers None: the capture is started without saying how many
        (a build older than the option)"""
        db = os.path.join(self.b.tmp, "live-%s-%s-%s.db" % (tag, policy, workers))
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        self.b.warm_memory()
        p = self.start([prog or self.b.bin, "--db", db], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.stdin.write("set history %s\ncapture start rxa%s\ncapture status\n" %
                      (policy, "" if workers is None else " workers %d" % workers))
        p.stdin.flush()
        while True:     # until the capture runs
            line = p.stdout.readline()
            if not line or line.startswith("state"):
                break
        if not line or "running" not in line:
            p.kill()
            p.wait()
            return {"error": "the capture did not start: " + p.stderr.read().strip()[-200:]}
        p.stdin.write("set format json\n")

        def status():
            p.stdin.write("capture status\n")
            p.stdin.flush()
            while True:
                line = p.stdout.readline()
                if not line:
                    return None
                if line.startswith("{") and '"source":"rxa"' in line:
                    return json.loads(line)

        def settled():
            # the CPU counted is the whole of the burst's: its traces
            # closed (a trace-timeout after their last copy) and in the
            # history, not only its frames read
            s = status()
            return s is None or (s["traces_open"] == 0 and s["history_queued"] == 0 and
                                 s["history_waiting"] == 0)
        kpps, cpu = self.burst(p, settled)
        st = status()
        p.stdin.write("quit\n")
        p.stdin.close()
        p.stdout.read()
        p.wait()
        if p.returncode != 0 or st is None:
            return {"error": "exit %d: %s" % (p.returncode, p.stderr.read().strip()[-200:])}
        r = {"read": st["packets"], "lost": self.n - st["packets"], "cpu": cpu,
             "kpps": kpps, "drops": st["kernel_drops"], "error": None}
        if policy == "all":
            # every trace of the burst has closed by now: what the
            # history does not hold, the writer refused while behind, and
            # the CPU above did not pay for
            traces = st["traces_open"] + st["traces_closed"]
            try:
                con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
                kept = con.execute("SELECT count(*) FROM traces WHERE session = "
                                   "(SELECT max(id) FROM sessions)").fetchone()[0]
                con.close()
            except sqlite3.Error as e:
                return {"error": "cannot read the history: %s" % e}
            r["unkept"] = 100.0 * (traces - kept) / traces if traces else 0.0
        return r


def remove_db(path):
    """a SQLite history and its write-ahead files"""
    for sfx in ("", "-wal", "-shm"):
        if os.path.exists(path + sfx):
            os.unlink(path + sfx)


def parse_status(text):
    """the figures of 'capture status' (text form)"""
    st = {}
    for key, pat in (("packets", r"^packets\s+(\d+)"),
                     ("copies", r"^copies\s+(\d+)"),
                     ("closed", r"^traces\s+\d+ open, (\d+) closed"),
                     ("evicted", r"^evicted\s+(\d+)"),
                     ("flows", r"^flows\s+(\d+)")):
        m = re.search(pat, text, re.M)
        if m:
            st[key] = int(m.group(1))
    return st


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    a = abs(v)
    if a >= 1e6:
        return "%.2fM" % (v / 1e6)
    if a >= 1e4:
        return "%.1fk" % (v / 1e3)
    if a >= 100 or float(v).is_integer():
        return "%.0f" % v
    return "%.2f" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    ap.add_argument("--srcdir", default=top)
    ap.add_argument("--builddir", default=top)
    ap.add_argument("--live-lock", metavar="FILE",
                    help="with two --hopscope: hold this lock (flock) while their live "
                    "bursts run")
    ap.add_argument("--hopscope", action="append", metavar="[NAME=]PROGRAM",
                    help="the hopscope measured (default: the build directory's); "
                    "given twice, the two are compared, the first as before, "
                    "on their file and live figures")
    a = ap.parse_args()
    # ended: the namespace, the capture's holder and the files go as well
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    progs = []
    for arg in a.hopscope or []:
        name, _, prog = arg.rpartition("=")
        prog = os.path.abspath(prog)
        if not os.access(prog, os.X_OK):
            sys.exit("bench: --hopscope %s: not an executable program" % arg)
        progs.append((name or os.path.basename(os.path.dirname(prog)), prog))
    if len(progs) > 2:
        sys.exit("bench: --hopscope: at most two programs are compared, got %d" % len(progs))
    return Bench(a.srcdir, a.builddir, progs, a.live_lock).run()


if __name__ == "__main__":
    sys.exit(main())
