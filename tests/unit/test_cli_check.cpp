// `nki-agent check` and `nki-agent run --trace`, end to end through the CLI and the sandboxed
// worker: the summary counts what a kernel of our own issues, engine by engine; a must-fail kernel
// gets its code at its line; the timing-only trace equals a computing run's; usage errors exit 2; a
// kernel that over-subscribes SBUF passes with one nkia_sbuf_capacity_exceeded warning.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/cli_runner.h"
#include "support/python_oracle.h"

namespace nki_agent {
namespace {

using testing::CliRun;

CliRun cli(const std::string& args, bool with_stderr = false) {
  return testing::run_cli(args, with_stderr ? testing::Stderr::kMerge : testing::Stderr::kDrop);
}

nlohmann::json json_of(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not one JSON object: " << text.substr(0, 2000);
  return j;
}

nlohmann::json json_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return json_of(ss.str());
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// The 1-based line of the first line of `src` that contains `needle`.
int line_of(const std::string& src, const std::string& needle) {
  std::istringstream in(src);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

// Per 128-row tile: a load (DMA), a matmul (Tensor), exp (Scalar), a memset (GpSimd), an add
// (Vector) and a store (DMA); one more load of the stationary weights before the loop.
constexpr const char* kKernel = R"py(import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(a, w):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    ws = nl.ndarray((128, 128), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ws, src=w)
    for t in nl.affine_range(rows // 128):
        x = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[t * 128:(t + 1) * 128, :])
        acc = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=ws, moving=x)
        y = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=y, op=nl.exp, data=acc, scale=0.001)
        z = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=z, value=1.0, engine=nisa.gpsimd_engine)
        nisa.tensor_tensor(dst=z, data1=y, data2=z, op=nl.add)
        nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=z)
    return out
)py";
constexpr const char* kShapes = "--shapes 'a=bfloat16[256,512]' 'w=bfloat16[128,128]'";

// Fails at its last instruction, after three good ones: a store of a [64, 512] tile into [128, 512].
constexpr const char* kBadKernel = R"py(import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a[0:128, :])
    y = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=x, data2=x, op=nl.add)
    nisa.dma_copy(dst=out[0:128, :], src=y[0:128, :])
    nisa.dma_copy(dst=out[128:256, :], src=y[0:64, :])
    return out
)py";

class CliCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir_.file("k.py"), kKernel);
    write_file(dir_.file("bad.py"), kBadKernel);
  }
  testing::ScratchDir dir_;
};

