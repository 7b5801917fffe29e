"""Runs one entry function of a kernel and describes the outcome for the C++ host.

``run`` never raises: it returns ("ok", outputs, printed, notes) or ("error", description, printed,
notes), the description being a dict the host turns into a Diagnostic: code, message, hint, the
innermost kernel-file location and the traceback lines that lie inside the kernel's own files;
notes say how the call was made where the host should hear it (inputs bound by position).
"""
import ast
import errno
import inspect
import io
import linecache
import sys
import traceback

import _nkia_core as core
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
    if isinstance(exc, OSError) and exc.errno in (errno.EPERM, errno.EACCES, errno.ENOSYS):
        code = "nkia_sandbox_refused"
        hint = ("kernels run in nki-agent's sandbox, with no files, network, processes or host environment; "
                "a kernel computes with NKI on its arguments only")
    if isinstance(exc, RecursionError):
        code, hint = "nkia_recursion_limit", "the kernel recursed too deeply; look for unbounded recursion"
    typed = ("nkia_python_exception", "nkia_recursion_limit", "nkia_sandbox_refused")
    msg = f"{type(exc).__name__}: {exc}" if code in typed else str(exc)
    if isinstance(exc, SyntaxError):
        msg = f"SyntaxError: {exc.msg}"
    d.update({"code": code, "message": msg, "hint": hint, "notes": notes})
    return d


def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # a bare word is a string


class BindError(TypeError):
    code = "nkia_bad_input_name"


def _bind(fn, args, names):
    """Inputs bind by name when they carry names. An input whose name is no parameter of the entry
    is an error (unless the entry takes **kwargs); inputs bind by position only when none of them
    carries a parameter's name, and the third value returned then says so."""
    target = fn.func if isinstance(fn, kernel_mod.Kernel) else fn
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return list(args), {}, None
    if not names or not any(names):  # unnamed inputs bind by position, as the caller meant
        return list(args), {}, None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    explicit = [n for n, p in params.items() if p.kind in kinds]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unmatched = [n for n in names if n not in explicit]
    entry = getattr(target, "__name__", "the entry")
    listed = ", ".join(explicit) if explicit else "none"
    if not unmatched or (takes_any and len(unmatched) < len(names)):
        return [], dict(zip(names, args)), None
    if len(unmatched) < len(names):
        err = BindError(f"the input '{unmatched[0]}' matches no parameter of '{entry}' (its parameters: {listed})")
        err.hint = ("name every input after a parameter (the .npy file's name, or the name in --shapes / "
                    "--random), or name none of them after one to bind by position")
        code = getattr(target, "__code__", None)
        if code is not None:
            err.loc = (code.co_filename, code.co_firstlineno)
        raise err
    pairs = ", ".join(f"{p}={n}" for p, n in zip(explicit, names))
    return list(args), {}, (f"no input is named after a parameter of '{entry}' (its parameters: {listed}): "
                            f"bound by position ({pairs})")


def run(files, main_path, entry, args, names, kwargs_src, grid, kernel_only=False):
    """`args` are HBM tensors of the core. A kernel entry (or any entry, with `kernel_only`) gets
    them as they are and seals the run: from then on no Python code reads a value, and the outputs
    leave as tensors. A host function gets them as NumPy arrays, as a test driver expects."""
    out = _CappedWriter(MAX_PRINTED)
    notes = []  # what the host should know of how the call was made
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    linecache.clearcache()
    for path, src in files.items():  # lets tracebacks show kernel source lines
        linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    try:
        loader.install(files)
        policy.LOADING = True
        try:
            module = loader.load_module(main_path)
        finally:
            policy.LOADING = False
        fn = getattr(module, entry, None)
        if fn is None or not callable(fn):
            names = sorted(n for n, v in vars(module).items()
                           if callable(v) and not n.startswith("_") and getattr(v, "__module__", "").startswith(policy.KERNEL_PACKAGE)
                           or isinstance(v, kernel_mod.Kernel))
            err = EntryError(f"{main_path} has no function '{entry}'")
            err.hint = ("functions defined there: " + ", ".join(names)) if names else "define the kernel function in that file"
            raise err
        if (grid or kernel_only) and not isinstance(fn, kernel_mod.Kernel):
            fn = kernel_mod.Kernel(fn, mode="simulation")
        if grid:
            fn = fn[tuple(grid)]
        if isinstance(fn, kernel_mod.Kernel):
            core.seal_values()
        else:
            args = [kernel_mod.to_host(a) for a in args]
        pos, named, bind_note = _bind(fn, args, names)
        if bind_note:
            notes.append(bind_note)
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
        return ("ok", outputs, out.text(), notes)
    except BaseException as exc:  # noqa: BLE001 - every failure becomes a Diagnostic
        if isinstance(exc, KeyboardInterrupt):
            raise
        return ("error", _describe(exc, files), out.text(), notes)
    finally:
        sys.stdout, sys.stderr = saved
        loader.uninstall()
