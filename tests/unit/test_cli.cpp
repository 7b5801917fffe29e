// The nki-agent command line: exit codes, the --json convention, and the array commands end to end.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/python_oracle.h"

namespace nki_agent {
namespace {

using testing::CliRun;

// stdout only.
CliRun cli(const std::string& args) {
  return testing::run_cli(args);
}

nlohmann::json json_of(const CliRun& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not one JSON object: " << r.out;
  return j;
}

TEST(Cli, VersionHelpAndUsageErrors) {
  auto v = cli("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("nki-agent 0."), std::string::npos);
  EXPECT_EQ(cli("--help").exit_code, 0);
  EXPECT_EQ(cli("").exit_code, 2);
  EXPECT_EQ(cli("no-such-command").exit_code, 2);
  EXPECT_EQ(cli("cast").exit_code, 2);
  EXPECT_EQ(cli("--log-level loud info").exit_code, 2);
  EXPECT_EQ(cli("random 'a=float32[2]' --dist cauchy").exit_code, 2);
}

TEST(Cli, GlobalOptionsAfterTheSubcommand) {
  auto info = cli("info --json");
  EXPECT_EQ(info.exit_code, 0);
  EXPECT_EQ(json_of(info)["ok"], true);
  testing::ScratchDir dir;
  ASSERT_EQ(cli("random 'x=float32[3]' --out " + dir.path() + " --json").exit_code, 0);
  auto nested = json_of(cli("npy info " + dir.file("x.npy") + " --json"));  // two levels down
  EXPECT_EQ(nested["arrays"][0]["shape"], nlohmann::json({3}));
  EXPECT_EQ(cli("dtypes --log-level loud").exit_code, 2);  // read as the global option, and refused
  EXPECT_EQ(cli("dtypes --log-level error").exit_code, 0);
  // A group's own option after its subcommand, too.
  const std::string root = std::string(NKIA_SOURCE_DIR) + "/tests/tasks";
  auto list = cli("tasks list --root " + root + " --json");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_EQ(json_of(list)["root"], root);
  EXPECT_EQ(cli("info --no-such-flag").exit_code, 2);
}

TEST(Cli, InfoAndDtypesJson) {
  auto info = json_of(cli("--json info"));
  EXPECT_EQ(info["ok"], true);
  EXPECT_EQ(info["dtypes"].size(), 14u);
  auto dt = json_of(cli("--json dtypes"));
  bool saw_e4m3 = false;
  for (const auto& r : dt["dtypes"])
    if (r["name"] == "float8_e4m3") {
      saw_e4m3 = true;
      EXPECT_EQ(r["max_finite"], 240.0);
    }
  EXPECT_TRUE(saw_e4m3);
}

TEST(Cli, CastShowsRoundedValuesAndBits) {
  auto r = cli("--json cast 1.00390625 -t bf16 -t fp16");
  ASSERT_EQ(r.exit_code, 0);
  auto j = json_of(r);
  ASSERT_EQ(j["casts"].size(), 2u);
  EXPECT_EQ(j["casts"][0]["bits"], "0x3f80");  // 1 + 2^-8 is a tie in bf16: rounds to even (1.0)
  EXPECT_EQ(j["casts"][0]["value"], 1.0);
  EXPECT_EQ(j["casts"][1]["value"], 1.00390625);  // exact in fp16
  auto sat = json_of(cli("--json cast 1000 -t fp8_e4m3 --saturate"));
  EXPECT_EQ(sat["casts"][0]["value"], 240.0);
  auto nonsat = json_of(cli("--json cast 1000 -t fp8_e4m3"));
  EXPECT_EQ(nonsat["casts"][0]["value"], "inf");
  auto bad = cli("--json cast abc");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(json_of(bad)["diagnostics"][0]["code"], "nkia_bad_value");
  EXPECT_EQ(cli("cast 1 -t float64").exit_code, 1);
}

TEST(Cli, RandomThenInfoThenDiff) {
  testing::ScratchDir dir;
  auto r = cli("--json random 'x=bfloat16[16,32]' 'y=float32[16,32]' --seed 7 --out " + dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json_of(r)["files"].size(), 2u);

  auto info = json_of(cli("--json npy info " + dir.file("x.npy")));
  ASSERT_EQ(info["arrays"].size(), 1u);
  EXPECT_EQ(info["arrays"][0]["dtype"], "bfloat16");
  EXPECT_EQ(info["arrays"][0]["shape"], nlohmann::json({16, 32}));
  EXPECT_EQ(info["arrays"][0]["nan"], 0);

  // Same seed and name: the same array; another name: another stream.
  testing::ScratchDir dir2;
  ASSERT_EQ(cli("random 'x=bfloat16[16,32]' --seed 7 --out " + dir2.path()).exit_code, 0);
  auto same = cli("--json npy diff " + dir.file("x.npy") + " " + dir2.file("x.npy") + " --atol 0 --rtol 0");
  EXPECT_EQ(same.exit_code, 0);
  EXPECT_EQ(json_of(same)["mismatches"], 0);

  auto differ = cli("--json npy diff " + dir.file("x.npy") + " " + dir.file("y.npy"));
  EXPECT_EQ(differ.exit_code, 1);
  auto j = json_of(differ);
  EXPECT_EQ(j["ok"], false);
  EXPECT_GT(j["mismatches"].get<int>(), 0);
  EXPECT_EQ(j["first_mismatch"]["index"].size(), 2u);
}

TEST(Cli, BadFilesGiveDiagnosticsNotCrashes) {
  testing::ScratchDir dir;
  {
    std::ofstream f(dir.file("junk.npy"), std::ios::binary);
    f << "this is not a numpy file at all";
  }
  auto r = cli("--json npy info " + dir.file("junk.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(json_of(r)["diagnostics"][0]["code"], "nkia_npy_bad_magic");
  auto missing = cli("--json npy info " + dir.file("absent.npy"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(json_of(missing)["diagnostics"][0]["code"], "nkia_npy_not_found");
  auto spec = cli("--json random 'x=float32[2' --out " + dir.path());
  EXPECT_EQ(spec.exit_code, 1);
  EXPECT_EQ(json_of(spec)["diagnostics"][0]["code"], "nkia_bad_tensor_spec");
}

TEST(Cli, DiffRejectsShapeMismatch) {
  testing::ScratchDir dir;
  ASSERT_EQ(cli("random 'a=float32[4]' 'b=float32[5]' --out " + dir.path()).exit_code, 0);
  auto r = cli("--json npy diff " + dir.file("a.npy") + " " + dir.file("b.npy"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(json_of(r)["diagnostics"][0]["code"], "nkia_shape_mismatch");
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(CliRun, KernelWithInputsArgsAndDtypes) {
  testing::ScratchDir dir;
  write_file(dir.file("k.py"),
             "import neuronxcc.nki as nki\n"
             "import numpy as np\n"
             "from helpers import scale\n"
             "def entry(b, a, factor=1.0):\n"
             "    print('types', getattr(a, 'nki_dtype', a.dtype), b.dtype)\n"
             "    return scale(a, factor) - b, a\n");
  write_file(dir.file("helpers.py"), "def scale(x, f):\n    return x * f\n");
  ASSERT_EQ(cli("random 'a=float32[4,8]' 'b=float32[4,8]' --seed 3 --out " + dir.path()).exit_code, 0);
  auto r = cli("--json run " + dir.file("k.py") + " --entry entry --input " + dir.file("a.npy") + " --input " +
               dir.file("b.npy") + " --arg factor=2 --dtype a=bfloat16 --out " + dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = json_of(r);
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][0]["dtype"], "float32");
  EXPECT_EQ(j["outputs"][1]["dtype"], "bfloat16");  // the cast input comes back as bf16
  EXPECT_EQ(j["printed"], "types bfloat16 float32\n");
  // out1 is a rounded to bf16, written as float32 values; out0 = 2 * bf16(a) - b.
  auto info = json_of(cli("--json npy info " + dir.file("out/out0.npy") + " " + dir.file("out/out1.npy")));
  EXPECT_EQ(info["arrays"][0]["dtype"], "float32");
  EXPECT_EQ(info["arrays"][1]["dtype"], "float32");  // float32 values unless --raw-bits
  auto raw = cli("--json run " + dir.file("k.py") + " --entry entry -i " + dir.file("a.npy") + " -i " +
                 dir.file("b.npy") + " --dtype a=bf16 --raw-bits --out " + dir.file("raw"));
  ASSERT_EQ(raw.exit_code, 0) << raw.out;
  EXPECT_EQ(json_of(cli("--json npy info " + dir.file("raw/out1.npy")))["arrays"][0]["dtype"], "bfloat16");
  auto same =
      cli("--json npy diff " + dir.file("out/out1.npy") + " " + dir.file("raw/out1.npy") + " --atol 0 --rtol 0");
  EXPECT_EQ(same.exit_code, 0) << same.out;
}

TEST(CliRun, RandomInputsAndGrid) {
  testing::ScratchDir dir;
  write_file(dir.file("k.py"),
             "import nki\n"
             "import nki.language as nl\n"
             "import numpy as np\n"
             "seen = []\n"
             "@nki.jit\n"
             "def k(x):\n"
             "    seen.append(nl.program_id(0) * 10 + nl.program_id(1))\n"
             "    return x\n");
  auto r =
      cli("--json run " + dir.file("k.py") + " --entry k --random 'x=float16[3,5]' --grid 2,3 --out " + dir.file("o"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = json_of(r);
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["dtype"], "float16");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({3, 5}));
}

TEST(CliRun, KernelErrorsAreCompilerStyleDiagnostics) {
  testing::ScratchDir dir;
  write_file(dir.file("bad.py"), "def entry(x):\n    return x.no_such_method()\n");
  auto r = cli("--json run " + dir.file("bad.py") + " --entry entry --random 'x=float32[2]' --out " + dir.file("o"));
  EXPECT_EQ(r.exit_code, 1);
  auto d = json_of(r)["diagnostics"][0];
  EXPECT_EQ(d["code"], "nkia_python_exception");
  EXPECT_EQ(d["location"]["file"], dir.file("bad.py"));
  EXPECT_EQ(d["location"]["line"], 2);

  write_file(dir.file("spin.py"), "def entry():\n    while True:\n        pass\n");
  auto t = cli("--json run " + dir.file("spin.py") + " --entry entry --timeout 0.5 --out " + dir.file("o"));
  EXPECT_EQ(t.exit_code, 1);
  auto code = json_of(t)["diagnostics"][0]["code"].get<std::string>();
  EXPECT_TRUE(code == "nkia_sandbox_timeout" || code == "nkia_sandbox_cpu_limit") << code;

  EXPECT_EQ(json_of(cli("--json run " + dir.file("absent.py") + " --entry e"))["diagnostics"][0]["code"],
            "nkia_kernel_not_found");
  EXPECT_EQ(json_of(cli("--json run " + dir.file("bad.py") + " --entry entry --grid 2,x"))["diagnostics"][0]["code"],
            "nkia_bad_grid");
  EXPECT_EQ(json_of(cli("--json run " + dir.file("bad.py") +
                        " --entry entry --random 'x=float32[2]' --dtype y=bf16"))["diagnostics"][0]["code"],
            "nkia_bad_argument");
  EXPECT_EQ(cli("run " + dir.file("bad.py")).exit_code, 2);  // --entry is required
}

}  // namespace
}  // namespace nki_agent
