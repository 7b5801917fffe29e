"""nki-agent's reference worker: runs a task's PyTorch reference (task.py) for the verifier.

Started by src/tasks/reference.cpp as `/usr/bin/python3.11 -I -c <this file>` with rlimits and a
deadline, never inside nki-agent itself. It speaks one JSON object per line: requests on stdin,
answers on the file descriptor that was stdout when it started (the task's own prints go to
stderr, so they cannot corrupt the protocol). Arrays travel as .npy files in folders the host
names. Every answer is {"ok": true, ...} or {"ok": false, "error": text, "traceback": text}.

Requests:
  {"op": "load", "source": TEXT, "path": PATH, "threads": N}
      imports torch, makes it deterministic (manual seeds, deterministic algorithms, N threads),
      and runs task.py's text (the very text nki-agent hashed for the cache) as a module. Answer: {"torch": version}.
  {"op": "params", "seed": S, "params": [{"name", "dtype", "dist", "low", "high"}], "out_dir": D}
      builds Model(*get_init_inputs()) after torch.manual_seed(S), finds each declared parameter by
      its state_dict name (dots become underscores), re-draws constant-initialised ones (LayerNorm's
      ones and zeros, a zero bias) so that a kernel ignoring them fails, rounds each into its
      declared dtype, and writes D/<name>.npy (float32 values for bf16). Answer: per parameter its
      state_dict name, shape, and whether it was re-drawn; "seconds": building the model and drawing
      its parameters (not writing them).
  {"op": "forward", "seed": S, "params_dir": D, "inputs": [{"name", "dtype", "path"}], "out_dir": O}
      the same model with the parameters of D loaded, in eval mode, under torch.no_grad(), on the
      inputs; writes O/out0.npy, O/out1.npy, ... (bf16 as float32 values, int64 as int64).
      Answer: per output its dtype and shape, and "seconds": the time of the forward alone (the
      model's call, not reading inputs or writing outputs). Matmul-like ops on float16 / bfloat16 operands are
      computed in float32 from the same values and rounded back once, as the hardware accumulates
      (PyTorch's CPU kernels for them differ between machines), and so is any op PyTorch's CPU
      kernels lack for those types.
  {"op": "inspect", "seed": S}
      what the task file itself says: get_inputs() (dtype, shape) and the state_dict (name, shape,
      dtype, is a Parameter), and the forward outputs on get_inputs(). For `nki-agent tasks check`.
"""
import json
import os
import sys
import time
import traceback

_proto = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

import numpy as np  # noqa: E402

torch = None
task = None


def _answer(obj):
    _proto.write(json.dumps(obj) + "\n")
    _proto.flush()


def _torch_dtype(name):
    table = {
        "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
        "int32": torch.int32, "int64": torch.int64, "int16": torch.int16, "int8": torch.int8,
        "uint8": torch.uint8, "bool": torch.bool, "float64": torch.float64,
    }
    if name not in table:
        raise ValueError(f"dtype {name!r} is not supported by the reference worker")
    return table[name]


def _dtype_name(dt):
    return str(dt).replace("torch.", "")


def _load(req):
    global torch, task
    import types
    import torch as _torch
    torch = _torch
    threads = int(req.get("threads", 1))
    torch.set_num_threads(max(1, threads))
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    module = types.ModuleType("nkia_task_reference")
    module.__file__ = req["path"]
    sys.modules["nkia_task_reference"] = module
    exec(compile(req["source"], req["path"], "exec"), module.__dict__)
    for fn in ("Model", "get_init_inputs"):
        if not hasattr(module, fn):
            raise AttributeError(f"task.py defines no {fn}")
    task = module
    return {"torch": torch.__version__}


def _model(seed):
    torch.manual_seed(seed)
    model = task.Model(*task.get_init_inputs())
    model.eval()
    return model


def _by_arg_name(model):
    """state_dict entries keyed by their kernel argument name (dots -> underscores)."""
    out = {}
    for key, value in model.state_dict(keep_vars=True).items():
        out[key.replace(".", "_")] = (key, value)
    return out


def _draw(shape, decl, gen):
    dist = decl.get("dist") or "normal"
    low, high = decl.get("low"), decl.get("high")
    if dist == "normal":
        return torch.randn(shape, generator=gen)
    if dist == "uniform":
        lo = 0.0 if low is None else float(low)
        hi = 1.0 if high is None else float(high)
        return torch.rand(shape, generator=gen) * (hi - lo) + lo
    if dist == "positive":
        return torch.randn(shape, generator=gen).abs() + 0.05
    if dist == "randint":
        return torch.randint(int(low or 0), int(high), shape, generator=gen)
    raise ValueError(f"unknown dist {dist!r}")


