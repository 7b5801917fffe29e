// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The error table (nki/error_catalogue.h): complete against nki-spec §5.1, well formed, merged from
// its parts, the one constructor of kernel Diagnostics, and in step with its generated docs page,
// docs/errors.md. (tests/unit/test_error_registry.cpp checks it against the sources.)
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "nki/error_catalogue.h"

namespace nki_agent {
namespace {

// nki-spec §5.1, all 37 codes: the 36 of SDK 2.21–2.26 and the SDK 2.20-only one.
const char* const kSpecCatalogue[] = {
    "err_1d_arange_not_supported",
    "err_activation_bias_invalid_type",
    "err_activation_scale_invalid_type",
    "err_activation_scale_scalar_or_vector",
    "err_ambiguous_tensor_truth_value",
    "err_annotation_shape_mismatch",
    "err_bias_tensor_must_be_specified_in_allocation",
    "err_cannot_assign_to_index",
    "err_cannot_update_immutable_parameter",
    "err_control_flow_condition_depending_on_arange",
    "err_copy_dynamic_indirect_indices_not_natively_supported",
    "err_dynamic_control_flow_not_supported",
    "err_exceed_max_supported_dimension",
    "err_failed_to_infer_tile_from_local_tensor",
    "err_hbm_tensor_with_init_value_not_supported",
    "err_indirect_indices_are_not_supported_with_nki_api",
    "err_indirect_indices_free_dim",
    "err_leading_dimension_of_tensor_must_be_partition",
    "err_local_variable_used_out_of_scope",
    "err_mutable_parameter_not_returned",
    "err_nested_kernel_with_spmd_grid",
    "err_nki_api_outside_of_nki_kernel",
    "err_num_partition_exceed_arch_limit",
    "err_num_partition_mismatch",
    "err_shared_hbm_must_in_kernel_level",
    "err_size_of_dimension_exceed_arch_limit",
    "err_store_dst_shape_smaller_than_other_shape",
    "err_tensor_access_out_of_bound",
    "err_tensor_creation_on_scratchpad_with_init_value_not_supported",
    "err_tensor_output_not_written_to",
    "err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel",
    "err_unexpected_output_dependencies",
    "err_unsupported_expression_in_mask",
    "err_unsupported_memory",
    "err_unsupported_mixing_basic_advanced_tensor_indexing",
    "err_while_loop_requires_unconditional_entry",
    "err_read_modify_write_on_kernel_parameter",  // SDK 2.20 only
};

TEST(ErrorCatalogue, DocsPageIsGeneratedFromTheTable) {
  const std::string path = std::string(NKIA_SOURCE_DIR) + "/docs/errors.md";
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f) << "missing " << path << "; create it with ./build/nki-agent errors --markdown > docs/errors.md";
  std::stringstream ss;
  ss << f.rdbuf();
  // Not EXPECT_EQ: on a mismatch, printing two 100 KB strings helps nobody.
  EXPECT_TRUE(ss.str() == errors_markdown())
      << "docs/errors.md is out of date with src/nki/error_table_*.cpp; regenerate it with "
         "./build/nki-agent errors --markdown > docs/errors.md";
}

TEST(ErrorCatalogue, HasEveryCodeOfTheSpecCatalogue) {
  for (const char* code : kSpecCatalogue) {
    const ErrorInfo* e = find_error(code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_EQ(e->origin, ErrorOrigin::kCatalogue) << code;
    EXPECT_NE(e->spec.find("§5.1"), std::string_view::npos) << code;
  }
  size_t catalogue = 0;
  for (const ErrorInfo& e : error_catalogue()) catalogue += e.origin == ErrorOrigin::kCatalogue ? 1 : 0;
  EXPECT_EQ(catalogue, std::size(kSpecCatalogue));
  // The retired code says so.
  EXPECT_NE(find_error("err_read_modify_write_on_kernel_parameter")->note.find("SDK 2.20 only"),
            std::string_view::npos);
}

TEST(ErrorCatalogue, CodesAreSortedUniqueAndWellFormed) {
  const std::regex pattern("^(err|nkia)_[a-z0-9_]+$");
  auto table = error_catalogue();
  ASSERT_FALSE(table.empty());
  std::set<std::string_view> seen;
  for (size_t i = 0; i < table.size(); ++i) {
    const ErrorInfo& e = table[i];
    EXPECT_TRUE(std::regex_match(std::string(e.code), pattern)) << e.code;
    EXPECT_TRUE(seen.insert(e.code).second) << "duplicate " << e.code;
    if (i > 0) {
      EXPECT_LT(table[i - 1].code, e.code) << "not sorted at " << e.code;
    }
    // err_ is the compiler's namespace; nkia_ is ours.
    EXPECT_EQ(e.code.starts_with("err_"), e.origin == ErrorOrigin::kCatalogue) << e.code;
  }
}

TEST(ErrorCatalogue, EveryEntryIsComplete) {
  for (const ErrorInfo& e : error_catalogue()) {
    SCOPED_TRACE(std::string(e.code));
    EXPECT_FALSE(e.title.empty());
    EXPECT_FALSE(e.title.ends_with('.'));
    EXPECT_EQ(e.title.find('\n'), std::string_view::npos);
    EXPECT_FALSE(e.meaning.empty());
    EXPECT_TRUE(e.meaning.ends_with('.') || e.meaning.ends_with(')'));
    EXPECT_FALSE(e.hint.empty());
    EXPECT_TRUE(e.hint.ends_with('.') || e.hint.ends_with(')') || e.hint.ends_with('`'));
    // Kernel codes cite the spec; examples are kernel lines, so only kernel codes have them.
    if (error_origin_is_kernel(e.origin)) {
      EXPECT_FALSE(e.spec.empty());
    } else {
      EXPECT_TRUE(e.example_bad.empty());
    }
    EXPECT_EQ(e.example_bad.empty(), e.example_fix.empty());
    if (!e.example_bad.empty()) {
      EXPECT_NE(e.example_bad, e.example_fix);
    }
    // Snippets start and end with code, not blank lines.
    for (std::string_view s : {e.example_bad, e.example_fix}) {
      if (s.empty()) continue;
      EXPECT_FALSE(s.starts_with('\n'));
      EXPECT_FALSE(s.ends_with('\n'));
    }
  }
}

TEST(ErrorCatalogue, FindErrorKnowsOnlyTableCodes) {
  ASSERT_NE(find_error("err_unsupported_memory"), nullptr);
  EXPECT_EQ(find_error("err_unsupported_memory")->code, "err_unsupported_memory");
  ASSERT_NE(find_error("nkia_psum_tile_exceeds_bank"), nullptr);
  EXPECT_EQ(find_error("err_no_such_code"), nullptr);
  EXPECT_EQ(find_error(""), nullptr);
  EXPECT_EQ(find_error("ERR_UNSUPPORTED_MEMORY"), nullptr);   // codes are exact
  ASSERT_NE(find_error("nkia_unknown_error_code"), nullptr);  // a CLI code: registered too
  EXPECT_EQ(find_error("nkia_unknown_error_code")->origin, ErrorOrigin::kTool);
}

TEST(ErrorCatalogue, EveryOriginHasCodesANameAndAHeading) {
  std::set<std::string_view> names, headings;
  for (ErrorOrigin o : kErrorOrigins) {
    SCOPED_TRACE(std::string(error_origin_name(o)));
    EXPECT_TRUE(names.insert(error_origin_name(o)).second);
    EXPECT_TRUE(headings.insert(error_origin_heading(o)).second);
    EXPECT_EQ(error_origin_from_name(error_origin_name(o)), o);
    size_t n = 0;
    for (const ErrorInfo& e : error_catalogue()) n += e.origin == o;
    EXPECT_GT(n, 0u);
  }
  EXPECT_EQ(error_origin_from_name("kernel"), std::nullopt);
  // What the agent's lookup documents: every kernel origin and those a kernel author meets, never the
  // tools' and the agent's own.
  EXPECT_TRUE(error_origin_reaches_kernel(ErrorOrigin::kCatalogue));
  EXPECT_TRUE(error_origin_reaches_kernel(ErrorOrigin::kRuntime));
  EXPECT_TRUE(error_origin_reaches_kernel(ErrorOrigin::kVerify));
  EXPECT_FALSE(error_origin_reaches_kernel(ErrorOrigin::kTool));
  EXPECT_FALSE(error_origin_reaches_kernel(ErrorOrigin::kAgent));
  EXPECT_FALSE(error_origin_reaches_kernel(ErrorOrigin::kTask));
}

TEST(ErrorCatalogue, NkiErrorFillsCodeHintAndSeverityFromTheTable) {
  Diagnostic d = nki_error("err_num_partition_exceed_arch_limit", "tile [256, 512] has 256 partitions");
  EXPECT_EQ(d.code, "err_num_partition_exceed_arch_limit");
  EXPECT_EQ(d.message, "tile [256, 512] has 256 partitions");
  EXPECT_EQ(d.hint, find_error("err_num_partition_exceed_arch_limit")->hint);
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(nki_error("nkia_sbuf_capacity_exceeded", "x").severity, Severity::kWarning);
}

TEST(ErrorCatalogue, NkiErrorWithAHintOverridesOnlyTheHint) {
  Diagnostic d = nki_error("nkia_sbuf_capacity_exceeded", "m", "tile by 512");
  EXPECT_EQ(d.code, "nkia_sbuf_capacity_exceeded");
  EXPECT_EQ(d.hint, "tile by 512");
  EXPECT_EQ(d.severity, Severity::kWarning);  // the table's
}

TEST(ErrorCatalogue, NkiErrorWithAnUnknownCodeIsAnInternalError) {
  EXPECT_THROW(nki_error("err_made_up", "m"), InternalError);
  EXPECT_THROW(nki_error("nkia_made_up", "m", "h"), InternalError);
}

TEST(ErrorCatalogue, InternalCodesAreTheOnesTheCliExitsWithThreeFor) {
  EXPECT_TRUE(is_internal(nki_error(kInternalErrorCode, "m")));
  EXPECT_TRUE(is_internal(Diagnostic::error("nkia_internal_python", "m")));
  EXPECT_FALSE(is_internal(nki_error("nkia_python_exception", "m")));
  EXPECT_FALSE(is_internal(nki_error("err_unsupported_memory", "m")));
  EXPECT_NE(find_error(kInternalErrorCode)->hint.find("not in your kernel"), std::string_view::npos);
}

TEST(ErrorCatalogue, SimilarCodesFindTyposAndFragments) {
  auto typo = similar_error_codes("err_unsuported_memory");
  ASSERT_FALSE(typo.empty());
  EXPECT_EQ(typo[0], "err_unsupported_memory");
  auto old_name = similar_error_codes("err_tensor_creation_on_scratchpad_with_init_value_not_allowed");
  ASSERT_FALSE(old_name.empty());
  EXPECT_EQ(old_name[0], "err_tensor_creation_on_scratchpad_with_init_value_not_supported");
  auto psum = similar_error_codes("PSUM", 10);
  EXPECT_GE(psum.size(), 3u);
  for (auto c : psum) EXPECT_NE(c.find("psum"), std::string_view::npos) << c;
  EXPECT_TRUE(similar_error_codes("zzzzzz").empty());
  EXPECT_EQ(similar_error_codes("err", 2).size(), 2u);
}

TEST(ErrorCatalogue, JsonAndMarkdownForms) {
  const ErrorInfo& e = *find_error("err_unexpected_output_dependencies");
  nlohmann::json j = error_info_json(e);
  EXPECT_EQ(j["code"], "err_unexpected_output_dependencies");
  EXPECT_EQ(j["origin"], "catalogue");
  EXPECT_EQ(j["severity"], "error");
  EXPECT_EQ(j["hint"], std::string(e.hint));
  EXPECT_TRUE(j.contains("example_bad"));
  EXPECT_FALSE(j.contains("note"));
  EXPECT_FALSE(j.contains("not_raised"));
  EXPECT_EQ(error_info_json(*find_error("nkia_uninitialized_read"))["origin"], "simulator");
  nlohmann::json tool = error_info_json(*find_error("nkia_npy_bad_magic"));
  EXPECT_EQ(tool["origin"], "tool");
  EXPECT_FALSE(tool.contains("spec"));  // no NKI rule to cite
  EXPECT_TRUE(error_info_json(*find_error("nkia_partition_index_not_first")).contains("not_raised"));

  const std::string md = errors_markdown();
  for (const ErrorInfo& x : error_catalogue()) {
    EXPECT_NE(md.find("### `" + std::string(x.code) + "`\n"), std::string::npos) << x.code;
    EXPECT_NE(md.find(error_entry_markdown(x)), std::string::npos) << x.code;
  }
  for (ErrorOrigin o : kErrorOrigins)
    EXPECT_NE(md.find("\n## " + std::string(error_origin_heading(o)) + "\n"), std::string::npos);
  EXPECT_TRUE(md.ends_with("\n"));
  EXPECT_FALSE(md.ends_with("\n\n"));
}

}  // namespace
}  // namespace nki_agent
