#!/usr/bin/env python3
"""jsoncheck.py - every verb's --json output against its schema

For each verb of the command table (from 'help --json', so a verb added to
the table without a schema fails), tests/json/VERB.json holds the runs that
exercise it and the JSON schemas (draft 7) their output must satisfy:

  {"runs": [{"cmd": "traces limit 3", "schema": "list"}, ...],
   "definitions": {"list": {...}, ...}}

A run's keys: cmd (one command line, run with --json over the bundled
sample capture and topology), schema (a definition, or null: the verb
prints nothing), before (command lines run first, each printing one
document of its own, or before_docs in all), stream (the verb prints one
JSON object per line as it goes: each is checked), status (the exit status
expected, 0 unless said), files (NAME: TEXT, written beside the history,
executable when TEXT begins with #!; {dir} in cmd and env names their
directory, {top} the source tree), env (variables, such as a stand-in
HOPSCOPE_DRIVER), args (the options instead of the sample's -r and --topo).
A verb that has no JSON (watch) says why in "no_json" instead of runs.

Besides its schema, every document keeps hopscope-json(7)'s conventions:
times and durations are integers under keys ending in _ns, a path and the
expected next hops are arrays of switch names, no number is NaN.
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

top_src = os.path.abspath(os.environ.get("top_srcdir", "."))
top_build = os.path.abspath(os.environ.get("top_builddir", "."))
hs = os.path.join(top_build, "hopscope")
schemas = os.path.join(top_src, "tests", "json")
sample = [
    "-r", os.path.join(top_src, "share", "sample", "sample.pcap"),
    "--topo", os.path.join(top_src, "share", "sample", "sample.topo"),
]
n = 0
fails = 0


def report(ok, what, why=""):
    global n, fails
    n += 1
    if ok:
        print(f"ok {n} - {what}")
    else:
        fails += 1
        print(f"not ok {n} - {what}")
        for line in str(why).splitlines()[:8]:
            print(f"#   {line}")


def no_nan(c):
    raise ValueError(f"{c} is not JSON")


def conventions(v, where="$"):
    """the names and types every verb shares; a list of what breaks them"""
    bad = []
    if isinstance(v, dict):
        for k, x in v.items():
            at = f"{where}.{k}"
            if k.endswith("_ns") and not (x is None or (isinstance(x, int)
                                                       and not isinstance(x, bool))):
                bad.append(f"{at}: a time or duration is an integer of nanoseconds, not {x!r}")
            if k in ("ts", "first_ts", "last_ts", "started", "ended", "elapsed", "rtt"):
                bad.append(f"{at}: a time or duration goes under a name ending in _ns")
            if k in ("path", "expected_next") and x is not None and not (
                    isinstance(x, list) and all(isinstance(s, str) for s in x)):
                bad.append(f"{at}: is an array of switch names, not {x!r}")
            bad += conventions(x, at)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            bad += conventions(x, f"{where}[{i}]")
    return bad


def documents(text):
    """one JSON value per line, and nothing else"""
    docs = []
    for i, line in enumerate(text.splitlines(), 1):
        try:
            docs.append(json.loads(line, parse_constant=no_nan))
        except ValueError as e:
            raise ValueError(f"line {i} is not one JSON document: {e}: {line[:120]!r}")
    return docs


def run(verb, spec, r, tmp):
    def fill(s):
        return s.replace("{dir}", tmp).replace("{top}", top_src)
    cmd = fill(r["cmd"])
    before = [fill(b) for b in r.get("before", [])]
    for name, text in r.get("files", {}).items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
        if text.startswith("#!"):
            os.chmod(os.path.join(tmp, name), 0o755)
    env = dict(os.environ, HOPSCOPE_USER="root", HOPSCOPE_HISTORY=os.path.join(tmp, "lines"))
    env.update({k: fill(v) for k, v in r.get("env", {}).items()})
    db = os.path.join(tmp, "h.db")
    args = [fill(a) for a in r["args"]] if "args" in r else sample
    p = subprocess.run([hs, *args, "--db", db, "--json", "-c", "; ".join(before + [cmd])],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                       cwd=tmp, env=env)
    what = f"{verb}: '{cmd}'"
    if p.returncode != r.get("status", 0):
        report(False, what, f"exit status {p.returncode}: {p.stderr}")
        return
    try:
        docs = documents(p.stdout)
    except ValueError as e:
        report(False, what, e)
        return
    nbefore = r.get("before_docs", len(before))
    mine = docs[nbefore:]
    if len(docs) < nbefore:
        report(False, what, f"{len(docs)} documents for {nbefore} of the commands before it")
        return
    if r["schema"] is None:
        report(not mine, what, f"prints nothing in JSON, yet printed {p.stdout[:200]!r}")
        return
    if not mine:
        report(False, what, "printed no JSON document (an empty answer is an empty array)")
        return
    if not r.get("stream") and len(mine) != 1:
        report(False, what, f"{len(mine)} documents: a verb prints one per invocation")
        return
    schema = {"$ref": f"#/definitions/{r['schema']}", "definitions": spec["definitions"]}
    errs = []
    for d in mine:
        errs += [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                 for e in jsonschema.Draft7Validator(schema).iter_errors(d)]
        errs += conventions(d)
    report(not errs, what, "\n".join(errs))


def main():
    p = subprocess.run([hs, "--json", "-c", "help"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=30)
    verbs = [v["name"] for v in json.loads(p.stdout)["verbs"]]
    report(len(verbs) > 20, f"help --json lists the verbs ({len(verbs)})")
    for verb in verbs:
        path = os.path.join(schemas, verb + ".json")
        if not os.path.exists(path):
            report(False, f"{verb}: has a schema", f"no {path}: every verb's JSON is checked")
            continue
        with open(path) as f:
            spec = json.load(f)
        if "no_json" in spec:
            report(not spec.get("runs"), f"{verb}: no JSON ({spec['no_json']})")
            continue
        if not spec.get("runs"):
            report(False, f"{verb}: has runs", f"{path} runs nothing")
            continue
        jsonschema.Draft7Validator.check_schema({"definitions": spec["definitions"]})
        for r in spec["runs"]:
            with tempfile.TemporaryDirectory(prefix="hs-json.") as tmp:
                run(verb, spec, r, tmp)
    extra = sorted(set(f[:-5] for f in os.listdir(schemas) if f.endswith(".json")) - set(verbs))
    report(not extra, "no schema of a verb that is not in the table", ", ".join(extra))
    print(f"1..{n}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
