"""Import policy for kernel code.

Kernel modules get a guarded ``__import__``: a top-level name that is neither on the allow-list, nor
one of the kernel's own modules, nor a framework stand-in raises ImportError with the code
``nkia_forbidden_import``. This is a policy layer that makes the rules visible to kernel authors;
the containment itself is the sandbox's (seccomp, rlimits), which holds even if Python-level
tricks get around this hook.
"""
import builtins
import sys
import types

KERNEL_PACKAGE = "_nkia_kernel"

# Modules a kernel may import (top-level names). Each is pure computation: none opens files,
# sockets or processes on import or through its ordinary API.
ALLOWED = frozenset({
    "nki", "neuronxcc", "numpy",
    "math", "cmath", "functools", "itertools", "collections", "dataclasses", "typing",
    "typing_extensions", "enum", "numbers", "operator", "copy", "abc", "contextlib", "string",
    "re", "textwrap", "warnings", "__future__", "types", "random", "decimal", "fractions",
    "heapq", "bisect", "statistics", "struct", "array", "time", "logging",
    "_nkia",
})

# Frameworks that kernel files import for their test drivers: importing works, using fails.
STAND_INS = frozenset({"torch", "torch_xla", "torch_neuronx", "jax", "jax_neuronx", "jaxlib", "neuronx_distributed"})

# Top-level names of the kernel's own modules (set by the loader).
LOCAL_TOPS = frozenset()

_original_import = builtins.__import__


class ForbiddenImport(ImportError):
    code = "nkia_forbidden_import"


class _StandIn(types.ModuleType):
    """A module that can be imported and attribute-walked, but fails when anything is called."""

    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []  # a package, so "from torch.nn import functional" works

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _StandInValue(f"{self.__name__}.{attr}")


class _StandInValue:
    def __init__(self, path):
        self._path = path

    def __getattr__(self, attr):
        return _StandInValue(f"{self._path}.{attr}")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"{self._path}() is not available: nki-agent runs kernels without "
            f"{self._path.split('.')[0]}; only the kernel functions themselves can run here")

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


def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if globals is None:  # a bare __import__("x") call: judge by the caller's module
        globals = sys._getframe(1).f_globals
    if level == 0 and _importer_is_kernel(globals):
        top = name.partition(".")[0]
        if top in STAND_INS:
            mod = stand_in(name)
            for f in fromlist or ():
                if not hasattr(mod, f) or isinstance(getattr(mod, f, None), _StandInValue):
                    stand_in(f"{name}.{f}")
            return mod if fromlist else stand_in(top)
        if top not in ALLOWED and top not in LOCAL_TOPS:
            raise ForbiddenImport(
                f"kernels may not import '{name}': only nki, neuronxcc, numpy, the kernel's own "
                f"modules and pure-computation standard modules are available")
    return _original_import(name, globals, locals, fromlist, level)


def install():
    builtins.__import__ = guarded_import
