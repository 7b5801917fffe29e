// Named task lists and the baseline library (tasks/suite.h, tasks/baseline.h): suites resolve to
// task folders in their order, a missing task is an error that names it, malformed suite files
// name their field; a baseline gets the lib/ packages beside its level folder, a candidate does
// not. The shipped suites hold what nkibench-reference.md §3.3 says.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "support/python_oracle.h"
#include "tasks/baseline.h"
#include "tasks/suite.h"
#include "tasks/task.h"
#include "tasks/task_dirs.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

std::string task_toml(const std::string& id, int level) {
  return "id = \"" + id + "\"\nname = \"t\"\nlevel = " + std::to_string(level) +
         "\ncategory = \"c\"\noperation = \"x\"\nentry = \"kernel\"\ndialects = [\"legacy\"]\ntarget = \"trn1\"\n"
         "baseline = \"baseline.py\"\n[[args]]\nname = \"x\"\nkind = \"input\"\ndtype = \"float32\"\nshape = [4]\n"
         "[[outputs]]\ndtype = \"float32\"\nshape = [4]\n";
}

class TasksSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    add_task("level1/L1_001_a", "L1_001", 1);
    add_task("level1/L1_002_b", "L1_002", 1);
    add_task("level2/L2_001_c", "L2_001", 2);
  }
  void add_task(const std::string& rel, const std::string& id, int level) {
    fs::create_directories(fs::path(root()) / rel);
    write(rel + "/task.toml", task_toml(id, level));
    write(rel + "/task.py", "import torch\nclass Model(torch.nn.Module):\n    pass\n");
    write(rel + "/baseline.py", "def kernel(x):\n    return x\n");
  }
  void write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(root()) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root() const { return dir_.path(); }
  std::vector<std::string> ids_of(const std::vector<std::string>& dirs) {
    std::vector<std::string> out;
    for (const auto& d : dirs) out.push_back(fs::path(d).filename().string().substr(0, 6));
    return out;
  }
  testing::ScratchDir dir_;
};

TEST_F(TasksSuite, ListsThenLevelsInOrderEachOnce) {
  write("suites/mix.toml", "name = \"mix\"\ndescription = \"d\"\ntasks = [\"L2_001\", \"L1_002\"]\nlevels = [1]\n");
  auto s = load_suite(root(), "mix");
  ASSERT_TRUE(s) << s.error().format();
  EXPECT_FALSE(s->inferred);
  auto dirs = suite_task_dirs(*s, root());
  ASSERT_TRUE(dirs) << dirs.error().format();
  EXPECT_EQ(ids_of(*dirs), (std::vector<std::string>{"L2_001", "L1_002", "L1_001"}));
  EXPECT_EQ(suite_names(root()), (std::vector<std::string>{"mix"}));
}

TEST_F(TasksSuite, AMissingTaskIsAnErrorThatNamesIt) {
  write("suites/big.toml", "name = \"big\"\ntasks = [\"L1_001\", \"L3_007\", \"L3_009\"]\n");
  auto s = load_suite(root(), "big");
  ASSERT_TRUE(s) << s.error().format();
  auto dirs = suite_task_dirs(*s, root());
  ASSERT_FALSE(dirs);
  EXPECT_EQ(dirs.error().code, "nkia_suite_missing_task");
  EXPECT_NE(dirs.error().message.find("L3_007, L3_009"), std::string::npos) << dirs.error().message;
  EXPECT_NE(dirs.error().message.find("2 task(s)"), std::string::npos) << dirs.error().message;
}

TEST_F(TasksSuite, MalformedSuitesNameTheirField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name = \"bad\"\ntasks = [\"L1_001\", \"L1_001\"]\n", "listed twice"},
      {"name = \"bad\"\ntasks = \"L1_001\"\n", "tasks"},
      {"name = \"bad\"\nlevels = [0]\n", "levels"},
      {"name = \"bad\"\n", "names no task"},
      {"name = \"other\"\ntasks = [\"L1_001\"]\n", "differs from the file's name"},
      {"name = \"bad\"\ntasks = [\"L1_001\"]\nextra = 1\n", "extra: unknown field"},
      {"name = \"bad\"\ninferred = \"yes\"\ntasks = [\"L1_001\"]\n", "inferred"},
  };
  for (const auto& [text, needle] : cases) {
    write("suites/bad.toml", text);
    auto s = load_suite(root(), "bad");
    ASSERT_FALSE(s) << text;
    EXPECT_EQ(s.error().code, "nkia_suite_invalid") << s.error().format();
    EXPECT_NE(s.error().message.find(needle), std::string::npos) << s.error().format() << "\nwanted: " << needle;
  }
  write("suites/syntax.toml", "name = \n");
  EXPECT_EQ(load_suite(root(), "syntax").error().code, "nkia_task_toml_syntax");
  // Unknown names and paths: not found, with the suites that exist listed.
  for (const char* name : {"nope", "../suites/bad", "", "a/b"}) {
    auto s = load_suite(root(), name);
    ASSERT_FALSE(s) << name;
    EXPECT_EQ(s.error().code, "nkia_suite_not_found") << name;
  }
  EXPECT_NE(load_suite(root(), "nope").error().hint.find("bad"), std::string::npos);
}

