// Soundness checks of a task (tasks/task_check.h).
#include "tasks/task_check.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "tasks/baseline.h"
#include "tasks/inputs.h"
#include "tasks/reference.h"

namespace nki_agent {

namespace {

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data(), cb.data(), static_cast<size_t>(ca.nbytes())) == 0;
}

void check_contract(const Task& task, const nlohmann::json& j, std::vector<TaskProblem>& out) {
  auto problem = [&](std::string m) { out.push_back({"contract", std::move(m)}); };
  std::vector<const TaskArg*> inputs;
  for (const auto& a : task.args)
    if (a.kind == ArgKind::kInput) inputs.push_back(&a);
  const auto& got = j["inputs"];
  if (!got.is_array() || got.size() != inputs.size()) {
    problem(fmt::format("get_inputs() returns {} values; task.toml declares {} input args",
                        got.is_array() ? got.size() : 0, inputs.size()));
  } else {
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string dt = got[i].value("dtype", "");
      if (dt != inputs[i]->torch_dtype)
        problem(fmt::format("get_inputs()[{}] is {}; task.toml says arg '{}' is {}", i, dt, inputs[i]->name,
                            inputs[i]->torch_dtype));
      if (!got[i]["shape"].is_array() || got[i]["shape"].get<Shape>() != inputs[i]->shape)
        problem(fmt::format("get_inputs()[{}] has shape {}; task.toml says arg '{}' is {}", i, got[i]["shape"].dump(),
                            inputs[i]->name, shape_str(inputs[i]->shape)));
    }
  }
  for (const auto& e : j["state_dict"]) {
    std::string arg = e.value("arg", "");
    const TaskArg* decl = nullptr;
    for (const auto& a : task.args)
      if (a.name == arg && a.kind == ArgKind::kParam) decl = &a;
    if (!decl) {
      if (e.value("parameter", false))
        problem(
            fmt::format("the learned weight '{}' is not a param arg of task.toml: it would never reach the kernel "
                        "(declare [[args]] name = \"{}\", kind = \"param\")",
                        e.value("name", ""), arg));
      continue;
    }
    if (!e["shape"].is_array() || e["shape"].get<Shape>() != decl->shape)
      problem(fmt::format("state_dict '{}' has shape {}; task.toml says {}", e.value("name", ""), e["shape"].dump(),
                          shape_str(decl->shape)));
  }
  for (const auto& a : task.args) {
    if (a.kind != ArgKind::kParam) continue;
    bool found = false;
    for (const auto& e : j["state_dict"]) found |= e.value("arg", "") == a.name;
    if (!found) problem(fmt::format("param arg '{}' is not in the Model's state_dict", a.name));
  }
  const auto& outs = j["outputs"];
  if (!outs.is_array() || outs.size() != task.outputs.size()) {
    problem(fmt::format("forward() returns {} outputs; task.toml declares {}", outs.is_array() ? outs.size() : 0,
                        task.outputs.size()));
  } else {
    for (size_t k = 0; k < outs.size(); ++k) {
      if (outs[k].value("dtype", "") != task.outputs[k].torch_dtype)
        problem(fmt::format("forward() output {} is {}; task.toml says {}", k, outs[k].value("dtype", ""),
                            task.outputs[k].torch_dtype));
      if (!outs[k]["shape"].is_array() || outs[k]["shape"].get<Shape>() != task.outputs[k].shape)
        problem(fmt::format("forward() output {} has shape {}; task.toml says {}", k, outs[k]["shape"].dump(),
                            shape_str(task.outputs[k].shape)));
    }
  }
}

}  // namespace

nlohmann::json TaskCheckResult::to_json() const {
  nlohmann::json j = {{"task", task}, {"passed", passed}, {"seconds", seconds}};
  j["problems"] = nlohmann::json::array();
  for (const auto& p : problems) j["problems"].push_back({{"check", p.check}, {"message", p.message}});
  if (!warnings.empty()) j["warnings"] = warnings;
  if (baseline) j["baseline"] = baseline->to_json();
  return j;
}

std::string TaskCheckResult::format() const {
  std::string s = fmt::format("{}  {}\n", passed ? "OK  " : "BAD ", task);
  for (const auto& p : problems) s += fmt::format("  [{}] {}\n", p.check, p.message);
  for (const auto& w : warnings) s += fmt::format("  warning: {}\n", w);
  if (baseline && baseline->passed)  // a failing one is among the problems
    s += fmt::format("  baseline: passes ({}/{} cases)\n", baseline->cases_passed, baseline->cases_total);
  return s;
}