def _set_params(model, seed, decls):
    """Re-draws (explicit dist, or constant init) and rounds the declared parameters in place.
    Returns per parameter (state_dict key, tensor in its kernel dtype, redrawn)."""
    entries = _by_arg_name(model)
    gen = torch.Generator()
    gen.manual_seed(0x5EED0000 + seed)
    result = []
    with torch.no_grad():
        for decl in decls:
            name = decl["name"]
            if name not in entries:
                known = ", ".join(sorted(entries)) or "none"
                raise KeyError(f"parameter {name!r} is not in the model's state_dict "
                               f"(its entries, dots as underscores: {known})")
            key, t = entries[name]
            redrawn = False
            if decl.get("dist_explicit"):
                t.copy_(_draw(tuple(t.shape), decl, gen).to(t.dtype))
                redrawn = True
            elif t.is_floating_point() and t.numel() > 0:
                flat = t.detach().reshape(-1)
                if bool((flat == flat[0]).all()):
                    c = float(flat[0])
                    if c == 0.0:
                        fresh = torch.rand(tuple(t.shape), generator=gen) - 0.5
                    else:
                        fresh = c * (torch.rand(tuple(t.shape), generator=gen) + 0.5)
                    t.copy_(fresh.to(t.dtype))
                    redrawn = True
            kdt = _torch_dtype(decl["dtype"])
            if t.is_floating_point() and kdt.is_floating_point:
                t.copy_(t.to(kdt).to(t.dtype))  # the reference sees exactly the kernel's values
            result.append((key, t.detach().to(kdt), redrawn))
    return result


def _save(path, t):
    if t.dtype in (torch.bfloat16,):
        t = t.float()
    np.save(path, t.detach().cpu().contiguous().numpy())


def _params(req):
    t0 = time.perf_counter()
    model = _model(int(req["seed"]))
    drawn = _set_params(model, int(req["seed"]), req["params"])
    seconds = time.perf_counter() - t0
    info = []
    for decl, (key, t, redrawn) in zip(req["params"], drawn):
        _save(os.path.join(req["out_dir"], decl["name"] + ".npy"), t)
        info.append({"name": decl["name"], "state_dict": key, "shape": list(t.shape), "redrawn": redrawn})
    return {"params": info, "seconds": seconds}


def _load_array(path, dtype_name):
    arr = np.load(path, allow_pickle=False)
    t = torch.from_numpy(np.ascontiguousarray(arr))
    return t.to(_torch_dtype(dtype_name))


def _outputs(result):
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


_models = {}  # (seed, params_dir) -> the model with those parameters loaded


def _forward_model(req):
    seed = int(req["seed"])
    key = (seed, req.get("params_dir", ""))
    if key in _models:
        return _models[key]
    model = _model(seed)
    entries = _by_arg_name(model)
    with torch.no_grad():
        for p in req.get("params", []):
            _, t = entries[p["name"]]
            value = _load_array(os.path.join(req["params_dir"], p["name"] + ".npy"), p["dtype"])
            t.copy_(value.to(t.dtype).reshape(t.shape))
    _models.clear()
    _models[key] = model
    return model


def _narrow_dtype(model, inputs):
    """float16 or bfloat16 when the model or its inputs hold them, else None."""
    for t in list(inputs) + list(model.state_dict().values()):
        if isinstance(t, torch.Tensor) and t.dtype in (torch.float16, torch.bfloat16):
            return t.dtype
    return None


def _upcast_forward(model, inputs, narrow):
    """PyTorch's CPU kernels lack some float16/bfloat16 ops (matmul in torch 1.13). Compute in
    float32 from the same narrow values and round the float32 results back to the narrow type:
    what the hardware does (float32 accumulation, one rounding at the end)."""
    import copy
    wide = copy.deepcopy(model).float()
    args = [x.float() if isinstance(x, torch.Tensor) and x.dtype == narrow else x for x in inputs]
    outs = _outputs(wide(*args))
    return [o.to(narrow) if isinstance(o, torch.Tensor) and o.dtype == torch.float32 else o for o in outs]


def _accumulating_ops():
    """The ops whose float16/bfloat16 results depend on how the CPU accumulates their products."""
    F = torch.nn.functional
    T = torch.Tensor
    names = [(torch, "matmul"), (torch, "mm"), (torch, "bmm"), (torch, "mv"), (torch, "dot"), (torch, "inner"),
             (torch, "einsum"), (torch, "tensordot"), (torch, "addmm"), (torch, "baddbmm"), (torch, "addbmm"),
             (torch, "addmv"), (torch, "chain_matmul"), (T, "__matmul__"), (T, "__rmatmul__"), (T, "matmul"),
             (T, "mm"), (T, "bmm"), (T, "mv"), (T, "dot"), (T, "addmm"), (T, "baddbmm"), (F, "linear"),
             (F, "bilinear"), (F, "conv1d"), (F, "conv2d"), (F, "conv3d"), (F, "conv_transpose1d"),
             (F, "conv_transpose2d"), (F, "conv_transpose3d")]
    return {getattr(m, n) for m, n in names if hasattr(m, n)}


