// Finding task folders (tasks/task_dirs.h).
#include "tasks/task_dirs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "tasks/task.h"

namespace nki_agent {

namespace fs = std::filesystem;

Result<std::vector<std::string>> find_task_dirs(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return fail("nkia_task_not_found", fmt::format("{} is not a folder", root),
                "give a folder of tasks, e.g. tasks/nkibench");
  std::vector<std::string> dirs;
  if (fs::is_regular_file(fs::path(root) / "task.toml", ec)) dirs.push_back(root);
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 6) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec) && fs::is_regular_file(it->path() / "task.toml", ec)) dirs.push_back(it->path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string default_task_root() {
  if (const char* e = std::getenv("NKIA_TASKS"); e && *e) return e;
  std::error_code ec;
  if (fs::is_directory("tasks/nkibench", ec)) return "tasks/nkibench";
  return "tasks";
}

Result<std::string> resolve_task_dir(const std::string& spec, const std::string& root) {
  std::error_code ec;
  fs::path p(spec);
  if (fs::is_regular_file(p, ec) && p.filename() == "task.toml")
    return p.parent_path().empty() ? "." : p.parent_path().string();
  if (fs::is_regular_file(p / "task.toml", ec)) return p.string();
  std::vector<std::string> matches;
  if (spec.find('/') == std::string::npos && fs::is_directory(root, ec)) {
    auto dirs = find_task_dirs(root);
    if (dirs)
      for (const auto& d : *dirs) {
        std::string name = fs::path(d).filename().string();
        if (name == spec || name.rfind(spec + "_", 0) == 0) matches.push_back(d);
      }
    if (matches.empty() && dirs)  // folders named otherwise: by the id in their task.toml
      for (const auto& d : *dirs)
        if (auto t = load_task(d); t && (t->id == spec || t->label() == spec)) matches.push_back(d);
  }
  if (matches.size() == 1) return matches[0];
  if (matches.size() > 1)
    return fail("nkia_task_ambiguous", fmt::format("'{}' names {} tasks under {}", spec, matches.size(), root),
                fmt::format("give the folder, e.g. {}", matches[0]));
  return fail("nkia_task_not_found", fmt::format("no task '{}' (not a task folder, and none under {})", spec, root),
              "'nki-agent tasks list' lists the tasks; give a folder holding task.toml, or --root DIR");
}

}  // namespace nki_agent
