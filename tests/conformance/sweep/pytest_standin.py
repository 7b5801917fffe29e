"""A small stand-in for pytest, and the driver that runs pytest-style test files on nki-agent.

numerics.py writes this file into its scratch folder as `pytest.py`, beside the upstream test files
(nki-samples' `test/unit/test_*.py`) and their `conftest.py`, and runs it with `nki-agent run` in
the sandbox, which has the standard library, NumPy and nki-agent's NKI modules but no pytest. A
test file's `import pytest` then finds this module. It supports what such files use:

- `pytest.mark.<name>` marks (any name: `simulation`, `arch_specific_xfail`, ...), applied to
  functions, methods and classes, stacked, or held in a variable (`xfail = pytest.mark.x`);
- `pytest.mark.parametrize(argnames, argvalues, ids=...)`, stacked decorators included (the
  Cartesian product, the decorator nearest the function outermost, as pytest orders them), with
  `pytest.param(*values, marks=..., id=...)`; test ids as pytest writes them
  (`TestAttention::test_x[1-4096-128-float32]`);
- `pytest.fixture` (with or without arguments; plain or generator fixtures) in the test file, its
  classes or conftest.py, and the `request` fixture whose `config.getoption` answers the options of
  the command line this driver stands for (OPTIONS);
- `pytest.skip`, `pytest.fail`, `pytest.raises`, `pytest.approx`, and the marks `skip`, `skipif`
  and `xfail`.

The driver's two entries (run with `--entry`):

- `nkia_list(module)`: collects the module's tests as pytest does (functions `test*`, methods
  `test*` of classes `Test*` without `__init__`) and prints one `NKIA-TEST {json}` line per test
  and parametrization: its id, and `skip` with the reason when it is not run here;
- `nkia_numerics(module, only)`: runs the one test `only`, with a fixed NumPy seed (and the file's
  `get_target_string()` answering INSTANCE_TYPE), and prints its result as one
  `NKIA-NUMERICS {json}` line: pass, fail (an upstream assertion failed; the failing `np.allclose`
  is described), skip, xfail, xpass or error (an exception: its type, message, nki-agent
  diagnostic code and innermost location in the test's files).

Tests the upstream command line would deselect are reported as skipped with the reason: with
`--simulation-only` (upstream's CI, `pytest test/unit/ --simulation-only`), conftest.py keeps
only the tests marked `simulation`; the others benchmark or profile kernels on a NeuronDevice.
"""
import contextlib
import importlib
import inspect
import itertools
import json
import re
import sys
import traceback

import numpy as np

# The command line this driver stands for: upstream's CI runs `pytest test/unit/ --simulation-only`.
OPTIONS = {"--simulation-only": True}
SIMULATION_MARK = "simulation"  # conftest.py keeps only tests with this mark under --simulation-only
SEED = 0  # np.random is seeded with it before each test, so that a rerun draws the same inputs
# A test file's `get_target_string()` reads the EC2 instance type from the DMI product name
# (/sys/devices/virtual/dmi/id/product_name), which the sandbox does not expose, and runs only on
# trn2 (nki-samples' double-row matmul, whose kernel is compiled for trn2 by its platform_target):
# the driver answers the NeuronCore generation nki-agent simulates that kernel for.
INSTANCE_TYPE = "trn2"


# ---- marks and parameters ------------------------------------------------------------------------
class Mark:
    def __init__(self, name, args=(), kwargs=None):
        self.name, self.args, self.kwargs = name, tuple(args), dict(kwargs or {})

    def __repr__(self):
        return f"Mark({self.name!r})"


class MarkDecorator:
    """`pytest.mark.name`: applied to a function or class it records itself in `pytestmark`;
    called with arguments it gives a new decorator holding them."""

    def __init__(self, mark):
        self.mark = mark

    @property
    def name(self):
        return self.mark.name

    @property
    def args(self):
        return self.mark.args

    @property
    def kwargs(self):
        return self.mark.kwargs

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and (inspect.isfunction(args[0]) or inspect.isclass(args[0])):
            target = args[0]
            marks = list(getattr(target, "pytestmark", []) if not inspect.isclass(target)
                         else target.__dict__.get("pytestmark", []))
            target.pytestmark = marks + [self.mark]
            return target
        return MarkDecorator(Mark(self.mark.name, self.mark.args + args, {**self.mark.kwargs, **kwargs}))

    def with_args(self, *args, **kwargs):
        return MarkDecorator(Mark(self.mark.name, self.mark.args + args, {**self.mark.kwargs, **kwargs}))


