#!/usr/bin/env python3
"""Runs the upstream numeric tests of aws-neuron-sdk's and nki-samples' NKI unit tests on nki-agent.

aws-neuron-sdk (`--repo sdk`): each `nki/test/test_*.py` of the SDK at the sweep's pinned commit
holds kernels and `unittest.TestCase` classes whose test methods build NumPy inputs, call the
kernels and compare with a NumPy reference (np.allclose, assertEqual). This script lays the folder
out in a scratch directory (nothing upstream is committed here), writes a small driver of its own
beside each file that runs every test method of the file's TestCase classes, one after another,
and runs that driver with `nki-agent run` in the sandbox, computing. A method passes when its own
assertions hold on nki-agent's results.

nki-samples (`--repo samples`): each `test/unit/test_*.py` at the pinned commit is a pytest file
whose parametrised tests build NumPy inputs, run a kernel of `nki_samples.reference` with
`simulate_kernel(baremetal(kernel)[grid], ...)` and compare with a NumPy reference (np.allclose).
The script lays out the test files, their conftest.py and the `nki_samples` package (its
`reference` kernels from SAMPLES_KERNELS, the last commit that holds them), a pytest stand-in of
its own as `pytest.py` (pytest_standin.py: marks, parametrize, fixtures; its entries list and run
the tests) and a NumPy `scipy.special.softmax` for the tests' references, then lists each file's
tests in one `nki-agent run` and runs each test and parametrization in its own, as upstream's CI
runs them (`pytest test/unit/ --simulation-only`): the tests not marked `simulation` (they benchmark
or profile on a NeuronDevice) are reported as skipped with the reason.

    /usr/bin/python3 tests/conformance/sweep/numerics.py --mirror /work/.mirror [--repo sdk|samples|all]
        [--json out.json] [--file SUBSTR] [--bin build/nki-agent] [--memory-mib N]

Prints one line per test (pass / fail / skip / error, with the first line of the failure) and the
totals of each repository. Exit status 0 when no test ends in an internal error of nki-agent (a
failed upstream assertion is a result to read, with the reason listed in docs/conformance.md, not a
crash).
"""
import argparse
import ast
import json
import os
import re
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


MEMORY_MIB = None  # --memory-mib: the kernel process's address-space limit (None: nki-agent's default)


def nki_agent(binary, driver, entry, out, timeout, args=(), lib=None):
    """`nki-agent --json run` of the driver's entry: (its JSON reply or None, its raw text)."""
    cmd = [binary, "--json", "run", driver, "--entry", entry, "--out", out, "--timeout", str(int(timeout))]
    for a in args:
        cmd += ["--arg", a]
    if lib:
        cmd += ["--lib", lib]
    if MEMORY_MIB:
        cmd += ["--memory-mib", str(MEMORY_MIB)]
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


def test_row(test, reply, raw, scratch=None):
    """One test's row from its `nki-agent run` reply: the driver's own NKIA-NUMERICS line, or, when
    the run itself ended (a kernel fault nki-agent reports as the run's diagnostic), that diagnostic;
    with `scratch`, where in the laid-out files it points."""
    if reply is None:
        return {"test": test, "result": "internal", "why": raw}
    got = [json.loads(ln[len("NKIA-NUMERICS "):]) for ln in (reply.get("printed") or "").splitlines()
           if ln.startswith("NKIA-NUMERICS ")]
    if got:
        return got[0]
    d = first_diagnostic(reply)
    code = d.get("code", "")
    kind = "internal" if code.startswith("nkia_internal") else "error"
    row = {"test": test, "result": kind, "code": code, "why": d.get("message", "")[:300]}
    if scratch and location(d, scratch):
        row["at"] = location(d, scratch)
    return row


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
        rows.append(test_row(test, reply, raw))
    return rows


# nki-samples' unit tests import their kernels from `nki_samples.reference`, which left the repository
# at c4b806e ("Remove reference kernels"); the tests stayed. The kernels are read at its parent, the
# last commit that holds them (the conformance suite's commit for case S22, cases.py).
SAMPLES_KERNELS = "8370e11ba8d894be5e3c687c0772e7e1e889de4c"
SAMPLES_TESTS, SAMPLES_PACKAGE = "test/unit", "src/nki_samples"
SIMULATION_MARK = "simulation"

# The tests' NumPy references call scipy.special.softmax; the sandbox has no SciPy.
SCIPY_SPECIAL = '''"""scipy.special.softmax for the tests' NumPy references (nki-agent's sandbox has no SciPy)."""
import numpy as np


def softmax(x, axis=None):
    x = np.asarray(x)
    e = np.exp(x - np.amax(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
'''


