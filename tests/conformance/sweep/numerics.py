#!/usr/bin/env python3
"""Runs the upstream numeric tests of the aws-neuron-sdk's NKI unit-test files on nki-agent.

Each `nki/test/test_*.py` of the SDK at the sweep's pinned commit holds kernels and
`unittest.TestCase` classes whose test methods build NumPy inputs, call the kernels and compare
with a NumPy reference (np.allclose, assertEqual). This script lays the folder out in a scratch
directory (nothing upstream is committed here), writes a small driver of its own beside each file
that runs every test method of the file's TestCase classes, one after another, and runs that driver
with `nki-agent run` in the sandbox, computing. A method passes when its own assertions hold on
nki-agent's results.

    /usr/bin/python3 tests/conformance/sweep/numerics.py --mirror /work/.mirror [--json out.json]
        [--file SUBSTR] [--bin build/nki-agent]

Prints one line per test method (pass / FAIL / ERROR, with the first line of the failure) and the
totals. Exit status 0 when no method ends in an internal error of nki-agent (a failed upstream
assertion is a result to read, with the reason listed in docs/conformance.md, not a crash).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import manifest  # noqa: E402

DRIVER = '''import json
import unittest

import {module} as _m


def _methods():
    for name, cls in list(vars(_m).items()):
        if isinstance(cls, type) and issubclass(cls, unittest.TestCase) and cls.__module__ == _m.__name__:
            for meth in sorted(n for n in vars(cls) if n.startswith("test")):
                yield f"{{name}}.{{meth}}", cls, meth


def nkia_list():
    """The test methods of the TestCase classes the file defines, one per line."""
    for test, _, _ in _methods():
        print("NKIA-TEST " + test)


def nkia_numerics(only):
    """Runs the test method `only` ("Class.method") and prints its result as one JSON line."""
    for test, cls, meth in _methods():
        if test != only:
            continue
        row = {{"test": test}}
        try:
            getattr(cls(meth), meth)()
            row["result"] = "pass"
        except AssertionError as e:
            row["result"] = "fail"
            row["why"] = (str(e) or "assertion failed").splitlines()[0][:300]
        except unittest.SkipTest as e:
            row["result"] = "skip"
            row["why"] = str(e)[:300]
        except Exception as e:  # noqa: BLE001 - reported per method
            row["result"] = "error"
            row["why"] = f"{{type(e).__name__}}: {{str(e).splitlines()[0][:300] if str(e) else ''}}"
            if isinstance(getattr(e, "code", None), str):
                row["code"] = e.code
        print("NKIA-NUMERICS " + json.dumps(row), flush=True)
'''


def git_show(mirror, repo, commit, path):
    git_dir = os.path.join(mirror, repo, "repo")
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout


def git_ls(mirror, repo, commit, folder):
    git_dir = os.path.join(mirror, repo, "repo")
    out = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "--name-only", commit, folder + "/"],
                         check=True, capture_output=True, text=True).stdout
    return [p for p in out.split() if p.endswith(".py")]


def nki_agent(binary, driver, entry, out, timeout, args=()):
    """`nki-agent --json run` of the driver's entry: (its JSON reply or None, its raw text)."""
    cmd = [binary, "--json", "run", driver, "--entry", entry, "--out", out, "--timeout", str(int(timeout))]
    for a in args:
        cmd += ["--arg", a]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        return None, "nki-agent did not return"
    try:
        return json.loads(p.stdout), ""
    except ValueError:
        return None, (p.stderr or p.stdout).strip()[:300]


def first_diagnostic(reply):
    ds = reply.get("diagnostics") or []
    return ds[0] if ds and isinstance(ds[0], dict) else {}


def run_file(binary, scratch, name, timeout):
    """One row per test method of the file; each method runs in its own nki-agent run, so that a
    kernel fault that ends one run (an out-of-bounds DMA) does not hide the others."""
    module = name[:-3]
    driver = os.path.join(scratch, f"_nkia_numerics_{module}.py")
    with open(driver, "w") as f:
        f.write(DRIVER.format(module=module))
    out = os.path.join(scratch, "out_" + module)
    reply, raw = nki_agent(binary, driver, "nkia_list", out, timeout)
    if reply is None:
        return [{"test": "(the file)", "result": "internal", "why": raw}]
    if not reply.get("ok", False):
        d = first_diagnostic(reply)
        return [{"test": "(the file)", "result": "error", "code": d.get("code", ""), "why": d.get("message", "")[:300]}]
    tests = [ln[len("NKIA-TEST "):] for ln in (reply.get("printed") or "").splitlines() if ln.startswith("NKIA-TEST ")]
    rows = []
    for test in tests:
        reply, raw = nki_agent(binary, driver, "nkia_numerics", out, timeout, [f"only={test!r}"])
        if reply is None:
            rows.append({"test": test, "result": "internal", "why": raw})
            continue
        got = [json.loads(ln[len("NKIA-NUMERICS "):]) for ln in (reply.get("printed") or "").splitlines()
               if ln.startswith("NKIA-NUMERICS ")]
        if got:
            rows.append(got[0])
        else:  # the run itself ended: a kernel fault nki-agent reports as the run's diagnostic
            d = first_diagnostic(reply)
            code = d.get("code", "")
            kind = "internal" if code.startswith("nkia_internal") else "error"
            rows.append({"test": test, "result": kind, "code": code, "why": d.get("message", "")[:300]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "..", "build", "nki-agent"))
    ap.add_argument("--file", action="append", default=[], help="only test files whose name contains this")
    ap.add_argument("--json", help="write the rows as JSON")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    repo, commit, folder = manifest.SDK, manifest.COMMITS[manifest.SDK], "nki/test"
    files = git_ls(args.mirror, repo, commit, folder)
    scratch = tempfile.mkdtemp(prefix="nkia-numerics-")
    rows = []
    try:
        for path in files:  # the whole folder: test files import one another's helpers
            with open(os.path.join(scratch, os.path.basename(path)), "wb") as f:
                f.write(git_show(args.mirror, repo, commit, path))
        for path in files:
            name = os.path.basename(path)
            if not name.startswith("test_") or (args.file and not any(s in name for s in args.file)):
                continue
            for row in run_file(binary, scratch, name, args.timeout):
                row["file"] = name
                rows.append(row)
                print(f"{row['result']:<9} {name}::{row['test']}" + (f"  — {row.get('code', '')} {row['why']}"
                                                                    if row.get("why") else ""), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    totals = {}
    for r in rows:
        totals[r["result"]] = totals.get(r["result"], 0) + 1
    print("\n" + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())) + f" of {len(rows)} test methods")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"commit": commit, "rows": rows, "totals": totals}, f, indent=1)
    return 1 if totals.get("internal") else 0


if __name__ == "__main__":
    sys.exit(main())
