"""nki-library's `test.utils.test_orchestrator`, as nki-agent's numeric run of its tests needs it
(numerics.py --repo library; written over the upstream module in the scratch folder).

`Orchestrator.execute(kernel_args)` stands for upstream's simulation mode: it launches
`kernel_args.kernel_func` on the NumPy inputs with nki-agent, compiled for the compiler arguments'
platform target and launched over their logical NeuronCore count (`kernel[lnc](**inputs)`, as the
upstream harness launches its CPU simulator), takes the kernel's outputs in order as the golden
outputs' names, each as the type and shape the output descriptor gives, and validates them:

- a golden computed here (NumPy) is compared at once, within (rtol, atol) as _nkia_compare says,
  and a mismatch fails the test (AssertionError);
- a golden from `torch_ref_wrapper` (unit_test_framework.DeferredOutputs: the sandbox has no
  PyTorch) is recorded in RECORDS, with the kernel's outputs and the tolerances, for
  nkilib_reference.py to compute and compare outside the sandbox;
- custom validators (CustomValidatorWithOutputTensorData) run here on the output's bytes.

Collectives across ranks (per-rank inputs or goldens, more than one rank) are skipped: a run here
is one NeuronCore.
"""
import numpy as np
import pytest
from _nkia_compare import compare
from test.utils.common_dataclasses import (CustomValidatorWithOutputTensorData, LazyGoldenGenerator,
                                           PerRankLazyGoldenGenerator, PerRankLazyInputGenerator)
from test.utils.unit_test_framework import ALIAS_SUFFIX, DeferredOutputs

import nki

# What the entry hands back for nkilib_reference.py: one dict per deferred comparison.
RECORDS = []

# NKI's float types NumPy lacks: they leave the sandbox as float32 with their name (a tuple
# (LOW_PRECISION, name, values)), since nki-agent's NumPy types for them exist only in here.
LOW_PRECISION = "__nkia_low_precision__"
_NKI_FLOATS = ("bfloat16", "tfloat32", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")


def portable(value):
    """`value` with every array of an NKI float type as (LOW_PRECISION, name, float32 values), and
    array subclasses as plain arrays, so that plain Python outside the sandbox can unpickle it."""
    if isinstance(value, np.ndarray):
        name = getattr(value, "nki_dtype", None) or value.dtype.name
        if name in _NKI_FLOATS:
            return (LOW_PRECISION, name, np.asarray(value).astype(np.float32))
        return np.array(value)
    if isinstance(value, dict):
        return {k: portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(portable(v) for v in value)
    return value


def host_array(out):
    """A kernel output as a NumPy array. A kernel launched from host code hands back its returned HBM
    tensors as arrays, but a returned view of one (`out.reshape(shape)`) as nki-agent's View: its
    values are read with View.numpy() here."""
    if isinstance(out, np.ndarray) or not callable(getattr(out, "numpy", None)):
        return np.asarray(out)
    return np.asarray(out.numpy())


def _as_list(result):
    if result is None:
        return []
    return list(result) if isinstance(result, (list, tuple)) else [result]


class Orchestrator:
    def __init__(self, platform_target=None):
        self.platform_target = platform_target

    def execute(self, kernel_args):
        va = kernel_args.validation_args
        if kernel_args.inference_args.collective_ranks > 1 or isinstance(kernel_args.kernel_input,
                                                                         PerRankLazyInputGenerator):
            pytest.skip(f"collectives across {kernel_args.inference_args.collective_ranks} ranks: a run here is "
                        "one NeuronCore")
        if va is None:
            pytest.skip("the test gives no golden outputs (upstream skips validation)")
        source = va.golden_output
        if isinstance(source, PerRankLazyGoldenGenerator):
            pytest.skip("per-rank golden outputs (collectives): a run here is one NeuronCore")
        if isinstance(source, LazyGoldenGenerator):
            if source.lazy_golden_generator is None:
                pytest.skip("the test gives no golden outputs (upstream skips validation)")
            descriptor = source.output_ndarray
            # Computed (or recorded) before the kernel runs: the kernel may write its inputs in place.
            golden = source.golden
        else:
            descriptor = golden = source
        compiler = kernel_args.compiler_input
        target = compiler.platform_target.get_compile_target()
        kernel = nki.jit(kernel_args.kernel_func, platform_target=target)
        inputs = {k[: -len(ALIAS_SUFFIX)] if k.endswith(ALIAS_SUFFIX) else k: v
                  for k, v in (kernel_args.kernel_input or {}).items()}
        outputs = _as_list(kernel[compiler.logical_nc_config](**inputs))
        names = list(descriptor.keys())
        if len(outputs) != len(names):
            raise RuntimeError(f"the kernel returned {len(outputs)} outputs where the test names {len(names)}: "
                               f"{names}")
        actual = {}
        for name, out in zip(names, outputs):
            want = descriptor[name]
            dtype = getattr(want, "dtype", None)
            out = host_array(out)
            actual[name] = out if isinstance(want, CustomValidatorWithOutputTensorData) or dtype is None else \
                out.astype(dtype)
        rtol, atol = va.relative_accuracy, va.absolute_accuracy
        if isinstance(golden, DeferredOutputs):
            RECORDS.append({"call": portable(golden.call), "names": names, "rtol": rtol, "atol": atol,
                            "actual": portable(actual)})
            return
        failed = []
        for name in names:
            expected = golden[name]
            if isinstance(expected, CustomValidatorWithOutputTensorData):
                if not expected.validator(None).validate(np.ascontiguousarray(actual[name]).view(np.uint8).ravel()):
                    failed.append(f"{name}: its custom validator failed")
                continue
            why = compare(np.asarray(actual[name]).astype(np.float32), np.asarray(expected).astype(np.float32),
                          rtol, atol)
            if why:
                failed.append(f"{name}: {why}")
        assert not failed, "; ".join(failed)
