# A kernel file whose module-level code builds a PyTorch constant and applies pytest decorators, as
# nki-library's test utilities do: torch and pytest are stand-ins in the sandbox, and a call of a
# stand-in while the kernel's files are imported gives an inert stand-in, so the file loads and the
# kernel (which uses neither) runs. A call from inside the kernel would still fail.
#
# entry: scale_kernel
# inputs: x=float32[128,64]
# reference:
#   return (x * 2.0,)
# tolerance: atol=0 rtol=0
import pytest
import torch
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

_LUT = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float32).reshape(1, 3)


@pytest.mark.parametrize("n", [1, 2])
def test_lut(n):
    assert _LUT.shape == (1, 3)


@nki.jit
def scale_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(x), 2.0))
    return out
