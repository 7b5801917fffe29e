// corpus/emit.h — a task graph written in the task format of tasks/FORMAT.md: task.py (a Model
// whose forward is the graph, one PyTorch expression per node), task.toml (the args in kernel
// order, outputs, tolerances, the ragged variant, cost) and, when every op has a kernel in
// tasks/nkibench/lib/nkibench_ops, baseline.py composed from them as the Level-2 baselines are.
//
// bfloat16 and float16 tasks compute every op in float32 and round its result to the task's dtype,
// as the NKIBench fp16 tasks do (CPU PyTorch lacks most half-precision kernels).
#pragma once

#include <cstdint>
#include <string>

#include "corpus/graph.h"

namespace nki_agent::corpus {

struct EmittedTask {
  std::string id;                               // C2_00042
  std::string name;                             // relu_linear_fp32
  std::string folder;                           // level2/C2_00042_relu_linear_fp32
  std::string category;                         // of the graph's heaviest op
  std::string operation;                        // the outputs as PyTorch expressions, one line
  std::string task_py, task_toml, baseline_py;  // baseline_py empty: no lib kernel for some op
  double flops = 0, bytes = 0;
};

// `number` is the task's place in the corpus; `provenance` goes into task.toml's `source`.
EmittedTask emit_task(const TaskGraph& g, int64_t number, const std::string& provenance);

// The tolerance of a bfloat16 or float16 task (docs/corpus.md, "Tolerances"): `element` is its
// atol and rtol, `norm` its norm_rtol, `units` the rounding units its worst output carries.
struct LowTolerance {
  double element = 0, norm = 0;
  int units = 0;
};
LowTolerance low_precision_tolerance(const TaskGraph& g);

// The kernel argument names of the graph's learned weights with their shapes, in state_dict order.
std::vector<std::pair<std::string, Shape>> graph_params(const TaskGraph& g);

}  // namespace nki_agent::corpus
