// Corpus exports (corpus/export.h).
#include "corpus/export.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "agent/prompts.h"
#include "tasks/task.h"
#include "tasks/task_dirs.h"

namespace nki_agent::corpus {

namespace fs = std::filesystem;

const char* export_formats() {
  return "verl, trl, openrlhf, kernelbench";
}

namespace {

// The tasks to export, in order, with their split: a corpus's manifest, or every task folder under
// a task root that has none (NKIBench), each in the "test" split.
struct Entry {
  std::string folder, split;
};
Result<std::vector<Entry>> export_entries(const std::string& dir, bool& corpus) {
  std::vector<Entry> out;
  std::ifstream in(fs::path(dir) / "corpus.jsonl");
  corpus = bool(in);
  if (!corpus) {
    auto dirs = find_task_dirs(dir);
    if (!dirs) return fail(dirs.error());
    if (dirs->empty())
      return fail("nkia_task_not_found", fmt::format("{} holds no corpus.jsonl and no task folder", dir),
                  "give the --out folder of `nki-agent corpus generate` or a task root such as tasks/nkibench");
    for (auto& d : *dirs) out.push_back({std::move(d), "test"});
    return out;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    auto m = nlohmann::json::parse(line, nullptr, false);
    if (m.is_discarded() || !m.is_object())
      return fail("nkia_task_invalid", fmt::format("{}/corpus.jsonl:{}: not a JSON object", dir, lineno),
                  "regenerate the corpus");
    out.push_back({(fs::path(dir) / m.value("folder", "")).string(), m.value("split", "train")});
  }
  return out;
}

}  // namespace

Result<std::string> export_corpus(const std::string& dir, const ExportOptions& opt, int64_t& rows) {
  const std::string& f = opt.format;
  if (f != "verl" && f != "trl" && f != "openrlhf" && f != "kernelbench")
    return fail("nkia_bad_argument", fmt::format("unknown export format '{}'", f),
                fmt::format("give one of {}", export_formats()));
  bool corpus = false;
  auto entries = export_entries(dir, corpus);
  if (!entries) return fail(entries.error());
  std::string out;
  std::map<int, std::string> by_level;  // kernelbench: the rows of each level, level by level
  std::map<int, int64_t> level_rows;    // kernelbench: problem ids are 1-based within a level
  rows = 0;
  for (const Entry& e : *entries) {
    if (!opt.split.empty() && e.split != opt.split) continue;
    auto task = load_task(e.folder);
    if (!task) return fail(task.error());
    nlohmann::json row;
    if (f == "kernelbench") {
      const int64_t pid = ++level_rows[task->level];
      row = {{"code", task->task_py},
             {"level", task->level},
             {"name", fmt::format("{}_{}_{}.py", pid, task->id, task->name)},
             {"problem_id", pid}};
    } else {
      PromptOptions po;
      po.version = opt.prompt_version;
      po.tools = opt.tools;
      auto p = build_prompt(*task, po);
      if (!p) return fail(p.error());
      const nlohmann::json messages = nlohmann::json::array(
          {{{"role", "system"}, {"content", p->system}}, {{"role", "user"}, {"content", p->user}}});
      if (f == "verl") {
        row["data_source"] = corpus ? "nki-agent-corpus" : "nki-agent-tasks";
        row["prompt"] = messages;
        row["ability"] = "nki_kernel";
        row["reward_model"] = {{"style", "rule"}, {"ground_truth", task->id}};
        row["extra_info"] = {{"split", e.split},
                             {"index", rows},
                             {"task_id", task->id},
                             {"level", task->level},
                             {"tools_kwargs", nlohmann::json::object()},
                             {"prompt_version", p->version}};
        if (opt.tools) row["agent_name"] = "tool_agent";
      } else if (f == "trl") {
        row = {{"prompt", messages}, {"task_id", task->id}, {"level", task->level}, {"split", e.split}};
      } else {
        row = {{"input", messages}, {"label", task->id}};
      }
    }
    std::string text = row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (f == "kernelbench")
      by_level[task->level] += text;
    else
      out += text;
    ++rows;
  }
  for (const auto& [level, text] : by_level) out += text;
  return out;
}

}  // namespace nki_agent::corpus