Result<TaskCheckResult> check_task(const Task& task, KernelService& service, const TaskCheckOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  TaskCheckResult r;
  r.task = task.label();
  r.warnings = task.warnings;
  const VerifyOptions& vo = options.verify;
  const uint64_t seed0 = vo.seed_base;

  if (options.baseline) {
    auto files = load_baseline_files(task);
    if (!files) {
      r.problems.push_back({"baseline", files.error().message});
    } else {
      auto v = verify_kernel(task, *files, service, vo);
      if (!v) {
        r.problems.push_back(
            {v.error().code.rfind("nkia_reference", 0) == 0 ? "reference" : "baseline", v.error().format()});
      } else {
        if (!v->passed)
          r.problems.push_back({"baseline", fmt::format("the baseline fails: {}: {}", v->check, v->message)});
        r.baseline = std::move(*v);
      }
    }
  }

  ReferenceRunner cached(task, vo.reference);  // the verification's own results (cache)
  ReferenceOptions fresh_opt = vo.reference;
  fresh_opt.use_cache = false;
  ReferenceRunner fresh(task, fresh_opt);  // a second worker process, no cache

  if (options.contract) {
    auto j = fresh.inspect(seed0, true);
    if (!j)
      r.problems.push_back({"reference", j.error().format()});
    else
      check_contract(task, *j, r.problems);
  }

  const auto sets = task.shape_sets();
  auto reference_at = [&](ReferenceRunner& runner, const ShapeSet& set, int seed_index) -> Result<std::vector<Tensor>> {
    const uint64_t seed = seed0 + static_cast<uint64_t>(seed_index);
    auto params = runner.params(seed);
    if (!params) return fail(params.error());
    const InputProfile profile = profile_for_seed(task, seed_index);
    CaseInputs in = make_case_inputs(task, set, seed, profile, *params);
    return runner.outputs(seed, set, profile, in.forward_inputs);
  };

  if (options.degenerate || options.determinism) {
    auto first = reference_at(cached, sets[0], 0);
    if (!first) {
      r.problems.push_back({"reference", first.error().format()});
    } else {
      if (options.determinism) {
        auto again = reference_at(fresh, sets[0], 0);
        if (!again) {
          r.problems.push_back({"reference", again.error().format()});
        } else {
          for (size_t k = 0; k < first->size() && k < again->size(); ++k)
            if (!bitwise_equal((*first)[k], (*again)[k]))
              r.problems.push_back({"deterministic", fmt::format("output {} differs between two runs of the reference "
                                                                 "(randomness in forward, or a nondeterministic op)",
                                                                 k)});
          auto p1 = cached.params(seed0), p2 = fresh.params(seed0);
          if (p1 && p2)
            for (size_t i = 0; i < p1->size() && i < p2->size(); ++i)
              if (!bitwise_equal((*p1)[i], (*p2)[i]))
                r.problems.push_back({"deterministic", fmt::format("parameter #{} differs between two runs", i)});
        }
      }
      if (options.degenerate) {
        for (size_t s = 0; s < sets.size(); ++s) {
          auto outs = s == 0 ? first : reference_at(cached, sets[s], 0);
          if (!outs) {
            r.problems.push_back({"reference", outs.error().format()});
            continue;
          }
          for (size_t k = 0; k < outs->size(); ++k) {
            std::string why = degenerate_reference((*outs)[k], task.tolerance_for(task.outputs[k].dtype));
            if (!why.empty())
              r.problems.push_back({"degenerate", fmt::format("output {} at the {} shapes: {}", k, sets[s].name, why)});
          }
        }
        auto second = reference_at(cached, sets[0], 1);
        if (second) {
          bool all_same = true;
          for (size_t k = 0; k < first->size() && k < second->size(); ++k)
            all_same &= bitwise_equal((*first)[k], (*second)[k]);
          if (all_same)
            r.problems.push_back({"degenerate",
                                  "the reference gives the same outputs for two different seeds: it "
                                  "ignores its inputs"});
        } else {
          r.problems.push_back({"reference", second.error().format()});
        }
      }
    }
  }
  r.passed = r.problems.empty();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace nki_agent
