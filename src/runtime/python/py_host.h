// runtime/python/py_host.h — the embedded CPython that runs NKI kernels.
//
// One interpreter per process (CPython's rule), started by python_host_init(): Debian's Python
// 3.11 with NumPy, the NKI modules (`nki.*` and `neuronxcc.nki.*`, served from the Python half
// compiled into the binary, never from disk), the allow-listed standard modules already imported,
// and the import policy installed. A worker calls it once before it forks per-request children,
// so every child starts warm.
//
// python_run() loads a kernel's source files from memory, calls the entry function with the
// inputs and returns the outputs. Every failure — a syntax error, an exception in the kernel, a
// forbidden import, a missing entry — is a Diagnostic located in the kernel's own file.
//
// This module never contains the sandbox: python_run executes the kernel in the calling process.
// Untrusted kernels must only reach it inside a sandboxed child (runtime/sandbox.h).
#pragma once

#include <memory>
#include <string>

#include "core/diagnostic.h"
#include "runtime/kernel_call.h"
#include "tensor/tensor.h"

namespace nki_agent {

class Recording;   // runtime/python/replay.h
struct NkiTensor;  // nki/nki_tensor.h

// Starts the interpreter once; later calls return the first call's result.
Result<void> python_host_init();
bool python_host_ready();

// A kernel argument as a run holds it: an HBM tensor of the core with a contiguous copy of `t` (a
// kernel may write its inputs; the caller's stay as they were), or `t` itself when it lies in shared
// memory this process received (its own copy-on-write pages already).
std::shared_ptr<NkiTensor> run_argument(const Tensor& t, std::string name);

// Which elements of the kernel output `t` were stored to, as an outcome reports them (read before
// the output is settled).
OutputStores output_stores_of(const NkiTensor& t);

// Runs one call in this process, on the call's target and in its compute mode (timing-only when
// call.compute is false), with its inputs and then its zero_inputs; the outcome carries the trace
// of every launch, with the kernel files' paths as Diagnostics give them, and every output's spec
// (its data only when call.want_outputs). Requires python_host_init(). With `record`, the run is
// recorded into it for replays on other inputs (runtime/python/replay.h).
Result<KernelOutcome> python_run(const KernelCall& call, Recording* record = nullptr);

}  // namespace nki_agent
