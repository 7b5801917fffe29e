// nki-agent — the command-line entry point: parses the command line with CLI11 and dispatches to
// the subcommands, mapping every outcome onto the exit codes of cli/cli.h.
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "cli/cli.h"
#include "core/log.h"
#include "core/version.h"

int main(int argc, char** argv) {
  using namespace nki_agent;
  cli::Context ctx;
  CLI::App app{"nki-agent: write, check, simulate and benchmark NKI kernels for AWS Trainium"};
  app.name("nki-agent");
  app.set_version_flag("--version", fmt::format("nki-agent {}", kVersion));
  app.add_flag("--json", ctx.json, "Print one JSON object on stdout instead of text");
  app.add_option("--log-level", ctx.log_level, "trace, debug, info, warn (default), error or off")->envname("NKIA_LOG");
  app.require_subcommand(1);
  // Options a subcommand does not know go up to its parent, so the global ones (and a group's,
  // such as `tasks --root`) may also follow the subcommand: `nki-agent verify ... --json`. Set
  // before the subcommands are added, which inherit it.
  app.fallthrough();
  app.footer(
      "Exit codes: 0 ok; 1 user error or failed check; 2 usage error; 3 internal error.\n"
      "Run 'nki-agent COMMAND --help' for the options of a command.");

  cli::add_info_command(app, ctx);
  cli::add_dtypes_command(app, ctx);
  cli::add_cast_command(app, ctx);
  cli::add_npy_command(app, ctx);
  cli::add_random_command(app, ctx);
  cli::add_run_command(app, ctx);
  cli::add_check_command(app, ctx);
  cli::add_profile_command(app, ctx);
  cli::add_calibrate_command(app, ctx);
  cli::add_errors_command(app, ctx);
  cli::add_verify_command(app, ctx);
  cli::add_tasks_command(app, ctx);
  cli::add_agent_commands(app, ctx);
  cli::add_cache_command(app, ctx);
  cli::add_serve_command(app, ctx);
  cli::add_export_command(app, ctx);
  cli::add_report_command(app, ctx);
  cli::add_reward_commands(app, ctx);
  cli::add_corpus_command(app, ctx);

  app.parse_complete_callback([&] {
    if (!init_logging(ctx.log_level))
      throw CLI::ValidationError("--log-level", "unknown level '" + ctx.log_level + "'");
    std::string command;
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      command += (command.empty() ? "" : " ") + sub->get_name();
    }
    NKIA_LOG_INFO("nki-agent {}: {} begins{}", kVersion, command, ctx.json ? " (--json)" : "");
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return cli::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nki-agent: internal error: %s\n", e.what());
    return cli::kExitInternal;
  }
  NKIA_LOG_DEBUG("nki-agent: exit code {}", ctx.exit_code);
  return ctx.exit_code;
}
