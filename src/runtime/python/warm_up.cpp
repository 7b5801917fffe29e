// The kernel host's warm-up calls (runtime/python/warm_up.h).
#include "runtime/python/warm_up.h"

#include "runtime/kernel_call.h"

namespace nki_agent {

namespace {

constexpr const char* kTrivial = R"py(import nki
import numpy as np


@nki.jit
def k(a):
    return a


def entry(a):
    return k(a), np.float32(1)


def fails(a):
    raise ValueError('warm-up')
)py";

// The legacy dialect as most tasks' baselines write it: masked tiles, affine loops, a PSUM
// accumulation, elementwise and activation, a reduction, a store.
constexpr const char* kLegacy = R"py(import math

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a, b):
    M, K = a.shape
    _, N = b.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    im = nl.arange(128)[:, None]
    jk = nl.arange(128)[None, :]
    ik = nl.arange(128)[:, None]
    jn = nl.arange(512)[None, :]
    for m in nl.affine_range(math.ceil(M / 128)):
        rows = m * 128 + im
        for n in nl.affine_range(math.ceil(N / 512)):
            cols = n * 512 + jn
            acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                at = nl.load(a[rows, k * 128 + jk], mask=(rows < M))
                bt = nl.load(b[k * 128 + ik, cols], mask=(cols < N))
                acc += nl.matmul(at, bt)
            res = nl.copy(acc, dtype=out.dtype)
            s = nl.exp(nl.multiply(res, 0.5))
            mx = nl.max(s, axis=[1], keepdims=True)
            r = nisa.activation(op=nl.tanh, data=nl.subtract(s, mx), scale=1.0)
            t = nl.where(r > 0, r, nl.negative(r))
            nl.store(out[rows, cols], value=nl.add(t, res), mask=(rows < M) & (cols < N))
    return out
)py";

// The current dialect: explicit tiles, DMA, nc_matmul into PSUM, engine instructions, a reduction.
constexpr const char* kCurrent = R"py(import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def kernel(a, b):
    M, K = a.shape
    _, N = b.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 128):
        acc = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.psum)
        for k in nl.sequential_range(K // 128):
            at = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=at, src=a[m * 128:(m + 1) * 128, k * 128:(k + 1) * 128])
            att = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=att, data=at)
            ats = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=ats, src=att)
            bt = nl.ndarray((128, N), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=bt, src=b[k * 128:(k + 1) * 128, :])
            nisa.nc_matmul(dst=acc, stationary=ats, moving=bt)
        res = nl.ndarray((128, N), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        mx = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=mx, op=nl.maximum, data=res, axis=1, negate=True)
        e = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=res, bias=mx, scale=1.0)
        t = nl.ndarray((128, N), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=t, data=e, op0=nl.multiply, operand0=0.5)
        nisa.tensor_tensor(dst=t, data1=t, data2=res, op=nl.add)
        nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, :], src=t)
    return out
)py";

KernelCall call(const char* src, const char* file, const char* entry, std::vector<Tensor> inputs, const char* target,
                bool kernel_only) {
  KernelCall c;
  c.src = kernel_files_from_source(src, file);
  c.entry = entry;
  c.inputs = std::move(inputs);
  c.target = target;
  c.kernel_only = kernel_only;
  return c;
}

}  // namespace

std::vector<KernelCall> warm_up_calls() {
  const Tensor a = Tensor::full({256, 256}, DType::kFloat32, 0.5);
  const Tensor b = Tensor::full({256, 512}, DType::kFloat32, 0.25);
  const Tensor x = Tensor::full({2, 2}, DType::kBFloat16, 1);
  std::vector<KernelCall> calls;
  calls.push_back(call(kTrivial, "warmup.py", "entry", {x}, "", false));
  calls.push_back(call(kTrivial, "warmup.py", "k", {x}, "", false));  // a kernel entry: the sealed path
  calls.push_back(call(kTrivial, "warmup.py", "fails", {x}, "", false));
  for (const char* target : {"trn1", "trn2"}) {
    calls.push_back(call(kLegacy, "warm_legacy.py", "kernel", {a, b}, target, true));
    calls.push_back(call(kCurrent, "warm_current.py", "kernel", {a, b}, target, true));
  }
  return calls;
}

}  // namespace nki_agent
