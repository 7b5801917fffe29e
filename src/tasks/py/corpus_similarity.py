"""nki-agent corpus: op graphs, vocabulary check and similarity of task.py sources (AST only).

Run by src/corpus/decontam.cpp as `/usr/bin/python3.11 -I -c <this file>` under rlimits and a
deadline. It only parses (ast.parse) the sources, never runs them. Request on stdin:
  {"vocabulary": [template, ...], "references": {id: task_py}, "candidates": {id: task_py}}
Answer on stdout:
  {"references": {id: {"op_graph", "parsed"}},
   "candidates": {id: {"op_graph", "parsed", "unknown_calls", "nearest", "score", "graph_match"}}}

The op graph is a conservative reading of Model.forward: each returned value as a term over call
names (the last part of a dotted name: torch.relu, F.relu and x.relu() are all `relu`; a module
attribute is read through its nn class in __init__: self.f = nn.Linear(...) makes self.f(x) a
`linear`), tensor operands only (weights, constants and shapes are dropped), dtype casts
(.float(), .to(), .contiguous()) read through, the operands of commutative operators sorted.
A forward this reading cannot follow (loops, branches) is `parsed: false` and matches nothing by
graph; its similarity is still scored. The similarity of two sources is the multiset Jaccard index
of their op tokens: each call or operator name, and each (parent > child) pair of nested ones.
"""
import ast
import json
import re
import sys

IDENTITY = {"float", "half", "bfloat16", "to", "contiguous", "clone", "detach", "type_as", "values"}
NN_ALIASES = {
    "batchnorm1d": "batch_norm", "batchnorm2d": "batch_norm", "batchnorm3d": "batch_norm",
    "layernorm": "layer_norm", "groupnorm": "group_norm", "instancenorm2d": "instance_norm",
    "instancenorm1d": "instance_norm", "maxpool2d": "max_pool2d", "avgpool2d": "avg_pool2d",
    "maxpool1d": "max_pool1d", "avgpool1d": "avg_pool1d", "adaptiveavgpool2d": "adaptive_avg_pool2d",
    "adaptivemaxpool2d": "adaptive_max_pool2d", "leakyrelu": "leaky_relu", "logsoftmax": "log_softmax",
    "pixelshuffle": "pixel_shuffle", "convtranspose2d": "conv_transpose2d", "dropout": None,
}
CALL_ALIASES = {"mm": "matmul", "bmm": "matmul", "einsum": "matmul", "__matmul__": "matmul", "relu_": "relu",
                "sub": "sub", "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
                "max_pool2d_with_indices": "max_pool2d"}
COMMUTATIVE = {"add", "mul", "maximum", "minimum", "hypot", "logaddexp"}
BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.MatMult: "matmul",
          ast.Pow: "pow", ast.FloorDiv: "floordiv", ast.Mod: "mod"}
CMPOPS = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}


class Unparsed(Exception):
    pass


def call_name(func):
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def module_table(cls):
    """self.NAME -> op name for `self.NAME = nn.Class(...)` in __init__ (None: an identity)."""
    table = {}
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    t = node.targets[0]
                    v = node.value
                    # nn.X(...).half() / .to(...)
                    while isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in IDENTITY:
                        v = v.func.value
                    if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                            and isinstance(v, ast.Call)):
                        name = call_name(v.func)
                        if name and name[:1].isupper():
                            low = name.lower()
                            table[t.attr] = NN_ALIASES.get(low, low)
    return table


