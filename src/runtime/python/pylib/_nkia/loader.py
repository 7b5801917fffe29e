"""Loads a kernel's source files from memory as the package ``_nkia_kernel``.

A kernel comes as {relative path: source}. Each path maps to a module under ``_nkia_kernel``
("ops/add.py" -> "_nkia_kernel.ops.add", "ops/__init__.py" -> the package "_nkia_kernel.ops");
folders without an __init__.py become empty packages, so relative imports across the tree work.
Top-level names of the tree can also be imported absolutely ("import helpers" beside the kernel,
or "from nkilib.core import x" when the tree is rooted above nkilib/): they resolve to the same
module objects. Code objects carry the relative path as their file name, so tracebacks point into
the kernel's own files. Nothing is read from disk.
"""
import importlib
import importlib.abc
import importlib.util
import sys

from _nkia import policy

PKG = policy.KERNEL_PACKAGE


def module_name_of(path):
    """'a/b/c.py' -> 'a.b.c'; 'a/b/__init__.py' -> 'a.b'; '__init__.py' -> ''."""
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


class KernelFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, files):
        self.sources = {}   # relative module name -> (path, source)
        self.packages = {""}  # relative names that are packages ("" is the root)
        for path, src in files.items():
            if not path.endswith(".py"):
                continue
            rel = module_name_of(path)
            self.sources[rel] = (path, src)
            if path.endswith("__init__.py"):
                self.packages.add(rel)
            parts = rel.split(".")
            for i in range(1, len(parts)):
                self.packages.add(".".join(parts[:i]))
        self.tops = {r.split(".")[0] for r in list(self.sources) + list(self.packages) if r}
        self.loaded = set()  # names this finder put in sys.modules, for uninstall()

    # -- finder --
    def find_spec(self, fullname, path=None, target=None):
        spec = self._find_spec(fullname)
        if spec is not None:
            self.loaded.add(fullname)
        return spec

    def _find_spec(self, fullname):
        if fullname == PKG or fullname.startswith(PKG + "."):
            rel = fullname[len(PKG) + 1:]
            if rel in self.sources or rel in self.packages:
                is_pkg = rel in self.packages
                spec = importlib.util.spec_from_loader(fullname, self, is_package=is_pkg)
                if rel in self.sources:
                    spec.origin = self.sources[rel][0]
                    spec.has_location = True
                return spec
            return None
        if fullname.split(".")[0] in self.tops:
            # An absolute import of one of the kernel's own modules: alias the canonical module.
            rel = fullname
            if rel in self.sources or rel in self.packages:
                return importlib.util.spec_from_loader(fullname, _AliasLoader(PKG + "." + rel),
                                                       is_package=rel in self.packages)
        return None

    # -- loader --
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        rel = module.__name__[len(PKG) + 1:]
        if module.__name__ == PKG or rel not in self.sources:
            return  # a folder without __init__.py: an empty package
        path, src = self.sources[rel]
        module.__file__ = path
        code = compile(src, path, "exec", dont_inherit=True)
        exec(code, module.__dict__)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, canonical):
        self.canonical = canonical

    def create_module(self, spec):
        return importlib.import_module(self.canonical)

    def exec_module(self, module):
        pass


_active = None


def install(files):
    """Makes `files` the kernel package, replacing any previous one."""
    global _active
    uninstall()
    _active = KernelFinder(files)
    sys.meta_path.insert(0, _active)
    policy.LOCAL_TOPS = frozenset(_active.tops)
    return _active


def uninstall():
    global _active
    if _active is not None:
        sys.meta_path.remove(_active)
        # Only the names this finder served: scanning all of sys.modules would touch (and, in a
        # forked child, copy) memory shared with the zygote for nothing.
        for name in _active.loaded:
            sys.modules.pop(name, None)
        _active = None
    policy.LOCAL_TOPS = frozenset()


def load_module(main_path):
    rel = module_name_of(main_path)
    return importlib.import_module(PKG + "." + rel if rel else PKG)
