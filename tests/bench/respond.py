#!/usr/bin/env python3
"""respond.py - how long the prompt takes to answer while a file is replayed

Runs hopscope under a pseudo-terminal with -r FILE, so the file is read in the
background at full speed while the prompt is open, then types 'capture status'
again and again and times each line from the moment it is typed to the moment
its output is complete (the prompt is back). Only answers given while the
capture was still running count. Used by bench.py; runs on its own too:

    respond.py [--cpu N] [--samples N] [--history POLICY] HOPSCOPE TOPO FILE
"""
import argparse
import os
import pty
import re
import select
import signal
import statistics
import sys
import tempfile
import time

PROMPT = b"hopscope> "
STATE_RE = re.compile(rb"state\s+(\w+)")


class Console:
    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.buf = b""

    def read_until(self, pred, timeout):
        """read until pred(buf) holds; True, or False on timeout or EOF"""
        end = time.perf_counter() + timeout
        while not pred(self.buf):
            left = end - time.perf_counter()
            if left <= 0:
                return False
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            self.buf += data
        return True

    def write(self, s):
        os.write(self.fd, s)

    def close(self):
        try:
            self.write(b"quit\r")
        except OSError:
            pass
        end = time.perf_counter() + 10
        while time.perf_counter() < end:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            self.read_until(lambda b: False, 0.1)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def measure(hopscope, topo, capture, cpu=None, samples=40, gap=0.05, workdir=None,
            policy=None, workers=None):
    """returns a dict: samples (ms list, while running), late, error

    Without a policy the file is given with -r (the history policy is the
    default); with one, the console starts without a source and the file is
    started at the prompt after 'set history POLICY'."""
    workdir = workdir or tempfile.mkdtemp(prefix="hs-respond-")
    db = os.path.join(workdir, "respond.db")
    for sfx in ("", "-wal", "-shm"):
        if os.path.exists(db + sfx):
            os.unlink(db + sfx)
    argv = [hopscope, "--db", db, "--topo", topo]
    if workers:
        argv += ["--workers", str(workers)]
    if not policy:
        argv += ["-r", capture]
    if cpu is not None:
        argv = ["taskset", "-c", str(cpu)] + argv
    env = dict(os.environ, TERM="vt100",
               HOPSCOPE_HISTORY=os.path.join(workdir, "respond.history"))
    con = Console(argv, env)
    res = {"samples": [], "late": 0, "error": None}
    try:
        if not con.read_until(lambda b: PROMPT in b, 15):
            res["error"] = "no prompt: " + con.buf[-300:].decode("utf-8", "replace")
            return res
        if policy:
            for line in ("set history %s" % policy, "capture start %s" % capture):
                con.buf = b""
                con.write(line.encode() + b"\r")
                if not con.read_until(lambda b: b.count(PROMPT) >= 1 and
                                      b.endswith(PROMPT), 15):
                    res["error"] = "no prompt after '%s'" % line
                    return res
        while len(res["samples"]) < samples:
            con.buf = b""
            t0 = time.perf_counter()
            con.write(b"capture status\r")
            # the answer is complete when the prompt is drawn after it
            ok = con.read_until(lambda b: STATE_RE.search(b) and
                                b.rfind(PROMPT) > STATE_RE.search(b).start(), 10)
            t1 = time.perf_counter()
            if not ok:
                res["error"] = "no answer to 'capture status' within 10 s"
                break
            state = STATE_RE.search(con.buf).group(1)
            if state != b"running":
                res["late"] += 1
                break
            res["samples"].append((t1 - t0) * 1000.0)
            time.sleep(gap)
    finally:
        con.close()
    return res


def main():
    ap = argparse.ArgumentParser(description="prompt latency during a full-speed replay")
    ap.add_argument("--cpu", type=int)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--history", metavar="POLICY",
                    help="start the file at the prompt after 'set history POLICY'")
    ap.add_argument("hopscope")
    ap.add_argument("topo")
    ap.add_argument("file")
    a = ap.parse_args()
    res = measure(a.hopscope, a.topo, a.file, a.cpu, a.samples, policy=a.history)
    if res["error"]:
        print("respond.py: " + res["error"], file=sys.stderr)
    s = res["samples"]
    if not s:
        print("respond.py: no answer while the capture ran", file=sys.stderr)
        return 1
    print("samples\t%d\nmedian_ms\t%.2f\nmax_ms\t%.2f\nall_ms\t%s" %
          (len(s), statistics.median(s), max(s), " ".join("%.1f" % x for x in s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
