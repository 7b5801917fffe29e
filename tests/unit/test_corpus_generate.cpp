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

// The low-precision tolerance model (emit.h, docs/corpus.md): one rounding unit per op, two per
// contraction, gains for powers and normalisations, the base covering three units, at most 4x.
TEST(CorpusTolerance, RoundingUnitsAlongTheGraphWidenTheElementTolerance) {
  auto graph = [](const char* dtype, std::vector<GraphNode> nodes, std::vector<int> outputs) {
    TaskGraph g;
    g.dtype = dtype;
    g.inputs = {{"x", {{-1, 128}, {-1, 256}}, dtype, kRows}, {"y", {{-1, 256}, {-1, 128}}, dtype, kRows}};
    g.nodes = std::move(nodes);
    g.outputs = std::move(outputs);
    return g;
  };
  auto n = [](const char* op, std::vector<int> in) { return GraphNode{op, std::move(in), {}, "", kRows}; };

  // One plain op: one unit, the base (bf16 2e-2, fp16 1e-2).
  LowTolerance t = low_precision_tolerance(graph("bfloat16", {n("relu", {0})}, {2}));
  EXPECT_EQ(t.units, 1);
  EXPECT_DOUBLE_EQ(t.element, 2e-2);
  EXPECT_DOUBLE_EQ(t.norm, 2e-2);
  t = low_precision_tolerance(graph("float16", {n("relu", {0}), n("exp", {2}), n("relu", {3})}, {4}));
  EXPECT_EQ(t.units, 3);  // three plain ops: still the base
  EXPECT_DOUBLE_EQ(t.element, 1e-2);
  EXPECT_DOUBLE_EQ(t.norm, 1e-2);

  // A contraction rounds twice, a normalisation doubles what it reads, pow3 triples it:
  // matmul 2, layer_norm 2*2+1 = 5, pow3 3*5+1 = 16 units; the element tolerance stops at 4x,
  // the norm bound keeps the op-count rule (3 ops: the base).
  t = low_precision_tolerance(graph("bfloat16", {n("matmul", {0, 1}), n("layer_norm", {2}), n("pow3", {3})}, {4}));
  EXPECT_EQ(t.units, 16);
  EXPECT_DOUBLE_EQ(t.element, 8e-2);
  EXPECT_DOUBLE_EQ(t.norm, 2e-2);
  // Without pow3: 5 units, (5 + 2) / 3 = 2 steps of the base.
  t = low_precision_tolerance(graph("bfloat16", {n("matmul", {0, 1}), n("layer_norm", {2})}, {3}));
  EXPECT_EQ(t.units, 5);
  EXPECT_DOUBLE_EQ(t.element, 4e-2);
  EXPECT_DOUBLE_EQ(t.norm, 2e-2);

  // Past three ops both widen to twice the base, however few units the worst output carries.
  t = low_precision_tolerance(
      graph("float16", {n("relu", {0}), n("relu", {0}), n("relu", {0}), n("add", {2, 3}), n("add", {5, 4})}, {6}));
  EXPECT_EQ(t.units, 3);  // relu 1, add 2, add 3
  EXPECT_DOUBLE_EQ(t.element, 2e-2);
  EXPECT_DOUBLE_EQ(t.norm, 2e-2);

  // A join reads the worse of its operands; with several outputs the worst one counts.
  t = low_precision_tolerance(graph("bfloat16", {n("square", {0}), n("square", {2}), n("relu", {0})}, {4, 3}));
  EXPECT_EQ(t.units, 3);  // square(square(x)): 1, then 2*1+1
  t = low_precision_tolerance(graph("bfloat16", {n("square", {0}), n("square", {2}), n("relu", {0})}, {4}));
  EXPECT_EQ(t.units, 1);

  // emit_task writes the rule into task.toml, which the task reader takes as written.
  int low = 0, widened = 0;
  for (uint64_t i = 0; i < 400; ++i) {
    const TaskGraph g = generate_graph(7, i, {});
    if (g.dtype == "float32") continue;
    ++low;
    const LowTolerance lt = low_precision_tolerance(g);
    EXPECT_GE(lt.element, lt.norm) << i;
    EXPECT_LE(lt.element, 4 * (g.dtype == "bfloat16" ? 2e-2 : 1e-2) + 1e-12) << i;
    widened += lt.element > lt.norm;
    const EmittedTask e = emit_task(g, int64_t(i + 1), "test");
    auto task = parse_task(e.task_toml, e.task_py, "/tmp/nonexistent-corpus-task");
    ASSERT_TRUE(task.has_value()) << i;
    const Tolerance& tol = task->tolerance_for(g.dtype == "bfloat16" ? DType::kBFloat16 : DType::kFloat16);
    EXPECT_DOUBLE_EQ(tol.atol, lt.element) << i;
    EXPECT_DOUBLE_EQ(tol.rtol, lt.element) << i;
    EXPECT_DOUBLE_EQ(tol.norm_rtol, lt.norm) << i;
  }
  EXPECT_GT(low, 50);
  EXPECT_GT(widened, 0);  // some drawn graphs carry more than the norm bound's units
}

}  // namespace
}  // namespace nki_agent::corpus
