"""How kernel code imports.

Kernel files import as real files do: the standard library, NumPy, the NKI modules of both
dialects and the kernel's own modules are the real thing. The sandbox is the boundary, not this
hook: what imported code then does that reaches outside (files, network, processes) fails at
that line, and the environment holds no host variable (docs/sandbox.md).

A forked child cannot read files, so the standard modules real kernel files use are loaded by
the zygote's warm-up (PRELOADED); importing another standard module that needs its file raises
ImportError with the code ``nkia_module_unavailable`` at the import. Frameworks and other
third-party packages the sandbox does not have (torch, jax, scipy, pytest, ...) become stand-ins:
importing them and walking their attributes works, so the test drivers and type annotations of
real files load; calling anything of theirs fails with a clear message. While the kernel's modules
load (their module-level code, LOADING), a call gives an inert stand-in instead: helper modules that
build torch constants or pytest decorators at import time (`_LUT = torch.tensor([...])`,
`@pytest.mark.parametrize(...)`) load, and the failure comes when the kernel itself calls one.
"""
import builtins
import sys
import types

KERNEL_PACKAGE = "_nkia_kernel"

# Packages served by nki-agent itself or installed for kernels.
OURS = frozenset({"nki", "neuronxcc", "numpy", "_nkia", "_nkia_core"})

# Standard modules (and NumPy's submodules) loaded before any request, so that a forked child finds
# them in sys.modules: the pure-computation modules kernels compute with, and the ones real kernel
# files import at module level for their test drivers and helpers.
PRELOADED = (
    "math", "cmath", "functools", "itertools", "collections", "collections.abc", "dataclasses",
    "typing", "enum", "numbers", "operator", "copy", "abc", "contextlib", "string", "re", "textwrap",
    "warnings", "__future__", "types", "random", "decimal", "fractions", "heapq", "bisect",
    "statistics", "struct", "array", "time", "datetime", "logging", "logging.handlers", "os",
    "os.path", "sys", "argparse", "unittest", "unittest.mock", "importlib", "importlib.util",
    "importlib.machinery", "importlib.abc", "importlib.resources", "importlib.metadata", "inspect",
    "json", "pathlib", "io", "traceback", "pprint", "weakref", "gc", "platform", "shutil",
    "tempfile", "glob", "fnmatch", "pickle", "hashlib", "base64", "uuid", "csv", "difflib",
    "subprocess", "signal", "threading", "queue", "errno", "stat", "atexit", "ast", "dis",
    "tokenize", "keyword", "linecache", "codecs", "encodings.idna", "locale", "shlex", "getpass",
    "socket", "select",
    "zlib", "gzip", "bz2", "lzma", "zipfile", "tarfile", "typing_extensions", "numpy.testing",
    "numpy.random", "numpy.linalg", "numpy.fft", "numpy.lib.stride_tricks", "numpy.typing", "ml_dtypes",
)

# The standard library's top-level names (the modules a kernel file may import).
STDLIB = frozenset(sys.stdlib_module_names)

# Top-level names of the kernel's own modules (set by the loader).
LOCAL_TOPS = frozenset()

_original_import = builtins.__import__

# True while the runner imports the kernel's modules (module-level code): see the module docstring.
LOADING = False


# Modules of NKI's own host tooling that kernels' test utilities import, never the kernels: stand-ins
# (host_tool_stand_in) under their real names. nki.compiler.frontend is NKI's tracer front end
# (NKIFrontend, ParserFrontend), which nki-library's test/utils/kernel_tracer.py imports.
HOST_TOOLS = ("nki.compiler.frontend",)


def host_tool_stand_in(name):
    """The stand-in for the host-tool module `name` (HOST_TOOLS), registered in sys.modules so that
    `from nki.compiler.frontend import ParserFrontend` resolves; its parent stays the real module."""
    mod = sys.modules.get(name)
    if not isinstance(mod, _StandIn):
        mod = _StandIn(name)
        sys.modules[name] = mod
    return mod


