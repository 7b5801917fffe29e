// The corpus pipeline end to end on a few tasks: the same seed writes the same bytes (with the
// execution filters run in Debian's python3.11 with PyTorch), a planted NKIBench op graph is
// removed by decontamination, and the report reads the manifest (corpus/corpus.h, report.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "corpus/corpus.h"
#include "corpus/export.h"
#include "corpus/report.h"
#include "tasks/baseline.h"
#include "tasks/task.h"
#include "tasks/task_dirs.h"

namespace nki_agent::corpus {
namespace {

namespace fs = std::filesystem;

std::string nkibench() {
  return std::string(NKIA_SOURCE_DIR) + "/tasks/nkibench";
}

std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_symlink()) {
      files[fs::relative(it->path(), root).string()] = "-> " + fs::read_symlink(it->path()).string();
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    std::ifstream f(it->path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    files[fs::relative(it->path(), root).string()] = ss.str();
  }
  return files;
}

fs::path temp_dir(const char* tag) {
  fs::path p = fs::temp_directory_path() / (std::string("nkia-corpus-test-") + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

TEST(CorpusPipeline, SameSeedSameBytesWhateverTheJobs) {
  const fs::path a = temp_dir("a"), b = temp_dir("b");
  CorpusOptions o;
  o.count = 4;
  o.seed = 5;
  o.nkibench = nkibench();
  o.out = a.string();
  o.jobs = 1;
  o.filter.batch = 2;
  auto ra = generate_corpus(o);
  ASSERT_TRUE(ra.has_value()) << ra.error().format();
  EXPECT_EQ(ra->kept, 4);
  o.out = b.string();
  o.jobs = 2;
  auto rb = generate_corpus(o);
  ASSERT_TRUE(rb.has_value()) << rb.error().format();
  const auto ta = tree(a), tb = tree(b);
  EXPECT_EQ(ta, tb);
  ASSERT_TRUE(ta.count("corpus.jsonl"));
  // Four manifest lines, each task folder loadable, the lib reachable from the corpus root.
  std::istringstream lines(ta.at("corpus.jsonl"));
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line);
    ++n;
    EXPECT_EQ(j["generator"], "corpus-gen-2");
    EXPECT_EQ(j["filters"]["deterministic"], "pass");
    EXPECT_TRUE(load_task((a / j["folder"].get<std::string>()).string()).has_value());
  }
  EXPECT_EQ(n, 4);
  EXPECT_TRUE(fs::is_directory(a / "lib" / "nkibench_ops"));
  EXPECT_FALSE(fs::is_symlink(a / "lib"));
  auto dirs = find_task_dirs(a.string());
  ASSERT_TRUE(dirs.has_value());
  EXPECT_EQ(dirs->size(), 4u);
  // Another seed: another corpus.
  o.out = b.string();
  o.seed = 6;
  o.force = true;
  o.filters = false;
  ASSERT_TRUE(generate_corpus(o).has_value());
  EXPECT_NE(tree(b).at("corpus.jsonl"), ta.at("corpus.jsonl"));
  // The report reads it back.
  auto rep = corpus_report(a.string());
  ASSERT_TRUE(rep.has_value());
  EXPECT_EQ((*rep)["tasks"], 4);
  EXPECT_NE(format_corpus_report(*rep).find("Filter funnel"), std::string::npos);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(CorpusPipeline, APlantedNkibenchOpGraphIsRemoved) {
  // gelu(a @ b) at 256 x 256: NKIBench L2_019's op graph.
  TaskGraph g;
  g.dtype = "float32";
  g.level = 2;
  g.structure = "chain";
  g.inputs = {{"x", {{-1, 256}, {-1, 256}}, "float32", kRows}, {"y1", {{-1, 256}, {-1, 256}}, "float32", kRows}};
  g.nodes = {{"matmul", {0, 1}, {}, "", kRows}, {"gelu", {2}, {}, "", kRows}};
  g.outputs = {3};
  const fs::path out = temp_dir("planted");
  CorpusOptions o;
  o.count = 2;
  o.seed = 9;
  o.nkibench = nkibench();
  o.out = out.string();
  o.filters = false;
  o.planted = {g};
  auto r = generate_corpus(o);
  ASSERT_TRUE(r.has_value()) << r.error().format();
  ASSERT_EQ(r->planted_rejected.size(), 1u);
  EXPECT_EQ(r->planted_rejected[0]["stage"], "decontam_graph");
  EXPECT_NE(r->planted_rejected[0]["reason"].get<std::string>().find("L2_019"), std::string::npos);
  // Without the plant nothing of the kept corpus has an NKIBench op graph.
  std::ifstream f(out / "corpus.jsonl");
  std::string line;
  while (std::getline(f, line)) EXPECT_NE(nlohmann::json::parse(line)["op_graph"], "gelu(matmul(in,in))");
  fs::remove_all(out);
}

TEST(CorpusPipeline, TheLibIsCopiedSoTheCorpusMoves) {
  // An old corpus's lib, a symbolic link to a folder of its own: replaced, and not followed.
  const fs::path out = temp_dir("lib"), elsewhere = temp_dir("lib-target");
  fs::create_directories(out);
  fs::create_directories(elsewhere / "nkibench_ops");
  { std::ofstream(elsewhere / "nkibench_ops" / "keep.py") << "x = 1\n"; }
  fs::create_directory_symlink(elsewhere, out / "lib");
  CorpusOptions o;
  o.count = 1;
  o.seed = 3;
  o.nkibench = nkibench();
  o.out = out.string();
  o.filters = false;
  auto r = generate_corpus(o);
  ASSERT_TRUE(r.has_value()) << r.error().format();
  EXPECT_FALSE(fs::is_symlink(out / "lib"));
  EXPECT_TRUE(fs::exists(elsewhere / "nkibench_ops" / "keep.py"));
  EXPECT_FALSE(fs::exists(out / "lib" / "nkibench_ops" / "keep.py"));
  // Every .py of NKIBench's lib, byte for byte, and nothing else.
  auto lib = tree(out / "lib");
  std::map<std::string, std::string> want;
  for (const auto& [rel, text] : tree(fs::path(nkibench()) / "lib"))
    if (rel.find("__pycache__") == std::string::npos && fs::path(rel).extension() != ".pyc") want[rel] = text;
  EXPECT_EQ(lib, want);
  EXPECT_GE(lib.size(), 10u);
  EXPECT_TRUE(lib.count("nkibench_ops/__init__.py"));
  // A folder lib from an earlier run is replaced the same way; moved, the corpus keeps its lib.
  { std::ofstream(out / "lib" / "stale.py") << "y = 2\n"; }
  o.force = true;
  ASSERT_TRUE(generate_corpus(o).has_value());
  EXPECT_FALSE(fs::exists(out / "lib" / "stale.py"));
  const fs::path moved = temp_dir("lib-moved");
  fs::rename(out, moved);
  EXPECT_EQ(tree(moved / "lib"), want);
  std::ifstream manifest(moved / "corpus.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(manifest, line));
  const fs::path task_dir = moved / nlohmann::json::parse(line)["folder"].get<std::string>();
  EXPECT_EQ(fs::path(baseline_lib_dir(task_dir.string())), moved / "lib");
  fs::remove_all(moved);
  fs::remove_all(elsewhere);
}

TEST(CorpusPipeline, RefusesToOverwriteWithoutForce) {
  const fs::path out = temp_dir("force");
  CorpusOptions o;
  o.count = 1;
  o.nkibench = nkibench();
  o.out = out.string();
  o.filters = false;
  ASSERT_TRUE(generate_corpus(o).has_value());
  auto again = generate_corpus(o);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, "nkia_bad_argument");
  fs::remove_all(out);
}

TEST(CorpusPipeline, ExportsCarryTheFieldsTheFrameworksRead) {
  const fs::path out = temp_dir("export");
  CorpusOptions o;
  o.count = 3;
  o.seed = 2;
  o.nkibench = nkibench();
  o.out = out.string();
  o.filters = false;
  ASSERT_TRUE(generate_corpus(o).has_value());
  auto rows_of = [&](const char* format) {
    ExportOptions e;
    e.format = format;
    int64_t n = 0;
    auto text = export_corpus(out.string(), e, n);
    EXPECT_TRUE(text.has_value()) << (text ? "" : text.error().format());
    EXPECT_EQ(n, 3);
    std::vector<nlohmann::json> rows;
    std::istringstream in(text ? *text : "");
    std::string line;
    while (std::getline(in, line)) rows.push_back(nlohmann::json::parse(line));
    return rows;
  };
  auto messages_ok = [](const nlohmann::json& m) {
    return m.is_array() && m.size() == 2 && m[0]["role"] == "system" && m[1]["role"] == "user" &&
           !m[1]["content"].get<std::string>().empty();
  };
  for (const auto& r : rows_of("verl")) {
    for (const char* k : {"data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"})
      EXPECT_TRUE(r.contains(k)) << k;
    EXPECT_TRUE(messages_ok(r["prompt"]));
    EXPECT_EQ(r["reward_model"]["style"], "rule");
    EXPECT_EQ(r["reward_model"]["ground_truth"], r["extra_info"]["task_id"]);
    for (const char* k : {"split", "index", "task_id", "level", "tools_kwargs"})
      EXPECT_TRUE(r["extra_info"].contains(k)) << k;
    EXPECT_EQ(r["agent_name"], "tool_agent");
  }
  for (const auto& r : rows_of("trl")) {
    EXPECT_TRUE(messages_ok(r["prompt"]));
    EXPECT_TRUE(r["task_id"].is_string());
    EXPECT_TRUE(r["level"].is_number_integer());
  }
  for (const auto& r : rows_of("openrlhf")) {
    EXPECT_TRUE(messages_ok(r["input"]));
    EXPECT_TRUE(r["label"].is_string());
  }
  for (const auto& r : rows_of("kernelbench")) {
    for (const char* k : {"code", "level", "name", "problem_id"}) EXPECT_TRUE(r.contains(k)) << k;
    EXPECT_NE(r["code"].get<std::string>().find("class Model"), std::string::npos);
  }
  ExportOptions bad;
  bad.format = "parquet";
  int64_t n = 0;
  auto r = export_corpus(out.string(), bad, n);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "nkia_bad_argument");
  fs::remove_all(out);
}

// A task root without a corpus.jsonl (NKIBench itself) exports in KernelBench's layout: every
// task, level by level, problem ids counted from 1 within a level, all in the "test" split.
TEST(CorpusPipeline, NkibenchExportsInKernelBenchLayout) {
  ExportOptions e;
  e.format = "kernelbench";
  int64_t n = 0;
  auto text = export_corpus(nkibench(), e, n);
  ASSERT_TRUE(text.has_value()) << text.error().format();
  EXPECT_EQ(n, 250);
  std::map<int, int> per_level;
  std::set<std::string> names;
  std::istringstream in(*text);
  std::string line;
  int last_level = 0;
  while (std::getline(in, line)) {
    const auto r = nlohmann::json::parse(line);
    ASSERT_TRUE(r["level"].is_number_integer());
    ASSERT_TRUE(r["problem_id"].is_number_integer());
    const int level = r["level"].get<int>();
    EXPECT_GE(level, last_level) << "rows come level by level";
    last_level = level;
    const int pid = r["problem_id"].get<int>();
    EXPECT_EQ(pid, ++per_level[level]) << line.substr(0, 120);
    const std::string name = r["name"].get<std::string>();
    const std::string prefix = std::to_string(pid) + "_L" + std::to_string(level) + "_";
    EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
    EXPECT_EQ(name.substr(name.size() - 3), ".py") << name;
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    EXPECT_NE(r["code"].get<std::string>().find("class Model"), std::string::npos) << name;
  }
  EXPECT_EQ(per_level, (std::map<int, int>{{1, 100}, {2, 100}, {3, 50}}));

  e.split = "test";
  EXPECT_TRUE(export_corpus(nkibench(), e, n).has_value());
  EXPECT_EQ(n, 250);
  e.split = "train";  // a task root has no training split
  auto none = export_corpus(nkibench(), e, n);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace nki_agent::corpus