def git_ls_tree(mirror, repo, commit, folder):
    git_dir = os.path.join(mirror, repo, "repo")
    out = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", commit, folder + "/"],
                         check=True, capture_output=True, text=True).stdout
    return out.split()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def layout_samples(mirror, scratch):
    """Writes nki-samples' unit tests, their conftest.py, the nki_samples package, the pytest
    stand-in and scipy.special into `scratch`; returns the test files' names."""
    repo, commit = manifest.SAMPLES, manifest.COMMITS[manifest.SAMPLES]
    names = []
    for path in git_ls_tree(mirror, repo, commit, SAMPLES_TESTS):
        if path.endswith(".py"):
            write(os.path.join(scratch, os.path.basename(path)), git_show(mirror, repo, commit, path))
            names.append(os.path.basename(path))
    package = set()
    for c in (commit, SAMPLES_KERNELS):  # the pin's package, and the kernels the pin no longer holds
        for path in git_ls_tree(mirror, repo, c, SAMPLES_PACKAGE):
            rel = os.path.relpath(path, os.path.dirname(SAMPLES_PACKAGE))
            if path.endswith(".py") and rel not in package:
                package.add(rel)
                write(os.path.join(scratch, rel), git_show(mirror, repo, c, path))
    # nki-agent carries a library's packages (folders with an __init__.py): an empty one where the
    # upstream folder is a namespace package.
    for folder, _, files in os.walk(os.path.join(scratch, "nki_samples")):
        if "__init__.py" not in files:
            write(os.path.join(folder, "__init__.py"), "")
    write(os.path.join(scratch, "scipy", "__init__.py"), "")
    write(os.path.join(scratch, "scipy", "special.py"), SCIPY_SPECIAL)
    shutil.copyfile(os.path.join(HERE, "pytest_standin.py"), os.path.join(scratch, "pytest.py"))
    return sorted(n for n in names if n.startswith("test_"))


def static_tests(source):
    """When a test file does not load in the sandbox: its test functions read from its syntax tree,
    as (id, marked simulation, why it would be deselected), without their parametrizations."""
    tree = ast.parse(source)
    mark_vars = {}  # `xfail = pytest.mark.arch_specific_xfail`
    profiled = set()  # module functions decorated with nki's profile
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    mark_vars[t.id] = node.value.attr
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                if getattr(f, "id", getattr(f, "attr", "")) == "profile":
                    profiled.add(node.name)

    def marks(fn):
        out = set()
        for d in fn.decorator_list:
            f = d.func if isinstance(d, ast.Call) else d
            if isinstance(f, ast.Attribute):
                out.add(f.attr)
            elif isinstance(f, ast.Name):
                out.add(mark_vars.get(f.id, f.id))
        return out

    def why(fn):
        names = {getattr(n, "id", getattr(n, "attr", None)) for n in ast.walk(fn)}
        if "benchmark_result" in names:
            return "a performance test: it measures the kernel's latency with nki.benchmark on a NeuronDevice"
        if names & profiled:
            return "it checks the files nki.profile writes on a NeuronDevice (NEFF, NTFF traces, JSON reports)"
        return "upstream runs it on a NeuronDevice only"

    out = []
    for node in tree.body:
        fns = []
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            fns = [(node.name, node)]
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            fns = [(f"{node.name}::{f.name}", f) for f in node.body
                   if isinstance(f, ast.FunctionDef) and f.name.startswith("test")]
        for test, fn in fns:
            ms = marks(fn)
            if "fixture" not in ms:
                out.append((test, SIMULATION_MARK in ms, why(fn)))
    return out


def location(diag, scratch):
    loc = diag.get("location") or {}
    if not loc.get("file"):
        return ""
    path = loc["file"]
    return f"{os.path.relpath(path, scratch) if os.path.isabs(path) else path}:{loc.get('line', '')}"


