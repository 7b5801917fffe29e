// The prompts (agent/prompts.h, prompts/<version>/*.md) for real NKIBench tasks of ranks 1–4: the
// task prompt carries every argument (name, shape, dtype, in order), the entry, the reference
// source and the variant shapes; the system prompt is dialect-specific (and free of the other
// dialect's imports) and differs between the tool loop and single shot; the rank section's
// guidance follows the ranks present; nothing is left unreplaced; sizes stay under the cap; bad
// versions and dialects are errors. Every complete kernel in the prompts and the documentation
// (a ```python kernel fence) really passes verification on the simulator against the task its
// `kernel-check` comment names — and a mutated copy of it fails, so the check can fail.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "agent/embedded_text.h"
#include "agent/prompts.h"
#include "runtime/kernel_call.h"
#include "runtime/kernel_service.h"
#include "support/shared_service.h"
#include "tasks/task.h"
#include "tasks/verify.h"
#include "tensor/dtype.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSystemCap = 12 * 1024;

const fs::path kLevel1 = fs::path(NKIA_SOURCE_DIR) / "tasks" / "nkibench" / "level1";

Task load(const std::string& name) {
  auto t = load_task((kLevel1 / name).string());
  EXPECT_TRUE(t) << name << ": " << (t ? "" : t.error().format());
  return t ? *t : Task{};
}

