// The error table against the sources: every code literal in src/ (C++ and the Python halves) is a
// registered code, every registered code is raised somewhere (or says why not), and the codes built
// at run time (`nkia_verify_<check>`, `nkia_policy_<rule>`) are registered for every check and
// rule that the sources can produce.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "nki/error_catalogue.h"
#include "tasks/verify_check.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = NKIA_SOURCE_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The table's own files, which spell every code by definition.
bool is_table_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return p.parent_path().filename() == "nki" && name.starts_with("error_table");
}

// Every source file of the program: src/**/*.cpp|h and the Python under src/ (the kernel host's
// pylib and tasks/py), the table's files excepted.
const std::map<std::string, std::string>& sources() {
  static const std::map<std::string, std::string> files = [] {
    std::map<std::string, std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / "src")) {
      if (!entry.is_regular_file()) continue;
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".py") continue;
      if (is_table_file(entry.path())) continue;
      out[entry.path().lexically_relative(kRoot).string()] = read_file(entry.path());
    }
    return out;
  }();
  return files;
}

// Each string literal of the form "err_…" / "nkia_…" (either quote), with the first file holding it.
std::map<std::string, std::string> code_literals() {
  static const std::regex re(R"re(["']((?:err|nkia)_[a-z0-9_]*)["'])re");
  std::map<std::string, std::string> out;
  for (const auto& [path, text] : sources())
    for (std::sregex_iterator m(text.begin(), text.end(), re), end; m != end; ++m) out.emplace((*m)[1].str(), path);
  return out;
}

// Literals that look like codes and are not, each with the reason.
const std::map<std::string, std::string>& not_codes() {
  static const std::map<std::string, std::string> list = {
      {"nkia_helper", "a prefix: tasks/reference.cpp matches every nkia_helper_* code with it"},
      {"nkia_reference", "a prefix: tasks/task_check.cpp matches every nkia_reference* code with it"},
      {"nkia_policy_", "the prefix of nkia_policy_<rule> (tasks/static_policy.cpp)"},
      {"nkia_verify_", "the prefix of nkia_verify_<check> (tasks/verify.cpp)"},
      {"nkia_worker_", "a prefix: tasks/verify.cpp matches every nkia_worker_* code with it"},
      {"nkia_task_reference", "the module name the reference worker gives a task's task.py"},
      {"err_", "the prefix of the NKI catalogue's codes (agent/docs_db.cpp strips it for an alias)"},
      {"nkia_", "the prefix of our codes (agent/docs_db.cpp strips it for an alias)"},
  };
  return list;
}

// The must-fail kernels' expected codes (tests/kernels/fail/*.py), known failures left out: those
// name a code the simulator does not raise yet.
std::set<std::string> codes_of_must_fail_kernels() {
  static const std::regex re(R"re(#\s*expect-error:\s*([a-z0-9_]+))re");
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(kRoot / "tests" / "kernels" / "fail")) {
    if (entry.path().extension() != ".py") continue;
    const std::string text = read_file(entry.path());
    if (text.find("# status: known-failure") != std::string::npos) continue;
    std::smatch m;
    if (std::regex_search(text, m, re)) out.insert(m[1].str());
  }
  return out;
}

// The checks verify can fail with (tasks/verify_check.h), less the two that carry a Diagnostic of
// their own (the kernel's error, the static policy's violation).
std::set<std::string> verify_checks() {
  std::set<std::string> out;
  for (int i = 0; i < kNumVerifyChecks; ++i) out.insert(std::string(check_name(static_cast<VerifyCheck>(i))));
  out.erase("kernel_error");
  out.erase("static_policy");
  return out;
}

// The static policy's rules: every rule name src/tasks/py/static_policy.py reports
// (`self.add("<rule>", …)`, `{"rule": "<rule>", …}`, `rule = "<a>" if … else "<b>"`).
std::set<std::string> policy_rules() {
  static const std::regex re(R"re((?:\badd\(|"rule":\s*|\brule\s*=\s*|\belse\s+)"([a-z_]+)")re");
  const std::string& text = sources().at("src/tasks/py/static_policy.py");
  std::set<std::string> out;
  for (std::sregex_iterator m(text.begin(), text.end(), re), end; m != end; ++m) out.insert((*m)[1].str());
  return out;
}

