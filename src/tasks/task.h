// tasks/task.h — an NKIBench task as the verifier sees it: task.toml read, checked and typed.
//
// A task folder holds task.py (the PyTorch reference: Model, get_inputs, get_init_inputs),
// task.toml (the kernel's contract: its arguments in order, outputs, tolerances, shape variants,
// cost figures) and baseline.py (a plain NKI kernel). tasks/FORMAT.md is the format and
// docs/tasks.md the reasons. This file only reads and validates: every malformed field is a
// Diagnostic naming the field (`args[1].shape`), never a crash or a silent default. Fields the
// verifier does not know are kept as warnings, so that tasks can grow annotations.
//
// Optional fields beyond the fixed format (docs/tasks.md):
//   [verify]  seeds = 7, profiles = ["normal", "uniform", "large", "near_zero", "negated", "scaled",
//             "small"], large_scale = 100, prompt_seeds = seeds
//   [policy]  precision = "strict" | "any", allow_dtypes = ["bfloat16"]
//   [tolerance] <dtype> = { atol, rtol, norm_rtol }   (norm_rtol defaults to rtol)
//   [reference] task_id, expected_speedup = [lo, hi], engine_hints = [...], tile_suggestions = {...}
//   untrusted_reference = true   (task.py runs only confined: tasks/reference.h)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "tensor/tensor.h"

namespace nki_agent {

enum class ArgKind : uint8_t { kInput, kParam };
enum class Dist : uint8_t { kNormal, kUniform, kRandint, kPositive };
std::string_view dist_name(Dist d);

// The input distributions a verification cycles through, one per seed (tasks/inputs.h).
// The input distributions of a verification (docs/tasks.md): seed i draws profile i mod the list.
// negated (x -1), scaled (x 3) and small (x 0.01) are the perturbations that caught shape- and
// sign-keyed hacks in KernelBench-Verified; large and near_zero probe range and precision.
enum class InputProfile : uint8_t { kNormal, kUniform, kLarge, kNearZero, kNegated, kScaled, kSmall };
inline constexpr InputProfile kAllInputProfiles[] = {
    InputProfile::kNormal,  InputProfile::kUniform, InputProfile::kLarge, InputProfile::kNearZero,
    InputProfile::kNegated, InputProfile::kScaled,  InputProfile::kSmall};
std::string_view profile_name(InputProfile p);
std::optional<InputProfile> profile_from_name(std::string_view name);

struct TaskArg {
  std::string name;
  ArgKind kind = ArgKind::kInput;
  DType dtype = DType::kFloat32;  // what the kernel gets (an int64 input arrives as int32)
  std::string torch_dtype;        // what the reference gets: "float32", "int64", ...
  Shape shape;                    // the prompt's
  Dist dist = Dist::kNormal;
  bool dist_explicit = false;  // the toml named a dist (for params: draw instead of torch's init)
  std::optional<double> low, high;
};

struct TaskOutput {
  DType dtype = DType::kFloat32;  // what the kernel must return (int64 -> int32)
  std::string torch_dtype;
  Shape shape;
};

struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double norm_rtol = 0;  // bound on ||actual - expected|| / ||expected||
};

struct TaskVariant {
  std::string name;
  std::map<std::string, Shape> args;  // only the input args that change
  std::vector<Shape> outputs;         // every output, in order
};

// One set of shapes a kernel is run at: the prompt's or a variant's.
struct ShapeSet {
  std::string name;            // "prompt" or the variant's name
  std::vector<Shape> args;     // one per task arg, in order
  std::vector<Shape> outputs;  // one per output
};

struct Task {
  std::string dir;  // the task folder
  std::string id, name, category, operation;
  int level = 0;
  std::string entry = "kernel";
  std::vector<std::string> dialects;
  std::string target = "trn1";
  std::string baseline = "baseline.py";  // relative to dir
  std::vector<TaskArg> args;
  std::vector<TaskOutput> outputs;
  std::map<DType, Tolerance> tolerance;  // per output dtype (defaults filled in)
  std::vector<TaskVariant> variants;
  double flops = 0;  // of the prompt's shapes ([cost]); 0 when not given
  double bytes = 0;
  // [verify]
  int seeds = 7;
  std::vector<InputProfile> profiles = {std::begin(kAllInputProfiles), std::end(kAllInputProfiles)};
  double large_scale = 100;
  // How many of the seeds compute the prompt's shape set (the first ones); the variants run every
  // seed. Model blocks whose prompt case costs minutes on the simulator set 1. 0: every seed.
  int prompt_seeds = 0;
  // [reference]: what the reference implementation of NKIBench says of the task
  // (nkibench-reference.md §3.1). The hints are the ones a prompt may show.
  std::string reference_task_id;                              // L{level}_{category}_{NNN}
  std::optional<std::pair<double, double>> expected_speedup;  // over eager PyTorch, (low, high)
  std::vector<std::string> engine_hints;                      // tensor_engine, vector_engine, dma_engine
  std::map<std::string, int64_t> tile_suggestions;            // tile_m, tile_c, tile_seq, ...
  // untrusted_reference = true: task.py is not ours (a client's inline reference,
  // tasks/inline_task.h), so the reference worker runs it only in confined children.
  bool untrusted_reference = false;
  // [policy]
  bool strict_precision = true;
  std::vector<DType> allow_dtypes;

  std::string task_py;  // the sources, as read
  std::string task_toml;
  std::string hash;                   // sha256 hex of both: the reference cache's task key
  std::vector<std::string> warnings;  // unknown keys and other things worth a look

  std::string label() const { return id.empty() ? dir : id + "_" + name; }
  std::string baseline_path() const;
  const Tolerance& tolerance_for(DType dtype) const;
  std::vector<ShapeSet> shape_sets() const;  // the prompt's first, then each variant's
  // Float types narrower than the task's narrowest float argument or output (unless allowed):
  // the static policy flags them as a precision drop.
  std::vector<DType> forbidden_dtypes() const;
};

// A TOML syntax error in task.toml or in another task file (a suite): nkia_task_toml_syntax at
// the parser's location.
Diagnostic toml_syntax_error(std::string description, const std::string& file, int line, int col);

// A Python identifier (ASCII letters, digits and _, not starting with a digit), as task.toml's
// names and entries must be.
bool is_identifier(std::string_view s);
// The element types a task's tensors may have, by PyTorch's name (tasks/FORMAT.md): float32,
// float16, bfloat16, int32, int64 (given to the kernel as int32), int16, int8, uint8, bool.
bool is_task_dtype(std::string_view torch_name);

// Tolerances used when [tolerance] does not name a dtype.
Tolerance default_tolerance(DType dtype);

// `path` is a task folder or its task.toml. Codes: nkia_task_not_found, nkia_task_toml_syntax,
// nkia_task_invalid (the message names the field); task.py is read as Python reads it
// (runtime/python_source.h: nkia_not_utf8, nkia_source_encoding at the first unreadable byte).
Result<Task> load_task(const std::string& path);
// The same from text; `dir` is where baseline.py is looked for and what messages name.
Result<Task> parse_task(std::string_view toml_text, std::string task_py, const std::string& dir);

}  // namespace nki_agent