Prompt build(const Task& task, const std::string& dialect, bool tools) {
  PromptOptions o;
  o.dialect = dialect;
  o.tools = tools;
  auto p = build_prompt(task, o);
  EXPECT_TRUE(p) << (p ? "" : p.error().format());
  return p ? *p : Prompt{};
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

const char* kLegacyImports[] = {"import neuronxcc.nki as nki", "import neuronxcc.nki.language as nl",
                                "import neuronxcc.nki.isa as nisa"};
const char* kCurrentImports[] = {"import nki\n", "import nki.language as nl", "import nki.isa as nisa"};

// The rank-1, 2, 3 and 4 tasks the checks run on.
const char* kTasks[] = {"L1_013_dot_product_fp32", "L1_001_matmul_small_fp32", "L1_025_layer_norm_3d",
                        "L1_057_conv2d_k3"};

TEST(AgentPrompts, VersionsAndRawText) {
  auto versions = prompt_versions();
  ASSERT_FALSE(versions.empty());
  EXPECT_EQ(versions.front(), "v1");
  EXPECT_EQ(PromptOptions{}.version, "v1");
  for (const char* f : {"system_tools.md", "system_single_shot.md", "task.md", "rank_aware.md", "common.md",
                        "dialect_legacy.md", "dialect_current.md"})
    EXPECT_FALSE(prompt_text("v1", f).empty()) << f;
  EXPECT_TRUE(prompt_text("v1", "missing.md").empty());
  EXPECT_TRUE(prompt_text("v999", "task.md").empty());
  EXPECT_TRUE(prompt_text("../data", "docs/api.toml").empty());
  EXPECT_TRUE(prompt_text("", "").empty());
}

TEST(AgentPrompts, TaskPromptCarriesTheContract) {
  for (const char* name : kTasks) {
    SCOPED_TRACE(name);
    Task task = load(name);
    for (const char* dialect : {"legacy", "current"}) {
      for (bool tools : {true, false}) {
        Prompt p = build(task, dialect, tools);
        EXPECT_EQ(p.version, "v1");
        // Every argument, in order, with its shape and dtype, on one line of the argument list.
        size_t pos = 0;
        for (size_t i = 0; i < task.args.size(); ++i) {
          const TaskArg& a = task.args[i];
          const std::string line_start = std::to_string(i + 1) + ". `" + a.name + "`";
          size_t at = p.user.find(line_start, pos);
          ASSERT_NE(at, std::string::npos) << a.name << "\n" << p.user;
          const std::string line = p.user.substr(at, p.user.find('\n', at) - at);
          EXPECT_TRUE(has(line, shape_str(a.shape))) << line;
          EXPECT_TRUE(has(line, std::string(dtype_name(a.dtype)))) << line;
          EXPECT_TRUE(has(line, a.kind == ArgKind::kInput ? "input" : "parameter")) << line;
          pos = at + 1;
        }
        std::string sig = "def " + task.entry + "(";
        for (size_t i = 0; i < task.args.size(); ++i) sig += (i ? ", " : "") + task.args[i].name;
        EXPECT_TRUE(has(p.user, sig + "):")) << sig;
        EXPECT_TRUE(has(p.user, task.task_py.substr(0, task.task_py.find_last_not_of('\n') + 1)));
        EXPECT_TRUE(has(p.user, "**" + std::string(dialect) + "** dialect"));
        EXPECT_TRUE(has(p.user, "target **" + task.target + "**"));
        for (const TaskOutput& o : task.outputs) EXPECT_TRUE(has(p.user, shape_str(o.shape)));
        const Tolerance& tol = task.tolerance_for(task.outputs.at(0).dtype);
        EXPECT_TRUE(has(p.user, fmt::format("Tolerance: {}: atol {:g}, rtol {:g}", dtype_name(task.outputs[0].dtype),
                                            tol.atol, tol.rtol)));
        EXPECT_TRUE(has(p.user, "Precision policy: strict"));
        // Every variant's shapes, by name.
        for (const TaskVariant& v : task.variants) {
          EXPECT_TRUE(has(p.user, "- `" + v.name + "`: ")) << v.name;
          for (const auto& [arg, shape] : v.args) EXPECT_TRUE(has(p.user, arg + " " + shape_str(shape))) << v.name;
        }
        // Nothing left for a template, nothing for maintainers only.
        for (const std::string* text : {&p.system, &p.user}) {
          EXPECT_FALSE(has(*text, "{{"));
          EXPECT_FALSE(has(*text, "}}"));
          EXPECT_FALSE(has(*text, "<!--"));
          EXPECT_FALSE(has(*text, "```python kernel"));
        }
        EXPECT_LE(p.system.size(), kSystemCap);
        EXPECT_LE(p.user.size(), task.task_py.size() + 8 * 1024);
      }
    }
  }
}

TEST(AgentPrompts, SystemPromptIsDialectSpecific) {
  Task task = load(kTasks[2]);
  for (bool tools : {true, false}) {
    Prompt legacy = build(task, "legacy", tools);
    Prompt current = build(task, "current", tools);
    for (const char* imp : kLegacyImports) {
      EXPECT_TRUE(has(legacy.system, imp)) << imp;
      EXPECT_FALSE(has(current.system, imp)) << imp;
    }
    for (const char* imp : kCurrentImports) {
      EXPECT_TRUE(has(current.system, imp)) << imp;
      EXPECT_FALSE(has(legacy.system, imp)) << imp;
    }
    EXPECT_TRUE(has(legacy.system, "mask=(r < rows)"));
    EXPECT_TRUE(has(current.system, "nisa.dma_copy(dst="));
    EXPECT_TRUE(has(current.system, "accumulate=(k > 0)"));
    EXPECT_TRUE(has(legacy.system, "acc += nl.matmul("));
    // The real limits, not invented ones.
    for (const Prompt* p : {&legacy, &current}) {
      EXPECT_TRUE(has(p->system, "**at most 128**"));
      EXPECT_FALSE(has(p->system, "exactly 128"));
      EXPECT_TRUE(has(p->system, "512 float32"));
      EXPECT_TRUE(has(p->system, "buffer=nl.shared_hbm"));
    }
  }
}

TEST(AgentPrompts, ToolsAndSingleShotDiffer) {
  Task task = load(kTasks[1]);
  PromptOptions o;
  o.max_turns = 7;
  o.tools = true;
  auto tools = build_prompt(task, o);
  o.tools = false;
  auto single = build_prompt(task, o);
  ASSERT_TRUE(tools && single);
  for (const char* tool : {"`compile(kernel_code)`", "`verify(kernel_code)`", "`profile(kernel_code)`",
                           "`lookup(query)`", "`submit(kernel_code)`"}) {
    EXPECT_TRUE(has(tools->system, tool)) << tool;
    EXPECT_FALSE(has(single->system, tool)) << tool;
  }
  EXPECT_TRUE(has(tools->system, "You have 7 turns"));
  EXPECT_TRUE(has(single->system, "exactly one\n```python fenced block"));
  EXPECT_TRUE(has(single->user, "exactly one ```python fenced block"));
  EXPECT_TRUE(has(tools->user, "call\n`submit`"));
  EXPECT_FALSE(has(single->user, "`submit`"));
  EXPECT_NE(tools->system, single->system);
}

TEST(AgentPrompts, RankSectionFollowsTheRanks) {
  struct Case {
    const char* task;
    std::vector<std::string> present, absent;
  };
  for (const Case& c : std::vector<Case>{
           {"L1_013_dot_product_fp32",
            {"**Rank 1**", "**Rank 0**", "**Ragged sizes**", "5000", "65536"},
            {"**Rank 2**", "**Rank 3**", "**Rank 4**", "**Convolution"}},
           {"L1_001_matmul_small_fp32", {"**Rank 2**"}, {"**Rank 1**", "**Rank 3**", "**Rank 4**"}},
           {"L1_025_layer_norm_3d",
            {"**Rank 3**", "**Rank 1**", "B·S rows on the partitions", "leading axes flattened = 1024 rows",
             "leading axes flattened = 300 rows", "**Ragged sizes**", "`ragged`: x [3, 100, 768]"},
            {"**Rank 2**", "**Rank 4**", "**Convolution"}},
           {"L1_057_conv2d_k3",
            {"**Rank 4**", "**Rank 1**", "channels\n  C on the partitions", "**Convolution / pooling**",
             "`larger`: x [16, 64, 48, 48]"},
            {"**Rank 3**", "**Rank 2**"}},
       }) {
    SCOPED_TRACE(c.task);
    Task task = load(c.task);
    const std::string s = rank_section(task);
    for (const std::string& want : c.present) EXPECT_TRUE(has(s, want)) << want << "\n" << s;
    for (const std::string& not_want : c.absent) EXPECT_FALSE(has(s, not_want)) << not_want << "\n" << s;
    // Every tensor with its rank, in argument order.
    size_t pos = 0;
    for (const TaskArg& a : task.args) {
      size_t at = s.find("- `" + a.name + "` (", pos);
      ASSERT_NE(at, std::string::npos) << a.name;
      const std::string line = s.substr(at, s.find('\n', at) - at);
      EXPECT_TRUE(has(line, shape_str(a.shape))) << line;
      EXPECT_TRUE(has(line, a.shape.empty() ? "scalar" : "rank " + std::to_string(a.shape.size()))) << line;
      pos = at;
    }
    // The section is what the task prompt carries.
    PromptOptions o;
    auto p = build_prompt(task, o);
    ASSERT_TRUE(p);
    EXPECT_TRUE(has(p->user, s));
  }
}

TEST(AgentPrompts, BadVersionOrDialectIsAnError) {
  Task task = load(kTasks[0]);
  PromptOptions o;
  o.version = "v999";
  auto r = build_prompt(task, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_prompt_version");
  EXPECT_TRUE(has(r.error().hint, "v1"));
  o.version = "../prompts/v1";
  r = build_prompt(task, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_prompt_version");
  o = PromptOptions{};
  o.dialect = "fortran";
  r = build_prompt(task, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_prompt_dialect");
  task.dialects = {"legacy"};
  o.dialect = "current";
  r = build_prompt(task, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_prompt_dialect");
  EXPECT_TRUE(has(r.error().hint, "legacy"));
  o.dialect = "legacy";
  EXPECT_TRUE(build_prompt(task, o));
}

// ---- the example kernels really run -----------------------------------------------------------

struct KernelBlock {
  std::string file;
  std::string task;  // relative to the source tree
  std::string source;
};

// Every ```python kernel fence in the compiled-in prompts and docs, with the task its
// `<!-- kernel-check: task=... -->` comment (the line before the fence) names.
std::vector<KernelBlock> kernel_blocks() {
  std::vector<KernelBlock> out;
  static const std::regex check_re(R"(<!-- kernel-check: task=(\S+) -->\s*$)");
  for (const EmbeddedText& t : embedded_agent_texts()) {
    const std::string text(t.text);
    for (size_t at = text.find("```python kernel\n"); at != std::string::npos;
         at = text.find("```python kernel\n", at + 1)) {
      KernelBlock b;
      b.file = std::string(t.path);
      size_t prev_end = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
      size_t prev_start = prev_end == std::string::npos || prev_end == 0 ? 0 : text.rfind('\n', prev_end - 1) + 1;
      std::string prev = prev_end == std::string::npos ? "" : text.substr(prev_start, prev_end - prev_start);
      std::smatch m;
      if (std::regex_search(prev, m, check_re)) b.task = m[1];
      size_t body = at + std::string("```python kernel\n").size();
      size_t end = text.find("\n```", body);
      b.source = text.substr(body, end == std::string::npos ? std::string::npos : end - body + 1);
      out.push_back(std::move(b));
    }
  }
  return out;
}

class PromptKernels : public testing::SharedServiceTest {
 protected:
  static Result<VerifyResult> verify(const KernelBlock& b, const std::string& source) {
    auto task = load_task((fs::path(NKIA_SOURCE_DIR) / b.task).string());
    if (!task) return fail(task.error());
    VerifyOptions vo;
    vo.reference.cache_dir = (fs::path(NKIA_CLI).parent_path() / "test-cache" / "references").string();
    vo.parallel = 2;
    return verify_kernel(*task, kernel_files_from_source(source), *service_, vo);
  }
};

TEST_F(PromptKernels, EveryCompleteKernelPassesVerification) {
  auto blocks = kernel_blocks();
  int per_dialect[2] = {0, 0};
  for (const KernelBlock& b : blocks) {
    SCOPED_TRACE(b.file);
    ASSERT_FALSE(b.task.empty()) << "a ```python kernel block without a kernel-check comment naming its task";
    auto r = verify(b, b.source);
    ASSERT_TRUE(r) << r.error().format();
    EXPECT_TRUE(r->passed) << r->format() << "\n" << b.source;
    EXPECT_EQ(r->cases_run, r->cases_total);
    per_dialect[has(b.source, "import neuronxcc.nki") ? 0 : 1] += 1;
    // A mutated copy (the wrong epsilon) must fail: the check can fail.
    std::string mutated = b.source;
    size_t eps = mutated.find("1e-6");
    ASSERT_NE(eps, std::string::npos);
    mutated.replace(eps, 4, "0.5");
    auto bad = verify(b, mutated);
    ASSERT_TRUE(bad) << bad.error().format();
    EXPECT_FALSE(bad->passed);
  }
  EXPECT_GE(per_dialect[0], 1) << "no legacy example kernel";
  EXPECT_GE(per_dialect[1], 1) << "no current example kernel";
}

TEST_F(PromptKernels, TheSystemPromptsCarryTheCheckedExamples) {
  auto blocks = kernel_blocks();
  Task task = load(kTasks[2]);
  for (const char* dialect : {"legacy", "current"}) {
    bool found = false;
    for (bool tools : {true, false}) {
      Prompt p = build(task, dialect, tools);
      for (const KernelBlock& b : blocks)
        if (b.file.rfind("prompts/v1/", 0) == 0 && has(p.system, "```python\n" + b.source)) found = true;
    }
    EXPECT_TRUE(found) << dialect;
  }
}

}  // namespace
}  // namespace nki_agent
