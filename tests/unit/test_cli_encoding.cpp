// Bytes that are not UTF-8, wherever a user can put them — a kernel, a helper beside it, a .npy
// given as the kernel, a task's files, --arg values, file and folder names — are user errors:
// exit 1 with a Diagnostic at the first bad byte, and --json output that is one JSON object.
// Never exit 3. A helper Python could not read fails only when imported, as in Python.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/cli_runner.h"
#include "support/python_oracle.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

const fs::path kTasks = fs::path(NKIA_SOURCE_DIR) / "tests" / "tasks";

using testing::CliRun;

CliRun cli(const std::string& args) {
  return testing::run_cli(args, testing::Stderr::kSeparate);
}

nlohmann::json json_of(const CliRun& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not one JSON object: " << r.out << "\nstderr: " << r.err;
  return j.is_discarded() ? nlohmann::json::object() : j;
}

nlohmann::json first_diagnostic(const CliRun& r) {
  auto j = json_of(r);
  if (!j.contains("diagnostics") || j["diagnostics"].empty()) {
    ADD_FAILURE() << "no diagnostics: " << r.out;
    return nlohmann::json::object();
  }
  return j["diagnostics"][0];
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// 'text' for the shell.
std::string q(const std::string& s) {
  return "'" + s + "'";
}

TEST(CliEncoding, Latin1KernelIsDiagnosedAtItsByte) {
  testing::ScratchDir dir;
  write(dir.file("k.py"), "def entry(x):\n    # caf\xe9\n    return x\n");
  auto r = cli("--json run " + dir.file("k.py") + " --entry entry -r 'x=float32[2]' --out " + dir.file("o"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto d = first_diagnostic(r);
  EXPECT_EQ(d["code"], "nkia_not_utf8");
  EXPECT_EQ(d["location"]["file"], dir.file("k.py"));
  EXPECT_EQ(d["location"]["line"], 2);
  EXPECT_EQ(d["location"]["col"], 10);

  auto text = cli("run " + dir.file("k.py") + " --entry entry -r 'x=float32[2]' --out " + dir.file("o"));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.err.find(dir.file("k.py") + ":2:10: error[nkia_not_utf8]"), std::string::npos) << text.err;

  // The same kernel verified: the same user error, before any reference is needed.
  auto v = cli("--json verify --task " + (kTasks / "add_fp32").string() + " " + dir.file("k.py"));
  EXPECT_EQ(v.exit_code, 1) << v.out << v.err;
  EXPECT_EQ(first_diagnostic(v)["code"], "nkia_not_utf8");
}

TEST(CliEncoding, CodingDeclarationIsHonoured) {
  testing::ScratchDir dir;
  write(dir.file("k.py"), "# -*- coding: latin-1 -*-\ndef entry(x):\n    print('caf\xe9')\n    return x\n");
  auto r = cli("--json run " + dir.file("k.py") + " --entry entry -r 'x=float32[2]' --out " + dir.file("o"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(json_of(r)["printed"], "caf\xc3\xa9\n");
}

TEST(CliEncoding, UnreadableHelperFailsOnlyWhereImported) {
  testing::ScratchDir dir;
  write(dir.file("notes.py"), "X = 1\nY = 'caf\xe9'\n");
  write(dir.file("alone.py"), "def entry(x):\n    return x\n");
  auto alone = cli("--json run " + dir.file("alone.py") + " --entry entry -r 'x=float32[2]' --out " + dir.file("o"));
  EXPECT_EQ(alone.exit_code, 0) << alone.out << alone.err;

  write(dir.file("uses.py"), "import notes\ndef entry(x):\n    return x\n");
  auto uses = cli("--json run " + dir.file("uses.py") + " --entry entry -r 'x=float32[2]' --out " + dir.file("o"));
  EXPECT_EQ(uses.exit_code, 1) << uses.out << uses.err;
  auto d = first_diagnostic(uses);
  EXPECT_EQ(d["code"], "nkia_not_utf8");
  EXPECT_EQ(d["location"]["file"], dir.file("notes.py"));
  EXPECT_EQ(d["location"]["line"], 2);
  EXPECT_EQ(d["location"]["col"], 9);
  EXPECT_NE(d["message"].get<std::string>().find("notes.py cannot be imported"), std::string::npos) << d;
}

TEST(CliEncoding, NpyGivenAsTheKernel) {
  testing::ScratchDir dir;
  ASSERT_EQ(cli("random 'x=float32[4]' --out " + dir.path()).exit_code, 0);
  auto r = cli("--json run " + dir.file("x.npy") + " --entry entry --out " + dir.file("o"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto d = first_diagnostic(r);
  EXPECT_EQ(d["code"], "nkia_not_utf8");
  EXPECT_EQ(d["location"]["line"], 1);
  EXPECT_NE(d["hint"].get<std::string>().find("does not look like Python source"), std::string::npos) << d;
}

TEST(CliEncoding, ArgumentsAndNamesThatAreNotUtf8) {
  testing::ScratchDir dir;
  write(dir.file("k.py"), "def entry(x, y=0):\n    return x\n");
  auto arg = cli("--json run " + dir.file("k.py") + " --entry entry -r 'x=float32[2]' --arg " + q("y=caf\xe9") +
                 " --out " + dir.file("o"));
  EXPECT_EQ(arg.exit_code, 1) << arg.out << arg.err;
  auto d = first_diagnostic(arg);
  EXPECT_EQ(d["code"], "nkia_not_utf8");
  EXPECT_NE(d["message"].get<std::string>().find("argument 'y'"), std::string::npos) << d;

  ASSERT_EQ(cli("random 'x=float32[2]' --out " + dir.path()).exit_code, 0);
  fs::copy_file(dir.file("x.npy"), dir.file("caf\xe9.npy"));
  auto input = cli("--json run " + dir.file("k.py") + " --entry entry -i " + q(dir.file("caf\xe9.npy")) + " --out " +
                   dir.file("o"));
  EXPECT_EQ(input.exit_code, 1) << input.out << input.err;
  EXPECT_EQ(first_diagnostic(input)["code"], "nkia_not_utf8");

  auto entry = cli("--json run " + dir.file("k.py") + " --entry " + q("ent\xe9") + " --out " + dir.file("o"));
  EXPECT_EQ(entry.exit_code, 1) << entry.out << entry.err;
  EXPECT_EQ(first_diagnostic(entry)["code"], "nkia_not_utf8");

  fs::create_directory(dir.file("d\xe9"));
  fs::copy_file(dir.file("k.py"), dir.file("d\xe9/k.py"));
  auto folder =
      cli("--json run " + q(dir.file("d\xe9/k.py")) + " --entry entry -r 'x=float32[2]' --out " + dir.file("o"));
  EXPECT_EQ(folder.exit_code, 1) << folder.out << folder.err;
  EXPECT_EQ(first_diagnostic(folder)["code"], "nkia_not_utf8");

  // A missing file whose name is not UTF-8: its Diagnostic still prints as JSON.
  auto missing = cli("--json npy info " + q(dir.file("gone\xe9.npy")));
  EXPECT_EQ(missing.exit_code, 1) << missing.out << missing.err;
  EXPECT_EQ(first_diagnostic(missing)["code"], "nkia_npy_not_found");
}

TEST(CliEncoding, TaskFilesThatAreNotUtf8) {
  testing::ScratchDir dir;
  const fs::path py = fs::path(dir.path()) / "py";
  const fs::path toml = fs::path(dir.path()) / "toml";
  fs::copy(kTasks / "add_fp32", py, fs::copy_options::recursive);
  fs::copy(kTasks / "add_fp32", toml, fs::copy_options::recursive);
  std::ofstream(py / "task.py", std::ios::app | std::ios::binary) << "# caf\xe9\n";
  std::ofstream(toml / "task.toml", std::ios::app | std::ios::binary) << "# caf\xe9\n";

  auto r = cli("--json tasks show " + py.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto d = first_diagnostic(r);
  EXPECT_EQ(d["code"], "nkia_not_utf8");
  EXPECT_EQ(d["location"]["file"], (py / "task.py").string());
  EXPECT_GT(d["location"]["line"].get<int>(), 1);

  auto t = cli("--json tasks show " + toml.string());
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  EXPECT_EQ(first_diagnostic(t)["code"], "nkia_task_toml_syntax");

  // tasks list reports the broken ones and still prints one JSON object.
  auto list = cli("--json tasks --root " + dir.path() + " list");
  EXPECT_EQ(list.exit_code, 1) << list.out << list.err;
  EXPECT_EQ(json_of(list)["tasks"].size(), 2u);
}

}  // namespace
}  // namespace nki_agent