TEST(ErrorRegistry, TheScanSeesTheSources) {
  // A moved tree would make every test below pass vacuously.
  EXPECT_GT(sources().size(), 100u);
  EXPECT_GT(code_literals().size(), 150u);
  EXPECT_GE(verify_checks().size(), 8u);
  EXPECT_GE(policy_rules().size(), 5u);
}

TEST(ErrorRegistry, EveryCodeLiteralInTheSourcesIsRegistered) {
  size_t registered = 0;
  for (const auto& [code, file] : code_literals()) {
    if (not_codes().count(code)) continue;
    EXPECT_NE(find_error(code), nullptr) << code << " (in " << file
                                         << ") is not in the error table: add it to src/nki/error_table_*.cpp";
    registered += find_error(code) != nullptr;
  }
  EXPECT_GT(registered, 150u);
  for (const auto& [literal, why] : not_codes()) {
    EXPECT_TRUE(code_literals().count(literal))
        << literal << " is listed as a non-code (" << why << ") but no source has it any more";
    EXPECT_EQ(find_error(literal), nullptr) << literal << " is listed as a non-code but is registered";
  }
}

TEST(ErrorRegistry, CodesBuiltAtRunTimeAreRegisteredForEveryCheckAndRule) {
  for (const std::string& check : verify_checks()) {
    const ErrorInfo* e = find_error("nkia_verify_" + check);
    ASSERT_NE(e, nullptr) << "verify can fail its check '" << check << "': register nkia_verify_" << check;
    EXPECT_EQ(e->origin, ErrorOrigin::kVerify) << check;
  }
  for (const std::string& rule : policy_rules()) {
    const ErrorInfo* e = find_error("nkia_policy_" + rule);
    ASSERT_NE(e, nullptr) << "the static policy reports rule '" << rule << "': register nkia_policy_" << rule;
    EXPECT_EQ(e->origin, ErrorOrigin::kVerify) << rule;
  }
  // And no entry for a check or rule that no longer exists.
  for (const ErrorInfo& e : error_catalogue()) {
    const std::string code(e.code);
    if (code.starts_with("nkia_verify_")) {
      EXPECT_TRUE(verify_checks().count(code.substr(12))) << code << ": verify has no such check";
    }
    if (code.starts_with("nkia_policy_")) {
      EXPECT_TRUE(policy_rules().count(code.substr(12))) << code << ": the static policy has no such rule";
    }
  }
}

TEST(ErrorRegistry, EveryRegisteredCodeIsRaisedOrSaysWhyNot) {
  const auto literals = code_literals();
  const auto kernels = codes_of_must_fail_kernels();
  auto raised = [&](const std::string& code) {
    if (literals.count(code) || kernels.count(code)) return true;
    if (code.starts_with("nkia_verify_")) return verify_checks().count(code.substr(12)) > 0;
    if (code.starts_with("nkia_policy_")) return policy_rules().count(code.substr(12)) > 0;
    return false;
  };
  size_t marked = 0;
  for (const ErrorInfo& e : error_catalogue()) {
    const std::string code(e.code);
    if (e.not_raised.empty()) {
      EXPECT_TRUE(raised(code)) << code
                                << " is registered but nothing raises it: raise it, or give its entry a not_raised "
                                   "reason";
    } else {
      ++marked;
      EXPECT_FALSE(raised(code)) << code << " is raised now: drop its not_raised (\"" << e.not_raised << "\")";
    }
  }
  EXPECT_LE(marked, 5u) << "many codes are documented but never raised";
}

TEST(ErrorRegistry, TheAgentsLookupGetsTheKernelFacingCodes) {
  // What the lookup tool documents (agent/docs_db.cpp) is decided by the origin: a kernel author meets
  // every code of these origins; none of the CLI's, the tasks' or the agent's own.
  for (const char* code : {"err_unsupported_memory", "nkia_activation_input_out_of_range", "nkia_python_exception",
                           "nkia_internal", "nkia_verify_mismatch", "nkia_policy_host_math", "nkia_sandbox_timeout"})
    EXPECT_TRUE(error_origin_reaches_kernel(find_error(code)->origin)) << code;
  for (const char* code : {"nkia_npy_bad_magic", "nkia_llm_http", "nkia_task_invalid", "nkia_unknown_error_code"})
    EXPECT_FALSE(error_origin_reaches_kernel(find_error(code)->origin)) << code;
}

}  // namespace
}  // namespace nki_agent
