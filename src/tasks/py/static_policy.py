"""nki-agent's static policy for candidate kernels: rules over the Python syntax tree.

Run by src/tasks/static_policy.cpp as `/usr/bin/python3.11 -I -c <this file>` under rlimits and a
deadline. It only parses (ast.parse) the candidate's files, never runs them. Request on stdin:
  {"files": {relpath: source}, "local_modules": [...], "forbidden_dtypes": [...],
   "allowed_imports": [...], "frameworks": [...]}
Answer on stdout: {"violations": [{"rule", "message", "file", "line", "col", "hint"}]}.

Rules (docs/tasks.md has the reasons):
  syntax               the file does not parse
  reference_framework  torch / jax / ... imported: kernels compute with NKI, PyTorch is the reference
  reference_access     the task's reference reached for: `import task`, Model / get_inputs used
                       without being defined, a path to task.py or the reference cache
  system_access        os, sys, subprocess, pathlib, io, socket, ctypes, ... imported; open(),
                       exec(), eval(), __import__(), np.load and friends called
  introspection        attributes that lead out of the sandbox's Python (__globals__, __subclasses__,
                       __builtins__, frame and code objects, ...)
  host_math            NumPy called inside a function on values that may be tensors (np.matmul(x, w),
                       np.asarray(tile), ...: a parameter, a name assigned from one or from an nki
                       call, other than through .shape/.dtype/len()), or a tensor read back to the
                       host (.numpy(), .tolist(), .item()). np.sqrt(head_dim) and op codes such as
                       op0=np.multiply are fine
  precision_drop       a narrower float type than the task allows (bfloat16 in a float32 task)
Code under `if __name__ == "__main__":` never runs in a kernel call and is skipped.
"""
import ast
import json
import sys

# NumPy names a kernel may use inside functions: types, and integer helpers for shapes.
NUMPY_OK = frozenset({
    "float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "bool_", "dtype", "prod", "ceil", "floor", "iinfo", "finfo", "newaxis", "ndarray",
    "integer", "floating", "number", "generic", "int_", "float_", "intp", "pi", "e", "inf", "isscalar",
    "result_type", "promote_types",
})
# NumPy calls that touch files, anywhere in the file.
NUMPY_FILES = frozenset({"load", "save", "savez", "savez_compressed", "fromfile", "tofile", "loadtxt",
                         "savetxt", "genfromtxt", "memmap", "fromregex", "DataSource"})
DANGEROUS_CALLS = {
    "open": "opens a file", "exec": "runs code from a string", "eval": "runs code from a string",
    "compile": "compiles code from a string", "__import__": "imports a module by name",
    "globals": "reads the module's globals", "locals": "reads a frame's locals",
    "vars": "reads an object's namespace", "breakpoint": "starts a debugger", "input": "reads stdin",
}
DUNDER_ESCAPES = frozenset({
    "__class__", "__bases__", "__base__", "__mro__", "__subclasses__", "__globals__", "__builtins__",
    "__code__", "__closure__", "__dict__", "__getattribute__", "__reduce__", "__reduce_ex__",
    "__loader__", "__spec__", "__import__", "__file__", "__self__", "__func__", "__defaults__",
    "__kwdefaults__", "__subclasshook__", "__init_subclass__", "f_globals", "f_locals", "f_back",
    "f_builtins", "gi_frame", "cr_frame", "tb_frame", "co_code", "func_globals",
})
# Modules reached as attributes of allowed ones (logging.os, re.sys, ...).
SYSTEM_ATTRS = frozenset({"os", "sys", "subprocess", "builtins", "importlib", "socket", "shutil", "pathlib",
                          "ctypes", "posix", "io", "CodeType", "FunctionType"})
DUNDER_NAMES = frozenset({"__builtins__", "__file__", "__loader__", "__spec__", "__import__"})
REFERENCE_NAMES = frozenset({"Model", "ModelNew", "get_inputs", "get_init_inputs"})
REFERENCE_MODULES = frozenset({"task", "reference", "nkia_task_reference"})
REFERENCE_STRINGS = ("task.py", "task.toml", "nki-agent/references", "baseline.py")
HOST_READS = frozenset({"numpy", "tolist", "item"})


def _is_main_guard(node):
    if not isinstance(node, ast.If):
        return False
    t = node.test
    return (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"
            and len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Constant)
            and t.comparators[0].value == "__main__")


