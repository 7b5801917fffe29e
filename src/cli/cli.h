// cli/cli.h — what the nki-agent subcommands share: the exit codes, the --json convention and
// how results and Diagnostics are printed.
//
// Exit codes (stable, documented in the README):
//   0  success
//   1  a user error or a failed check: bad input file, a kernel error, failed verification
//   2  usage: unknown command or flag, missing or malformed argument
//   3  internal error in nki-agent itself (a bug: please report it)
// With --json, a command prints exactly one JSON object on stdout: {"ok": true, ...results} or
// {"ok": false, "diagnostics": [...]}; nothing else goes to stdout. Without it, results go to
// stdout and Diagnostics to stderr, formatted like compiler messages.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include "core/diagnostic.h"
#include "runtime/kernel_service.h"
#include "runtime/sandbox.h"

namespace nki_agent {
class Trace;
}

namespace nki_agent::cli {

enum ExitCode : int { kExitOk = 0, kExitUserError = 1, kExitUsage = 2, kExitInternal = 3 };

struct Context {
  bool json = false;
  std::string log_level;
  int exit_code = kExitOk;
};

// Prints one JSON document on stdout (text that is not UTF-8 is replaced, never an error).
void print_json(const nlohmann::json& j);
// Prints a failure in the current mode and returns kExitUserError (kExitInternal for nki-agent's
// own failure, core/diagnostic.h is_infrastructure_failure).
int report(const Context& ctx, const Diagnostic& d);
// Prints a JSON result (with "ok": true added) in --json mode; does nothing otherwise.
void emit_json(const Context& ctx, nlohmann::json result);
// A kernel run's warnings: without --json, printed to stderr like a compiler's; their JSON array,
// for the result's "warnings".
void print_warnings(const Context& ctx, const std::vector<Diagnostic>& warnings);
nlohmann::json warnings_json(const std::vector<Diagnostic>& warnings);

// Each adds one subcommand whose callback stores its exit code in ctx.exit_code.
void add_info_command(CLI::App& app, Context& ctx);
void add_dtypes_command(CLI::App& app, Context& ctx);
void add_cast_command(CLI::App& app, Context& ctx);
void add_npy_command(CLI::App& app, Context& ctx);
void add_random_command(CLI::App& app, Context& ctx);
void add_run_command(CLI::App& app, Context& ctx);
void add_check_command(CLI::App& app, Context& ctx);
void add_profile_command(CLI::App& app, Context& ctx);
void add_errors_command(CLI::App& app, Context& ctx);
void add_verify_command(CLI::App& app, Context& ctx);
void add_tasks_command(CLI::App& app, Context& ctx);
void add_agent_commands(CLI::App& app, Context& ctx);  // solve, bench
void add_cache_command(CLI::App& app, Context& ctx);
void add_calibrate_command(CLI::App& app, Context& ctx);
void add_serve_command(CLI::App& app, Context& ctx);
void add_export_command(CLI::App& app, Context& ctx);
void add_report_command(CLI::App& app, Context& ctx);
void add_reward_commands(CLI::App& app, Context& ctx);  // reward, reward-study
void add_corpus_command(CLI::App& app, Context& ctx);   // corpus generate, corpus report

// What run, check and profile share (cli/kernel_args.cpp).
// The flags that say which kernel to call and how: the file, the entry, --arg, --grid, --target
// and the sandbox's limits.
struct KernelFlags {
  std::string kernel;             // the kernel's .py file
  std::vector<std::string> libs;  // folders whose packages the kernel may import (a task baseline's lib/)
  std::string entry;              // the function to call
  std::vector<std::string> args;  // k=v, v a Python literal
  std::string grid;               // "2,2"; empty: a plain call
  std::string target;             // "trn1" or "trn2"; empty: the default target, not checked
  double timeout = kDefaultKernelSeconds;
  int64_t memory_mib = kDefaultKernelMemoryMiB;

  // The sandbox limits of the run; `large_reply` when a trace comes back.
  SandboxLimits limits(bool large_reply) const { return SandboxLimits::for_kernel(timeout, memory_mib, large_reply); }
};
// Adds the kernel file and --entry (required unless `required` is false), --lib, --arg and --grid; returns
// the kernel's and the entry's options.
std::pair<CLI::Option*, CLI::Option*> add_kernel_options(CLI::App& sub, KernelFlags& f, bool required = true);
// Adds --timeout and --memory-mib.
void add_limit_options(CLI::App& sub, KernelFlags& f);
// The call the flags describe, with no tensor inputs yet: the kernel's files loaded, the entry, the
// grid, the keyword arguments and the target. Codes: those of load_kernel_files, nkia_bad_grid,
// nkia_bad_argument, nkia_unknown_target.
Result<KernelCall> kernel_call_from_options(const KernelFlags& f);
// The tensor inputs' name=dtype[shape] specs, and in `elements` their elements in all. Codes
// nkia_bad_tensor_spec (via parse_tensor_spec) and nkia_bad_spec (a shape no HBM could hold).
Result<std::vector<TensorSpec>> parse_input_shapes(const std::vector<std::string>& shapes, int64_t& elements);
// "2,3" -> {2, 3}; empty -> {}. Code nkia_bad_grid.
Result<std::vector<int64_t>> parse_grid(const std::string& text);
// "name=value" -> (name, value). Code nkia_bad_argument.
Result<std::pair<std::string, std::string>> split_pair(const std::string& text, const char* flag);
// `about` (kernel, entry, target, ...) with "summary" and "trace" (Trace::to_json) added.
nlohmann::json trace_document(const nlohmann::json& about, const Trace& trace);
// The same document written to `path`, one trace record per line. Code nkia_unwritable.
Result<void> write_trace_file(const std::string& path, const nlohmann::json& about, const Trace& trace);

}  // namespace nki_agent::cli