class _MarkGenerator:
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return MarkDecorator(Mark(name))


mark = _MarkGenerator()


class ParameterSet:
    def __init__(self, values, marks=(), id=None):
        self.values, self.id = tuple(values), id
        marks = marks if isinstance(marks, (list, tuple)) else [marks]
        self.marks = [m.mark if isinstance(m, MarkDecorator) else m for m in marks]


def param(*values, marks=(), id=None):
    return ParameterSet(values, marks, id)


# ---- fixtures ------------------------------------------------------------------------------------
class FixtureDef:
    def __init__(self, func, name=None, params=None, autouse=False, scope="function"):
        self.func, self.name = func, name or func.__name__
        self.params, self.autouse, self.scope = params, autouse, scope


def _fixture_of(obj):
    """The FixtureDef `obj` carries, or None (a module's stand-in, such as an imported torch's, answers
    any attribute, so the attribute alone says nothing)."""
    fd = getattr(obj, "_nkia_fixture", None)
    return fd if isinstance(fd, FixtureDef) else None


def fixture(func=None, *, scope="function", params=None, autouse=False, ids=None, name=None):
    def wrap(f):
        f._nkia_fixture = FixtureDef(f, name, params, autouse, scope)
        return f
    return wrap(func) if func is not None else wrap


yield_fixture = fixture


class Config:
    def getoption(self, name, default=None, skip=False):
        return OPTIONS.get(name, default)

    def addinivalue_line(self, name, line):
        pass


class FixtureRequest:
    def __init__(self, node, instance, module):
        self.config, self.node, self.instance, self.module = Config(), node, instance, module
        self.function = getattr(node, "function", None)
        self.cls = type(instance) if instance is not None else None
        self.param = None
        self._finalizers = []

    def addfinalizer(self, f):
        self._finalizers.append(f)

    def getfixturevalue(self, name):
        return self.node.resolve(name)


# ---- skips, failures, raises, approx -------------------------------------------------------------
class Skipped(Exception):
    pass


class Failed(AssertionError):
    pass


class XFailed(Exception):
    pass


def skip(reason="", *, allow_module_level=False, msg=None):
    raise Skipped(msg or reason)


skip.Exception = Skipped


def fail(reason="", pytrace=True, msg=None):
    raise Failed(msg or reason)


fail.Exception = Failed


def xfail(reason=""):
    raise XFailed(reason)


def importorskip(modname, minversion=None, reason=None):
    try:
        return importlib.import_module(modname)
    except ImportError:
        raise Skipped(reason or f"could not import {modname!r}") from None


class ExceptionInfo:
    def __init__(self):
        self.type = self.value = self.tb = None

    def match(self, pattern):
        assert re.search(pattern, str(self.value)), f"{pattern!r} does not match {str(self.value)!r}"
        return True


@contextlib.contextmanager
def _raises_context(expected, match):
    info = ExceptionInfo()
    try:
        yield info
    except expected as e:
        info.type, info.value, info.tb = type(e), e, e.__traceback__
        if match is not None:
            info.match(match)
        return
    raise Failed(f"DID NOT RAISE {expected}")


def raises(expected, *args, match=None, **kwargs):
    if args:  # pytest.raises(Exc, func, *args)
        with _raises_context(expected, match) as info:
            args[0](*args[1:], **kwargs)
        return info
    return _raises_context(expected, match)


class approx:
    def __init__(self, expected, rel=None, abs=None, nan_ok=False):
        self.expected, self.rel, self.abs, self.nan_ok = expected, rel, abs, nan_ok

    def __eq__(self, actual):
        rel = 1e-6 if self.rel is None else self.rel
        tol_abs = 1e-12 if self.abs is None else self.abs
        if isinstance(self.expected, dict):
            return set(actual) == set(self.expected) and all(
                approx(self.expected[k], self.rel, self.abs, self.nan_ok) == actual[k] for k in self.expected)
        exp, act = np.asarray(self.expected, dtype=np.float64), np.asarray(actual, dtype=np.float64)
        if exp.shape != act.shape and exp.size != 1:
            return False
        ok = np.abs(act - exp) <= np.maximum(rel * np.abs(exp), tol_abs)
        if self.nan_ok:
            ok |= np.isnan(act) & np.isnan(exp)
        return bool(np.all(ok | (act == exp)))

    def __repr__(self):
        return f"approx({self.expected!r})"


