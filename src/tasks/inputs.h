// tasks/inputs.h — the inputs a verification feeds a kernel: seeded, several distributions.
//
// Every input is drawn from our own Philox generator (tensor/rng.h; normals by the inverse CDF,
// floats rounded into the argument's dtype), so the same (seed, task, shape set) gives the same
// bits on every machine, and the reference cache can key on those coordinates instead of hashing
// megabytes. Each seed of a verification uses one profile (cycling through the task's list), which
// reshapes the arguments declared `dist = "normal"` or `"positive"`:
//   normal     N(0, 1)                     positive: |N(0, 1)| + 0.05
//   uniform    U(-1, 1)                    positive: U(0.05, 1.05)
//   large      N(0, 1) * large_scale       positive: (|N| + 0.05) * large_scale
//   near_zero  N(0, 1) * 1e-3              positive: (|N| + 0.05) * 1e-3
// Arguments with a declared range (uniform low/high, randint) keep it in every profile: their
// domain is part of the task (probabilities, indices), so only fresh draws change.
#pragma once

#include <cstdint>
#include <string_view>

#include "tasks/task.h"
#include "tensor/tensor.h"

namespace nki_agent {

inline constexpr double kNearZeroScale = 1e-3;
inline constexpr double kScaledScale = 3;
inline constexpr double kSmallScale = 1e-2;
// Bumped whenever the generated values change, so cached references made from the old inputs
// are never reused.
inline constexpr int kInputGeneratorVersion = 2;

// The profile seed number `index` (0-based) of a verification uses.
InputProfile profile_for_seed(const Task& task, int index);

// One kernel argument at `shape` (its dtype is the kernel's: int64 arrives as int32), for `seed`,
// `profile`, and the shape set named `set_name` (each set draws its own values).
Tensor generate_input(const TaskArg& arg, const Shape& shape, uint64_t seed, InputProfile profile,
                      std::string_view set_name, double large_scale);

}  // namespace nki_agent
