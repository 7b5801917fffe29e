// A task's baseline with its library (tasks/baseline.h).
#include "tasks/baseline.h"

#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace nki_agent {

std::string baseline_lib_dir(const std::string& task_dir) {
  std::error_code ec;
  fs::path p = fs::absolute(task_dir, ec);
  if (ec) return {};
  // The task folder's parent (a level folder), then the two above it.
  for (int up = 0; up < 3 && p.has_parent_path() && p.parent_path() != p; ++up) {
    p = p.parent_path();
    if (fs::is_directory(p / "lib", ec)) return (p / "lib").string();
  }
  return {};
}

Result<KernelFiles> load_baseline_files(const Task& task) {
  auto files = load_kernel_files(task.baseline_path());
  if (!files) return fail(files.error());
  const std::string lib = baseline_lib_dir(task.dir);
  if (!lib.empty())
    if (auto r = add_kernel_library(*files, lib); !r) return fail(r.error());
  return files;
}

}  // namespace nki_agent
