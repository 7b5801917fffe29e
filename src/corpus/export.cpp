// Corpus exports (corpus/export.h).
#include "corpus/export.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/prompts.h"
#include "tasks/task.h"

namespace nki_agent::corpus {

namespace fs = std::filesystem;

const char* export_formats() {
  return "verl, trl, openrlhf, kernelbench";
}

Result<std::string> export_corpus(const std::string& dir, const ExportOptions& opt, int64_t& rows) {
  const std::string& f = opt.format;
  if (f != "verl" && f != "trl" && f != "openrlhf" && f != "kernelbench")
    return fail("nkia_bad_argument", fmt::format("unknown export format '{}'", f),
                fmt::format("give one of {}", export_formats()));
  std::ifstream in(fs::path(dir) / "corpus.jsonl");
  if (!in)
    return fail("nkia_task_not_found", fmt::format("{} holds no corpus.jsonl", dir),
                "give the --out folder of `nki-agent corpus generate`");
  std::string out, line;
  rows = 0;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    auto m = nlohmann::json::parse(line, nullptr, false);
    if (m.is_discarded() || !m.is_object())
      return fail("nkia_task_invalid", fmt::format("{}/corpus.jsonl:{}: not a JSON object", dir, lineno),
                  "regenerate the corpus");
    const std::string split = m.value("split", "train");
    if (!opt.split.empty() && split != opt.split) continue;
    auto task = load_task((fs::path(dir) / m.value("folder", "")).string());
    if (!task) return fail(task.error());
    nlohmann::json row;
    if (f == "kernelbench") {
      row = {{"code", task->task_py},
             {"level", task->level},
             {"name", task->id + "_" + task->name},
             {"problem_id", rows + 1}};
    } else {
      PromptOptions po;
      po.version = opt.prompt_version;
      po.tools = opt.tools;
      auto p = build_prompt(*task, po);
      if (!p) return fail(p.error());
      const nlohmann::json messages = nlohmann::json::array(
          {{{"role", "system"}, {"content", p->system}}, {{"role", "user"}, {"content", p->user}}});
      if (f == "verl") {
        row["data_source"] = "nki-agent-corpus";
        row["prompt"] = messages;
        row["ability"] = "nki_kernel";
        row["reward_model"] = {{"style", "rule"}, {"ground_truth", task->id}};
        row["extra_info"] = {{"split", split},
                             {"index", rows},
                             {"task_id", task->id},
                             {"level", task->level},
                             {"tools_kwargs", nlohmann::json::object()},
                             {"prompt_version", p->version}};
        if (opt.tools) row["agent_name"] = "tool_agent";
      } else if (f == "trl") {
        row = {{"prompt", messages}, {"task_id", task->id}, {"level", task->level}, {"split", split}};
      } else {
        row = {{"input", messages}, {"label", task->id}};
      }
    }
    out += row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    ++rows;
  }
  return out;
}

}  // namespace nki_agent::corpus
