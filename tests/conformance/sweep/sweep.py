#!/usr/bin/python3
"""The coverage sweep: every entry kernel of the public NKI repositories, traced by nki-agent check.

Usage: sweep.py --mirror DIR [--bin build/nki-agent] [--json OUT] [--repo R ...] [--kernel SUBSTR ...]
                [--list] [--strict-count N] [--keep DIR]

For each repository of the manifest (manifest.py beside this file; `DIR/<owner+name>/repo` is a
bare git mirror) at its pinned commit: finds every entry kernel (a function decorated with
`@nki.jit`, `@nki.jit(...)`, `@jit` imported from nki, the legacy `neuronxcc.nki.jit`, or
`nki.baremetal`) by reading the files with `git show` / `git ls-tree`; lays the kernel's files out
in a scratch folder keeping the package tree, so sibling and package imports resolve; runs
`nki-agent check` on the shapes and arguments the manifest gives for that kernel (taken from the
kernel's own tests or docs; arguments --arg cannot express go through a small driver kernel the
sweep writes beside the upstream file, write_driver); and classifies the outcome:

  traced        the kernel traced to the end at those shapes;
  shared        rejected, with a reason the real toolchain shares (only kernels listed in the
                manifest's reviewed SHARED table; never inferred);
  unsupported   an NKI API nki-agent does not provide (AttributeError-like, missing module,
                unknown keyword): the API is recorded;
  stricter      a rule of nki-agent rejects what the device-tested kernel does: the diagnostic
                code is recorded;
  internal      an internal error, a crash, a hang or a time-out;
  not-swept     an entry kernel the manifest has no shapes for yet (with the reason).

Prints one line per kernel, a summary table (per repository and per dialect) and the blocking
causes ranked by the number of kernels they block. --json writes everything. Exit status 0 unless
an internal error occurred, or --strict-count N is given and fewer than N kernels traced.

No upstream file is ever written into this repository: they live in the scratch folder (removed
afterwards unless --keep) for the duration of the run. It shares run_conformance.py's source
preparation and child environment, which need NumPy: run it with Debian's /usr/bin/python3 (a
`python3` without NumPy re-executes it there).
"""
import argparse
import ast
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the manifest
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import manifest  # noqa: E402  (the manifest beside this file)

sys.path.insert(0, os.path.dirname(HERE))
from run_conformance import child_env, strip_module_code  # noqa: E402  (the conformance suite's own)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

CLASSES = ("traced", "shared", "unsupported", "stricter", "internal", "not-swept")

# Diagnostics that are nki-agent's own failure, never the kernel's.
INTERNAL_CODES = {
    "nkia_internal", "nkia_internal_error", "nkia_internal_python", "nkia_worker_died", "nkia_worker_hung",
    "nkia_worker_protocol", "nkia_worker_bad_frame", "nkia_worker_startup", "nkia_worker_not_found",
    "nkia_worker_unknown_handler", "nkia_helper_died", "nkia_helper_spawn", "nkia_sandbox_crash",
    "nkia_sandbox_setup", "nkia_sandbox_exit",
}
# A kernel that ran out of time or CPU: a hang, counted with the internal errors.
HANG_CODES = {"nkia_helper_timeout", "nkia_sandbox_timeout", "nkia_sandbox_cpu_limit", "nkia_timeout"}
# Codes that say an API is missing.
UNSUPPORTED_CODES = {"nkia_unsupported_operator", "nkia_module_unavailable", "nkia_unsupported_api",
                     "nkia_not_implemented", "nkia_sandbox_refused", "nkia_unknown_dtype"}
UNSUPPORTED_EXCEPTIONS = ("AttributeError", "ImportError", "ModuleNotFoundError", "NotImplementedError")
# TypeError / RuntimeError messages that say an API is called in a way nki-agent does not provide.
MISSING_API_MESSAGES = ("unexpected keyword argument", "incompatible function arguments",
                        "got multiple values for argument", "is not available: nki-agent runs kernels without")


# ---- discovery ------------------------------------------------------------------------------

