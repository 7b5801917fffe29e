// agent/sft.cpp — trajectories to chat-format SFT records.
#include "agent/sft.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "agent/sft_pairs.h"
#include "core/hash.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

tl::unexpected<Diagnostic> bad(const std::string& why) {
  return fail("nkia_sft_trajectory", why);
}

// What makes two records the same example: the conversation and the tools, not the metadata.
std::string conversation_key(const nlohmann::json& rec) {
  const nlohmann::json both = {{"messages", rec.value("messages", nlohmann::json())},
                               {"tools", rec.value("tools", nlohmann::json())}};
  return sha256_hex(both.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// The keys of the records `out` already holds (none when it does not exist yet).
std::set<std::string> keys_in(const std::string& out) {
  std::set<std::string> keys;
  std::ifstream in(out, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) keys.insert(conversation_key(j));
  }
  return keys;
}

bool is_results_database(const fs::path& p) {
  return p.extension() == ".sqlite" || p.extension() == ".db";
}

}  // namespace

Result<nlohmann::json> trajectory_to_sft(const std::vector<nlohmann::json>& events, const SftOptions& options) {
  if (events.empty() || !events.front().is_object() || events.front().value("type", "") != "start")
    return bad("the trajectory does not begin with a start event");
  const nlohmann::json& start = events.front();
  const nlohmann::json* end = nullptr;
  for (const auto& ev : events)
    if (ev.is_object() && ev.value("type", "") == "end") end = &ev;
  if (!end) return bad("the trajectory has no end event (the run was cut short)");
  const nlohmann::json result = end->value("result", nlohmann::json::object());
  if (options.passed_only && !result.value("passed", false)) return bad("the kernel did not pass");

  nlohmann::json messages = nlohmann::json::array();
  messages.push_back({{"role", "system"}, {"content", start.value("system", "")}});
  messages.push_back({{"role", "user"}, {"content", start.value("user", "")}});
  const int first_pass = result.value("first_pass_turn", 0);
  int replies = 0;
  for (const auto& ev : events) {
    if (!ev.is_object()) continue;
    const std::string type = ev.value("type", "");
    const int turn = ev.value("turn", 0);
    if (options.stop_at_first_pass && first_pass > 0 && turn > first_pass) break;
    if (type == "model_call") {
      if (!ev.contains("message")) continue;  // a failed call: nothing was said
      const nlohmann::json& m = ev["message"];
      nlohmann::json a = {{"role", "assistant"}, {"content", m.value("text", "")}};
      if (m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty()) {
        nlohmann::json calls = nlohmann::json::array();
        for (const auto& c : m["tool_calls"])
          calls.push_back({{"id", c.value("id", "")},
                           {"type", "function"},
                           {"function", {{"name", c.value("name", "")}, {"arguments", c.value("arguments", "")}}}});
        a["tool_calls"] = std::move(calls);
      }
      messages.push_back(std::move(a));
      ++replies;
    } else if (type == "tool" && !ev.value("implicit", false)) {
      messages.push_back(
          {{"role", "tool"}, {"tool_call_id", ev.value("call_id", "")}, {"content", ev.value("content", "")}});
    } else if (type == "message") {
      messages.push_back({{"role", ev.value("role", "user")}, {"content", ev.value("text", "")}});
    }
  }
  if (replies == 0) return bad("the model never replied");
  // A conversation for training ends on the model's turn: drop trailing tool/user messages that
  // no reply followed (the loop stopped after them).
  while (messages.size() > 2 && messages.back().value("role", "") != "assistant") messages.erase(messages.size() - 1);

  nlohmann::json tools = nlohmann::json::array();
  if (start.contains("tools") && start["tools"].is_array())
    for (const auto& t : start["tools"])
      tools.push_back({{"type", "function"},
                       {"function",
                        {{"name", t.value("name", "")},
                         {"description", t.value("description", "")},
                         {"parameters", t.value("parameters", nlohmann::json::object())}}}});
  nlohmann::json meta = {{"task", start.value("task", "")},
                         {"level", start.value("level", 0)},
                         {"model", start.value("model", "")},
                         {"models", result.value("models", nlohmann::json::array())},
                         {"prompt_version", start.value("prompt_version", "")},
                         {"dialect", start.value("dialect", "")},
                         {"seed", start.value("seed", 0)},
                         {"simulator_version", start.value("simulator_version", "")},
                         {"run", start.value("run", "")},
                         {"status", result.value("status", "")},
                         {"passed", result.value("passed", false)},
                         {"speedup", result.value("speedup", 0.0)},
                         {"turns", result.value("turns", 0)}};
  return nlohmann::json{{"messages", std::move(messages)}, {"tools", std::move(tools)}, {"metadata", std::move(meta)}};
}

Result<SftExportStats> export_sft(const std::vector<std::string>& inputs, const std::string& out,
                                  const SftOptions& options) {
  std::vector<fs::path> files, databases;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_regular_file(in, ec) && is_results_database(in)) {
      databases.push_back(in);
    } else if (fs::is_directory(in, ec)) {
      for (auto it = fs::recursive_directory_iterator(in, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ".jsonl") files.push_back(it->path());
    } else if (fs::is_regular_file(in, ec)) {
      files.push_back(in);
    } else {
      return fail("nkia_sft_io", fmt::format("{} is neither a trajectory file nor a folder", in));
    }
  }
  std::sort(files.begin(), files.end());
  std::set<std::string> seen = keys_in(out);
  std::ofstream o(out, std::ios::binary | std::ios::app);
  if (!o) return fail("nkia_sft_io", "cannot write " + out);
  SftExportStats st;
  auto write = [&](const nlohmann::json& rec) {
    if (!seen.insert(conversation_key(rec)).second) {
      ++st.duplicates;
      return;
    }
    o << rec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    ++st.written;
  };
  for (const auto& db : databases) {
    ++st.files;
    auto pairs = sft_pairs_from_results(db.string(), options.run_id, options.tasks_root);
    if (!pairs) return tl::unexpected(pairs.error());
    st.pairs += static_cast<int>(pairs->records.size());
    st.skipped += static_cast<int>(pairs->notes.size());
    for (const auto& n : pairs->notes) st.notes.push_back(db.string() + ": " + n);
    for (const auto& rec : pairs->records) write(rec);
  }
  for (const auto& f : files) {
    if (fs::equivalent(f, out)) continue;
    ++st.files;
    std::ifstream in(f, std::ios::binary);
    std::vector<nlohmann::json> events;
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;  // a torn last line of a killed run
      events.push_back(std::move(j));
    }
    ++st.trajectories;
    auto rec = trajectory_to_sft(events, options);
    if (!rec) {
      ++st.skipped;
      st.notes.push_back(f.string() + ": " + rec.error().message);
      continue;
    }
    write(*rec);
  }
  o.flush();
  if (!o) return fail("nkia_sft_io", "cannot write " + out);
  return st;
}

}  // namespace nki_agent