_accumulation_mode = None


def _float32_accumulation():
    """A TorchFunctionMode under which matmul-like ops on float16/bfloat16 operands are computed in
    float32 from the same values and rounded once, as the Tensor engine accumulates in float32
    PSUM. PyTorch's own CPU kernels for them differ from machine to machine (where the CPU has
    bfloat16 instructions, some accumulate in bfloat16, several percent off), and a reference must
    not depend on the machine. (torch is imported by "load", so the class is made on first use.)"""
    global _accumulation_mode
    if _accumulation_mode is None:
        ops = _accumulating_ops()

        class Float32Accumulation(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if func in ops:
                    narrow = _first_narrow(args)
                    if narrow is not None:
                        out = func(*_widen(args, narrow), **_widen(kwargs, narrow))
                        return out.to(narrow) if isinstance(out, torch.Tensor) and out.dtype == torch.float32 else out
                return func(*args, **kwargs)

        _accumulation_mode = Float32Accumulation
    return _accumulation_mode()


def _first_narrow(x):
    if isinstance(x, torch.Tensor):
        return x.dtype if x.dtype in (torch.float16, torch.bfloat16) else None
    if isinstance(x, (list, tuple)):
        return next((d for d in map(_first_narrow, x) if d is not None), None)
    if isinstance(x, dict):
        return _first_narrow(list(x.values()))
    return None


def _widen(x, narrow):
    if isinstance(x, torch.Tensor):
        return x.float() if x.dtype == narrow else x
    if isinstance(x, (list, tuple)):
        return type(x)(_widen(v, narrow) for v in x)
    if isinstance(x, dict):
        return {k: _widen(v, narrow) for k, v in x.items()}
    return x


def _forward(req):
    seed = int(req["seed"])
    model = _forward_model(req)
    with torch.no_grad(), _float32_accumulation():
        inputs = [_load_array(i["path"], i["dtype"]) for i in req["inputs"]]
        torch.manual_seed(seed)
        t0 = time.perf_counter()
        try:
            outs = _outputs(model(*inputs))
        except RuntimeError as e:
            narrow = _narrow_dtype(model, inputs)
            if narrow is None or "not implemented for" not in str(e):
                raise
            t0 = time.perf_counter()
            outs = _upcast_forward(model, inputs, narrow)
        seconds = time.perf_counter() - t0
    info = []
    for k, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            o = torch.tensor(o)
        _save(os.path.join(req["out_dir"], f"out{k}.npy"), o)
        info.append({"dtype": _dtype_name(o.dtype), "shape": list(o.shape)})
    return {"outputs": info, "seconds": seconds}


def _inspect(req):
    seed = int(req.get("seed", 0))
    torch.manual_seed(seed)
    inputs = task.get_inputs() if hasattr(task, "get_inputs") else []
    model = _model(seed)
    sd = []
    params = {id(p) for p in model.parameters()}
    for key, value in model.state_dict(keep_vars=True).items():
        sd.append({"name": key, "arg": key.replace(".", "_"), "shape": list(value.shape),
                   "dtype": _dtype_name(value.dtype), "parameter": id(value) in params})
    ins = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            ins.append({"dtype": _dtype_name(x.dtype), "shape": list(x.shape)})
        else:
            ins.append({"dtype": type(x).__name__, "shape": None})
    outs = []
    if req.get("forward", True):
        with torch.no_grad(), _float32_accumulation():
            try:
                results = _outputs(model(*inputs))
            except RuntimeError as e:
                narrow = _narrow_dtype(model, inputs)
                if narrow is None or "not implemented for" not in str(e):
                    raise
                results = _upcast_forward(model, inputs, narrow)
            for o in results:
                if isinstance(o, torch.Tensor):
                    outs.append({"dtype": _dtype_name(o.dtype), "shape": list(o.shape)})
                else:
                    outs.append({"dtype": type(o).__name__, "shape": None})
    return {"inputs": ins, "state_dict": sd, "outputs": outs}


_OPS = {"load": _load, "params": _params, "forward": _forward, "inspect": _inspect}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op not in _OPS:
                raise ValueError(f"unknown op {op!r}")
            if op != "load" and task is None:
                raise RuntimeError("no task loaded")
            answer = _OPS[op](req)
            answer["ok"] = True
        except BaseException as e:  # noqa: B902 - every failure goes back as an answer
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
        _answer(answer)


main()
