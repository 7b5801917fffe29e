// Named task lists (tasks/suite.h).
#include "tasks/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <toml++/toml.h>
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "tasks/task.h"
#include "tasks/task_dirs.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxSuiteBytes = 1 << 20;

Diagnostic invalid(const std::string& path, const std::string& field, const std::string& what) {
  return Diagnostic::error("nkia_suite_invalid", fmt::format("{}: {}: {}", path, field, what),
                           "a suite file has name, description, inferred, levels and tasks (tasks/suite.h)");
}

}  // namespace

std::vector<std::string> suite_names(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(root) / "suites", ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".toml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

Result<Suite> load_suite(const std::string& root, const std::string& name) {
  std::error_code ec;
  const bool plain = !name.empty() && name.find('/') == std::string::npos && name.find("..") == std::string::npos;
  fs::path p = fs::path(root) / "suites" / (name + ".toml");
  if (!plain || !fs::is_regular_file(p, ec)) {
    auto names = suite_names(root);
    return fail("nkia_suite_not_found", fmt::format("no suite '{}' under {}/suites", name, root),
                names.empty() ? std::string("this task root has no suites/ folder")
                              : "the suites: " + fmt::format("{}", fmt::join(names, ", ")));
  }
  if (fs::file_size(p, ec) > static_cast<uintmax_t>(kMaxSuiteBytes))
    return fail(invalid(p.string(), "file", "larger than 1 MiB"));
  Suite s;
  s.path = p.string();
  toml::table t;
  try {
    t = toml::parse_file(s.path);
  } catch (const toml::parse_error& e) {
    return fail(toml_syntax_error(std::string(e.description()), s.path, static_cast<int>(e.source().begin.line),
                                  static_cast<int>(e.source().begin.column)));
  }
  for (auto&& [k, v] : t) {
    const std::string key(k.str());
    if (key != "name" && key != "description" && key != "inferred" && key != "levels" && key != "tasks")
      return fail(invalid(s.path, key, "unknown field"));
  }
  s.name = t["name"].value_or(name);
  if (s.name != name) return fail(invalid(s.path, "name", fmt::format("'{}' differs from the file's name", s.name)));
  s.description = t["description"].value_or(std::string());
  if (const toml::node* n = t.get("inferred")) {
    auto b = n->value<bool>();
    if (!b) return fail(invalid(s.path, "inferred", "must be true or false"));
    s.inferred = *b;
  }
  if (const toml::node* n = t.get("levels")) {
    const toml::array* a = n->as_array();
    if (!a) return fail(invalid(s.path, "levels", "must be an array of level numbers"));
    for (auto&& e : *a) {
      auto l = e.value_exact<int64_t>();
      if (!l || *l < 1 || *l > 9) return fail(invalid(s.path, "levels", "a level is an integer 1..9"));
      s.levels.push_back(static_cast<int>(*l));
    }
  }
  if (const toml::node* n = t.get("tasks")) {
    const toml::array* a = n->as_array();
    if (!a) return fail(invalid(s.path, "tasks", "must be an array of task ids"));
    std::set<std::string> seen;
    for (auto&& e : *a) {
      auto id = e.value<std::string>();
      if (!id || id->empty()) return fail(invalid(s.path, "tasks", "a task id is a non-empty string"));
      if (!seen.insert(*id).second) return fail(invalid(s.path, "tasks", fmt::format("'{}' is listed twice", *id)));
      s.tasks.push_back(*id);
    }
  }
  if (s.levels.empty() && s.tasks.empty())
    return fail(invalid(s.path, "tasks", "the suite names no task and no level"));
  return s;
}

Result<std::vector<std::string>> suite_task_dirs(const Suite& suite, const std::string& root) {
  auto dirs = find_task_dirs(root);
  if (!dirs) return fail(dirs.error());
  // Each folder's id and level, from its task.toml (a folder that does not load keeps its name).
  std::map<std::string, std::string> by_id;
  std::map<std::string, int> level_of;
  for (const auto& d : *dirs) {
    auto t = load_task(d);
    const std::string id = t && !t->id.empty() ? t->id : fs::path(d).filename().string();
    by_id.emplace(id, d);
    if (t) level_of[d] = t->level;
  }
  std::vector<std::string> out, missing;
  std::set<std::string> taken;
  for (const auto& id : suite.tasks) {
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      missing.push_back(id);
      continue;
    }
    if (taken.insert(it->second).second) out.push_back(it->second);
  }
  if (!missing.empty()) {
    std::vector<std::string> shown(missing.begin(), missing.begin() + std::min<size_t>(missing.size(), 12));
    return fail(
        "nkia_suite_missing_task",
        fmt::format("suite '{}' names {} task(s) that {} does not hold: {}{}", suite.name, missing.size(), root,
                    fmt::join(shown, ", "), missing.size() > shown.size() ? ", ..." : ""),
        "add the tasks, run a suite that the root holds ('nki-agent tasks suites'), or select tasks with --only");
  }
  for (const auto& d : *dirs) {
    auto lv = level_of.find(d);
    if (lv == level_of.end()) continue;
    if (std::find(suite.levels.begin(), suite.levels.end(), lv->second) != suite.levels.end() && taken.insert(d).second)
      out.push_back(d);
  }
  return out;
}

}  // namespace nki_agent
