// The static policy: the candidate's sources to the AST checker and its verdicts back
// (tasks/static_policy.h).
#include "tasks/static_policy.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "tasks/helpers.h"
#include "tasks/subprocess.h"

namespace nki_agent {

const std::vector<std::string>& policy_allowed_imports() {
  static const std::vector<std::string> kAllowed = {"nki",
                                                    "neuronxcc",
                                                    "numpy",
                                                    "math",
                                                    "cmath",
                                                    "functools",
                                                    "itertools",
                                                    "collections",
                                                    "dataclasses",
                                                    "typing",
                                                    "typing_extensions",
                                                    "enum",
                                                    "numbers",
                                                    "operator",
                                                    "copy",
                                                    "abc",
                                                    "contextlib",
                                                    "string",
                                                    "re",
                                                    "textwrap",
                                                    "warnings",
                                                    "__future__",
                                                    "types",
                                                    "random",
                                                    "decimal",
                                                    "fractions",
                                                    "heapq",
                                                    "bisect",
                                                    "statistics",
                                                    "struct",
                                                    "array",
                                                    "time",
                                                    "logging",
                                                    "_nkia"};
  return kAllowed;
}

namespace {

// Frameworks the kernel sandbox turns into stand-ins (policy.py: packages it does not have): importing
// them in a candidate means computing through the reference's world.
const std::vector<std::string> kFrameworks = {"torch",  "torch_xla",           "torch_neuronx", "jax",  "jax_neuronx",
                                              "jaxlib", "neuronx_distributed", "tensorflow",    "cupy", "scipy"};

// How each forbidden type may be spelled in a kernel (lower case).
std::vector<std::string> dtype_spellings(DType t) {
  switch (t) {
    case DType::kTFloat32: return {"tfloat32", "tf32"};
    case DType::kBFloat16: return {"bfloat16", "bf16"};
    case DType::kFloat16: return {"float16", "fp16"};
    case DType::kFloat8E4M3: return {"float8_e4m3", "fp8_e4m3", "float8", "fp8"};
    case DType::kFloat8E4M3FN: return {"float8_e4m3fn", "fp8_e4m3fn", "float8", "fp8"};
    case DType::kFloat8E5M2: return {"float8_e5m2", "fp8_e5m2", "float8", "fp8"};
    default: return {std::string(dtype_name(t))};
  }
}

}  // namespace

Diagnostic PolicyViolation::to_diagnostic(const std::string& root) const {
  Diagnostic d = Diagnostic::error("nkia_policy_" + rule, message, hint);
  std::string path = file;
  if (!root.empty() && !file.empty()) path = (std::filesystem::path(root) / file).string();
  d.at(SourceLoc{path, line, col});
  return d;
}

Result<std::vector<PolicyViolation>> check_static_policy(const KernelFiles& files, const PolicyOptions& options) {
  nlohmann::json req;
  req["files"] = nlohmann::json::object();
  std::set<std::string> local;
  for (const auto& [path, src] : files.files) {
    req["files"][path] = src;
    std::string top = path.substr(0, path.find('/'));
    if (top.size() > 3 && top.ends_with(".py")) top.resize(top.size() - 3);
    local.insert(top);
  }
  req["main"] = files.main_path;
  req["local_modules"] = local;
  std::vector<std::string> allowed;
  for (const auto& a : policy_allowed_imports())
    if (a != "_nkia") allowed.push_back(a);  // the runtime's internals: flagged with their own message
  req["allowed_imports"] = allowed;
  req["frameworks"] = kFrameworks;
  std::set<std::string> forbidden;
  for (DType t : options.forbidden_dtypes)
    for (auto& s : dtype_spellings(t)) forbidden.insert(s);
  req["forbidden_dtypes"] = forbidden;

  ProcessLimits lim;
  lim.wall_seconds = options.seconds;
  lim.cpu_seconds = options.seconds;
  lim.address_space_bytes = int64_t{2} << 30;
  lim.max_file_bytes = 0;
  lim.max_output_bytes = 16 << 20;
  // Sources are UTF-8 by now (load_kernel_files decodes or refuses them; a model's arrive in JSON);
  // the replacement only keeps a stray byte from failing the request.
  const std::string input = req.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto r =
      run_process(helper_argv(helper_python(options.python), "static_policy.py"), helper_environment(1), input, lim);
  if (!r) {
    Diagnostic d = r.error();
    d.message = "the static policy checker could not run: " + d.message;
    return fail(std::move(d));
  }
  auto j = nlohmann::json::parse(r->out, nullptr, false);
  if (r->exit_status != 0 || j.is_discarded() || !j.is_object() || !j.contains("violations")) {
    Diagnostic d = Diagnostic::error("nkia_helper_died",
                                     fmt::format("the static policy checker failed (exit status {})", r->exit_status),
                                     "it needs Debian's python3.11 (scripts/install-deps.sh)");
    if (!r->err_tail.empty())
      d.with_note(r->err_tail.substr(r->err_tail.size() > 2000 ? r->err_tail.size() - 2000 : 0));
    return fail(std::move(d));
  }
  std::vector<PolicyViolation> out;
  for (const auto& v : j["violations"]) {
    if (!v.is_object()) continue;
    PolicyViolation p;
    p.rule = v.value("rule", "unknown");
    p.message = v.value("message", "");
    p.file = v.value("file", "");
    p.line = v.value("line", 0);
    p.col = v.value("col", 0);
    p.hint = v.value("hint", "");
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace nki_agent
