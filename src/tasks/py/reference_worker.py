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
      what the task file itself says: get_inputs() (dtype, shape, and the smallest and largest value
      of each) and the state_dict (name, shape, dtype, is a Parameter), and the forward outputs on
      get_inputs(). For `nki-agent tasks check` and for making a task of an inline reference.

Confined mode ("load" with "confined": true and "filter": the hex of a seccomp BPF program): for a
reference that is not ours (a client's inline KernelBench reference). This process then never runs
the reference's text itself. Each params / forward / inspect request forks a child that reads its
input files first, then closes every file descriptor but a result pipe and stderr, sets
RLIMIT_FSIZE 0 and RLIMIT_CPU, takes PR_SET_NO_NEW_PRIVS and the filter (no open, no socket, no
new process, no exec: runtime/seccomp_policy.h), and only then runs the reference. Its arrays come
back over the pipe as a JSON header and raw bytes; this process checks every name, dtype, shape and
size before it writes a file or answers, and kills a child that outlives the request's "seconds".
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
_confined = None  # confined mode: the filter, the reference's text and path (see the docstring)


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
    if req.get("confined"):
        global _confined
        _confined = _Confinement(bytes.fromhex(req["filter"]), req["source"], req["path"])
        return {"torch": torch.__version__, "confined": True}
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


def _read_params(req):
    """The forward request's parameters, by kernel argument name, read from its params_dir."""
    return {p["name"]: _load_array(os.path.join(req["params_dir"], p["name"] + ".npy"), p["dtype"])
            for p in req.get("params", [])}


def _put_params(model, params):
    """Copies the parameters into the model's state_dict entries of those names."""
    entries = _by_arg_name(model)
    with torch.no_grad():
        for name, value in params.items():
            if name not in entries:
                raise KeyError(f"parameter {name!r} is not in the model's state_dict")
            _, t = entries[name]
            t.copy_(value.to(t.dtype).reshape(t.shape))


def _forward_model(req):
    seed = int(req["seed"])
    key = (seed, req.get("params_dir", ""))
    if key in _models:
        return _models[key]
    model = _model(seed)
    _put_params(model, _read_params(req))
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


def _run_forward(model, inputs, seed):
    """The model on the inputs: (output tensors, seconds of the forward alone)."""
    with torch.no_grad(), _float32_accumulation():
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
    return [o if isinstance(o, torch.Tensor) else torch.tensor(o) for o in outs], seconds


def _forward(req):
    model = _forward_model(req)
    inputs = [_load_array(i["path"], i["dtype"]) for i in req["inputs"]]
    outs, seconds = _run_forward(model, inputs, int(req["seed"]))
    info = []
    for k, o in enumerate(outs):
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
            entry = {"dtype": _dtype_name(x.dtype), "shape": list(x.shape)}
            if x.numel() > 0 and x.dtype != torch.bool and not x.is_complex():
                entry["min"] = float(x.min())
                entry["max"] = float(x.max())
            ins.append(entry)
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


# --- confined mode ------------------------------------------------------------------------------

# What may cross the result pipe: the element types a task declares (bfloat16 travels as float32).
_PIPE_DTYPES = {"float32", "float16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"}
_MAX_RANK = 8
_MAX_HEADER = 1 << 20
_MAX_PIPE_BYTES = 1 << 32
# Modules a reference may import, imported before a child is confined (an import then reads no file).
_PRELOAD = ("math", "cmath", "numbers", "functools", "itertools", "operator", "collections", "typing",
            "dataclasses", "enum", "copy", "random", "torch.nn", "torch.nn.functional", "torch.fft",
            "torch.linalg", "torch.special")


def _is_name(text, dots=False):
    """A Python identifier of at most 64 characters (state_dict keys: dotted ones)."""
    if not isinstance(text, str) or not 0 < len(text) <= (200 if dots else 64):
        return False
    parts = text.split(".") if dots else [text]
    return all(p.isidentifier() and p.isascii() for p in parts)


class _Confinement:
    def __init__(self, bpf, source, path):
        import ctypes
        import importlib
        import resource
        if len(bpf) == 0 or len(bpf) % 8 != 0 or len(bpf) // 8 > 0xFFFF:
            raise ValueError("the seccomp filter is not a whole BPF program")
        for name in _PRELOAD:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        self.source, self.path = source, path
        self.resource = resource
        self.ctypes = ctypes
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.prctl.restype = ctypes.c_int

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        self.filter_buf = ctypes.create_string_buffer(bpf, len(bpf))
        self.prog = SockFprog(len(bpf) // 8, ctypes.cast(self.filter_buf, ctypes.c_void_p))

    # In the child, before the reference runs.
    def _confine(self, keep_fd, seconds):
        r = self.resource
        os.closerange(0, 2)
        os.closerange(3, keep_fd)
        os.closerange(keep_fd + 1, 1 << 16)
        r.setrlimit(r.RLIMIT_FSIZE, (0, 0))
        r.setrlimit(r.RLIMIT_CORE, (0, 0))
        cpu = max(1, int(seconds) + 1)
        r.setrlimit(r.RLIMIT_CPU, (cpu, cpu))
        c = self.ctypes
        ul = c.c_ulong
        if self.libc.prctl(c.c_int(38), ul(1), ul(0), ul(0), ul(0)) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(c.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self.libc.prctl(c.c_int(22), ul(2), c.byref(self.prog), ul(0), ul(0)) != 0:  # PR_SET_SECCOMP, FILTER
            raise OSError(c.get_errno(), "prctl(PR_SET_SECCOMP) failed")

    def _reference(self):
        global task
        import types
        module = types.ModuleType("nkia_task_reference")
        module.__file__ = self.path
        sys.modules["nkia_task_reference"] = module
        exec(compile(self.source, self.path, "exec"), module.__dict__)
        for fn in ("Model", "get_init_inputs"):
            if not hasattr(module, fn):
                raise AttributeError(f"the reference defines no {fn}")
        task = module
        return module

    @staticmethod
    def _send(fd, header, arrays):
        data = json.dumps(header).encode()
        chunks = [len(data).to_bytes(8, "little"), data] + [a.tobytes() for a in arrays]
        for chunk in chunks:
            view = memoryview(chunk)
            while len(view):
                n = os.write(fd, view)
                view = view[n:]

    def _child(self, fd, prepare, work, seconds):
        """In the forked child: prepare() reads files, then confinement, then work(state)."""
        try:
            state = prepare()
            self._confine(fd, seconds)
            answer, tensors = work(state)
            arrays, meta = [], []
            for t in tensors:
                if t.dtype == torch.bfloat16:
                    t = t.float()
                a = t.detach().cpu().contiguous().numpy()
                arrays.append(a)
                meta.append({"dtype": str(a.dtype), "shape": list(a.shape)})
            self._send(fd, {"ok": True, "answer": answer, "arrays": meta}, arrays)
        except BaseException as e:  # noqa: B902 - every failure goes back as an answer
            try:
                self._send(fd, {"ok": False, "error": f"{type(e).__name__}: {e}"[:2000],
                                "traceback": traceback.format_exc()[-4000:]}, [])
            except BaseException:  # noqa: B902
                pass
        os._exit(0)

    def _collect(self, rfd, pid, seconds):
        import select
        import signal
        buf = bytearray()
        deadline = time.monotonic() + seconds
        failure = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                failure = f"the reference ran past its {seconds:.0f} s"
                break
            ready, _, _ = select.select([rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(rfd, 1 << 20)
            if not chunk:
                break
            buf += chunk
            if len(buf) > _MAX_PIPE_BYTES:
                failure = "the reference's answer is larger than 4 GiB"
                break
        if failure:
            os.kill(pid, signal.SIGKILL)
        os.close(rfd)
        _, status = os.waitpid(pid, 0)
        if failure:
            raise RuntimeError(failure)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            what = {signal.SIGSYS: "it made a system call the reference sandbox forbids (exec, ptrace, ...)",
                    signal.SIGXCPU: "it ran past its CPU time",
                    signal.SIGKILL: "it was killed (out of memory or CPU time)"}.get(sig, f"signal {sig}")
            raise RuntimeError(f"the reference died: {what}")
        return self._parse(bytes(buf))

    @staticmethod
    def _parse(buf):
        if len(buf) < 8:
            raise RuntimeError("the reference exited without an answer")
        n = int.from_bytes(buf[:8], "little")
        if n > _MAX_HEADER or 8 + n > len(buf):
            raise RuntimeError("the reference's answer is malformed")
        header = json.loads(buf[8:8 + n].decode("utf-8"))
        if not isinstance(header, dict):
            raise RuntimeError("the reference's answer is malformed")
        if not header.get("ok"):
            err = header.get("error")
            tb = header.get("traceback")
            raise _ReferenceError(err if isinstance(err, str) else "the reference failed",
                                  tb if isinstance(tb, str) else "")
        metas = header.get("arrays")
        if not isinstance(metas, list) or len(metas) > 1024:
            raise RuntimeError("the reference's answer is malformed")
        arrays, at = [], 8 + n
        for m in metas:
            if not isinstance(m, dict) or m.get("dtype") not in _PIPE_DTYPES:
                raise RuntimeError("the reference returned an array of an element type tasks do not use")
            shape = m.get("shape")
            if (not isinstance(shape, list) or len(shape) > _MAX_RANK
                    or not all(type(d) is int and 0 <= d < (1 << 40) for d in shape)):
                raise RuntimeError("the reference returned an array of a malformed shape")
            dt = np.dtype(m["dtype"])
            count = 1
            for d in shape:
                count *= d
            size = count * dt.itemsize
            if at + size > len(buf):
                raise RuntimeError("the reference's answer is shorter than its arrays")
            arrays.append(np.frombuffer(buf, dtype=dt, count=count, offset=at).reshape(shape))
            at += size
        if at != len(buf):
            raise RuntimeError("the reference's answer is longer than its arrays")
        answer = header.get("answer")
        return (answer if isinstance(answer, dict) else {}), arrays

    def _run(self, prepare, work, seconds):
        rfd, wfd = os.pipe()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            self._child(wfd, prepare, work, seconds)
        os.close(wfd)
        return self._collect(rfd, pid, seconds)

    # The ops, each checked before anything reaches a file or the answer.
    def serve(self, req):
        op = req.get("op")
        seconds = float(req.get("seconds", 600))
        if op == "params":
            return self._params(req, seconds)
        if op == "forward":
            return self._forward(req, seconds)
        if op == "inspect":
            return self._inspect(req, seconds)
        raise ValueError(f"unknown op {op!r}")

    def _params(self, req, seconds):
        decls = req["params"]
        seed = int(req["seed"])

        def work(_):
            self._reference()
            t0 = time.perf_counter()
            model = _model(seed)
            drawn = _set_params(model, seed, decls)
            info = [{"state_dict": key, "redrawn": bool(redrawn)} for key, _, redrawn in drawn]
            return {"params": info, "seconds": time.perf_counter() - t0}, [t for _, t, _ in drawn]

        answer, arrays = self._run(lambda: None, work, seconds)
        info = answer.get("params")
        if not isinstance(info, list) or len(info) != len(decls) or len(arrays) != len(decls):
            raise RuntimeError("the reference returned another number of parameters than the task declares")
        out = []
        for decl, entry, a in zip(decls, info, arrays):
            key = entry.get("state_dict") if isinstance(entry, dict) else None
            if not _is_name(key, dots=True) or key.replace(".", "_") != decl["name"]:
                raise RuntimeError(f"the reference returned no parameter {decl['name']!r}")
            np.save(os.path.join(req["out_dir"], decl["name"] + ".npy"), a, allow_pickle=False)
            out.append({"name": decl["name"], "state_dict": key, "shape": list(a.shape),
                        "redrawn": entry.get("redrawn") is True})
        return {"params": out, "seconds": _seconds(answer)}

    def _forward(self, req, seconds):
        seed = int(req["seed"])

        def prepare():
            return [_load_array(i["path"], i["dtype"]) for i in req["inputs"]], _read_params(req)

        def work(state):
            inputs, params = state
            self._reference()
            model = _model(seed)
            _put_params(model, params)
            outs, secs = _run_forward(model, inputs, seed)
            return {"outputs": [{"dtype": _dtype_name(o.dtype)} for o in outs], "seconds": secs}, outs

        answer, arrays = self._run(prepare, work, seconds)
        dtypes = answer.get("outputs")
        if not isinstance(dtypes, list) or len(dtypes) != len(arrays):
            raise RuntimeError("the reference's answer is malformed")
        info = []
        for k, (d, a) in enumerate(zip(dtypes, arrays)):
            name = d.get("dtype") if isinstance(d, dict) else None
            if name != "bfloat16" or a.dtype != np.float32:  # bfloat16 travels as float32 values
                name = str(a.dtype)
            np.save(os.path.join(req["out_dir"], f"out{k}.npy"), a, allow_pickle=False)
            info.append({"dtype": name, "shape": list(a.shape)})
        return {"outputs": info, "seconds": _seconds(answer)}

    def _inspect(self, req, seconds):
        def work(_):
            self._reference()
            return _inspect(req), []

        answer, _ = self._run(lambda: None, work, seconds)
        return _checked_inspection(answer)


class _ReferenceError(Exception):
    def __init__(self, message, tb):
        super().__init__(message)
        self.tb = tb


def _seconds(answer):
    s = answer.get("seconds")
    return float(s) if isinstance(s, (int, float)) and 0 <= s < 1e7 else 0.0


def _checked_inspection(answer):
    """An inspection from a child: only names, dtypes, shapes and finite numbers pass."""
    def shape(v):
        if v is None:
            return None
        if not isinstance(v, list) or len(v) > _MAX_RANK or not all(type(d) is int and 0 <= d < (1 << 40) for d in v):
            raise RuntimeError("the reference's inspection is malformed")
        return v

    def dtype(v):
        if not isinstance(v, str) or not _is_name(v):
            raise RuntimeError("the reference's inspection is malformed")
        return v

    def number(v):
        return float(v) if isinstance(v, (int, float)) and abs(float(v)) < 1e300 else None

    def listed(key):
        v = answer.get(key)
        if not isinstance(v, list) or len(v) > 1024:
            raise RuntimeError("the reference's inspection is malformed")
        return [e if isinstance(e, dict) else {} for e in v]

    out = {"inputs": [], "state_dict": [], "outputs": []}
    for e in listed("inputs"):
        entry = {"dtype": dtype(e.get("dtype")), "shape": shape(e.get("shape"))}
        for k in ("min", "max"):
            if number(e.get(k)) is not None:
                entry[k] = number(e.get(k))
        out["inputs"].append(entry)
    for e in listed("state_dict"):
        name = e.get("name")
        if not _is_name(name, dots=True):
            raise RuntimeError("the reference's state_dict holds a name that is not a dotted identifier")
        out["state_dict"].append({"name": name, "arg": name.replace(".", "_"), "shape": shape(e.get("shape")),
                                  "dtype": dtype(e.get("dtype")), "parameter": e.get("parameter") is True})
    for e in listed("outputs"):
        out["outputs"].append({"dtype": dtype(e.get("dtype")), "shape": shape(e.get("shape"))})
    return out


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
            if op != "load" and task is None and _confined is None:
                raise RuntimeError("no task loaded")
            answer = _confined.serve(req) if _confined is not None and op != "load" else _OPS[op](req)
            answer["ok"] = True
        except _ReferenceError as e:  # a confined reference's own error, with its traceback
            answer = {"ok": False, "error": str(e), "traceback": e.tb}
        except BaseException as e:  # noqa: B902 - every failure goes back as an answer
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
        _answer(answer)


main()
