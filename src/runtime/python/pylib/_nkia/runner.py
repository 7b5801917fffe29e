"""Runs one entry function of a kernel and describes the outcome for the C++ host.

``run`` never raises: it returns ("ok", outputs, printed) or ("error", description, printed), the
description being a dict the host turns into a Diagnostic: code, message, hint, the innermost
kernel-file location and the traceback lines that lie inside the kernel's own files.
"""
import ast
import inspect
import io
import linecache
import sys
import traceback

from _nkia import kernel as kernel_mod
from _nkia import loader, policy

MAX_PRINTED = 64 * 1024  # bytes of print() output kept per run


class _CappedWriter(io.TextIOBase):
    def __init__(self, cap):
        self.parts, self.size, self.cap, self.truncated = [], 0, cap, False

    def write(self, s):
        if self.size < self.cap:
            take = s[: self.cap - self.size]
            self.parts.append(take)
            self.size += len(take)
            if len(take) < len(s):
                self.truncated = True
        else:
            self.truncated = True
        return len(s)

    def text(self):
        out = "".join(self.parts)
        return out + ("\n[output truncated]\n" if self.truncated else "")


class EntryError(Exception):
    code = "nkia_entry_not_found"


def _describe(exc, files):
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in tb if f.filename in files]
    notes = []
    for f in frames:
        line = f.line or ""
        notes.append(f"{f.filename}:{f.lineno} in {f.name}: {line.strip()}")
    loc = frames[-1] if frames else None
    if isinstance(exc, SyntaxError) and exc.filename in files:
        loc = None
        d = {"file": exc.filename, "line": exc.lineno or 0, "col": exc.offset or 0}
    elif isinstance(getattr(exc, "loc", None), tuple):  # an error about the kernel as a whole, at its line
        d = {"file": exc.loc[0], "line": exc.loc[1], "col": 0}
    else:
        d = {"file": loc.filename if loc else "", "line": loc.lineno if loc else 0, "col": 0}
    code = getattr(exc, "code", None)
    if not isinstance(code, str):
        code = "nkia_syntax_error" if isinstance(exc, SyntaxError) else "nkia_python_exception"
    hint = getattr(exc, "hint", "") or ""
    if isinstance(exc, MemoryError):
        code, hint = "nkia_sandbox_memory_limit", "the kernel ran out of memory; shrink the shapes or fix the allocation"
    if isinstance(exc, RecursionError):
        code, hint = "nkia_recursion_limit", "the kernel recursed too deeply; look for unbounded recursion"
    msg = f"{type(exc).__name__}: {exc}" if code in ("nkia_python_exception", "nkia_recursion_limit") else str(exc)
    if isinstance(exc, SyntaxError):
        msg = f"SyntaxError: {exc.msg}"
    d.update({"code": code, "message": msg, "hint": hint, "notes": notes})
    return d


def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # a bare word is a string


def _bind(fn, args, names):
    """Inputs bind by name when every name is a parameter of the entry, else by position."""
    target = fn.func if isinstance(fn, kernel_mod.Kernel) else fn
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return list(args), {}
    if names and all(n in params for n in names):
        return [], dict(zip(names, args))
    return list(args), {}


def run(files, main_path, entry, args, names, kwargs_src, grid):
    out = _CappedWriter(MAX_PRINTED)
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    linecache.clearcache()
    for path, src in files.items():  # lets tracebacks show kernel source lines
        linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    try:
        loader.install(files)
        module = loader.load_module(main_path)
        fn = getattr(module, entry, None)
        if fn is None or not callable(fn):
            names = sorted(n for n, v in vars(module).items()
                           if callable(v) and not n.startswith("_") and getattr(v, "__module__", "").startswith(policy.KERNEL_PACKAGE)
                           or isinstance(v, kernel_mod.Kernel))
            err = EntryError(f"{main_path} has no function '{entry}'")
            err.hint = ("functions defined there: " + ", ".join(names)) if names else "define the kernel function in that file"
            raise err
        if grid:
            if not isinstance(fn, kernel_mod.Kernel):
                fn = kernel_mod.Kernel(fn, mode="simulation")
            fn = fn[tuple(grid)]
        pos, named = _bind(fn, args, names)
        kwargs = {k: _literal(v) for k, v in kwargs_src.items()}
        clash = sorted(set(named) & set(kwargs))
        if clash:
            raise TypeError(f"argument {clash[0]!r} given both as an input array and as --arg")
        result = fn(*pos, **named, **kwargs)
        if result is None:
            outputs = []
        elif isinstance(result, (tuple, list)):
            outputs = list(result)
        else:
            outputs = [result]
        return ("ok", outputs, out.text())
    except BaseException as exc:  # noqa: BLE001 - every failure becomes a Diagnostic
        if isinstance(exc, KeyboardInterrupt):
            raise
        return ("error", _describe(exc, files), out.text())
    finally:
        sys.stdout, sys.stderr = saved
        loader.uninstall()
