#!/usr/bin/python3
"""Runs the public conformance suite (tests/conformance/cases.py, docs/conformance.md).

Usage: run_conformance.py --mirror DIR [--bin build/nki-agent] [--case ID ...] [--json OUT]
                          [--keep DIR] [--list]

For each run of the manifest: extracts the kernel file and the files it imports from the git
mirror under DIR (`DIR/<owner+name>/repo`, a bare repository) at the pinned commit into a
scratch folder, keeping the package tree; applies the manifest's source preparations; writes the
seeded inputs as .npy; runs `nki-agent run` on them; and compares each output with the NumPy
reference (|got - want| <= atol + rtol*|want|). Prints one line per run (PASS, FAIL: wrong
numbers, or ERROR: the kernel did not run, with nki-agent's diagnostic and the kernel line),
then a summary. A table case passes when all its runs pass. Exit status 0 only when every
selected run passes.

The upstream files are read from the mirror at run time and never written into this repository;
--keep DIR keeps each run's scratch folder (kernel, inputs, outputs, reference) under DIR/<id>.

Needs NumPy: run it with Debian's /usr/bin/python3 (a `python3` without NumPy re-executes it).
"""
import argparse
import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:  # the pyenv python3 that may come first on PATH has no NumPy
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

sys.dont_write_bytecode = True  # no __pycache__ beside the manifest
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402  (the manifest beside this file)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- source preparation ---------------------------------------------------------------------
# Each preparation blanks whole statements (their lines become empty), so the prepared file keeps
# the upstream line numbers and nki-agent's diagnostics point at the upstream kernel lines.

def _blank(lines, node):
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    for i in range(first - 1, node.end_lineno):
        lines[i] = "\n"


def _has_call(node):
    return any(isinstance(n, (ast.Call, ast.Await)) for n in ast.walk(node))


