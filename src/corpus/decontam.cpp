// Decontamination against NKIBench (corpus/decontam.h).
#include "corpus/decontam.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "corpus/vocabulary.h"
#include "tasks/helpers.h"
#include "tasks/subprocess.h"
#include "tasks/task_dirs.h"

namespace nki_agent::corpus {

namespace fs = std::filesystem;

Result<std::vector<ReferenceSource>> load_nkibench_sources(const std::string& root) {
  std::vector<ReferenceSource> out;
  std::error_code ec;
  for (const char* level : {"level1", "level2", "level3"}) {
    const fs::path dir = fs::path(root) / level;
    if (!fs::is_directory(dir, ec))
      return fail("nkia_task_not_found",
                  fmt::format("{} is not a folder: decontamination needs NKIBench's three levels", dir.string()),
                  "give --nkibench DIR, the folder holding level1/, level2/ and level3/ (tasks/nkibench)");
    auto dirs = find_task_dirs(dir.string());
    if (!dirs) return fail(dirs.error());
    for (const auto& d : *dirs) {
      std::ifstream f(fs::path(d) / "task.py", std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      std::string name = fs::path(d).filename().string();
      const size_t us = name.find('_', name.find('_') + 1);  // L2_019_matmul_gelu -> L2_019
      out.push_back({us == std::string::npos ? name : name.substr(0, us), ss.str()});
    }
  }
  return out;
}

Result<SimilarityRun> compare_to_nkibench(const std::vector<CandidateSource>& candidates,
                                          const std::vector<ReferenceSource>& references, const std::string& python) {
  nlohmann::json req;
  req["vocabulary"] = nlohmann::json::array();
  for (const OpDef& op : vocabulary()) req["vocabulary"].push_back(std::string(op.torch));
  req["references"] = nlohmann::json::object();
  for (const auto& r : references) req["references"][r.id] = r.task_py;
  req["candidates"] = nlohmann::json::object();
  for (const auto& c : candidates) req["candidates"][c.id] = c.task_py;
  ProcessLimits lim;
  lim.wall_seconds = 60 + double(candidates.size()) * 0.05;
  lim.cpu_seconds = lim.wall_seconds;
  lim.address_space_bytes = int64_t{4} << 30;
  lim.max_file_bytes = 0;
  lim.max_output_bytes = 256 << 20;
  auto r = run_process(helper_argv(helper_python(python), "corpus_similarity.py"), helper_environment(1),
                       req.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), lim);
  if (!r) {
    Diagnostic d = r.error();
    d.message = "the corpus similarity helper could not run: " + d.message;
    return fail(std::move(d));
  }
  auto j = nlohmann::json::parse(r->out, nullptr, false);
  if (r->exit_status != 0 || j.is_discarded() || !j.is_object() || !j.contains("candidates")) {
    Diagnostic d = Diagnostic::error(
        "nkia_helper_died", fmt::format("the corpus similarity helper failed (exit status {})", r->exit_status),
        "it needs Debian's python3.11 (scripts/install-deps.sh)");
    if (!r->err_tail.empty())
      d.with_note(r->err_tail.substr(r->err_tail.size() > 2000 ? r->err_tail.size() - 2000 : 0));
    return fail(std::move(d));
  }
  SimilarityRun run;
  for (const auto& [id, ref] : j["references"].items()) {
    ++run.references;
    if (ref.value("parsed", false)) ++run.references_parsed;
  }
  for (const auto& c : candidates) {
    const nlohmann::json& a = j["candidates"][c.id];
    Similarity s;
    s.op_graph = a.value("op_graph", "");
    s.parsed = a.value("parsed", false);
    for (const auto& u : a.value("unknown_calls", nlohmann::json::array()))
      s.unknown_calls.push_back(u.get<std::string>());
    s.nearest = a.value("nearest", "");
    s.score = a.value("score", 0.0);
    s.graph_match = a.value("graph_match", "");
    run.candidates.push_back(std::move(s));
  }
  return run;
}

}  // namespace nki_agent::corpus
