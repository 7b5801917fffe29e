// tasks/reference.h — a task's PyTorch reference, run in a separate process and cached on disk.
//
// The reference is the task's own task.py (Model, get_init_inputs) run by Debian's PyTorch on the
// CPU in the reference worker (tasks/py/reference_worker.py, started by tasks/subprocess.h):
// deterministic algorithms, a fixed thread count, eval mode, no_grad. It never runs in nki-agent,
// and never in the kernel sandbox (which has no torch). The worker starts on the first cache miss
// and serves every later request of the same runner (importing torch takes seconds).
//
// Weights: for each seed, Model(*get_init_inputs()) is built after torch.manual_seed(seed); every
// parameter the task declares (kind = "param", state_dict name with dots as underscores) is read
// from it — constant-initialised ones re-drawn, explicit `dist`s drawn — and handed to the kernel
// as an argument, so the kernel and the reference see the same numbers.
//
// Cache: one folder per entry under the cache directory, named by the SHA-256 of everything the
// entry depends on — the task's text (task.py + task.toml), the seed, the shape set and its
// shapes, the input profile, the input generator's version, the PyTorch installation, the worker's
// own source and thread count. Entries are written to a temporary folder and renamed into place,
// so a crash never leaves half an entry; an unreadable entry is recomputed. Every hit marks the
// entry used; a runner that stored entries prunes the cache to its size limit, least recently
// used first, when it ends (tasks/reference_cache.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "tasks/subprocess.h"
#include "tasks/task.h"
#include "tensor/tensor.h"

namespace nki_agent {

struct ReferenceOptions {
  std::string python;            // empty: tasks/helpers.h's choice
  std::string cache_dir;         // empty: default_reference_cache_dir()
  bool use_cache = true;         // false: compute every time and store nothing (determinism checks)
  int threads = 1;               // torch's intra-op threads; part of the cache key
  double load_seconds = 300;     // starting the worker: importing torch and task.py
  double request_seconds = 900;  // one request (a forward at the prompt's shapes on one thread)
  int64_t memory_mib = 32768;    // the worker's address space
};

// $NKIA_REFERENCE_CACHE, else $XDG_CACHE_HOME/nki-agent/references, else
// $HOME/.cache/nki-agent/references, else /tmp/nki-agent-references.
std::string default_reference_cache_dir();

// What identifies the installed PyTorch without importing it (which takes seconds): its
// version.py and the size and time of its __init__.py, found where Debian's python3.11 finds them.
std::string torch_fingerprint();

struct ReferenceStats {
  int cached = 0;      // entries read from the cache
  int computed = 0;    // entries the worker computed
  double seconds = 0;  // spent in the worker (including its start)
  // PyTorch's own share of `seconds`, as the worker timed it: building models and drawing their
  // parameters, and the forwards (no interpreter start, no .npy reads or writes). What computing
  // the same references in PyTorch costs, for comparison with a verification.
  double compute_seconds = 0;
  std::string torch;  // the worker's torch.__version__, when it ran
  nlohmann::json to_json() const;
};

// How many bytes of loaded parameters a ReferenceRunner keeps beyond its two most recent seeds.
inline constexpr int64_t kMaxKeptParamBytes = int64_t{1} << 30;

class ReferenceRunner {
 public:
  ReferenceRunner(const Task& task, ReferenceOptions options);
  ~ReferenceRunner();
  ReferenceRunner(const ReferenceRunner&) = delete;
  ReferenceRunner& operator=(const ReferenceRunner&) = delete;

  // The task's parameters for `seed`, in task order, in the kernel's dtypes. Thread-safe.
  Result<std::vector<Tensor>> params(uint64_t seed);
  // The reference outputs at one case. `inputs` are the kernel's tensors for the task's
  // kind = "input" args, in order (int64 args as int32). Thread-safe. Codes:
  // nkia_reference_failed (task.py raised: the message carries the Python error),
  // nkia_reference_mismatch (the outputs disagree with task.toml), nkia_helper_*.
  Result<std::vector<Tensor>> outputs(uint64_t seed, const ShapeSet& set, InputProfile profile,
                                      const std::vector<Tensor>& inputs);
  // What task.py itself says: get_inputs() and state_dict entries, and (forward = true) the
  // outputs of a forward on get_inputs(). Never cached.
  Result<nlohmann::json> inspect(uint64_t seed, bool forward);

  ReferenceStats stats() const;

 private:
  Result<HelperProcess*> worker();
  Result<nlohmann::json> ask(nlohmann::json request, double seconds);
  Result<std::string> params_dir(uint64_t seed);  // the folder holding the seed's param .npy files
  std::string entry_dir(const std::string& key) const;
  Result<std::string> make_temp_dir(const std::string& tag);
  Result<void> publish(const std::string& tmp, const std::string& final_dir);

  const Task& task_;
  ReferenceOptions opt_;
  std::string fingerprint_;
  std::string scratch_;  // this runner's temporary folder (removed in the destructor)
  int scratch_seq_ = 0;
  int stored_ = 0;  // entries this runner published (the cache is pruned to its limit at the end)
  std::unique_ptr<HelperProcess> worker_;
  std::optional<Diagnostic> worker_error_;  // a worker that failed to start is not retried
  std::map<uint64_t, std::string> param_dirs_;
  // Loaded, per seed, in sealed shared memory (they cross into kernel workers without a copy); at
  // most kMaxKeptParamBytes of them beyond the two most recent seeds (a 13B block's weights are
  // 1.3 GB a seed: cases run in seed order, so older seeds are not asked for again).
  void keep_params(uint64_t seed, const std::vector<Tensor>& params);  // under mu_
  std::map<uint64_t, std::vector<Tensor>> params_;
  std::vector<uint64_t> params_order_;  // seeds in params_, oldest first
  ReferenceStats stats_;
  mutable std::mutex mu_;
};

}  // namespace nki_agent