def git(git_dir, *args):
    r = subprocess.run(["git", "--git-dir", git_dir] + list(args), capture_output=True)
    if r.returncode != 0:
        raise FileNotFoundError(f"git {' '.join(args)}: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def mirror_git_dir(mirror, repo):
    for cand in (os.path.join(mirror, repo, "repo"), os.path.join(mirror, repo)):
        if os.path.exists(os.path.join(cand, "HEAD")):
            return cand
    return None


def list_files(git_dir, commit):
    return git(git_dir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()


def show(git_dir, commit, path):
    return git(git_dir, "show", f"{commit}:{path}").decode("utf-8", errors="replace")


def _jit_names(tree):
    """Names under which this module imported nki's jit (`from nki import jit as j`)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[-1] == "nki":
            for a in node.names:
                if a.name in ("jit", "baremetal"):
                    names.add(a.asname or a.name)
    return names


def is_entry_decorator(dec, jit_names):
    target = dec.func if isinstance(dec, ast.Call) else dec
    text = ast.unparse(target)
    if text in jit_names:
        return True
    return bool(re.fullmatch(r"(neuronxcc\.)?nki\.(jit|baremetal)", text))


def dialect_of(src):
    """legacy: the file imports neuronxcc.nki (the NKI of neuronx-cc 2.x); current: `import nki`."""
    return "legacy" if re.search(r"^\s*(import|from)\s+neuronxcc", src, re.M) else "current"


def discover(git_dir, commit):
    """[(path, entry, dialect, decorator text)] of every decorated entry kernel, plus the files that
    do not parse ([(path, message)])."""
    found, unparsed = [], []
    for path in list_files(git_dir, commit):
        if not path.endswith(".py"):
            continue
        src = show(git_dir, commit, path)
        if "nki" not in src or ("jit" not in src and "baremetal" not in src):
            continue
        try:
            tree = ast.parse(src)
        except SyntaxError as e:
            unparsed.append((path, f"SyntaxError at line {e.lineno}: {e.msg}"))
            continue
        jit_names = _jit_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    if is_entry_decorator(dec, jit_names):
                        found.append((path, node.name, dialect_of(src), ast.unparse(dec)))
                        break
    return found, unparsed


# ---- layout ---------------------------------------------------------------------------------

# A module the kernel's helpers import that the repository does not hold at the pinned commit
# (manifest `absent`): every name imported from it is an empty class of that name.
ABSENT_MODULE = ("# Written by the coverage sweep: {path} is imported by the kernel's helpers, but the\n"
                 "# repository does not hold it at the pinned commit (tests/conformance/sweep/manifest.py).\n"
                 "def __getattr__(name):\n"
                 "    if name.startswith('__'):\n"
                 "        raise AttributeError(name)\n"
                 "    return type(name, (), {{}})\n")


def lay_out(git_dir, commit, kernel, files, scratch):
    """Writes the kernel file and the package it belongs to; returns the kernel's path there.

    With a package root (nki-library's src/nkilib_src), every .py file under it is written keeping
    the tree below the root; the folders the manifest names in `trees` (a test's helpers) and the
    kernel's own folder are written at their repository paths (below the root where they lie under
    it), with the upstream __init__.py of every folder above them; a folder without one gets an
    empty one, as Python makes it; the scratch folder itself gets none (it is the import root). The
    manifest's `absent` modules are written as stubs (ABSENT_MODULE). Without a package root, the
    kernel's own folder is written flat, so that its sibling imports resolve. With a `driver`, the
    returned path is the driver's (write_driver)."""
    root = kernel.package_root.rstrip("/")
    prefix = root + "/" if root else ""
    folder = os.path.dirname(kernel.path)
    packaged = bool(root or kernel.trees)

    def dest_of(path):
        if not packaged:
            return os.path.basename(path)
        return path[len(prefix):] if prefix and path.startswith(prefix) else path

    present = set(files)
    wanted = {p for p in files if p.endswith(".py") and os.path.dirname(p) == folder}
    if root:
        wanted |= {p for p in files if p.endswith(".py") and p.startswith(prefix)}
    for tree in kernel.trees:
        wanted |= {p for p in files if p.endswith(".py") and p.startswith(tree.rstrip("/") + "/")}
    if packaged:
        for p in list(wanted):
            d = os.path.dirname(p)
            while d and d != root:
                if f"{d}/__init__.py" in present:
                    wanted.add(f"{d}/__init__.py")
                d = os.path.dirname(d)
    for path in sorted(wanted):
        dest = os.path.join(scratch, dest_of(path))
        # The scratch folder is the import root, never a package: an __init__.py there would make
        # nki-agent take its parent (the system's temporary folder) for the root.
        if path == kernel.path or os.path.exists(dest) or dest_of(path) == "__init__.py":
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(show(git_dir, commit, path))
    for path in kernel.absent:
        dest = os.path.join(scratch, dest_of(path))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(ABSENT_MODULE.format(path=path))
    if kernel.with_nkilib:
        # The kernel imports nki-library's package (`from nkilib.core...`), as its model installs it:
        # nki-library's src/nkilib_src/nkilib tree, at its pinned commit, goes in a hidden folder of the
        # scratch folder that check_kernel passes as `--lib` (a hidden folder is not the kernel's own).
        lib_git = mirror_git_dir(MIRROR[0], manifest.NKILIB)
        lib_commit = manifest.COMMITS[manifest.NKILIB]
        lib_prefix = manifest.NKILIB_ROOT + "/"
        for path in list_files(lib_git, lib_commit):
            if path.endswith(".py") and path.startswith(lib_prefix + "nkilib/"):
                dest = os.path.join(scratch, LIB_DIR, path[len(lib_prefix):])
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "w", encoding="utf-8") as f:
                    f.write(show(lib_git, lib_commit, path))
        for dirpath, dirnames, _ in os.walk(os.path.join(scratch, LIB_DIR, "nkilib")):
            for d in [dirpath] + [os.path.join(dirpath, n) for n in dirnames]:
                if not os.path.exists(os.path.join(d, "__init__.py")):
                    open(os.path.join(d, "__init__.py"), "w").close()
    out_main = os.path.join(scratch, dest_of(kernel.path))
    os.makedirs(os.path.dirname(out_main), exist_ok=True)
    if packaged:
        for dirpath, dirnames, _ in os.walk(scratch):
            for d in dirnames:
                init = os.path.join(dirpath, d, "__init__.py")
                if not os.path.exists(init):
                    open(init, "w").close()
    src = show(git_dir, commit, kernel.path)
    if "strip_module_code" in kernel.prepare:
        src = strip_module_code(src)
    with open(out_main, "w", encoding="utf-8") as f:
        f.write(src)
    if kernel.driver:
        return write_driver(kernel, dialect_of(src), out_main)
    return out_main


LIB_DIR = ".nkia_lib"  # where a with_nkilib kernel's nki-library package is written (--lib)
MIRROR = [None]  # the --mirror folder, for kernels that lay out another repository's package (with_nkilib)
DRIVER_FILE = "_nkia_sweep_driver.py"
DRIVER_ENTRY = "sweep_entry"


def write_driver(kernel, dialect, kernel_file):
    """The sweep's own driver beside the kernel file (never an upstream file): an entry kernel, in the
    kernel's dialect, taking the manifest's tensors and calling the upstream kernel with the
    arguments its test builds (`kernel.driver`: a config object, an NKI operator, a dtype). The call
    is inlined, as a kernel calling another kernel is; returns the driver's path."""
    nki = "neuronxcc.nki" if dialect == "legacy" else "nki"
    module = os.path.splitext(os.path.basename(kernel_file))[0]
    names = ", ".join([f"{kernel.entry} as kernel"] + list(kernel.driver_imports))
    params = ", ".join(kernel.shapes)
    text = (f"# Written by the coverage sweep (tests/conformance/sweep/manifest.py): calls {kernel.entry}\n"
            f"# with the arguments its upstream test builds.\n"
            f"import numpy as np\nimport {nki} as nki\nimport {nki}.isa as nisa\nimport {nki}.language as nl\n"
            f"from .{module} import {names}\n\n\n@nki.jit\ndef {DRIVER_ENTRY}({params}):\n"
            f"    return {kernel.driver}\n")
    path = os.path.join(os.path.dirname(kernel_file), DRIVER_FILE)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


# ---- one kernel -----------------------------------------------------------------------------

# How the message of a missing-API failure names the API: (pattern, how the cause is written).
BLOCKED_API_PATTERNS = [
    (r"module '([\w.]+)' has no attribute '(\w+)'", "{0}.{1}"),
    (r"'(\w+)' object has no attribute '(\w+)'", "{0}.{1}"),
    (r"No module named '([\w.]+)'", "{0}"),
    (r"cannot import name '(\w+)' from '([\w.]+)'", "{1}.{0}"),
    (r"Operation not permitted: '[^']*/(?:dist|site)-packages/([\w/]+?)(?:/__init__)?\.py'",
     "import {0} (the sandbox cannot read its file)"),
    (r"([\w.]+)\(\) is not available: nki-agent runs kernels without (\w+)",
     "import {1} (a package nki-agent stands in for; calling into it fails)"),
    (r"unknown dtype '(\w+)'", "dtype nl.{0}"),
    (r"\.ap\(dtype=\w+\) would read", "ap(dtype=) of another element type (a reinterpreting access)"),
    (r"(\w+)\(\): incompatible function arguments", "{0}(): the arguments it is called with"),
    (r"([\w.]+)\(\) got multiple values for argument '(\w+)'", "{0}({1}=) given twice"),
    (r"([\w.]+)\(\) got an unexpected keyword argument '(\w+)'", "{0}({1}=)"),
]


def blocked_api(code, message):
    """The API an AttributeError-like message names, e.g. 'nki.isa.dropout'; else the code and the
    message's first line."""
    for pattern, cause in BLOCKED_API_PATTERNS:
        m = re.search(pattern, message)
        if m:
            return cause.format(*(g.replace("/", ".") for g in m.groups()))
    return f"{code}: {message.splitlines()[0][:100] if message else ''}"


def classify(kernel, reply, rc, hung):
    """(class, cause, diagnostic) for one nki-agent check reply."""
    if hung:
        return "internal", "hang: nki-agent did not return", None
    if reply is None:
        return "internal", f"nki-agent exit {rc} without a JSON reply", None
    if reply.get("ok"):
        return "traced", "", None
    diags = reply.get("diagnostics") or []
    d = next((x for x in diags if x.get("severity", "error") == "error"), diags[0] if diags else {})
    code = d.get("code", "?")
    msg = (d.get("message") or "").strip()
    exc = msg.split(":", 1)[0] if code == "nkia_python_exception" else ""
    if code in INTERNAL_CODES or rc == 3:
        return "internal", code, d
    if code in HANG_CODES:
        return "internal", f"hang: {code}", d
    key = f"{code}:{exc}" if exc else code
    if key in manifest.SHARED.get(kernel.id, ()):
        return "shared", key, d
    if code in UNSUPPORTED_CODES or exc in UNSUPPORTED_EXCEPTIONS or \
            (exc in ("TypeError", "RuntimeError") and any(s in msg for s in MISSING_API_MESSAGES)):
        return "unsupported", blocked_api(code, msg), d
    return "stricter", key, d


def diag_line(d, scratch):
    if not d:
        return ""
    loc = d.get("location") or {}
    path = loc.get("file", "")
    if path.startswith(scratch):
        path = os.path.relpath(path, scratch)
    text = f"{path}:{loc.get('line', 0)}: [{d.get('code')}] {(d.get('message') or '').strip().splitlines()[0][:200]}"
    notes = [n for n in d.get("notes") or [] if re.search(r"\.py:\d+ in ", n)]  # the kernel line, not printed text
    if notes:
        text += " | " + notes[-1].replace(os.path.basename(scratch) + "/", "")[:160]
    return text


def lines_of_file(trace_file, path):
    """The source lines of the upstream file `path` that instructions in a --trace JSON come from."""
    with open(trace_file, encoding="utf-8") as f:
        trace = json.load(f).get("trace") or []
    tail = "/" + path.split("/")[-1]
    return {ins.get("line") for ins in trace if str(ins.get("file", "")).endswith(tail)}


def function_lines(git_dir, commit, path, name):
    """The line range (first, last) of the top-level function `name` in the upstream file."""
    for node in ast.parse(show(git_dir, commit, path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node.lineno, node.end_lineno
    return None


def resolve_subkernels(results, kernels, git_dir, commit, callers):
    """A sub-kernel (manifest `via`) is traced when its caller traced and one of the caller's traced
    instructions comes from the sub-kernel's own lines: its code ran, at its caller's shapes."""
    for res, kernel in zip(results, kernels):
        if not kernel.via or res["class"] != "not-swept":
            continue
        caller = callers.get((kernel.repo, kernel.path, kernel.via))
        if caller is None:
            continue
        cres, lines = caller
        span = function_lines(git_dir, commit, kernel.path, kernel.entry)
        ran = sorted(n for n in lines if span and n is not None and span[0] <= n <= span[1])
        if cres["class"] == "traced" and ran:
            res.update({"class": "traced", "cause": f"through {kernel.via}",
                        "instructions": f"{len(ran)} lines of it issued instructions in {kernel.via}'s"})
        else:
            res["cause"] = (f"a sub-kernel that {kernel.via} calls; {kernel.via} is {cres['class']}"
                            if cres["class"] != "traced" else
                            f"a sub-kernel that {kernel.via} calls; its trace issues nothing from it")


def check_kernel(kernel, git_dir, commit, files, nki_agent, keep, traced_lines=None):
    res = {"id": kernel.id, "repo": kernel.repo, "path": kernel.path, "entry": kernel.entry,
           "source": kernel.source, "plausible": kernel.plausible, "target": kernel.target}
    scratch = tempfile.mkdtemp(prefix="nkia-sweep-") if not keep else os.path.join(keep, re.sub(r"\W+", "_", kernel.id))
    if keep:
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch)
    try:
        main = lay_out(git_dir, commit, kernel, files, scratch)
        cmd = [nki_agent, "--json", "check", main, "--entry", DRIVER_ENTRY if kernel.driver else (kernel.call or kernel.entry), "--target", kernel.target,
               "--timeout", str(kernel.timeout)]
        for name, spec in kernel.shapes.items():
            cmd += ["--shapes", f"{name}={spec}"]
        for name, value in kernel.args.items():
            cmd += ["--arg", f"{name}={value}"]
        if kernel.with_nkilib:
            cmd += ["--lib", os.path.join(scratch, LIB_DIR)]
        trace_file = os.path.join(scratch, ".nkia_trace.json") if traced_lines is not None else None
        if trace_file:
            cmd += ["--trace", trace_file]
        if kernel.grid:
            cmd += ["--grid", ",".join(str(g) for g in kernel.grid)]
        res["command"] = " ".join(cmd)
        t0 = time.monotonic()
        hung, reply, rc = False, None, None
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=kernel.timeout + 60, env=child_env())
            rc = proc.returncode
            try:
                reply = json.loads(proc.stdout)
            except json.JSONDecodeError:
                res["stderr"] = (proc.stdout + proc.stderr)[-2000:]
        except subprocess.TimeoutExpired:
            hung = True
        res["seconds"] = round(time.monotonic() - t0, 2)
        cls, cause, d = classify(kernel, reply, rc, hung)
        res.update({"class": cls, "cause": cause, "diagnostic": diag_line(d, scratch)})
        if reply and reply.get("ok"):
            res["instructions"] = (reply.get("summary") or {}).get("instructions")
            if trace_file and os.path.exists(trace_file):
                traced_lines.update(lines_of_file(trace_file, kernel.path))
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return res


# ---- report ---------------------------------------------------------------------------------

def short_repo(repo):
    return repo.split("+", 1)[-1]


def summary_rows(results):
    rows = collections.OrderedDict()
    for r in results:
        for key in (short_repo(r["repo"]), f"dialect {r['dialect']}", "all"):
            rows.setdefault(key, collections.Counter())[r["class"]] += 1
    return rows


def print_table(rows):
    head = f"{'':32} {'kernels':>7} " + " ".join(f"{c:>11}" for c in CLASSES)
    print(head)
    order = [k for k in rows if not k.startswith("dialect") and k != "all"] + \
            [k for k in rows if k.startswith("dialect")] + [k for k in rows if k == "all"]
    for k in order:
        c = rows[k]
        print(f"{k:32} {sum(c.values()):>7} " + " ".join(f"{c[x]:>11}" for x in CLASSES))


def ranked_blockers(results):
    by = collections.OrderedDict()
    for r in results:
        if r["class"] in ("unsupported", "stricter", "internal"):
            by.setdefault((r["class"], r["cause"]), []).append(r)
    return sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def print_result(res, kernel):
    tag = res["class"] + ("*" if res.get("plausible") else "")
    detail = res["cause"] if res["class"] != "traced" else f"{res.get('instructions')} instructions"
    if kernel.via and res["class"] == "traced":
        detail = f"through {kernel.via}: {res.get('instructions')} trace"
    print(f"{tag:12} {res['dialect']:7} {kernel.id}  — {detail}", flush=True)
    if res.get("diagnostic") and res["class"] != "traced":
        print(f"{'':21}{res['diagnostic']}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", required=True, help="folder holding the git mirrors (<owner+name>/repo)")
    ap.add_argument("--bin", default=os.path.join(REPO_ROOT, "build", "nki-agent"), help="the nki-agent binary")
    ap.add_argument("--json", help="write every result as JSON to this file")
    ap.add_argument("--repo", action="append", default=[], help="only this repository (owner+name or name); repeatable")
    ap.add_argument("--kernel", action="append", default=[], help="only kernels whose id contains this; repeatable")
    ap.add_argument("--list", action="store_true", help="list the entry kernels found and their manifest status")
    ap.add_argument("--strict-count", type=int, help="fail when fewer kernels than this trace")
    ap.add_argument("--keep", help="keep each kernel's scratch folder under this folder")
    opts = ap.parse_args()
    MIRROR[0] = opts.mirror

    nki_agent = os.path.abspath(opts.bin)
    if not opts.list and not os.access(nki_agent, os.X_OK):
        sys.exit(f"no executable nki-agent at {nki_agent}")
    by_key = {(k.repo, k.path, k.entry): k for k in manifest.KERNELS}
    results, missing_mirrors, unparsed_all = [], [], []
    for repo, commit in manifest.COMMITS.items():
        if opts.repo and not any(x in (repo, short_repo(repo)) for x in opts.repo):
            continue
        git_dir = mirror_git_dir(opts.mirror, repo)
        if git_dir is None:
            missing_mirrors.append(repo)
            continue
        files = list_files(git_dir, commit)
        caller_keys = {(k.repo, k.path, k.via) for k in manifest.KERNELS if k.repo == repo and k.via}
        callers, subs = {}, []
        found, unparsed = discover(git_dir, commit)
        unparsed_all += [(repo, p, m) for p, m in unparsed]
        for path, entry, dialect, dec in found:
            kernel = by_key.get((repo, path, entry)) or manifest.not_swept(repo, path, entry, "not in the manifest yet")
            if opts.kernel and not any(s in kernel.id for s in opts.kernel):
                continue
            if opts.list:
                status = "not-swept" if kernel.shapes is None else ("plausible" if kernel.plausible else "from tests/docs")
                print(f"{dialect:7} {status:15} {kernel.id}")
                continue
            if kernel.shapes is None:
                res = {"id": kernel.id, "repo": repo, "path": path, "entry": entry, "class": "not-swept",
                       "cause": kernel.note, "diagnostic": "", "source": kernel.source, "plausible": False}
            else:
                key = (kernel.repo, kernel.path, kernel.entry)
                lines = set() if key in caller_keys else None
                res = check_kernel(kernel, git_dir, commit, files, nki_agent, opts.keep, lines)
                if lines is not None:
                    callers[key] = (res, lines)
            res["dialect"] = dialect
            res["decorator"] = dec
            results.append(res)
            if kernel.via:  # printed once its caller has run
                subs.append((res, kernel))
            else:
                print_result(res, kernel)
        resolve_subkernels([r for r, _ in subs], [k for _, k in subs], git_dir, commit, callers)
        for res, kernel in subs:
            print_result(res, kernel)
        # manifest entries that discovery did not find: a stale manifest
        for k in manifest.KERNELS:
            if k.repo == repo and not any((p, e) == (k.path, k.entry) for p, e, _, _ in found):
                print(f"warning: manifest kernel {k.id} is not an entry kernel at {commit[:10]}", file=sys.stderr)
    if opts.list:
        return 0
    for repo in missing_mirrors:
        print(f"no mirror of {repo} under {opts.mirror}: not swept")
    for repo in manifest.NOT_MIRRORED:
        print(f"{repo}: not mirrored here, not swept")
    for repo, path, msg in unparsed_all:
        print(f"{short_repo(repo)}:{path}: does not parse as Python 3.11 ({msg}); its kernels are not counted")
    print("\n(* = plausible shapes from the kernel's asserts, not from its tests or docs)\n")
    rows = summary_rows(results)
    print_table(rows)
    blockers = ranked_blockers(results)
    if blockers:
        print("\nblocking causes, by kernels blocked:")
        for (cls, cause), rs in blockers:
            print(f"{len(rs):4}  {cls:11} {cause}   e.g. {rs[0]['id']}")
    n_traced = rows.get("all", collections.Counter())["traced"]
    n_internal = rows.get("all", collections.Counter())["internal"]
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as f:
            json.dump({"commits": manifest.COMMITS, "traced_floor": manifest.TRACED_FLOOR, "not_mirrored": manifest.NOT_MIRRORED,
                       "missing_mirrors": missing_mirrors, "unparsed": unparsed_all,
                       "summary": {k: dict(v) for k, v in rows.items()},
                       "blockers": [{"class": c, "cause": cause, "kernels": [r["id"] for r in rs]}
                                    for (c, cause), rs in blockers],
                       "kernels": results}, f, indent=2)
    if n_internal:
        print(f"FAIL: {n_internal} internal error(s)")
        return 1
    if opts.strict_count is not None and n_traced < opts.strict_count:
        print(f"FAIL: {n_traced} kernels traced, fewer than {opts.strict_count}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
