"""Loads a kernel's source files from memory as the package ``_nkia_kernel``.

A kernel comes as {relative path: source}. Each path maps to a module under ``_nkia_kernel``
("ops/add.py" -> "_nkia_kernel.ops.add", "ops/__init__.py" -> the package "_nkia_kernel.ops");
folders without an __init__.py become empty packages, so relative imports across the tree work.
Top-level names of the tree can also be imported absolutely ("import helpers" beside the kernel,
or "from nkilib.core import x" when the tree is rooted above nkilib/): they resolve to the same
module objects. Code objects carry the relative path as their file name, so tracebacks point into
the kernel's own files. Nothing is read from disk.

Local tensor annotations become checks: in a function body, ``t: nt.tensor[128, 512] = expr`` is
compiled as ``t: nt.tensor[128, 512] = <check>(expr, lambda: nt.tensor[128, 512], "t")``, which
compares the value's shape with the annotated one when the line runs (Python never evaluates the
annotations of local variables; see _nkia.typing.check_annotation). Line numbers stay the same.
"""
import ast
import copy
import importlib
import importlib.abc
import importlib.util
import sys

from _nkia import policy
from _nkia import typing as nki_typing

PKG = policy.KERNEL_PACKAGE
CHECK_NAME = "__nkia_check_annotation__"  # the check's name in the kernel module's globals


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
        module.__dict__[CHECK_NAME] = nki_typing.check_annotation
        exec(compile_kernel_source(src, path), module.__dict__)


def _looks_like_tensor_annotation(node):
    """``nt.tensor[...]``, ``nki.typing.tensor[...]`` or ``tensor[...]``: the only annotations worth
    checking (anything else stays inert without being evaluated)."""
    if not isinstance(node, ast.Subscript):
        return False
    base = node.value
    return (isinstance(base, ast.Name) and base.id == "tensor") or \
        (isinstance(base, ast.Attribute) and base.attr == "tensor")


class _AnnotationChecks(ast.NodeTransformer):
    """Wraps the value of each annotated assignment in a function body whose annotation looks like
    nt.tensor[...] in the shape check."""

    def __init__(self):
        self.depth = 0  # function nesting
        self.changed = False

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_AnnAssign(self, node):
        if self.depth == 0 or node.value is None or not _looks_like_tensor_annotation(node.annotation):
            return node
        target = ast.unparse(node.target)
        lazy = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                          body=copy.deepcopy(node.annotation))
        call = ast.Call(func=ast.Name(id=CHECK_NAME, ctx=ast.Load()),
                        args=[node.value, lazy, ast.Constant(value=target)], keywords=[])
        node.value = ast.copy_location(call, node.value)
        ast.fix_missing_locations(node)
        self.changed = True
        return node


class _MaskConjunctions(ast.NodeTransformer):
    """``mask=(ix < n and iy < m)``: NKI's front end reads `and` between the predicates of a mask=
    argument as their conjunction (the SDK's own nc_match_replace8 example writes it so), where Python
    would ask each predicate for one truth value. The `and` of a mask= keyword becomes the same
    operands joined by &, the one combination a mask has; `or` keeps Python's meaning (and a
    predicate's refusal to be a truth value)."""

    def __init__(self):
        self.changed = False

    def visit_Call(self, node):
        self.generic_visit(node)
        for kw in node.keywords:
            if kw.arg == "mask" and isinstance(kw.value, ast.BoolOp) and isinstance(kw.value.op, ast.And):
                out = kw.value.values[0]
                for v in kw.value.values[1:]:
                    out = ast.copy_location(ast.BinOp(left=out, op=ast.BitAnd(), right=v), kw.value)
                kw.value = out
                self.changed = True
        return node


# Code objects compiled in this process, by (path, source): a process that runs one kernel on
# several sets of inputs (each run loading the kernel's modules afresh) compiles each file once.
_compiled = {}
_MAX_COMPILED = 64


def compile_kernel_source(src, path):
    """The code object of a kernel source file, with its local nt.tensor annotations checked and
    the `and` of its mask= predicates joined as NKI joins them."""
    key = (path, src)
    code = _compiled.get(key)
    if code is None:
        code = _compile(src, path)
        if len(_compiled) >= _MAX_COMPILED:
            _compiled.clear()
        _compiled[key] = code
    return code


def _compile(src, path):
    wants = [cls for cls, marker in ((_AnnotationChecks, "tensor["), (_MaskConjunctions, "mask")) if marker in src]
    if wants:
        try:
            tree = ast.parse(src, path)
        except SyntaxError:
            tree = None  # compile() below reports it as Python would
        if tree is not None:
            changed = False
            for cls in wants:
                t = cls()
                tree = t.visit(tree)
                changed = changed or t.changed
            if changed:
                ast.fix_missing_locations(tree)
                return compile(tree, path, "exec", dont_inherit=True)
    return compile(src, path, "exec", dont_inherit=True)


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