TEST_F(TasksSuite, BaselinesImportTheLibBesideTheirLevelFolder) {
  write("lib/ops/__init__.py", "");
  write("lib/ops/blocks.py", "def ident(x):\n    return x\n");
  auto t = load_task((fs::path(root()) / "level2" / "L2_001_c").string());
  ASSERT_TRUE(t) << t.error().format();
  EXPECT_EQ(fs::path(baseline_lib_dir(t->dir)), fs::path(root()) / "lib");
  auto files = load_baseline_files(*t);
  ASSERT_TRUE(files) << files.error().format();
  EXPECT_TRUE(files->files.count("baseline.py"));
  EXPECT_TRUE(files->files.count("ops/blocks.py"));
  EXPECT_EQ(files->real_path("ops/blocks.py"), (fs::path(root()) / "lib" / "ops" / "blocks.py").string());
  // Without a lib folder above it, a baseline is its own files.
  testing::ScratchDir bare;
  fs::create_directories(fs::path(bare.path()) / "x" / "y");
  EXPECT_EQ(baseline_lib_dir((fs::path(bare.path()) / "x" / "y").string()), "");
}

// The shipped suites: the paper's 150 is the first 50 reference ids of each level by the string
// sort (whole categories in alphabetical order), the 60 is marked inferred, and every task the
// suites name exists.
TEST(ShippedSuites, MatchTheReferenceSubsets) {
  const std::string root = (fs::path(NKIA_SOURCE_DIR) / "tasks" / "nkibench").string();
  auto s150 = load_suite(root, "nkibench-150");
  ASSERT_TRUE(s150) << s150.error().format();
  EXPECT_EQ(s150->tasks.size(), 150u);
  EXPECT_FALSE(s150->inferred);
  std::map<char, int> per_level;
  for (const auto& id : s150->tasks) ++per_level[id[1]];
  EXPECT_EQ(per_level['1'], 50);
  EXPECT_EQ(per_level['2'], 50);
  EXPECT_EQ(per_level['3'], 50);
  std::set<std::string> in150(s150->tasks.begin(), s150->tasks.end());
  // Level 1: activations, convolutions, data_movement, elementwise — not matrix_ops or softmax.
  for (const char* id : {"L1_014", "L1_053", "L1_091", "L1_082"}) EXPECT_TRUE(in150.count(id)) << id;
  for (const char* id : {"L1_001", "L1_024", "L1_083"}) EXPECT_FALSE(in150.count(id)) << id;
  // Level 2: matmul_fusions only up to 027.
  EXPECT_TRUE(in150.count("L2_027"));
  EXPECT_FALSE(in150.count("L2_028"));
  auto s60 = load_suite(root, "nkibench-60");
  ASSERT_TRUE(s60) << s60.error().format();
  EXPECT_EQ(s60->tasks.size(), 60u);
  EXPECT_TRUE(s60->inferred);
  auto dirs = find_task_dirs(root);
  ASSERT_TRUE(dirs);
  std::set<std::string> present;
  for (const auto& d : *dirs) present.insert(fs::path(d).filename().string().substr(0, 6));
  for (const auto* s : {&*s150, &*s60})
    for (const auto& id : s->tasks) EXPECT_TRUE(present.count(id)) << s->name << " names " << id;
  // Every shipped suite resolves to its tasks: all three levels exist.
  for (auto [name, count] : std::vector<std::pair<const char*, size_t>>{{"level1", 100},
                                                                        {"level2", 100},
                                                                        {"level3", 50},
                                                                        {"all", 250},
                                                                        {"nkibench-150", 150},
                                                                        {"nkibench-60", 60}}) {
    auto suite = load_suite(root, name);
    ASSERT_TRUE(suite) << name;
    auto suite_dirs = suite_task_dirs(*suite, root);
    ASSERT_TRUE(suite_dirs) << name << ": " << suite_dirs.error().format();
    EXPECT_EQ(suite_dirs->size(), count) << name;
  }
}

}  // namespace
}  // namespace nki_agent