def run_pytest_file(binary, scratch, name, timeout):
    """One row per test and parametrization of a pytest file; the file's tests are listed in one
    nki-agent run and each runs in its own, so that a kernel fault does not hide the others."""
    module = name[:-3]
    driver = os.path.join(scratch, "pytest.py")
    out = os.path.join(scratch, "out_" + module)
    margs = [f"module={module!r}"]
    reply, raw = nki_agent(binary, driver, "nkia_list", out, timeout, margs, lib=scratch)
    if reply is None:
        return [{"test": "(the file)", "result": "internal", "why": raw}]
    if not reply.get("ok", False):  # the file does not load: its tests from its syntax tree
        d = first_diagnostic(reply)
        loaded, at = d.get("message", "")[:200], location(d, scratch)
        with open(os.path.join(scratch, name)) as f:
            tests = static_tests(f.read())
        rows = []
        for test, simulation, why in tests:
            if simulation:
                rows.append({"test": test, "result": "error", "code": d.get("code", ""),
                             "why": f"the file does not load in the sandbox: {loaded}", "at": at})
            else:
                rows.append({"test": test, "result": "skip",
                             "why": f"not marked `{SIMULATION_MARK}` ({why}); upstream's --simulation-only "
                                    f"deselects it (and the file does not load in the sandbox: {loaded}, at {at})"})
        return rows or [{"test": "(the file)", "result": "error", "code": d.get("code", ""), "why": loaded,
                         "at": at}]
    listed = [json.loads(ln[len("NKIA-TEST "):]) for ln in (reply.get("printed") or "").splitlines()
              if ln.startswith("NKIA-TEST ")]
    rows = []
    for t in listed:
        test = t["test"]
        if t.get("skip"):
            rows.append({"test": test, "result": "skip", "why": t["skip"]})
            continue
        reply, raw = nki_agent(binary, driver, "nkia_numerics", out, timeout, margs + [f"only={test!r}"],
                               lib=scratch)
        rows.append(test_row(test, reply, raw, scratch))
    return rows


# ---- nki-library (--repo library) ------------------------------------------------------------------
# nki-library's kernel tests (test/integration/nkilib/core/**/test_*.py) build NumPy inputs and run
# the kernel through its harness, `UnitTestFramework(...).run_test(atol=, rtol=)` or the test manager
# directly, against a golden from a PyTorch reference beside the kernel (`*_torch.py`) or from NumPy.
LIBRARY_TESTS = "test/integration/nkilib/core"
LIBRARY_PACKAGE = "src/nkilib_src"  # written as nkilib_src/ at the scratch root, as the tests import it
LIBRARY_HELPERS = "test"  # the tests' helpers (test/utils, test/integration/nkilib/utils), at their paths
# Modules of nki-library's harness that the stand-ins replace (nkilib_standin/, written over them),
# and modules that helpers import which the repository lacks at the pin (the sweep's `absent`).
STANDIN = os.path.join(HERE, "nkilib_standin")
LIBRARY_ABSENT = ("test/utils/scripts/remote_lock_scripts.py", "test/utils/perf_analysis_private.py")
ABSENT_STUB = ("# Written by numerics.py: imported by nki-library's test helpers, absent from the repository.\n"
               "def __getattr__(name):\n    if name.startswith('__'):\n        raise AttributeError(name)\n"
               "    return type(name, (), {})\n")
# Upstream's simulation mode skips tests whose id holds one of these sizes (slow on a CPU simulator;
# test/utils/simulation_setup.py): the run takes each fast test's first parametrization without them.
SLOW_SHAPES = ("4096", "5120", "8192", "16384", "32768", "36864")
REFERENCE = os.path.join(HERE, "nkilib_reference.py")
HOST_PYTHON = "/usr/bin/python3"  # Debian's Python, with python3-torch, for the references


# nki-agent loads at most 256 Python files under a kernel's root: each test file gets a scratch folder
# of its own, with the package less its experimental kernels (which no core test or reference
# imports), the harness (test/utils, test/integration/nkilib/utils) and the test's own folder.
LIBRARY_LEFT_OUT = ("src/nkilib_src/nkilib/experimental/", "test/unit/", "test/integration/nkilib/experimental/")


def library_sources(mirror):
    """{repository path: text} of every .py file of nki-library's package and test folder at the pin."""
    repo, commit = manifest.NKILIB, manifest.COMMITS[manifest.NKILIB]
    paths = git_ls_tree(mirror, repo, commit, LIBRARY_PACKAGE) + git_ls_tree(mirror, repo, commit, LIBRARY_HELPERS)
    return {p: git_show(mirror, repo, commit, p) for p in paths
            if p.endswith(".py") and not p.startswith(LIBRARY_LEFT_OUT) and p != "test/conftest.py"}


def library_test_files(sources):
    return sorted(p for p in sources if p.startswith(LIBRARY_TESTS + "/") and os.path.basename(p).startswith("test_"))


