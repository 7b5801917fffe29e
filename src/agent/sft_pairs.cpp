// agent/sft_pairs.cpp — passing bench rows as single-shot SFT records (agent/sft_pairs.h).
#include "agent/sft_pairs.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "agent/prompts.h"
#include "agent/store.h"
#include "tasks/task_dirs.h"

namespace nki_agent {

std::string sft_kernel_dialect(const std::string& kernel) {
  return kernel.find("neuronxcc") != std::string::npos ? "legacy" : "current";
}

Result<nlohmann::json> pair_to_sft(const Task& task, const std::string& kernel, const std::string& dialect,
                                   const std::string& prompt_version, nlohmann::json metadata) {
  PromptOptions po;
  po.version = prompt_version.empty() ? PromptOptions{}.version : prompt_version;
  po.dialect = dialect;
  po.tools = false;
  auto prompt = build_prompt(task, po);
  if (!prompt) return tl::unexpected(prompt.error());
  std::string answer = "```python\n" + kernel;
  if (!kernel.empty() && kernel.back() != '\n') answer += '\n';
  answer += "```";
  nlohmann::json messages = nlohmann::json::array({{{"role", "system"}, {"content", prompt->system}},
                                                   {{"role", "user"}, {"content", prompt->user}},
                                                   {{"role", "assistant"}, {"content", answer}}});
  metadata["task"] = task.label();
  metadata["level"] = task.level;
  metadata["source"] = "pair";
  metadata["prompt_version"] = prompt->version;
  metadata["dialect"] = dialect;
  return nlohmann::json{
      {"messages", std::move(messages)}, {"tools", nlohmann::json::array()}, {"metadata", std::move(metadata)}};
}

Result<SftPairs> sft_pairs_from_results(const std::string& db_path, const std::string& run_id,
                                        const std::string& tasks_root) {
  auto store = ResultStore::open_existing(db_path);
  if (!store) return tl::unexpected(store.error());
  auto runs = (*store)->runs();
  if (!runs) return tl::unexpected(runs.error());
  SftPairs out;
  std::map<std::string, Result<Task>> tasks;  // by folder
  for (const RunInfo& run : *runs) {
    if (!run_id.empty() && run.run_id != run_id) continue;
    auto rows = (*store)->results(run.run_id);
    if (!rows) return tl::unexpected(rows.error());
    const std::string root = tasks_root.empty() ? run.tasks_root : tasks_root;
    for (const TaskRow& row : *rows) {
      if (!row.passed || row.kernel.empty()) continue;
      const std::string where = fmt::format("{} {} sample {}", run.run_id, row.task_id, row.sample);
      auto dir = resolve_task_dir(row.task_id, root);
      if (!dir) {
        out.notes.push_back(where + ": " + dir.error().message);
        continue;
      }
      auto it = tasks.find(*dir);
      if (it == tasks.end()) it = tasks.emplace(*dir, load_task(*dir)).first;
      if (!it->second) {
        out.notes.push_back(where + ": " + it->second.error().message);
        continue;
      }
      const nlohmann::json& res = row.result.is_object() ? row.result : nlohmann::json::object();
      nlohmann::json meta = {{"run", run.run_id},
                             {"model", run.model},
                             {"sample", row.sample},
                             {"seed", row.seed},
                             {"speedup", row.speedup}};
      auto rec = pair_to_sft(*it->second, row.kernel, sft_kernel_dialect(row.kernel),
                             res.value("prompt_version", std::string()), std::move(meta));
      if (!rec) {
        out.notes.push_back(where + ": " + rec.error().message);
        continue;
      }
      out.records.push_back(std::move(*rec));
    }
  }
  return out;
}

}  // namespace nki_agent