# ---- np.allclose, described when it fails --------------------------------------------------------

_ALLCLOSE = np.allclose
_LAST_MISMATCH = []


def _described_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    ok = _ALLCLOSE(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not ok:
        _LAST_MISMATCH[:] = [_describe_mismatch(a, b, rtol, atol)]
    return ok


def _describe_mismatch(a, b, rtol, atol):
    try:
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        x, y = np.broadcast_arrays(x, y)
        diff = np.abs(x - y)
        bad = ~(diff <= atol + rtol * np.abs(y))
        n_bad = int(np.count_nonzero(bad))
        finite = np.where(np.isfinite(diff), diff, -1.0)
        worst = np.unravel_index(int(np.argmax(np.where(bad, finite, -1.0))), diff.shape) if diff.ndim else ()
        return (f"np.allclose(rtol={rtol:g}, atol={atol:g}) is False: {n_bad} of {diff.size} elements of shape "
                f"{list(diff.shape)} differ, max |a-b| {float(np.nanmax(diff)) if diff.size else 0:.4g} "
                f"(worst at {tuple(int(i) for i in worst)}: {float(x[worst]):.6g} vs {float(y[worst]):.6g}; "
                f"{int(np.count_nonzero(np.isnan(x)))} NaN in a)")
    except Exception as e:  # noqa: BLE001 - a description, never a second failure
        return f"np.allclose is False ({type(e).__name__} describing it)"


# ---- collection ----------------------------------------------------------------------------------
def _idval(val, argname, idx):
    if isinstance(val, str):
        return val.encode("ascii", "backslashreplace").decode("ascii")
    if val is None or isinstance(val, (bool, int, float, complex)):
        return str(val)
    if isinstance(getattr(val, "__name__", None), str):  # classes and functions: np.float32 -> float32
        return val.__name__
    return f"{argname}{idx}"


def _argnames(argnames):
    if isinstance(argnames, str):
        return [n.strip() for n in argnames.split(",") if n.strip()]
    return list(argnames)


def _parametrize_sets(m):
    """[(id, {argname: value}, [marks])] of one parametrize mark."""
    argnames = _argnames(m.args[0] if m.args else m.kwargs["argnames"])
    argvalues = m.args[1] if len(m.args) > 1 else m.kwargs["argvalues"]
    ids = m.args[2] if len(m.args) > 2 else m.kwargs.get("ids")
    out = []
    for idx, v in enumerate(argvalues):
        ps = v if isinstance(v, ParameterSet) else ParameterSet([v] if len(argnames) == 1 else v)
        values = ps.values
        if len(values) != len(argnames):
            raise ValueError(f"parametrize: {len(argnames)} names {argnames} but {len(values)} values at row {idx}")
        if ps.id is not None:
            pid = ps.id
        elif callable(ids):
            pid = "-".join(str(ids(x)) if ids(x) is not None else _idval(x, n, idx) for n, x in zip(argnames, values))
        elif ids is not None and idx < len(ids) and ids[idx] is not None:
            pid = str(ids[idx])
        else:
            pid = "-".join(_idval(x, n, idx) for n, x in zip(argnames, values))
        out.append((pid, dict(zip(argnames, values)), list(ps.marks)))
    return out


def _marks_of(func, cls, module):
    marks = []
    for owner in (func, cls, module):
        if owner is None:
            continue
        ms = getattr(owner, "pytestmark", []) if owner is func else (
            owner.__dict__.get("pytestmark", []) if inspect.isclass(owner) else getattr(owner, "pytestmark", []))
        ms = ms if isinstance(ms, (list, tuple)) else [ms]
        marks += [m.mark if isinstance(m, MarkDecorator) else m for m in ms]
    return marks


class CallSpec:
    def __init__(self, params, id):
        self.params, self.id = dict(params), id


class Item:
    def __init__(self, module, cls, name, func, params, marks):
        self.module, self.cls, self.name, self.function = module, cls, name, func
        self.params, self.marks = params, marks
        self._cache, self._teardowns, self.instance = {}, [], None
        self.nodeid = None

    @property
    def callspec(self):
        """`request.node.callspec`: the parametrization's values (`params`) and id."""
        return CallSpec(self.params, self.nodeid.partition("[")[2][:-1])

    def iter_markers(self, name=None):
        return (m for m in self.marks if name is None or m.name == name)

    # -- fixtures --
    def _fixture_def(self, name):
        for owner in (self.cls, self.module, sys.modules.get("conftest")):
            if owner is None:
                continue
            for attr in list(vars(owner).values()):
                fd = _fixture_of(attr)
                if fd is not None and fd.name == name:
                    return fd, owner
        return None, None

    def resolve(self, name):
        if name in self._cache:
            return self._cache[name]
        if name in self.params:
            return self.params[name]
        if name == "request":
            value = FixtureRequest(self, self.instance, self.module)
        else:
            fd, owner = self._fixture_def(name)
            if fd is None:
                raise LookupError(f"fixture {name!r} not found (the pytest stand-in knows the test file's "
                                  f"fixtures, its classes', conftest.py's and `request`)")
            func = getattr(self.instance, fd.func.__name__) if inspect.isclass(owner) else fd.func
            kwargs = {p: self.resolve(p) for p in _arg_names(func)}
            value = func(**kwargs)
            if inspect.isgenerator(value):
                gen = value
                value = next(gen)
                self._teardowns.append(gen)
        self._cache[name] = value
        return value

    def teardown(self):
        for gen in reversed(self._teardowns):
            with contextlib.suppress(StopIteration):
                next(gen)
        request = self._cache.get("request")
        for f in reversed(getattr(request, "_finalizers", [])):
            f()

    def run(self):
        if self.cls is not None:
            self.instance = self.cls()
            func = getattr(self.instance, self.name)
        else:
            func = self.function
        for fd_owner in (sys.modules.get("conftest"), self.module, self.cls):
            if fd_owner is None:
                continue
            for attr in list(vars(fd_owner).values()):
                fd = _fixture_of(attr)
                if fd is not None and fd.autouse:
                    self.resolve(fd.name)
        kwargs = {p: self.resolve(p) for p in _arg_names(func)}
        try:
            func(**kwargs)
        finally:
            self.teardown()


def _arg_names(func):
    sig = inspect.signature(func)
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty]