def layout_library(sources, scratch, test_path):
    """Writes, for the test file `test_path`, nki-library's package, the harness and the test's own
    folder (not upstream's conftest.py), then the stand-ins over them and the pytest stand-in."""
    folder = os.path.dirname(test_path) + "/"
    # The test's folder, and the folders of other tests whose helpers its files import.
    folders = {folder}
    for path, text in sources.items():
        if path.startswith(folder):
            for m in re.findall(r"test\.integration\.nkilib\.core\.([\w.]+)", text.decode("utf-8", "replace")):
                parts = m.split(".")
                for n in range(len(parts), 0, -1):
                    if f"{LIBRARY_TESTS}/{'/'.join(parts[:n])}.py" in sources:
                        folders.add(f"{LIBRARY_TESTS}/{'/'.join(parts[:n - 1])}/".replace("//", "/"))
                        break
    for path, text in sources.items():
        if path.startswith(LIBRARY_TESTS + "/") and not path.startswith(tuple(folders)):
            if not path.endswith("/__init__.py") or not any(f.startswith(os.path.dirname(path) + "/") for f in folders):
                continue
        rel = os.path.relpath(path, "src") if path.startswith("src/") else path
        write(os.path.join(scratch, rel), text)
    for path in LIBRARY_ABSENT:
        write(os.path.join(scratch, path), ABSENT_STUB)
    for top in ("nkilib_src", "test"):
        for d, _, files in os.walk(os.path.join(scratch, top)):
            if "__init__.py" not in files:
                write(os.path.join(d, "__init__.py"), "")
    for d, _, files in os.walk(STANDIN):
        for f in files:
            if f.endswith(".py"):
                src = os.path.join(d, f)
                shutil.copyfile(src, os.path.join(scratch, os.path.relpath(src, STANDIN)))
    shutil.copyfile(os.path.join(HERE, "pytest_standin.py"), os.path.join(scratch, "pytest.py"))


def library_plan(listed):
    """Which of a file's test functions run (the listing of nkilib_standin/_nkia_library.py): per
    function, one row, either (id, "run", None) for a test in upstream's fast set (marked `fast`), at
    its first parametrization upstream's simulation mode runs, or (id, "skip", why)."""
    plan = []
    for fn in listed:
        function, marks, items = fn["test"], set(fn["marks"]), fn["ids"]
        n = f"{fn['count']} parametrization{'s' if fn['count'] != 1 else ''}"
        if "trace_only" in marks:
            plan.append((function, "skip", f"marked trace_only: upstream only traces it, nothing to compare ({n})"))
        elif "fast" not in marks:
            plan.append((function, "skip", f"not in upstream's fast set (no `fast` mark; {n})"))
        elif "coverage_parametrize" in marks:
            plan.append((function, "skip", "parametrized by upstream's coverage_parametrize plugin (conftest.py), "
                                           "which the pytest stand-in does not implement"))
        else:
            runnable = [t for t in items if not t.get("skip")]
            fast = [t for t in runnable if not any(p in t["test"].split("[", 1)[-1] for p in SLOW_SHAPES)]
            if fast:
                plan.append((fast[0]["test"], "run", None))
            elif runnable:
                plan.append((function, "skip", f"its first parametrizations ({len(runnable)} of {n}) have a size "
                                               f"upstream's simulation mode skips as slow ({', '.join(SLOW_SHAPES)})"))
            else:
                plan.append((function, "skip", items[0]["skip"] if items else "no parametrization"))
    return plan