TEST_F(CliCheck, SummaryCountsWhatTheKernelIssues) {
  auto r = cli("--json check " + dir_.file("k.py") + " --entry k " + kShapes);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = json_of(r.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["timing_only"], true);
  EXPECT_EQ(j["target"], "trn1");
  const auto& s = j["summary"];
  EXPECT_EQ(s["instructions"], 13);
  EXPECT_EQ(s["per_engine"]["dma"], 5);
  EXPECT_EQ(s["per_engine"]["tensor"], 2);
  EXPECT_EQ(s["per_engine"]["scalar"], 2);
  EXPECT_EQ(s["per_engine"]["gpsimd"], 2);
  EXPECT_EQ(s["per_engine"]["vector"], 2);
  // Written by DMA: w (128 x 128 bf16), two a tiles (128 x 512 bf16), two out tiles (128 x 512 f32).
  EXPECT_EQ(s["dma_bytes"], 128 * 128 * 2 + 2 * 128 * 512 * 2 + 2 * 128 * 512 * 4);
  // Every instruction's output elements: the weights, then 5 instructions of 128 x 512 per tile
  // plus the store.
  EXPECT_EQ(s["elements"], 128 * 128 + 2 * 6 * 128 * 512);
  EXPECT_EQ(s["truncated"], false);
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["dtype"], "float32");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({256, 512}));

  // The full trace: one record per instruction, in program order, at the kernel's lines.
  const auto& trace = j["trace"];
  ASSERT_EQ(trace.size(), 13u);
  const std::vector<std::string> want_ops = {"dma_copy", "dma_copy",          "nc_matmul", "activation:exp",
                                             "memset",   "tensor_tensor:add", "dma_copy"};
  for (size_t i = 0; i < want_ops.size(); ++i) EXPECT_EQ(trace[i]["opcode"], want_ops[i]) << i;
  const auto& mm = trace[2];
  EXPECT_EQ(mm["engine"], "tensor");
  EXPECT_EQ(mm["file"], dir_.file("k.py"));
  EXPECT_EQ(mm["line"], line_of(kKernel, "nisa.nc_matmul"));
  ASSERT_EQ(mm["operands"].size(), 3u);
  const auto& dst = mm["operands"][0];
  EXPECT_EQ(dst["buffer"], "psum");
  EXPECT_EQ(dst["dtype"], "float32");
  EXPECT_EQ(dst["shape"], nlohmann::json({128, 512}));
  EXPECT_EQ(dst["partitions"], 128);
  EXPECT_EQ(dst["start_partition"], 0);
  EXPECT_EQ(dst["bytes"], 128 * 512 * 4);
  EXPECT_EQ(dst["is_write"], true);
  EXPECT_EQ(mm["operands"][1]["is_write"], false);
  EXPECT_EQ(mm["operands"][2]["dtype"], "bfloat16");
  // The second tile's load reads rows 128..255 of a: an HBM operand, 512 elements in.
  const auto& load2 = trace[7]["operands"][1];
  EXPECT_EQ(trace[7]["opcode"], "dma_copy");
  EXPECT_EQ(load2["buffer"], "shared_hbm");
  EXPECT_EQ(load2["offset"], 128 * 512);
  EXPECT_EQ(load2["partitions"], 0);
  EXPECT_EQ(trace[4]["engine"], "gpsimd");
  EXPECT_EQ(trace[4]["line"], line_of(kKernel, "nisa.memset"));
}