def _test_functions(module):
    """(class or None, name, function), in definition order, as pytest collects them."""
    for name, obj in list(vars(module).items()):
        if inspect.isfunction(obj) and name.startswith("test") and obj.__module__ == module.__name__:
            yield None, name, obj
        elif inspect.isclass(obj) and name.startswith("Test") and obj.__module__ == module.__name__:
            if "__init__" in vars(obj):
                continue  # pytest does not collect a test class with a constructor
            seen = set()
            for klass in obj.__mro__[:-1]:
                for mname, meth in vars(klass).items():
                    if mname.startswith("test") and mname not in seen and callable(getattr(obj, mname, None)):
                        seen.add(mname)
                        yield obj, mname, getattr(obj, mname)


def collect(module):
    items = []
    for cls, name, func in _test_functions(module):
        if _fixture_of(func) is not None:
            continue
        marks = _marks_of(func, cls, module)
        # Stacked parametrize marks: the one applied first (nearest the function) is outermost and
        # first in the id, as pytest orders them.
        sets = [_parametrize_sets(m) for m in marks if m.name == "parametrize"]
        base = f"{cls.__name__}::{name}" if cls is not None else name
        for combo in itertools.product(*sets) if sets else [()]:
            params, extra = {}, []
            for _, values, pmarks in combo:
                params.update(values)
                extra += pmarks
            item = Item(module, cls, name, func, params, marks + extra)
            item.nodeid = base + ("[" + "-".join(pid for pid, _, _ in combo) + "]" if combo else "")
            items.append(item)
    counts = {}
    for it in items:  # pytest makes repeated ids unique with a suffix
        counts[it.nodeid] = counts.get(it.nodeid, 0) + 1
    seen = {}
    for it in items:
        if counts[it.nodeid] > 1:
            n = seen.get(it.nodeid, 0)
            seen[it.nodeid] = n + 1
            it.nodeid = it.nodeid[:-1] + f"{n}]" if it.nodeid.endswith("]") else f"{it.nodeid}{n}"
    return items