class Reader:
    def __init__(self, modules, args):
        self.modules = modules
        self.env = {a: "in" for a in args}
        self.tokens = []

    def term(self, node, parent=None):
        """The op term of an expression, or None when it is not a tensor computed from the inputs."""
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.Constant):
            return None
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return None  # a weight or a module
            if node.attr in ("shape", "dtype", "device", "ndim"):
                return None
            inner = self.term(node.value, parent)
            if node.attr in ("T", "mT"):
                return self.op("transpose", [inner], parent)
            return inner
        if isinstance(node, (ast.Tuple, ast.List)):
            parts = [self.term(e, parent) for e in node.elts]
            parts = [p for p in parts if p is not None]
            return ("tuple", parts) if parts else None
        if isinstance(node, ast.Starred):
            return self.term(node.value, parent)
        if isinstance(node, ast.BinOp):
            name = BINOPS.get(type(node.op), "binop")
            return self.op(name, [self.term(node.left, name), self.term(node.right, name)], parent)
        if isinstance(node, ast.UnaryOp):
            inner = self.term(node.operand, parent)
            return self.op("neg", [inner], parent) if isinstance(node.op, ast.USub) and inner else inner
        if isinstance(node, ast.Compare):
            name = CMPOPS.get(type(node.ops[0]), "cmp")
            return self.op(name, [self.term(node.left, name)] + [self.term(c, name) for c in node.comparators], parent)
        if isinstance(node, ast.Subscript):
            inner = self.term(node.value, "slice")
            return self.op("slice", [inner], parent) if inner else None
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) \
                    and isinstance(func.value.value, ast.Name) and func.value.value.id == "self" \
                    and func.attr in ("weight", "bias"):
                return None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                name = self.modules.get(func.attr, func.attr)
                if name is None:  # an identity module (dropout in eval mode)
                    return self.term(node.args[0], parent) if node.args else None
            else:
                name = call_name(func)
                if name is None:
                    raise Unparsed("a call of a computed function")
                name = CALL_ALIASES.get(name, name)
                if name in IDENTITY and isinstance(func, ast.Attribute):
                    return self.term(func.value, parent)
            kids = []
            if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name)
                                                        and func.value.id in ("torch", "F", "nn", "self", "math")):
                kids.append(self.term(func.value, name))  # a method: the receiver is an operand
            kids += [self.term(a, name) for a in node.args]
            kids += [self.term(k.value, name) for k in node.keywords]
            return self.op(name, kids, parent)
        if isinstance(node, ast.IfExp):
            raise Unparsed("a conditional expression")
        return None

    def op(self, name, kids, parent):
        flat = []
        for k in kids:
            if k is None:
                continue
            if isinstance(k, tuple):
                flat.extend(k[1])
            else:
                flat.append(k)
        self.tokens.append(name)
        if parent:
            self.tokens.append(parent + ">" + name)
        if name in COMMUTATIVE:
            flat.sort()
        return name + "(" + ",".join(flat) + ")"

    def forward(self, fn):
        outs = []
        for st in fn.body:
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                continue
            if isinstance(st, ast.Assign):
                value = self.term(st.value)
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        self.env[t.id] = value
                    elif isinstance(t, ast.Tuple):
                        for e in t.elts:
                            if isinstance(e, ast.Name):
                                self.env[e.id] = value
                    else:
                        raise Unparsed("an assignment to a subscript or attribute")
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
                name = BINOPS.get(type(st.op), "binop")
                self.env[st.target.id] = self.op(name, [self.env.get(st.target.id), self.term(st.value, name)], None)
            elif isinstance(st, ast.Return):
                value = self.term(st.value) if st.value is not None else None
                if isinstance(value, tuple):
                    outs.extend(value[1])
                elif value is not None:
                    outs.append(value)
            else:
                raise Unparsed("a " + type(st).__name__ + " statement")
        return ";".join(sorted(outs))


def read(source):
    """(op_graph or "", parsed, tokens, call names)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "", False, [], set()
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    if cls is None:
        return "", False, [], set()
    fwd = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if fwd is None:
        return "", False, [], set()
    calls = set()
    for node in ast.walk(fwd):
        if isinstance(node, ast.Call):
            name = call_name(node.func)
            if name and not (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                             and node.func.value.id == "self"):
                calls.add(name)
    reader = Reader(module_table(cls), [a.arg for a in fwd.args.args[1:]])
    try:
        graph = reader.forward(fwd)
        return graph, True, reader.tokens, calls
    except (Unparsed, RecursionError):
        return "", False, reader.tokens, calls


def vocabulary_calls(templates):
    calls = set(IDENTITY)
    for t in templates:
        src = re.sub(r"\{m\}", "self.m0", t)
        src = re.sub(r"\{P\}", "", src)
        src = re.sub(r"\{(\w+)\}", "x", src)
        try:
            tree = ast.parse(src, mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = call_name(node.func)
                if name:
                    calls.add(name)
    return calls


def multiset(tokens):
    m = {}
    for t in tokens:
        m[t] = m.get(t, 0) + 1
    return m


def jaccard(a, b):
    keys = set(a) | set(b)
    hi = sum(max(a.get(k, 0), b.get(k, 0)) for k in keys)
    lo = sum(min(a.get(k, 0), b.get(k, 0)) for k in keys)
    return lo / hi if hi else 0.0


def main():
    req = json.loads(sys.stdin.read())
    allowed = vocabulary_calls(req.get("vocabulary", []))
    refs = {}
    ref_graphs = {}
    for rid in sorted(req.get("references", {})):
        graph, parsed, tokens, _ = read(req["references"][rid])
        refs[rid] = {"op_graph": graph, "parsed": parsed, "tokens": multiset(tokens)}
        if parsed and graph:
            ref_graphs.setdefault(graph, rid)
    out_cands = {}
    for cid in sorted(req.get("candidates", {})):
        graph, parsed, tokens, calls = read(req["candidates"][cid])
        toks = multiset(tokens)
        best, score = "", 0.0
        for rid, r in refs.items():
            s = jaccard(toks, r["tokens"])
            if s > score:
                best, score = rid, s
        out_cands[cid] = {"op_graph": graph, "parsed": parsed, "unknown_calls": sorted(calls - allowed),
                          "nearest": best, "score": round(score, 4),
                          "graph_match": ref_graphs.get(graph, "") if parsed and graph else ""}
    answer = {"references": {rid: {"op_graph": r["op_graph"], "parsed": r["parsed"]} for rid, r in refs.items()},
              "candidates": out_cands}
    sys.stdout.write(json.dumps(answer, sort_keys=True))


if __name__ == "__main__":
    main()