TEST_F(CliCheck, TextSummaryGridTargetAndTraceFile) {
  auto r = cli("check " + dir_.file("k.py") + " --entry k " + kShapes + " --trace " + dir_.file("t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("instructions  13 (tensor 2, vector 2, scalar 2, gpsimd 2, dma 5)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dma bytes     819200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outputs       out0 float32[256, 512]"), std::string::npos) << r.out;
  auto doc = json_file(dir_.file("t.json"));
  EXPECT_EQ(doc["entry"], "k");
  EXPECT_EQ(doc["summary"]["instructions"], 13);
  EXPECT_EQ(doc["trace"].size(), 13u);

  // An SPMD grid runs every instance: four times the instructions.
  auto g = cli("--json check " + dir_.file("k.py") + " --entry k " + kShapes + " --grid 2,2 --target trn2");
  ASSERT_EQ(g.exit_code, 0) << g.out;
  auto gj = json_of(g.out);
  EXPECT_EQ(gj["summary"]["instructions"], 4 * 13);
  EXPECT_EQ(gj["summary"]["per_engine"]["tensor"], 4 * 2);
  EXPECT_EQ(gj["target"], "trn2");
}

TEST_F(CliCheck, TheTargetReachesTheKernel) {
  write_file(dir_.file("v.py"),
             "import nki\nimport nki.isa as nisa\n\n@nki.jit\ndef k(a):\n"
             "    print(nisa.get_nc_version() == nisa.nc_version.gen3)\n"
             "    return a\n");
  auto one = json_of(cli("--json check " + dir_.file("v.py") + " -e k -s 'a=float32[2,2]'").out);
  auto two = json_of(cli("--json check " + dir_.file("v.py") + " -e k -s 'a=float32[2,2]' --target trn2").out);
  EXPECT_EQ(one["printed"], "False\n");
  EXPECT_EQ(two["printed"], "True\n");
}

// A file whose module-level code launches its kernel at import and asserts on what it returns (the
// SDK's test files do) checks: that launch computes, while the entry's own launch stays timing-only.
TEST_F(CliCheck, AnImportTimeDriverLaunchComputes) {
  write_file(dir_.file("d.py"),
             "import numpy as np\nimport nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n"
             "@nki.jit\ndef k(a):\n"
             "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)\n"
             "    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)\n"
             "    nisa.dma_copy(dst=t, src=a)\n"
             "    nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)\n"
             "    nisa.dma_copy(dst=out, src=t)\n"
             "    return out\n\n"
             "got = k(np.zeros((4, 8), dtype=np.float32))\n"
             "assert np.all(got == 1.0), got\n");
  auto r = cli("--json check " + dir_.file("d.py") + " -e k -s 'a=float32[128,64]'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto j = json_of(r.out);
  EXPECT_EQ(j["ok"], true) << r.out;
}

// A task baseline that imports the shared building blocks runs with --lib (and only with it).
TEST_F(CliCheck, LibFoldersLendTheirPackages) {
  const std::string root = std::string(NKIA_SOURCE_DIR) + "/tasks/nkibench";
  const std::string baseline = root + "/level2/L2_019_matmul_gelu_small/baseline.py";
  const std::string shapes = " -s 'a=float32[256,256]' -s 'b=float32[256,256]'";
  auto with = cli("--json check " + baseline + " -e kernel --lib " + root + "/lib" + shapes);
  EXPECT_EQ(with.exit_code, 0) << with.out;
  auto j = json_of(with.out);
  EXPECT_EQ(j["ok"], true) << with.out;
  EXPECT_GT(j["summary"]["instructions"].get<int64_t>(), 0) << with.out;
  auto without = cli("check " + baseline + " -e kernel" + shapes, true);
  EXPECT_NE(without.exit_code, 0) << without.out;
  EXPECT_EQ(cli("check " + baseline + " -e kernel --lib " + dir_.file("nope") + shapes).exit_code, 1);
}

TEST_F(CliCheck, MustFailKernelGetsItsCodeAndLine) {
  auto r = cli("--json check " + dir_.file("bad.py") + " --entry k --shapes 'a=float32[256,512]'");
  EXPECT_EQ(r.exit_code, 1);
  auto d = json_of(r.out)["diagnostics"][0];
  EXPECT_EQ(d["code"], "err_store_dst_shape_smaller_than_other_shape");
  EXPECT_EQ(d["location"]["file"], dir_.file("bad.py"));
  EXPECT_EQ(d["location"]["line"], line_of(kBadKernel, "y[0:64, :]"));
  EXPECT_FALSE(d["hint"].get<std::string>().empty());

  // Text: the compiler-style line on stderr, nothing on stdout.
  auto t = cli("check " + dir_.file("bad.py") + " --entry k --shapes 'a=float32[256,512]'", true);
  EXPECT_EQ(t.exit_code, 1);
  const std::string where = dir_.file("bad.py") + ":" + std::to_string(line_of(kBadKernel, "y[0:64, :]")) +
                            ": error[err_store_dst_shape_smaller_than_other_shape]";
  EXPECT_NE(t.out.find(where), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("hint: "), std::string::npos) << t.out;
  EXPECT_EQ(cli("check " + dir_.file("bad.py") + " --entry k --shapes 'a=float32[256,512]'").out, "");
}

// 100 tiles of [128, 512] float32 alive at once: 200 KiB per partition, over trn1's usable SBUF.
constexpr const char* kHogKernel = R"py(import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    tiles = []
    for i in range(100):
        t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        tiles.append(t)
    acc = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for t in tiles:
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out
)py";

TEST_F(CliCheck, SbufOverSubscriptionIsAWarningNotAFailure) {
  write_file(dir_.file("hog.py"), kHogKernel);
  auto r = cli("--json check " + dir_.file("hog.py") + " --entry k --shapes 'a=float32[128,512]'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = json_of(r.out);
  EXPECT_EQ(j["ok"], true);
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"].dump();
  const auto& w = j["warnings"][0];
  EXPECT_EQ(w["code"], "nkia_sbuf_capacity_exceeded");
  EXPECT_EQ(w["severity"], "warning");
  EXPECT_EQ(w["location"]["file"], dir_.file("hog.py"));
  EXPECT_EQ(w["location"]["line"], line_of(kHogKernel, "        t = nl.ndarray"));
  // The 100 loaded tiles and the accumulator, 2 KiB each.
  EXPECT_NE(w["message"].get<std::string>().find(std::to_string(101 * 2048) + " bytes per partition"),
            std::string::npos)
      << w["message"];
  EXPECT_FALSE(w["hint"].get<std::string>().empty());

  // Text: the warning on stderr, then the summary.
  auto t = cli("check " + dir_.file("hog.py") + " --entry k --shapes 'a=float32[128,512]'", true);
  EXPECT_EQ(t.exit_code, 0) << t.out;
  const std::string where =
      dir_.file("hog.py") + ":" + std::to_string(line_of(kHogKernel, "        t = nl.ndarray")) + ":";
  EXPECT_NE(t.out.find(where), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("warning[nkia_sbuf_capacity_exceeded]"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("passed the checks"), std::string::npos) << t.out;

  // `run` computes it and reports the same warning; a kernel that fits gets none.
  auto run =
      cli("--json run " + dir_.file("hog.py") + " --entry k --random 'a=float32[128,512]' --out " + dir_.file("out"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  auto rj = json_of(run.out);
  ASSERT_EQ(rj["warnings"].size(), 1u);
  EXPECT_EQ(rj["warnings"][0]["code"], "nkia_sbuf_capacity_exceeded");
  auto fits = json_of(cli("--json check " + dir_.file("k.py") + " --entry k " + kShapes).out);
  ASSERT_TRUE(fits["warnings"].is_array());
  EXPECT_TRUE(fits["warnings"].empty());
}

TEST_F(CliCheck, UsageAndInputErrors) {
  EXPECT_EQ(cli("check " + dir_.file("k.py")).exit_code, 2);  // --entry is required
  EXPECT_EQ(cli("check " + dir_.file("k.py") + " -e k " + kShapes + " --target trn9").exit_code, 2);
  auto spec = cli("--json check " + dir_.file("k.py") + " -e k --shapes 'a=bfloat16[256,'");
  EXPECT_EQ(spec.exit_code, 1);
  EXPECT_EQ(json_of(spec.out)["diagnostics"][0]["code"], "nkia_bad_tensor_spec");
  auto grid = cli("--json check " + dir_.file("k.py") + " -e k " + kShapes + " --grid 0");
  EXPECT_EQ(json_of(grid.out)["diagnostics"][0]["code"], "nkia_bad_grid");
  auto missing = cli("--json check " + dir_.file("absent.py") + " -e k");
  EXPECT_EQ(json_of(missing.out)["diagnostics"][0]["code"], "nkia_kernel_not_found");
  auto entry = cli("--json check " + dir_.file("k.py") + " -e nope " + kShapes);
  EXPECT_EQ(json_of(entry.out)["diagnostics"][0]["code"], "nkia_entry_not_found");
  auto unwritable =
      cli("--json check " + dir_.file("k.py") + " -e k " + kShapes + " --trace " + dir_.file("no/such/dir/t.json"));
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_EQ(json_of(unwritable.out)["diagnostics"][0]["code"], "nkia_unwritable");
}

// nki-agent's own failure is exit code 3, never a kernel error: here the worker program (NKIA_WORKER)
// is one without a kernel handler, so the command cannot run the kernel at all.
TEST_F(CliCheck, AWorkerThatCannotRunKernelsIsExitThree) {
  const std::string env = std::string("NKIA_WORKER=") + NKIA_TEST_WORKER;
  auto r = testing::run_cli("--json check " + dir_.file("k.py") + " -e k " + kShapes, testing::Stderr::kDrop, env);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(json_of(r.out)["diagnostics"][0]["code"], "nkia_worker_unknown_handler");
  auto missing = testing::run_cli("check " + dir_.file("k.py") + " -e k " + kShapes, testing::Stderr::kDrop,
                                  "NKIA_WORKER=" + dir_.file("no-such-worker"));
  EXPECT_EQ(missing.exit_code, 3);
  // The same kernel with the real worker passes.
  EXPECT_EQ(cli("check " + dir_.file("k.py") + " -e k " + kShapes).exit_code, 0);
}

// Inputs bind by name; a misspelt name is an error naming the parameters, never a silent switch
// to positional binding; inputs named after no parameter bind by position, and the run says so.
TEST_F(CliCheck, InputsBindByNameAndAMisspeltNameIsAnError) {
  auto misspelt =
      cli("--json check " + dir_.file("k.py") + " -e k --shapes 'aa=bfloat16[256,512]' 'w=bfloat16[128,128]'");
  EXPECT_EQ(misspelt.exit_code, 1) << misspelt.out;
  auto d = json_of(misspelt.out)["diagnostics"][0];
  EXPECT_EQ(d["code"], "nkia_bad_input_name") << misspelt.out;
  EXPECT_NE(d["message"].get<std::string>().find("'aa'"), std::string::npos);
  EXPECT_NE(d["message"].get<std::string>().find("a, w"), std::string::npos);  // the parameters, named
  auto swapped =
      cli("--json check " + dir_.file("k.py") + " -e k --shapes 'w=bfloat16[128,128]' 'a=bfloat16[256,512]'");
  EXPECT_EQ(swapped.exit_code, 0) << swapped.out;  // by name, whatever the order
  EXPECT_TRUE(json_of(swapped.out)["warnings"].empty()) << swapped.out;
  auto positional =
      cli("--json check " + dir_.file("k.py") + " -e k --shapes 'p=bfloat16[256,512]' 'q=bfloat16[128,128]'");
  EXPECT_EQ(positional.exit_code, 0) << positional.out;
  auto w = json_of(positional.out)["warnings"];
  ASSERT_EQ(w.size(), 1u) << positional.out;
  EXPECT_EQ(w[0]["code"], "nkia_inputs_bound_by_position");
  EXPECT_NE(w[0]["message"].get<std::string>().find("a=p, w=q"), std::string::npos) << w[0].dump();
}

// The timing-only trace is the computing run's, record for record; the run's outputs are numbers,
// and `run` without --trace reports exactly what it did before.
TEST_F(CliCheck, TimingOnlyTraceEqualsAComputingRun) {
  const std::string run_k =
      "--json run " + dir_.file("k.py") + " --entry k -r 'a=bfloat16[256,512]' -r 'w=bfloat16[128,128]'";
  auto run = cli(run_k + " --out " + dir_.file("o") + " --trace " + dir_.file("run.json"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  auto rj = json_of(run.out);
  EXPECT_EQ(rj["trace_file"], dir_.file("run.json"));
  EXPECT_EQ(rj["trace_summary"]["instructions"], 13);
  auto check = cli("check " + dir_.file("k.py") + " --entry k " + kShapes + " --trace " + dir_.file("check.json"));
  ASSERT_EQ(check.exit_code, 0) << check.out;
  auto computed = json_file(dir_.file("run.json")), timed = json_file(dir_.file("check.json"));
  EXPECT_EQ(computed["timing_only"], false);
  EXPECT_EQ(timed["timing_only"], true);
  ASSERT_EQ(computed["trace"].size(), 13u);
  EXPECT_EQ(computed["trace"], timed["trace"]);
  EXPECT_EQ(computed["summary"], timed["summary"]);
  auto info = json_of(cli("--json npy info " + dir_.file("o/out0.npy")).out);
  EXPECT_EQ(info["arrays"][0]["nan"], 0);  // computed: 1 + exp(...), never poison

  auto plain = cli(run_k + " --out " + dir_.file("o2"));
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  auto pj = json_of(plain.out);
  EXPECT_FALSE(pj.contains("trace_file"));
  EXPECT_FALSE(pj.contains("trace_summary"));
  EXPECT_EQ(pj.size(), 4u);  // ok, outputs, printed, warnings
  EXPECT_EQ(pj["warnings"], nlohmann::json::array());
}

}  // namespace
}  // namespace nki_agent