def _is_definition(node):
    """A top-level statement that defines something without running device or driver code."""
    if isinstance(node, (ast.ClassDef, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    if isinstance(node, ast.Expr):  # a docstring
        return isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):  # constants and aliases, no calls
        return node.value is not None and not _has_call(node.value)
    if isinstance(node, ast.Try):  # try: import x / except ImportError: ...
        parts = node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
        return all(isinstance(s, ast.Pass) or _is_definition(s) for s in parts)
    return False


def strip_module_code(src):
    """Drops the module-level statements other than imports, function and class definitions and
    call-free assignments: the driver code that runs at import time (`if __name__ == "__main__":`
    blocks, device launches and checks). Everything the file defines loads as written."""
    lines = src.splitlines(keepends=True)
    for node in ast.parse(src).body:
        if not _is_definition(node):
            _blank(lines, node)
    return "".join(lines)


def prepare_source(src, steps):
    for step in steps:
        name, _, arg = step.partition(":")
        if name == "strip_module_code":
            src = strip_module_code(src)
        else:
            raise ValueError(f"unknown source preparation {step!r}")
    return src


# ---- files ----------------------------------------------------------------------------------

def mirror_git_dir(mirror, repo):
    for cand in (os.path.join(mirror, repo, "repo"), os.path.join(mirror, repo)):
        if os.path.exists(os.path.join(cand, "HEAD")):
            return cand
    raise FileNotFoundError(f"no git mirror of {repo} under {mirror}")


def git_show(git_dir, commit, path):
    r = subprocess.run(["git", "-C", git_dir, "show", f"{commit}:{path}"], capture_output=True)
    if r.returncode != 0:
        raise FileNotFoundError(f"{path}@{commit[:8]}: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout.decode("utf-8")


def layout_path(run, path):
    """Where an upstream file goes in the scratch kernel folder."""
    if run.package_root:
        prefix = run.package_root.rstrip("/") + "/"
        assert path.startswith(prefix), f"{path} is not under {run.package_root}"
        return path[len(prefix):]
    return os.path.basename(path)


def extract_kernel(run, mirror, kernel_dir):
    """Writes the kernel and its extra files; returns the kernel's path."""
    git_dir = mirror_git_dir(mirror, run.repo)
    main = None
    for path in (run.path,) + tuple(run.extra_files):
        rel = layout_path(run, path)
        src = git_show(git_dir, run.commit, path)
        if path == run.path:
            src = prepare_source(src, run.prepare)
        dest = os.path.join(kernel_dir, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(src)
        if path == run.path:
            main = dest
        if run.package_root:  # every folder of the package tree is a package, with its own __init__.py
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                init = os.path.join(kernel_dir, *parts[:i], "__init__.py")
                if not os.path.exists(init):
                    upstream = "/".join([run.package_root.rstrip("/")] + parts[:i] + ["__init__.py"])
                    try:
                        text = git_show(git_dir, run.commit, upstream)
                    except FileNotFoundError:
                        text = ""  # a folder without one upstream: an empty package, as Python makes it
                    with open(init, "w", encoding="utf-8") as f:
                        f.write(text)
    return main


# ---- numbers --------------------------------------------------------------------------------

def round_to_bf16(x):
    """float32 -> nearest bfloat16 value (round to nearest even), kept as float32."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = bits.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, out)


def compare(got, want, atol, rtol):
    """None when every element is within tolerance, else a one-line summary of the mismatch."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    err = np.abs(got - want)
    bad = ~(err <= atol + rtol * np.abs(want))  # NaN counts as bad
    n_bad = int(bad.sum())
    if n_bad == 0:
        return None
    finite = np.where(np.isfinite(err), err, np.inf)
    rel = finite / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    n_nan = int(np.isnan(got).sum())
    return (f"{n_bad}/{bad.size} bad ({100.0 * n_bad / bad.size:.2f}%), max abs err {finite.max():.4g}, "
            f"max rel err {rel.max():.4g}" + (f", {n_nan} NaN" if n_nan else "")
            + f"; first bad at {first}: got {got[first]:.6g}, want {want[first]:.6g}")


# ---- one run --------------------------------------------------------------------------------

def _diagnostic_text(diag, kernel_dir):
    loc = diag.get("location") or {}
    path, line = loc.get("file", "?"), loc.get("line", 0)
    text = f"{os.path.relpath(path, kernel_dir) if os.path.isabs(path) else path}:{line}: " \
           f"{diag.get('severity', 'error')}[{diag.get('code')}]: {diag.get('message', '').strip()}"
    full = path if os.path.isabs(path) else os.path.join(kernel_dir, path)
    if line and os.path.exists(full):
        with open(full, encoding="utf-8") as f:
            src = f.read().splitlines()
        if 0 < line <= len(src):
            text += f"\n    | {src[line - 1].strip()}"
    for note in diag.get("notes") or []:
        text += f"\n    note: {note}"
    return text


def child_env():
    """The environment for nki-agent. A pyenv shim that re-executed this script put its own
    Python first on PATH; the worker's embedded CPython finds its prefix through PATH and would
    then start without Debian's NumPy, so that entry is dropped."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if "/.pyenv/versions/" not in p)
    env.pop("PYENV_VERSION", None)
    return env


# A worker missing beside nki-agent while the build relinks it: wait and retry.
TRANSIENT_CODES = {"nkia_worker_not_found"}
RELINK_RETRIES = 6


def wait_for_binary(path, tries=6):
    for _ in range(tries):
        if os.access(path, os.X_OK):
            return True
        time.sleep(30)  # being relinked
    return os.access(path, os.X_OK)


def execute(run, mirror, nki_agent, work):
    """Runs one manifest entry in the folder `work`; returns a result dict."""
    result = {"id": run.id, "case": run.case, "label": run.label, "status": "ERROR", "seconds": 0.0,
              "detail": ""}
    kernel_dir = os.path.join(work, "kernel")
    in_dir = os.path.join(work, "inputs")
    out_dir = os.path.join(work, "out")
    for d in (kernel_dir, in_dir):
        os.makedirs(d, exist_ok=True)
    try:
        kernel = extract_kernel(run, mirror, kernel_dir)
    except (FileNotFoundError, SyntaxError, ValueError) as e:
        result["detail"] = f"harness: cannot prepare the kernel: {e}"
        return result

    inputs = run.inputs(run.seed)
    cmd = [nki_agent, "--json", "run", kernel, "--entry", run.entry]
    for name, arr in inputs.items():
        if name in run.bf16:
            inputs[name] = arr = round_to_bf16(arr)
        path = os.path.join(in_dir, f"{name}.npy")
        np.save(path, arr)
        cmd += ["-i", path]
    for name in run.bf16:
        cmd += ["--dtype", f"{name}=bfloat16"]
    for k, v in run.args.items():
        cmd += ["--arg", f"{k}={v!r}"]  # a Python literal
    if run.grid:
        cmd += ["--grid", ",".join(str(g) for g in run.grid)]
    cmd += ["--out", out_dir, "--timeout", str(run.timeout)]
    result["command"] = shlex.join(cmd)

    if not wait_for_binary(nki_agent):
        result["detail"] = f"harness: no executable {nki_agent}"
        return result
    for attempt in range(RELINK_RETRIES + 1):
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=run.timeout + 60, env=child_env())
        except subprocess.TimeoutExpired:
            result["seconds"] = time.monotonic() - t0
            result["detail"] = f"nki-agent did not return within {run.timeout + 60:.0f} s"
            return result
        result["seconds"] = time.monotonic() - t0
        try:
            reply = json.loads(proc.stdout)
        except json.JSONDecodeError:
            result["detail"] = f"nki-agent exit {proc.returncode}: {(proc.stdout + proc.stderr).strip()[-2000:]}"
            return result
        codes = {d.get("code") for d in reply.get("diagnostics") or []}
        if not codes & TRANSIENT_CODES or attempt == RELINK_RETRIES:
            break
        time.sleep(30)  # the worker is being rebuilt next to nki-agent
    if not reply.get("ok"):
        diags = reply.get("diagnostics") or []
        result["codes"] = [d.get("code") for d in diags]
        result["detail"] = "\n".join(_diagnostic_text(d, kernel_dir) for d in diags) or proc.stderr.strip()
        return result

    # The kernel ran: keep what the simulator warned of, then compare its outputs with the reference.
    result["warnings"] = [_diagnostic_text(d, kernel_dir) for d in reply.get("warnings") or []]
    try:
        want = run.reference(inputs, dict(run.args))
    except Exception as e:  # a manifest bug, not a simulator one
        result["detail"] = f"harness: reference failed: {type(e).__name__}: {e}"
        return result
    if run.ref_dtype:
        want = [np.asarray(w).astype(run.ref_dtype) for w in want]
    outs = reply.get("outputs") or []
    if len(outs) != len(want):
        result["status"] = "FAIL"
        result["detail"] = f"{len(outs)} outputs, expected {len(want)}"
        return result
    tols = run.tol if isinstance(run.tol, list) else [run.tol] * len(want)
    problems = []
    for i, (o, w, (atol, rtol)) in enumerate(zip(outs, want, tols)):
        path = o["path"] if os.path.isabs(o["path"]) else os.path.join(os.getcwd(), o["path"])
        got = np.load(path)
        msg = compare(got, w, atol, rtol)
        if msg:
            problems.append(f"out{i} ({o.get('dtype')}{list(o.get('shape', []))}, atol {atol:g} rtol {rtol:g}): {msg}")
        np.save(os.path.join(work, f"ref{i}.npy"), np.asarray(w))  # for --keep
    result["status"] = "FAIL" if problems else "PASS"
    result["detail"] = "\n".join(problems)
    return result


# ---- main -----------------------------------------------------------------------------------

def select_runs(wanted):
    if not wanted:
        return list(cases.RUNS)
    chosen = [r for r in cases.RUNS if r.id in wanted or r.case in wanted]
    unknown = set(wanted) - {r.id for r in chosen} - {r.case for r in chosen}
    if unknown:
        sys.exit(f"unknown case(s): {', '.join(sorted(unknown))}")
    return chosen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", required=True, help="folder holding the git mirrors (<owner+name>/repo)")
    ap.add_argument("--bin", default=os.path.join(REPO_ROOT, "build", "nki-agent"), help="the nki-agent binary")
    ap.add_argument("--case", action="append", default=[], help="a run (S02b) or table case (S02); repeatable")
    ap.add_argument("--json", help="write the results as JSON to this file")
    ap.add_argument("--keep", help="keep each run's scratch folder under this folder")
    ap.add_argument("--list", action="store_true", help="list the runs and exit")
    opts = ap.parse_args()

    runs = select_runs(opts.case)
    if opts.list:
        for r in runs:
            print(f"{r.id:5} {r.case}  {r.label}   [{r.repo.split('+')[1]} {r.path} @ {r.commit[:8]}]")
        return 0
    nki_agent = os.path.abspath(opts.bin)
    results = []
    for run in runs:
        if opts.keep:
            work = os.path.join(os.path.abspath(opts.keep), run.id)
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(work)
        else:
            work = tempfile.mkdtemp(prefix=f"nkia-conf-{run.id}-")
        try:
            res = execute(run, opts.mirror, nki_agent, work)
        finally:
            if not opts.keep:
                shutil.rmtree(work, ignore_errors=True)
        results.append(res)
        print(f"{res['id']:5} {res['status']:5} {res['seconds']:6.1f}s  {res['label']}", flush=True)
        for line in res["detail"].splitlines():
            print(f"      {line}", flush=True)
        for w in res.get("warnings", []):
            print(f"      {w}", flush=True)

    by_case = {}
    for res in results:
        by_case.setdefault(res["case"], []).append(res["status"] == "PASS")
    n_runs_ok = sum(r["status"] == "PASS" for r in results)
    n_cases_ok = sum(all(v) for v in by_case.values())
    print(f"{n_cases_ok}/{len(by_case)} cases pass ({n_runs_ok}/{len(results)} runs)")
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as f:
            json.dump({"cases": {c: all(v) for c, v in by_case.items()}, "runs": results}, f, indent=2)
    return 0 if n_runs_ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