class ModuleUnavailable(ImportError):
    code = "nkia_module_unavailable"


class _Annotatable:
    """In annotations (`Ctx | None`, `Tensor[...]`) a stand-in stays a stand-in."""

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __getitem__(self, item):
        return self


class _StandIn(_Annotatable, types.ModuleType):
    """A module that can be imported and attribute-walked, but fails when anything is called."""

    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []  # a package, so "from torch.nn import functional" works

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        value = _StandInValue(f"{self.__name__}.{attr}")
        setattr(self, attr, value)  # `torch.Tensor` is one object, however often it is named
        return value

    def __call__(self, *args, **kwargs):  # `from scipy.special import softmax` names a stand-in module
        return _StandInValue(self.__name__)(*args, **kwargs)

    def __mro_entries__(self, bases):
        return (object,)


class _StandInValue(_Annotatable):
    def __init__(self, path):
        self._path = path

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        value = _StandInValue(f"{self._path}.{attr}")
        setattr(self, attr, value)
        return value

    def __eq__(self, other):  # the same name is the same stand-in (annotations compared by signature checks)
        return isinstance(other, _StandInValue) and other._path == self._path

    def __hash__(self):
        return hash(self._path)

    def __call__(self, *args, **kwargs):
        if LOADING:  # module-level code of a helper: the value stays inert until the kernel calls it
            return _StandInValue(f"{self._path}()")
        package = next((m for m in HOST_TOOLS if self._path.startswith(m + ".")), self._path.split(".")[0])
        raise RuntimeError(
            f"{self._path}() is not available: nki-agent runs kernels without "
            f"{package}; only the kernel functions themselves can run here")

    def __repr__(self):
        return f"<stand-in {self._path}>"

    def __mro_entries__(self, bases):
        return (object,)  # "class M(torch.nn.Module)" still defines a class


def stand_in(name):
    mod = sys.modules.get(name)
    if isinstance(mod, _StandIn):
        return mod
    mod = _StandIn(name)
    sys.modules[name] = mod
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(stand_in(parent), child, mod)
    return mod


def _importer_is_kernel(globals_):
    if not globals_:
        return False
    name = globals_.get("__name__") or ""
    return name == KERNEL_PACKAGE or name.startswith(KERNEL_PACKAGE + ".")


def _is_stand_in(top):
    """A top-level name that is neither ours, nor standard, nor the kernel's, nor installed."""
    if top in OURS or top in STDLIB or top in LOCAL_TOPS:
        return False
    mod = sys.modules.get(top)
    return mod is None or isinstance(mod, _StandIn)


def _stand_in_import(name, fromlist):
    mod = stand_in(name)
    for f in fromlist or ():
        if not hasattr(mod, f) or isinstance(getattr(mod, f, None), _StandInValue):
            stand_in(f"{name}.{f}")
    return mod if fromlist else stand_in(name.partition(".")[0])


def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if globals is None:  # a bare __import__("x") call: judge by the caller's module
        globals = sys._getframe(1).f_globals
    if level == 0 and _importer_is_kernel(globals):
        top = name.partition(".")[0]
        if _is_stand_in(top):
            return _stand_in_import(name, fromlist)
        if top in STDLIB and name not in sys.modules:
            try:
                return _original_import(name, globals, locals, fromlist, level)
            except (ImportError, OSError):  # the sandbox refused to read the module's files
                raise ModuleUnavailable(
                    f"the standard module '{name}' is not loaded in nki-agent's kernel sandbox, which "
                    f"reads no files; kernels can import the modules real kernel files use "
                    f"(os, sys, argparse, unittest, importlib, logging, inspect, json, ...)") from None
    return _original_import(name, globals, locals, fromlist, level)


def preload():
    """Imports PRELOADED (in the zygote, before any request); a module that is missing here is
    simply not preloaded."""
    for name in PRELOADED:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a module this machine lacks stays unavailable
            pass


def install():
    builtins.__import__ = guarded_import
