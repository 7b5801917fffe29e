// `nki-agent errors`: the list, one entry, an unknown code, --json and --markdown, end to end.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

#include <cstdlib>

#include "nki/error_catalogue.h"
#include "support/cli_runner.h"

namespace nki_agent {
namespace {

using testing::CliRun;

CliRun cli(const std::string& args) {
  return testing::run_cli(args, testing::Stderr::kSeparate);
}

nlohmann::json json_of(const CliRun& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not one JSON object: " << r.out;
  return j;
}

TEST(CliErrors, ListsEveryCodeByGroup) {
  auto r = cli("errors");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("NKI compiler catalogue (37)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nki-agent constraint checks"), std::string::npos);
  EXPECT_NE(r.out.find("nki-agent simulator checks"), std::string::npos);
  for (const ErrorInfo& e : error_catalogue()) EXPECT_NE(r.out.find(std::string(e.code)), std::string::npos) << e.code;
  // Catalogue codes come before ours.
  EXPECT_LT(r.out.find("err_while_loop_requires_unconditional_entry"), r.out.find("nkia_"));
}

TEST(CliErrors, ListAsJson) {
  for (const char* args : {"--json errors", "errors --json"}) {
    auto r = cli(args);
    ASSERT_EQ(r.exit_code, 0) << args;
    auto j = json_of(r);
    EXPECT_EQ(j["ok"], true);
    ASSERT_EQ(j["errors"].size(), error_catalogue().size()) << args;
    EXPECT_EQ(j["errors"][0]["code"], "err_1d_arange_not_supported");
    EXPECT_EQ(j["errors"][0]["origin"], "catalogue");
    EXPECT_TRUE(j["errors"][0].contains("title"));
  }
}

TEST(CliErrors, ShowsOneEntry) {
  auto r = cli("errors err_unsupported_memory");
  ASSERT_EQ(r.exit_code, 0);
  const ErrorInfo& e = *find_error("err_unsupported_memory");
  EXPECT_TRUE(r.out.starts_with("err_unsupported_memory: " + std::string(e.title))) << r.out;
  EXPECT_NE(r.out.find(std::string(e.meaning)), std::string::npos);
  EXPECT_NE(r.out.find("Fix: " + std::string(e.hint)), std::string::npos);
  EXPECT_NE(r.out.find("Wrong:"), std::string::npos);
  EXPECT_NE(r.out.find("Fixed:"), std::string::npos);

  auto j = json_of(cli("--json errors nkia_sbuf_capacity_exceeded"));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["error"]["code"], "nkia_sbuf_capacity_exceeded");
  EXPECT_EQ(j["error"]["severity"], "warning");
  EXPECT_EQ(j["error"]["hint"], std::string(find_error("nkia_sbuf_capacity_exceeded")->hint));
}

TEST(CliErrors, UnknownCodeIsAUserErrorWithSuggestions) {
  auto r = cli("--json errors err_unsuported_memory");
  EXPECT_EQ(r.exit_code, 1);
  auto j = json_of(r);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["diagnostics"][0]["code"], "nkia_unknown_error_code");
  EXPECT_NE(j["diagnostics"][0]["hint"].get<std::string>().find("err_unsupported_memory"), std::string::npos);

  auto text = cli("errors no_such_thing_at_all");
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_TRUE(text.out.empty());
  EXPECT_NE(text.err.find("error[nkia_unknown_error_code]"), std::string::npos) << text.err;
}

TEST(CliErrors, OriginListsOneGroup) {
  auto r = cli("errors --origin tool");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Command-line tools and files ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("NKI compiler catalogue"), std::string::npos);
  for (const ErrorInfo& e : error_catalogue()) {
    const bool listed = r.out.find("  " + std::string(e.code) + " ") != std::string::npos;
    EXPECT_EQ(listed, e.origin == ErrorOrigin::kTool) << e.code;
  }
  auto j = json_of(cli("--json errors --origin verify"));
  size_t verify = 0;
  for (const ErrorInfo& e : error_catalogue()) verify += e.origin == ErrorOrigin::kVerify;
  ASSERT_EQ(j["errors"].size(), verify);
  for (const auto& row : j["errors"]) EXPECT_EQ(row["origin"], "verify");

  auto bad = cli("errors --origin kernel");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("error[nkia_bad_argument]"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("catalogue, constraint, simulator"), std::string::npos) << bad.err;
}

TEST(CliErrors, EveryCodeOfTheProgramIsListed) {
  // Not only the kernel codes: the CLI's own codes are explained too.
  auto r = cli("errors nkia_npy_bad_magic");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("group: Command-line tools and files"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("spec:"), std::string::npos);  // no NKI rule behind it
  auto internal = cli("errors nkia_internal");
  ASSERT_EQ(internal.exit_code, 0);
  EXPECT_NE(internal.out.find("not in your kernel"), std::string::npos) << internal.out;
}

TEST(CliErrors, MarkdownIsTheDocsPage) {
  auto r = cli("errors --markdown");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.out == errors_markdown()) << "errors --markdown differs from errors_markdown()";
  auto one = cli("errors err_tensor_output_not_written_to --markdown");
  ASSERT_EQ(one.exit_code, 0);
  EXPECT_EQ(one.out, error_entry_markdown(*find_error("err_tensor_output_not_written_to")));
  EXPECT_EQ(cli("errors a b").exit_code, 2);  // one code at most
}

}  // namespace
}  // namespace nki_agent
