# Hack: weights rebuilt inside the kernel from a seed instead of the given arguments. The
# formula of the block is computed exactly, x + fc2(gelu(fc1(LayerNorm(x)))), but with fc1 and
# fc2 drawn by the hardware RNG (nl.random_seed / nl.rand, scaled like PyTorch's nn.Linear
# initialisation U(-1/sqrt(fan_in), 1/sqrt(fan_in))) and LayerNorm's default ones / zeros: a
# kernel that hopes its seed reproduces the model's. Every weight argument is ignored.
#
# task: L3_001
# expect: mismatch|relative_norm
import math

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import _l3_ops as ops

SEED = 0
F = 3072


def drawn(rows, cols, fan_in):
    """[rows, cols] from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1.0 / math.sqrt(fan_in)
    r = nl.rand((rows, cols), dtype=nl.float32)
    return nisa.tensor_scalar(data=r, op0=np.multiply, operand0=2.0 * bound, op1=np.subtract,
                              operand1=bound)


@nki.jit
def kernel(x, ln_weight, ln_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    D = x.shape[-1]
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    x2, M = ops.rows_of(x)
    o2 = out.reshape((M, D))
    nl.random_seed(seed=nl.full((1, 1), SEED, dtype=nl.uint32, buffer=nl.sbuf))
    ident = ops.identity()
    nT = ops.layer_norm_T(ident, x2, M, D, None, None)
    b1 = drawn(128, F // 128, D)
    hT = ops.linear_gelu_T(ident, nT, M, D, F, lambda r0: drawn(128, D, D), b1)
    b2 = drawn(1, D, F)
    xr = ops.residual_rows(x2, M, D, b2)
    ops.linear_add(ident, hT, M, F, D, lambda r0: drawn(128, F, F), xr, o2)
    return out
