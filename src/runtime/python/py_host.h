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

#include <map>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "tensor/tensor.h"

namespace nki_agent {

// A kernel's Python sources: paths relative to a root folder, '/'-separated.
struct KernelFiles {
  std::string root;       // the folder they came from, to turn relative paths back into real ones
  std::string main_path;  // the file that holds the entry, relative to root
  std::map<std::string, std::string> files;  // relative path -> source
};

// Limits on what load_kernel_files() reads: a kernel with its helpers is a few files, not a tree.
inline constexpr int kMaxKernelFiles = 256;
inline constexpr int64_t kMaxKernelSourceBytes = 8 << 20;

// Reads `path` and the .py files that it may import: those in its folder, and, when that folder is
// inside a package (has __init__.py), the whole tree from the outermost package's parent down.
// Codes: nkia_kernel_not_found, nkia_kernel_unreadable, nkia_kernel_too_large.
Result<KernelFiles> load_kernel_files(const std::string& path);
// A single in-memory file (tests, the agent's candidate kernels).
KernelFiles kernel_files_from_source(std::string source, std::string name = "kernel.py");

struct KernelCall {
  KernelFiles src;
  std::string entry;
  std::vector<Tensor> inputs;                 // positional arguments, in order
  std::map<std::string, std::string> kwargs;  // Python literals ("128", "True", "'x'", "(1, 2)")
  std::vector<int64_t> grid;                  // an SPMD launch grid; empty: a plain call
};

struct KernelOutcome {
  std::vector<Tensor> outputs;  // in return order (a tuple's elements, or the one tensor)
  std::string printed;          // what the kernel printed (capped)
};

// Starts the interpreter once; later calls return the first call's result.
Result<void> python_host_init();
bool python_host_ready();

// Runs one call in this process. Requires python_host_init().
Result<KernelOutcome> python_run(const KernelCall& call);

}  // namespace nki_agent
