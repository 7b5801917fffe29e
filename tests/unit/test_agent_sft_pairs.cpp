// (task, verified kernel) pairs from a results database as SFT records, and the export's dedup
// (agent/sft_pairs.h, agent/sft.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/sft.h"
#include "agent/sft_pairs.h"
#include "agent/store.h"
#include "support/python_oracle.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

const std::string kTasks = std::string(NKIA_SOURCE_DIR) + "/tests/tasks";

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<nlohmann::json> read_records(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

// A database with one run: add_fp32 passed in samples 0 and 1 with the same kernel, and failed in
// sample 2; layernorm_affine passed; a row whose task is not under the root.
std::string write_database(const fs::path& dir) {
  const std::string db = (dir / "bench.sqlite").string();
  auto store = ResultStore::open(db);
  EXPECT_TRUE(store.has_value());
  EXPECT_TRUE((*store)->add_run({"R", "key", "model-x", kTasks, {{"prompt_version", "v1"}}, "2026-01-01T00:00:00Z"}));
  const std::string add = read_text(kTasks + "/add_fp32/baseline.py");
  const std::string norm = read_text(kTasks + "/layernorm_affine/baseline.py");
  auto row = [](const std::string& task, int sample, bool passed, const std::string& kernel) {
    TaskRow r;
    r.run_id = "R";
    r.task_id = task;
    r.task = task;
    r.sample = sample;
    r.seed = static_cast<uint64_t>(sample);
    r.status = passed ? "passed" : "compiled";
    r.passed = passed;
    r.compiled = true;
    r.kernel = kernel;
    r.speedup = passed ? 1.5 : 0;
    return r;
  };
  EXPECT_TRUE((*store)->add_result(row("add_fp32", 0, true, add)));
  EXPECT_TRUE((*store)->add_result(row("add_fp32", 1, true, add)));
  EXPECT_TRUE((*store)->add_result(row("add_fp32", 2, false, "def broken(): pass\n")));
  EXPECT_TRUE((*store)->add_result(row("layernorm_affine", 0, true, norm)));
  EXPECT_TRUE((*store)->add_result(row("no_such_task", 0, true, add)));
  return db;
}

TEST(SftPairs, PassingRowsBecomeSingleShotConversationsEndingInTheKernel) {
  testing::ScratchDir dir;
  const std::string db = write_database(fs::path(dir.path()));
  auto pairs = sft_pairs_from_results(db, "", "");
  ASSERT_TRUE(pairs.has_value()) << pairs.error().format();
  ASSERT_EQ(pairs->records.size(), 3u);  // add_fp32 twice, layernorm_affine; not the failed row
  ASSERT_EQ(pairs->notes.size(), 1u);    // the missing task, with the reason
  EXPECT_NE(pairs->notes[0].find("no_such_task"), std::string::npos) << pairs->notes[0];
  const nlohmann::json& rec = pairs->records[0];
  ASSERT_EQ(rec["messages"].size(), 3u);
  EXPECT_EQ(rec["messages"][0]["role"], "system");
  EXPECT_EQ(rec["messages"][1]["role"], "user");
  EXPECT_EQ(rec["messages"][2]["role"], "assistant");
  const std::string answer = rec["messages"][2]["content"];
  EXPECT_EQ(answer.rfind("```python\n", 0), 0u);
  EXPECT_NE(answer.find(read_text(kTasks + "/add_fp32/baseline.py")), std::string::npos);
  EXPECT_TRUE(rec["tools"].empty());
  EXPECT_EQ(rec["metadata"]["source"], "pair");
  EXPECT_EQ(rec["metadata"]["run"], "R");
  EXPECT_EQ(rec["metadata"]["dialect"], sft_kernel_dialect(read_text(kTasks + "/add_fp32/baseline.py")));
  // The task prompt is the task's: it names the task's shapes.
  EXPECT_NE(rec["messages"][1]["content"].get<std::string>().find("256"), std::string::npos);
  // Another run id selects nothing.
  auto none = sft_pairs_from_results(db, "OTHER", "");
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->records.empty());
  // Not a database: a clear refusal.
  auto missing = sft_pairs_from_results(dir.file("missing.sqlite"), "", "");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, "nkia_bad_argument");
}

TEST(SftPairs, ExportingTheSameRunsTwiceAddsNothing) {
  testing::ScratchDir dir;
  const std::string db = write_database(fs::path(dir.path()));
  const std::string out = dir.file("sft.jsonl");
  auto first = export_sft({db}, out, SftOptions{});
  ASSERT_TRUE(first.has_value()) << first.error().format();
  EXPECT_EQ(first->pairs, 3);
  EXPECT_EQ(first->written, 2);  // the two add_fp32 samples are one conversation
  EXPECT_EQ(first->duplicates, 1);
  auto second = export_sft({db}, out, SftOptions{});
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->written, 0);
  EXPECT_EQ(second->duplicates, 3);
  const auto records = read_records(out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_NE(records[0]["messages"], records[1]["messages"]);
}

TEST(SftPairs, TheKernelsDialectIsWhatItImports) {
  EXPECT_EQ(sft_kernel_dialect("import neuronxcc.nki as nki\n"), "legacy");
  EXPECT_EQ(sft_kernel_dialect("import nki\nimport nki.language as nl\n"), "current");
}

}  // namespace
}  // namespace nki_agent