class Checker(ast.NodeVisitor):
    def __init__(self, path, req, defined):
        self.path = path
        self.violations = []
        self.local = set(req.get("local_modules", []))
        self.allowed = set(req.get("allowed_imports", []))
        self.frameworks = set(req.get("frameworks", []))
        self.forbidden_dtypes = set(req.get("forbidden_dtypes", []))
        self.defined = defined
        self.numpy_aliases = set()
        self.numpy_names = {}        # names imported from numpy -> their numpy name
        self.device_aliases = set()  # nki / neuronxcc modules and names, as imported
        self.depth = 0               # function nesting
        self.tainted = [set()]       # per function: names that may hold tensors

    def add(self, rule, node, message, hint):
        self.violations.append({"rule": rule, "message": message, "file": self.path,
                                "line": getattr(node, "lineno", 0), "col": getattr(node, "col_offset", -1) + 1,
                                "hint": hint})

    # -- structure -----------------------------------------------------------------------------
    def visit_Module(self, node):
        for stmt in node.body:
            if _is_main_guard(stmt):
                for s in stmt.orelse:
                    self.visit(s)
                continue
            self.visit(stmt)

    def _function(self, node):
        self.depth += 1
        args = node.args
        names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        self.tainted.append(set(self.tainted[-1]) | names)
        self.generic_visit(node)
        self.tainted.pop()
        self.depth -= 1

    # -- which values may be tensors -------------------------------------------------------------
    def _tensorish(self, expr):
        """Whether expr may carry tensor data: it mentions a function parameter or a name assigned
        from one, or calls nki, other than through .shape / .dtype / .ndim / len()."""
        if isinstance(expr, ast.Attribute) and expr.attr in ("shape", "dtype", "ndim", "size", "itemsize"):
            return False
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "len":
            return False
        if isinstance(expr, ast.Name):
            return expr.id in self.tainted[-1]
        if isinstance(expr, ast.Call) and self._device_call(expr.func):
            return True
        return any(self._tensorish(c) for c in ast.iter_child_nodes(expr))

    def _device_call(self, func):
        while isinstance(func, ast.Attribute):
            func = func.value
        return isinstance(func, ast.Name) and func.id in self.device_aliases

    def visit_Assign(self, node):
        if self.depth > 0 and self._tensorish(node.value):
            for t in node.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        self.tainted[-1].add(n.id)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if self.depth > 0 and self._tensorish(node.value) and isinstance(node.target, ast.Name):
            self.tainted[-1].add(node.target.id)
        self.generic_visit(node)

    def visit_For(self, node):
        if self.depth > 0 and self._tensorish(node.iter):
            for n in ast.walk(node.target):
                if isinstance(n, ast.Name):
                    self.tainted[-1].add(n.id)
        self.generic_visit(node)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    # -- imports -------------------------------------------------------------------------------
    def _check_module(self, node, name):
        top = name.split(".")[0]
        if top in self.local:
            return
        if top in self.frameworks:
            self.add("reference_framework", node, f"imports {name}: the kernel must compute with NKI on the "
                     "NeuronCore; PyTorch/JAX are the reference, not part of a kernel",
                     f"remove the import of {top} and write the computation with nki.language / nki.isa")
        elif top == "_nkia":
            self.add("introspection", node, f"imports {name}, nki-agent's own runtime internals",
                     "use the public nki / neuronxcc.nki modules")
        elif top in REFERENCE_MODULES:
            self.add("reference_access", node, f"imports {name}: a kernel may not use the task's reference",
                     "compute the result in the kernel from its arguments")
        elif top not in self.allowed:
            self.add("system_access", node, f"imports {name}: kernels may import only nki / neuronxcc, NumPy "
                     "(for dtypes and shapes) and pure-computation standard modules",
                     f"remove the import of {top}")

    def visit_Import(self, node):
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.name == "numpy" or alias.name.startswith("numpy."):
                self.numpy_aliases.add(alias.asname or "numpy")
            if alias.name.split(".")[0] in ("nki", "neuronxcc"):
                self.device_aliases.add(alias.asname or alias.name.split(".")[0])
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.level == 0 and node.module:
            self._check_module(node, node.module)
            if node.module.split(".")[0] == "numpy":
                for alias in node.names:
                    self._numpy_name(node, alias.name)
                    self.numpy_names[alias.asname or alias.name] = alias.name
            elif node.module.split(".")[0] in ("nki", "neuronxcc"):
                for alias in node.names:
                    self.device_aliases.add(alias.asname or alias.name)
        self.generic_visit(node)

    # -- names, attributes, calls --------------------------------------------------------------
    def _numpy_name(self, node, attr):
        """A NumPy name referenced (not necessarily called): files and narrow dtypes. Passing
        np.multiply as an ISA op code is fine; calling NumPy on tensors is judged in visit_Call."""
        if attr in NUMPY_FILES:
            self.add("system_access", node, f"numpy.{attr} reads or writes files",
                     "kernels get their data only through their arguments")
        elif attr.lower() in self.forbidden_dtypes:
            self._dtype(node, attr)

    def _dtype(self, node, name):
        self.add("precision_drop", node, f"uses {name}, a narrower float type than this task allows",
                 "keep the task's precision: compute and store in the dtypes of the task's arguments "
                 "and outputs")

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.numpy_aliases:
            self._numpy_name(node, node.attr)
        elif node.attr.lower() in self.forbidden_dtypes:
            self._dtype(node, node.attr)
        if node.attr in SYSTEM_ATTRS and isinstance(node.value, ast.Name) \
                and node.value.id not in self.numpy_aliases:
            self.add("system_access", node, f"reaches .{node.attr} through {node.value.id}",
                     "kernels need no system modules; remove it")
        if node.attr in DUNDER_ESCAPES:
            self.add("introspection", node, f"accesses .{node.attr}, which can lead out of the sandbox's "
                     "Python", "kernels need no introspection; remove it")
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in DUNDER_NAMES:
            self.add("introspection", node, f"uses {node.id}", "kernels need no introspection; remove it")
        elif isinstance(node.ctx, ast.Load) and node.id in REFERENCE_NAMES and node.id not in self.defined:
            self.add("reference_access", node, f"uses {node.id}, which belongs to the task's reference",
                     "compute the result in the kernel from its arguments")
        elif node.id.lower() in self.forbidden_dtypes:
            self._dtype(node, node.id)

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring or a bare string: it does nothing
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            v = node.value
            if v in DUNDER_ESCAPES or v in DUNDER_NAMES:
                self.add("introspection", node, f"names {v!r}, which can lead out of the sandbox's Python",
                         "kernels need no introspection; remove it")
            if v.lower() in self.forbidden_dtypes:
                self._dtype(node, repr(v))
            for s in REFERENCE_STRINGS:
                if s in v:
                    self.add("reference_access", node, f"names {s!r}: kernels may not read the task's files",
                             "compute the result in the kernel from its arguments")
                    break

    def visit_Call(self, node):
        f = node.func
        numpy_fn = None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in self.numpy_aliases:
            numpy_fn = f.attr
        elif isinstance(f, ast.Name) and f.id in self.numpy_names:
            numpy_fn = self.numpy_names[f.id]
        if (numpy_fn and self.depth > 0 and numpy_fn not in NUMPY_OK
                and any(self._tensorish(a) for a in list(node.args) + [k.value for k in node.keywords])):
            self.add("host_math", node, f"numpy.{numpy_fn} computes on the host, on kernel tensors, not on "
                     "the NeuronCore", "use nki.language / nki.isa for the computation; NumPy is for dtypes, "
                     "op codes and shape arithmetic only")
        if isinstance(f, ast.Name) and f.id in DANGEROUS_CALLS and f.id not in self.defined:
            rule = "system_access" if f.id in ("open", "input", "breakpoint") else "introspection"
            self.add(rule, node, f"calls {f.id}(), which {DANGEROUS_CALLS[f.id]}",
                     "kernels get their data only through their arguments and run only their own code")
        if isinstance(f, ast.Attribute) and f.attr in HOST_READS and self.depth > 0 and not node.args:
            if not (isinstance(f.value, ast.Name) and f.value.id in self.numpy_aliases):
                self.add("host_math", node, f".{f.attr}() reads a tensor's values back to the host",
                         "compute with nki.language / nki.isa; values stay on the device")
        self.generic_visit(node)


