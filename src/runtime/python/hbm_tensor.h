// runtime/python/hbm_tensor.h — the objects kernels receive as arguments and return as outputs:
// tensors in device memory (HBM), and the context of a running kernel launch.
//
// The NKI semantics core adds on-chip tiles, access patterns and instructions around these; here
// they are only what the calling convention needs: a named Tensor in an HBM buffer that records
// whether the kernel wrote it, and the SPMD grid position of the running instance.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace nki_agent {

struct HbmTensor {
  Tensor data;
  std::string name;
  std::string buffer = "shared_hbm";  // shared_hbm, private_hbm or hbm
  bool written = false;
};

struct LaunchContext {
  std::vector<int64_t> grid;        // empty: a plain call (one instance)
  std::vector<int64_t> program_id;  // this instance's position in the grid
};

// The launch being executed on this thread, or null outside a kernel.
LaunchContext* current_launch();

}  // namespace nki_agent
