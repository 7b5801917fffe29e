// runtime/python/warm_up.h — the calls a kernel host makes once, before it serves, so that what
// CPython, NumPy and nki-agent's Python modules initialise on first use (lazy imports, the
// interpreter's specialised code, first-use tables) is initialised in the zygote and shared with
// every forked child, instead of again in each child: a child runs one kernel and exits, so
// without them every verification case pays the first call's cost (~35 ms for a small tiled
// matmul, against ~5 ms warm; docs/perf.md).
//
// The calls cover the paths kernels take: a host entry and a sealed kernel entry, an exception
// report, and typical kernels of both dialects (tiled loads and stores with masks, affine loops,
// matmuls into PSUM, elementwise, activation and reduction instructions) on the trn1 and trn2
// targets. Their outcomes are not used; test_py_host checks that each one runs.
#pragma once

#include <vector>

#include "runtime/kernel_call.h"

namespace nki_agent {

std::vector<KernelCall> warm_up_calls();

}  // namespace nki_agent