def _defined_names(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def _module_name(path):
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _reachable(files, main):
    """The files `main` can reach by import (over-approximated: a name matches any local module
    it could resolve to, from any package root)."""
    modules = {_module_name(p): p for p in files}
    seen, todo = set(), [main]
    while todo:
        path = todo.pop()
        if path in seen or path not in files:
            continue
        seen.add(path)
        try:
            tree = ast.parse(files[path])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        here = _module_name(path).split(".")
        package = here if path.endswith("__init__.py") else here[:-1]
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                names = [prefix] + [f"{prefix}.{a.name}" if prefix else a.name for a in node.names]
            for name in names:
                for mod, p in modules.items():
                    # the module itself, or a package __init__ on the way to it
                    if mod == name or mod.endswith("." + name) or name.startswith(mod + "."):
                        todo.append(p)
    return seen


def main():
    req = json.loads(sys.stdin.read())
    violations = []
    trees = {}
    files = req["files"]
    main_path = req.get("main")
    if main_path in files:
        files = {p: files[p] for p in _reachable(files, main_path)}
    for path, source in sorted(files.items()):
        try:
            trees[path] = ast.parse(source, filename=path)
        except SyntaxError as e:
            violations.append({"rule": "syntax", "message": f"{e.msg}", "file": path, "line": e.lineno or 0,
                               "col": e.offset or 0, "hint": "fix the syntax error"})
        except (ValueError, RecursionError, MemoryError) as e:
            violations.append({"rule": "syntax", "message": f"cannot parse: {type(e).__name__}: {e}",
                               "file": path, "line": 0, "col": 0, "hint": "simplify the file"})
    defined = set()
    for tree in trees.values():
        defined |= _defined_names(tree)
    for path, tree in trees.items():
        c = Checker(path, req, defined)
        try:
            c.visit(tree)
        except RecursionError:
            c.violations.append({"rule": "syntax", "message": "nesting too deep to check", "file": path,
                                 "line": 0, "col": 0, "hint": "simplify the file"})
        violations.extend(c.violations)
    sys.stdout.write(json.dumps({"violations": violations}))


main()
