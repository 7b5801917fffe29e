// The corpus generator without running PyTorch: the vocabulary's coverage, every drawn graph
// written as a task that task.toml's reader accepts (shapes, variants, params in state_dict order),
// and the same seed giving the same text (corpus/vocabulary.h, generator.h, emit.h, signature.h).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "corpus/emit.h"
#include "corpus/generator.h"
#include "corpus/shapes.h"
#include "corpus/signature.h"
#include "corpus/vocabulary.h"
#include "tasks/task.h"

namespace nki_agent::corpus {
namespace {

TEST(CorpusVocabulary, HasAtLeast100UniqueOpsOverEveryCategory) {
  std::set<std::string> names;
  for (const OpDef& op : vocabulary()) {
    EXPECT_TRUE(names.insert(std::string(op.name)).second) << "duplicate op " << op.name;
    EXPECT_FALSE(op.torch.empty()) << op.name;
    EXPECT_NE(op.layouts, 0u) << op.name;
  }
  EXPECT_GE(names.size(), 100u);
  std::set<std::string> cats;
  for (auto c : vocabulary_categories()) cats.insert(std::string(c));
  for (const char* want :
       {"elementwise", "activations", "reductions", "normalization", "softmax", "matrix_ops", "convolutions", "pooling",
        "data_movement", "gather_index", "scans", "attention", "embeddings"})
    EXPECT_TRUE(cats.count(want)) << "no op of category " << want;
  int with_lib = 0;
  for (const OpDef& op : vocabulary()) with_lib += !op.lib.empty();
  EXPECT_GE(with_lib, 40);
}

TEST(CorpusGenerator, EveryDrawnGraphIsATaskTheReaderAccepts) {
  std::set<std::string> ops_seen, structures;
  std::set<int> levels;
  for (uint64_t i = 0; i < 400; ++i) {
    const TaskGraph g = generate_graph(7, i, {});
    ASSERT_GE(g.nodes.size(), 1u);
    ASSERT_LE(g.nodes.size(), 6u) << i;
    ASSERT_TRUE(value_shapes(g, false).has_value()) << i;
    ASSERT_TRUE(value_shapes(g, true).has_value()) << i;
    const EmittedTask t = emit_task(g, int64_t(i + 1), "test");
    auto task = parse_task(t.task_toml, t.task_py, "/tmp/nonexistent-corpus-task");
    ASSERT_TRUE(task.has_value()) << i << ": " << task.error().format() << "\n" << t.task_toml;
    EXPECT_EQ(task->level, g.level);
    ASSERT_EQ(task->outputs.size(), g.outputs.size());
    ASSERT_EQ(task->variants.size(), 1u);
    // Every input, then every weight.
    EXPECT_EQ(task->args.size(), g.inputs.size() + graph_params(g).size()) << i;
    for (const auto& n : g.nodes) ops_seen.insert(n.op);
    structures.insert(g.structure);
    levels.insert(g.level);
    if (!t.baseline_py.empty()) {
      EXPECT_NE(t.baseline_py.find("@nki.jit"), std::string::npos);
      EXPECT_NE(t.baseline_py.find("from nkibench_ops import"), std::string::npos);
    }
  }
  EXPECT_EQ(levels, (std::set<int>{1, 2, 3}));
  for (const char* s : {"single", "chain", "residual", "branch", "multi_output"})
    EXPECT_TRUE(structures.count(s)) << "no " << s << " graph in 400 draws";
  EXPECT_GE(ops_seen.size(), 80u);
}

TEST(CorpusGenerator, SameSeedSameTextOtherSeedOther) {
  for (uint64_t i = 0; i < 20; ++i) {
    const EmittedTask a = emit_task(generate_graph(3, i, {}), 1, "p");
    const EmittedTask b = emit_task(generate_graph(3, i, {}), 1, "p");
    EXPECT_EQ(a.task_py, b.task_py);
    EXPECT_EQ(a.task_toml, b.task_toml);
    EXPECT_EQ(a.baseline_py, b.baseline_py);
  }
  int differ = 0;
  for (uint64_t i = 0; i < 20; ++i)
    differ +=
        emit_task(generate_graph(3, i, {}), 1, "p").task_py != emit_task(generate_graph(4, i, {}), 1, "p").task_py;
  EXPECT_GE(differ, 18);
}

TEST(CorpusGenerator, BaselineOnlyGivesEveryTaskABaseline) {
  GeneratorOptions o;
  o.baseline_only = true;
  for (uint64_t i = 0; i < 100; ++i) {
    const TaskGraph g = generate_graph(11, i, o);
    EXPECT_FALSE(emit_task(g, 1, "p").baseline_py.empty()) << canonical_op_graph(g);
  }
}

TEST(CorpusSignature, CommutativeOperandsAndInputNamesDoNotMatter) {
  TaskGraph g;
  g.dtype = "float32";
  g.inputs = {{"x", {{-1, 128}, {-1, 256}}, "float32", kRows}, {"y", {{-1, 128}, {-1, 256}}, "float32", kRows}};
  g.nodes = {{"relu", {0}, {}, "", kRows}, {"add", {2, 1}, {}, "", kRows}};
  g.outputs = {3};
  TaskGraph h = g;
  h.nodes[1].inputs = {1, 2};  // y + relu(x)
  EXPECT_EQ(canonical_op_graph(g), "add(in,relu(in))");
  EXPECT_EQ(canonical_op_graph(g), canonical_op_graph(h));
  EXPECT_EQ(dedup_key(g), dedup_key(h));
  TaskGraph r = g;  // a ragged shape is another shape class
  r.inputs[0].dims[1].fixed = 300;
  r.inputs[1].dims[1].fixed = 300;
  EXPECT_EQ(canonical_op_graph(g), canonical_op_graph(r));
  EXPECT_NE(dedup_key(g), dedup_key(r));
  TaskGraph s = g;  // sub is not commutative
  s.nodes[1].op = "sub";
  TaskGraph t = h;
  t.nodes[1].op = "sub";
  EXPECT_NE(canonical_op_graph(s), canonical_op_graph(t));
}

}  // namespace
}  // namespace nki_agent::corpus
