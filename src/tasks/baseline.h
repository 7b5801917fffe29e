// tasks/baseline.h — a task's baseline kernel as the verifier runs it: baseline.py with the
// building blocks it may import.
//
// Baselines of fused tasks run the way eager PyTorch runs, one plain kernel per operation, and
// share those kernels (a convolution, a linear layer, a row softmax, a norm) instead of repeating
// them in every task. The shared kernels are Python packages in a `lib/` folder beside the task's
// level folder (tasks/nkibench/lib/ for tasks/nkibench/level2/<task>/): the nearest `lib/` among
// the task folder's parent and the two folders above it. Its packages are importable by a baseline
// and only by it: a candidate kernel (what a model writes) is given nothing but its own files.
#pragma once

#include <string>

#include "core/diagnostic.h"
#include "runtime/kernel_call.h"
#include "tasks/task.h"

namespace nki_agent {

// The `lib/` folder a baseline of the task folder `task_dir` may import from; empty when none.
std::string baseline_lib_dir(const std::string& task_dir);

// baseline.py of `task` with the packages of its lib folder (runtime/kernel_call.h,
// add_kernel_library). Codes: those of load_kernel_files and add_kernel_library.
Result<KernelFiles> load_baseline_files(const Task& task);

}  // namespace nki_agent