def reference_row(row, out, scratch, timeout):
    """A test whose kernel ran in the sandbox: its torch references, computed outside it
    (nkilib_reference.py), decide the row."""
    records = os.path.join(out, "out0.npy")
    if not os.path.exists(records):
        return row
    try:
        p = subprocess.run([HOST_PYTHON, REFERENCE, scratch, records], capture_output=True, text=True,
                           timeout=timeout)
        got = json.loads(p.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return {**row, "result": "error", "why": "the torch reference did not answer"}
    if got["result"] == "none":
        return row  # every golden was computed and compared in the sandbox
    out_row = {**row, "result": got["result"]}
    out_row.pop("why", None)
    if got.get("why"):
        out_row["why"] = got["why"]
    return out_row


def run_library_file(binary, scratch, path, timeout):
    module = path[:-3].replace("/", ".")
    driver = os.path.join(scratch, "_nkia_library.py")
    out = os.path.join(scratch, "out_" + os.path.basename(path)[:-3])
    margs = [f"module={module!r}"]
    reply, raw = nki_agent(binary, driver, "nkia_list", out, timeout, margs, lib=scratch)
    if reply is None:
        return [{"test": "(the file)", "result": "internal", "why": raw}]
    if not reply.get("ok", False):
        d = first_diagnostic(reply)
        return [{"test": "(the file)", "result": "error", "code": d.get("code", ""),
                 "why": "the file does not load: " + d.get("message", "")[:300], "at": location(d, scratch)}]
    listed = [json.loads(ln[len("NKIA-TEST "):]) for ln in (reply.get("printed") or "").splitlines()
              if ln.startswith("NKIA-TEST ")]
    rows = []
    for test, what, why in library_plan(listed):
        if what == "skip":
            rows.append({"test": test, "result": "skip", "why": why})
            continue
        shutil.rmtree(out, ignore_errors=True)
        reply, raw = nki_agent(binary, driver, "nkia_library", out, timeout, margs + [f"only={test!r}"],
                               lib=scratch)
        row = test_row(test, reply, raw, scratch)
        if row["result"] == "pass":
            row = reference_row(row, out, scratch, timeout)
        elif row["result"] == "fail":
            row["result"] = "mismatch"
        rows.append(row)
    return rows


def run_library(args, binary):
    commit = manifest.COMMITS[manifest.NKILIB]
    sources = library_sources(args.mirror)
    rows = []
    for path in library_test_files(sources):
        if args.file and not any(s in path for s in args.file):
            continue
        name = os.path.relpath(path, LIBRARY_TESTS)
        scratch = tempfile.mkdtemp(prefix="nkia-numerics-library-")
        try:
            layout_library(sources, scratch, path)
            for row in run_library_file(binary, scratch, path, args.timeout):
                add_row(rows, row, name)
        finally:
            if args.keep:
                print(f"scratch folder kept: {scratch}")
            else:
                shutil.rmtree(scratch, ignore_errors=True)
    totals = totals_of(rows)
    print("\nnki-library: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())) + f" of {len(rows)} tests")
    return {"commit": commit, "rows": rows, "totals": totals}


def add_row(rows, row, name):
    """Keeps a test's row under its file's name and prints it as it comes."""
    row["file"] = name
    rows.append(row)
    print(f"{row['result']:<9} {name}::{row['test']}"
          + (f"  — {row.get('code', '')} {row['why']}" if row.get("why") else "")
          + (f"  (at {row['at']})" if row.get("at") else ""), flush=True)


def totals_of(rows):
    totals = {}
    for r in rows:
        totals[r["result"]] = totals.get(r["result"], 0) + 1
    return totals


def run_sdk(args, binary):
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
                add_row(rows, row, name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    totals = totals_of(rows)
    print("\n" + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())) + f" of {len(rows)} test methods")
    return {"commit": commit, "rows": rows, "totals": totals}


def run_samples(args, binary):
    commit = manifest.COMMITS[manifest.SAMPLES]
    scratch = tempfile.mkdtemp(prefix="nkia-numerics-samples-")
    rows = []
    try:
        for name in layout_samples(args.mirror, scratch):
            if args.file and not any(s in name for s in args.file):
                continue
            for row in run_pytest_file(binary, scratch, name, args.timeout):
                add_row(rows, row, name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    totals = totals_of(rows)
    print("\nnki-samples: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())) + f" of {len(rows)} tests")
    return {"commit": commit, "kernels_commit": SAMPLES_KERNELS, "rows": rows, "totals": totals}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "..", "build", "nki-agent"))
    ap.add_argument("--repo", choices=("sdk", "samples", "library", "all"), default="all",
                    help="the SDK's nki/test unittest files, nki-samples' test/unit pytest files, nki-library's "
                         "test/integration/nkilib/core tests, or all three")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (--repo library)")
    ap.add_argument("--file", action="append", default=[], help="only test files whose name contains this")
    ap.add_argument("--json", help="write the rows as JSON (--repo sdk: {commit, rows, totals}; otherwise "
                                   "one such object per repository, under 'sdk' and 'samples')")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--memory-mib", type=int,
                    help="the address-space limit of each run (nki-agent run --memory-mib; default its own, 8192)")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    global MEMORY_MIB
    MEMORY_MIB = args.memory_mib
    parts = {}
    if args.repo in ("sdk", "all"):
        parts["sdk"] = run_sdk(args, binary)
    if args.repo in ("samples", "all"):
        if parts:
            print()
        parts["samples"] = run_samples(args, binary)
    if args.repo in ("library", "all"):
        if parts:
            print()
        parts["library"] = run_library(args, binary)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(parts["sdk"] if args.repo == "sdk" else parts, f, indent=1)
    return 1 if any(p["totals"].get("internal") for p in parts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
