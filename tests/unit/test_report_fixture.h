// tests/unit/test_report_fixture.h — the results database the report tests share: two runs of
// eight tasks (levels 1 and 2) with every status present (passed, compiled = a failed check,
// failed = no kernel compiled, refused, interrupted, error = a broken task), hostile text in a
// message and in a kernel, and one trajectory file whose last failed check the row itself lacks.
//
// The figures the tests expect, by hand:
//   run A: 6 tasks with a result (1 broken, 1 interrupted apart); 4 compiled, 3 passed with
//          speedups 2.5, 0.9, 1.2; fast_0 = fast_0.5 = fast_0.8 = 3/6, fast_1 = 2/6, fast_1.5 = fast_2 = 1/6;
//          geomean (2.5 · 0.9 · 1.2)^(1/3) = 1.392477.
//   run B: 8 tasks with a result; 6 passed with speedups 3, 1, 1.6, 2, 1.1, 1.2; fast_1 = 5/8,
//          fast_1.5 = 3/8, fast_2 = 1/8 (2.0 is not above 2); geomean 12.672^(1/6) = 1.526889.
//   B against A: 6 paired tasks, gains 3 (L1_003, L1_004, L2_001), losses 1 (L1_002), faster 1
//          (L1_001), same speed 1 (L2_004), unpaired 2 (L2_002 interrupted, L2_003 broken in A);
//          d = 2/6, se = sqrt(4 − 4/6)/6, CI [−0.263065, 0.929731]; McNemar exact p = 10/16.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/store.h"

namespace nki_agent::testing {

inline constexpr const char* kHostileMessage = "</script><img src=x onerror=alert(1)> & \"quoted\" \xff bad byte";
inline constexpr const char* kHostileKernel = "def k():\n    return '</pre></details><script>alert(2)</script>'\n";

inline TaskRow report_row(const std::string& run, const std::string& id, int level, const std::string& category,
                          const std::string& status, double speedup, int first_pass_turn) {
  TaskRow r;
  r.run_id = run;
  r.task_id = id;
  r.task = id + "_task";
  r.level = level;
  r.category = category;
  r.status = status;
  r.passed = status == "passed";
  r.compiled = status == "passed" || status == "compiled";
  r.speedup = r.passed ? speedup : 0;
  r.turns = r.passed ? first_pass_turn + 1 : 4;
  r.tool_calls = 2 * r.turns;
  r.input_tokens = 1000;
  r.output_tokens = 200;
  r.cost_usd = 0.01;
  r.seconds = 2;
  r.kernel = "def kernel(a):\n    return a\n";
  nlohmann::json speed = {{"available", r.passed}, {"target", "trn1"}};
  if (r.passed)
    speed.update({{"candidate_seconds", 1e-6}, {"baseline_seconds", speedup * 1e-6}, {"roofline_fraction", 0.3}});
  r.result = {{"status", status},
              {"first_pass_turn", r.passed ? first_pass_turn : 0},
              {"model_seconds", 1.5},
              {"tool_seconds", 0.5}};
  if (status == "passed" || status == "compiled")
    r.result["verify"] = {{"passed", r.passed}, {"check", r.passed ? "" : "mismatch"}, {"speed", speed}};
  return r;
}

// Writes the fixture into `dir` (created); returns the database's path.
inline std::string write_report_fixture(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "bench.sqlite").string();
  auto opened = ResultStore::open(db);
  if (!opened) return {};
  auto& store = **opened;
  if (!store.add_run({"A", "key-a", "model-a", "tasks", {{"prompt_version", "v1"}}, "2026-01-01T00:00:00Z"})) return {};
  if (!store.add_run({"B", "key-b", "model-b", "tasks", {{"prompt_version", "v2"}}, "2026-02-01T00:00:00Z"})) return {};

  TaskRow a3 = report_row("A", "L1_003", 1, "reductions", "compiled", 0, 0);
  a3.error = kHostileMessage;
  TaskRow a4 = report_row("A", "L1_004", 1, "reductions", "failed", 0, 0);
  a4.error = "kernel.py:3: error[err_unsupported_memory]: bad memory";
  TaskRow a6 = report_row("A", "L2_002", 2, "matmul_fusions", "interrupted", 0, 0);
  a6.error = "the endpoint answered 502 Bad Gateway";
  TaskRow a7 = report_row("A", "L2_003", 2, "matmul_fusions", "error", 0, 0);
  a7.error = "task.toml: broken";
  a7.kernel.clear();
  const TaskRow run_a[] = {report_row("A", "L1_001", 1, "elementwise", "passed", 2.5, 1),
                           report_row("A", "L1_002", 1, "elementwise", "passed", 0.9, 3),
                           a3,
                           a4,
                           report_row("A", "L2_001", 2, "matmul_fusions", "refused", 0, 0),
                           a6,
                           a7,
                           report_row("A", "L2_004", 2, "matmul_fusions", "passed", 1.2, 2)};
  // B's L1_002 stored no check: its trajectory has the last failed verification.
  TaskRow b2 = report_row("B", "L1_002", 1, "elementwise", "compiled", 0, 0);
  b2.result.erase("verify");
  b2.kernel = kHostileKernel;
  b2.trajectory = (dir / "B" / "L1_002.jsonl").string();
  std::filesystem::create_directories(dir / "B");
  {
    std::ofstream t(b2.trajectory);
    using nlohmann::json;
    t << json{{"type", "start"}, {"model", "model-b"}, {"prompt_version", "v2"}, {"user", "Write the kernel."}}.dump()
      << "\n"
      << json{{"type", "model_call"},
              {"turn", 1},
              {"model", "model-b"},
              {"message",
               {{"role", "assistant"},
                {"text", "Here is my kernel."},
                {"tool_calls",
                 json::array(
                     {{{"id", "c1"}, {"name", "verify"}, {"arguments", json{{"kernel", "def k(): pass"}}.dump()}}})}}}}
             .dump()
      << "\n"
      << "not json\n"
      << json{{"type", "tool"},
              {"turn", 1},
              {"name", "verify"},
              {"content", "FAIL zero_output: output 0 is all zeros <b>"},
              {"is_error", false},
              {"result", {{"passed", false}, {"check", "zero_output"}, {"message", "output 0 is all zeros"}}}}
             .dump()
      << "\n"
      << json{{"type", "end"}, {"result", {{"status", "compiled"}}}}.dump() << "\n";
  }
  const TaskRow run_b[] = {report_row("B", "L1_001", 1, "elementwise", "passed", 3.0, 1),
                           b2,
                           report_row("B", "L1_003", 1, "reductions", "passed", 1.0, 2),
                           report_row("B", "L1_004", 1, "reductions", "passed", 1.6, 4),
                           report_row("B", "L2_001", 2, "matmul_fusions", "passed", 2.0, 1),
                           report_row("B", "L2_002", 2, "matmul_fusions", "passed", 1.1, 1),
                           report_row("B", "L2_003", 2, "matmul_fusions", "compiled", 0, 0),
                           report_row("B", "L2_004", 2, "matmul_fusions", "passed", 1.2, 2)};
  for (const auto& r : run_a)
    if (!store.add_result(r)) return {};
  for (const auto& r : run_b)
    if (!store.add_result(r)) return {};
  return db;
}

}  // namespace nki_agent::testing
