#!/usr/bin/env python3
"""Computes the PyTorch references of nki-library's tests outside nki-agent's sandbox and compares
the kernel's outputs with them (numerics.py --repo library).

nki-agent's sandbox has no PyTorch. Inside it, a test's `torch_ref_wrapper(ref)` records the call
it would make (the reference's module and name, its inputs) instead of making it, and the test
manager records the kernel's outputs beside it (nkilib_standin/test/utils/test_orchestrator.py);
the run's entry hands these records back as one pickled uint8 array. This program, run with
/usr/bin/python3 (Debian's python3-torch), reads them, imports each reference from the laid-out
scratch folder, calls it on the same inputs, converting as the upstream wrapper's documentation
says (NumPy arrays become tensors; bfloat16 and float8 arrive as float32, uint32 as int32, float16 is
computed in float32; with `preserve_lower_precision` bfloat16 inputs stay bfloat16 and the results
are rounded back to the first low-precision input's type), and compares every named output as
nki-library's validator does (nkilib_standin/_nkia_compare.py). The kernel never runs here.

The references' modules import NKI and Neuron packages this Python lacks (nki.language,
neuron_dtypes): those resolve to inert stand-ins (attributes and calls give stand-ins again), which
is enough for the module-level code around the references; a reference that computes with one of
them fails, and is reported as an error.

    /usr/bin/python3 nkilib_reference.py SCRATCH RECORDS.npy   (prints one JSON object)
"""
import importlib.abc
import importlib.machinery
import io
import json
import os
import pickle
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LOW_PRECISION = "__nkia_low_precision__"  # test_orchestrator.portable's tag


class _Inert:
    """A stand-in value: attributes and calls give stand-ins again; usable as a base class, in
    annotations and as a decorator's result."""

    def __init__(self, path):
        self._path = path

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _Inert(f"{self._path}.{attr}")

    def __call__(self, *args, **kwargs):
        return _Inert(f"{self._path}()")

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __getitem__(self, item):
        return self

    def __mro_entries__(self, bases):
        return (object,)

    def __repr__(self):
        return f"<stand-in {self._path}>"


class _InertModule(types.ModuleType):
    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _Inert(f"{self.__name__}.{attr}")


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: a top-level module nothing else finds (nki, neuronxcc, pytest, ...)
    becomes an inert stand-in, and so do its submodules."""

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or (top != name and not isinstance(sys.modules.get(top), _InertModule)):
            return None  # a standard module probed for (_winapi), or a submodule of a real package
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        return _InertModule(spec.name)

    def exec_module(self, module):
        pass


def to_torch_kwargs(kwargs, preserve):
    import torch
    out, original = {}, None
    for key, value in kwargs.items():
        if isinstance(value, tuple) and len(value) == 3 and value[0] == LOW_PRECISION:
            _, name, values = value
            original = original or name
            t = torch.from_numpy(np.ascontiguousarray(values))
            out[key] = t.to(torch.bfloat16) if preserve and name == "bfloat16" else t
        elif isinstance(value, np.ndarray):
            if "x4" in value.dtype.name:
                out[key] = value
                continue
            if value.dtype == np.float16:
                original = original or "float16"
            if value.dtype == np.uint32:
                value = value.astype(np.int32)
            t = torch.from_numpy(np.ascontiguousarray(value))
            out[key] = t.float() if t.dtype == torch.float16 else t
        else:
            out[key] = value
    return out, original


def round_to(values, name):
    """float32 `values` rounded into the low-precision type `name`, as float32."""
    import torch
    if name == "bfloat16":
        return torch.from_numpy(values).to(torch.bfloat16).float().numpy()
    if name == "float16":
        return values.astype(np.float16).astype(np.float32)
    raise NotImplementedError(f"rounding a reference into {name} is not modelled here")


def to_numpy(result, preserve, original):
    import torch

    def one(t):
        if not isinstance(t, torch.Tensor):
            return t
        v = (t.float() if t.dtype == torch.bfloat16 else t).numpy()
        if preserve and original is not None and v.dtype.kind == "f":
            v = round_to(v.astype(np.float32), original)
        return v

    if isinstance(result, torch.Tensor):
        return {"out": one(result)}
    if isinstance(result, dict):
        return {k: one(v) for k, v in result.items()}
    return result


def values_of(v):
    if isinstance(v, tuple) and len(v) == 3 and v[0] == LOW_PRECISION:
        return v[2]
    return np.asarray(v)


# nki-agent loads a kernel's own modules as submodules of this package; here they are top-level.
KERNEL_PACKAGE = "_nkia_kernel."


def host_module(name):
    return name[len(KERNEL_PACKAGE):] if name.startswith(KERNEL_PACKAGE) else name


class _Unpickler(pickle.Unpickler):
    """Classes of the kernel's modules (an enum of nki-library's) come from the same modules here."""

    def find_class(self, module, name):
        return super().find_class(host_module(module), name)


def check(record, compare):
    call = record["call"]
    module = importlib.import_module(host_module(call["module"]))
    func = module
    for part in call["qualname"].split("."):
        if part == "<locals>":
            raise LookupError(f"the reference {call['qualname']} is a local function; it cannot be imported")
        func = getattr(func, part)
    preserve = call["preserve_lower_precision"]
    kwargs, original = to_torch_kwargs(call["kwargs"], preserve)
    golden = to_numpy(func(**kwargs), preserve, original)
    if not isinstance(golden, dict) or set(golden) != set(record["names"]):
        got = sorted(golden) if isinstance(golden, dict) else type(golden).__name__
        raise ValueError(f"the reference returns {got} where the output descriptor names {record['names']}")
    failed = []
    for name in record["names"]:
        why = compare(values_of(record["actual"][name]).astype(np.float32),
                      np.asarray(golden[name]).astype(np.float32), record["rtol"], record["atol"])
        if why:
            failed.append(f"{name}: {why}")
    return failed


def main():
    scratch, records_file = sys.argv[1], sys.argv[2]
    sys.path.insert(0, scratch)
    sys.path.insert(1, os.path.join(HERE, "nkilib_standin"))
    import torch  # before the stand-ins: its own imports probe for optional modules
    from _nkia_compare import compare
    torch.manual_seed(0)
    sys.meta_path.append(_StandInFinder())
    rows = []
    try:
        records = _Unpickler(io.BytesIO(np.load(records_file).tobytes())).load()
    except Exception as e:  # noqa: BLE001 - reported as the test's error
        print(json.dumps({"result": "error", "why": f"the records do not load: {type(e).__name__}: {e}"[:400]}))
        return 0
    for record in records:
        try:
            failed = check(record, compare)
            rows.append({"result": "mismatch", "why": "; ".join(failed)} if failed else {"result": "pass"})
        except Exception as e:  # noqa: BLE001 - reported as the test's error
            first = str(e).splitlines()[0] if str(e) else ""
            rows.append({"result": "error", "why": f"the torch reference failed: {type(e).__name__}: {first}"[:400]})
    worst = next((r for r in rows if r["result"] == "error"), None) or next(
        (r for r in rows if r["result"] == "mismatch"), None)
    print(json.dumps(worst or {"result": "pass" if rows else "none", "compared": len(rows)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