def _names_used(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if inspect.iscode(c):
            names |= _names_used(c)
    return names


def _kernel_mode(obj):
    return getattr(obj, "mode", None) if type(obj).__name__ == "Kernel" else None


def skip_reason(item):
    """Why `item` is not run here, or None."""
    for m in item.iter_markers("skip"):
        return "marked skip: " + str(m.kwargs.get("reason") or (m.args[0] if m.args else ""))
    for m in item.iter_markers("skipif"):
        if m.args and m.args[0]:
            return "marked skipif: " + str(m.kwargs.get("reason", ""))
    conftest = sys.modules.get("conftest")
    deselects = conftest is not None and hasattr(conftest, "pytest_collection_modifyitems")
    if deselects and OPTIONS.get("--simulation-only") and not any(item.iter_markers(SIMULATION_MARK)):
        names = _names_used(item.function.__code__)
        kernels = [getattr(item.module, n) for n in names if _kernel_mode(getattr(item.module, n, None))]
        if "benchmark_result" in names or any(k.mode == "benchmark" for k in kernels):
            what = "a performance test: it measures the kernel's latency with nki.benchmark on a NeuronDevice"
        elif any(k.mode == "profile" for k in kernels):
            what = "it checks the files nki.profile writes on a NeuronDevice (NEFF, NTFF traces, JSON reports)"
        else:
            what = "upstream runs it on a NeuronDevice only"
        return f"not marked `{SIMULATION_MARK}` ({what}); upstream's --simulation-only deselects it"
    return None


# ---- the driver's entries ------------------------------------------------------------------------
def _load(module):
    try:
        importlib.import_module("conftest")
    except ModuleNotFoundError:
        pass
    mod = importlib.import_module(module)
    if callable(getattr(mod, "get_target_string", None)):
        mod.get_target_string = lambda: INSTANCE_TYPE
    return mod


def nkia_list(module):
    """One `NKIA-TEST {json}` line per test and parametrization of `module`."""
    mod = _load(module)
    for item in collect(mod):
        row = {"test": item.nodeid}
        reason = skip_reason(item)
        if reason:
            row["skip"] = reason
        print("NKIA-TEST " + json.dumps(row), flush=True)


def _where(exc, module):
    """The innermost frame of the exception's traceback in the test's own files (not this one, not
    nki-agent's modules), as 'file:line'; and the source line of the innermost frame in the test file."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.endswith("pytest.py") and not f.filename.startswith("<")]
    inner = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    mine = [f for f in frames if f.filename.endswith(module.replace(".", "/") + ".py")]
    test_line = (mine[-1].line or "").strip() if mine else ""
    return inner, test_line


def nkia_numerics(module, only):
    """Runs the test `only` (its id) of `module` and prints one `NKIA-NUMERICS {json}` line."""
    np.allclose = _described_allclose
    mod = _load(module)
    for item in collect(mod):
        if item.nodeid != only:
            continue
        row = {"test": only}
        reason = skip_reason(item)
        if reason:
            print("NKIA-NUMERICS " + json.dumps({**row, "result": "skip", "why": reason}), flush=True)
            return
        xfail_mark = next(item.iter_markers("xfail"), None)
        np.random.seed(SEED)
        _LAST_MISMATCH[:] = []
        try:
            item.run()
            row["result"] = "xpass" if xfail_mark else "pass"
        except (AssertionError, Failed) as e:
            at, line = _where(e, module)
            msg = (str(e) or "").splitlines()[0][:200] if str(e) else ""
            detail = "; ".join(x for x in (line, msg, _LAST_MISMATCH[0] if _LAST_MISMATCH else "") if x)
            row["result"] = "xfail" if xfail_mark else "fail"
            row["why"] = (detail or "assertion failed")[:400]
            row["at"] = at
        except Skipped as e:
            row["result"] = "skip"
            row["why"] = str(e)[:300]
        except XFailed as e:
            row["result"] = "xfail"
            row["why"] = str(e)[:300]
        except Exception as e:  # noqa: BLE001 - reported per test
            at, _ = _where(e, module)
            row["result"] = "xfail" if xfail_mark else "error"
            first = str(e).splitlines()[0][:300] if str(e) else ""
            row["why"] = f"{type(e).__name__}: {first}"
            row["at"] = at
            if isinstance(getattr(e, "code", None), str):
                row["code"] = e.code
        print("NKIA-NUMERICS " + json.dumps(row), flush=True)
        return
    print("NKIA-NUMERICS " + json.dumps({"test": only, "result": "error", "why": "no such test"}), flush=True)

