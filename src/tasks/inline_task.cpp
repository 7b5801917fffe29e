// A task folder from a client's KernelBench-form reference (tasks/inline_task.h).
#include "tasks/inline_task.h"

#include <stdlib.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/hash.h"
#include "core/version.h"
#include "runtime/python_source.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

Diagnostic bad(std::string message, std::string hint = "") {
  return Diagnostic::error(
      "nkia_inline_reference", std::move(message),
      hint.empty() ? "send the reference in KernelBench form: class Model(nn.Module), get_inputs(), get_init_inputs()"
                   : std::move(hint));
}

// Names of a reference: identifiers of a sensible length.
bool identifier(const std::string& s) {
  return s.size() <= 64 && is_identifier(s);
}

// A state_dict key: identifiers joined by dots.
bool dotted_identifier(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!identifier(part)) return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

int64_t dtype_bytes(const std::string& s) {
  if (s == "float32" || s == "int32") return 4;
  if (s == "float16" || s == "bfloat16" || s == "int16") return 2;
  if (s == "int64") return 8;
  return 1;
}

bool is_float(const std::string& s) {
  return s == "float32" || s == "float16" || s == "bfloat16";
}

// A float as TOML writes one (always with a point or an exponent).
std::string toml_float(double v) {
  std::string s = fmt::format("{:.17g}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

struct Tensorish {
  std::string dtype;
  std::vector<int64_t> shape;
};

// A {dtype, shape} entry of the inspection, checked against the limits.
Result<Tensorish> tensor_entry(const nlohmann::json& e, const std::string& what, const InlineTaskOptions& opt) {
  if (!e.is_object() || !e.contains("shape") || !e["shape"].is_array())
    return fail(bad(fmt::format("{} is not a tensor", what), "every input, parameter and output must be a tensor"));
  Tensorish t;
  t.dtype = e.value("dtype", "");
  if (!is_task_dtype(t.dtype))
    return fail(bad(fmt::format("{} is {}, an element type tasks do not hold", what, t.dtype.substr(0, 40)),
                    "use float32, float16, bfloat16, int32, int64, int16, int8, uint8 or bool"));
  if (e["shape"].empty() || e["shape"].size() > 8)
    return fail(bad(fmt::format("{} has rank {}; tasks hold tensors of rank 1 to 8", what, e["shape"].size())));
  int64_t elements = 1;
  for (const auto& d : e["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1)
      return fail(bad(fmt::format("{} has an empty or malformed dimension", what)));
    t.shape.push_back(d.get<int64_t>());
    if (d.get<int64_t>() > opt.max_tensor_elements || elements > opt.max_tensor_elements / d.get<int64_t>())
      return fail(bad(fmt::format("{} has more than {} elements", what, opt.max_tensor_elements),
                      "inline references are verified at the shapes get_inputs() gives: keep them small"));
    elements *= d.get<int64_t>();
  }
  return t;
}

std::string shape_text(const std::vector<int64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

int64_t elements_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// task.toml from the inspection.
Result<std::string> task_toml(const InlineReference& ref, const std::string& id, const nlohmann::json& facts,
                              const InlineTaskOptions& opt) {
  if (!facts.is_object() || !facts.contains("inputs") || !facts["inputs"].is_array() || !facts.contains("state_dict") ||
      !facts["state_dict"].is_array() || !facts.contains("outputs") || !facts["outputs"].is_array())
    return fail(bad("the reference worker's inspection is incomplete"));
  if (facts["inputs"].empty())
    return fail(bad("get_inputs() returns no tensors", "get_inputs() returns the forward's inputs as a list"));
  if (facts["outputs"].empty()) return fail(bad("the forward returns nothing"));
  std::string out = fmt::format(
      "# Made by nki-agent from a client's inline reference (KernelBench form); see tasks/inline_task.h.\n"
      "id = \"{}\"\nname = \"inline\"\nlevel = 0\ncategory = \"inline\"\n"
      "operation = \"a client's PyTorch reference\"\nentry = \"{}\"\ndialects = [\"legacy\", \"current\"]\n"
      "target = \"{}\"\nuntrusted_reference = true\n",
      id, ref.kernel_entry, ref.target);
  int64_t bytes = 0;
  std::set<std::string> names;
  std::set<std::string> output_dtypes;
  for (size_t i = 0; i < facts["inputs"].size(); ++i) {
    const auto& e = facts["inputs"][i];
    auto t = tensor_entry(e, fmt::format("get_inputs()[{}]", i), opt);
    if (!t) return fail(t.error());
    const std::string name = fmt::format("in{}", i);
    names.insert(name);
    bytes += elements_of(t->shape) * dtype_bytes(t->dtype);
    out += fmt::format("\n[[args]]\nname = \"{}\"\nkind = \"input\"\ndtype = \"{}\"\nshape = {}\n", name, t->dtype,
                       shape_text(t->shape));
    // The inputs are drawn as get_inputs() drew them: integers in its range (indices stay in
    // bounds), non-negative floats non-negative (a log or a sqrt stays defined).
    const bool has_range = e.contains("min") && e["min"].is_number() && e.contains("max") && e["max"].is_number();
    const double lo = has_range ? e["min"].get<double>() : 0, hi = has_range ? e["max"].get<double>() : 0;
    if (t->dtype == "bool") {
      out += "dist = \"randint\"\nlow = 0\nhigh = 2\n";
    } else if (!is_float(t->dtype)) {
      if (!has_range || !std::isfinite(lo) || !std::isfinite(hi) || std::fabs(lo) > 1e15 || std::fabs(hi) > 1e15)
        return fail(bad(fmt::format("get_inputs()[{}] has no value range", i)));
      out += fmt::format("dist = \"randint\"\nlow = {}\nhigh = {}\n", static_cast<int64_t>(std::floor(lo)),
                         static_cast<int64_t>(std::floor(hi)) + 1);
    } else if (has_range && lo >= 0) {
      out += hi <= 1 ? "dist = \"uniform\"\nlow = 0.0\nhigh = 1.0\n" : "dist = \"positive\"\n";
    }
  }
  for (size_t i = 0; i < facts["state_dict"].size(); ++i) {
    const auto& e = facts["state_dict"][i];
    const std::string key = e.is_object() ? e.value("name", "") : "";
    if (!dotted_identifier(key))
      return fail(bad(fmt::format("state_dict entry {} is not named by a dotted identifier", i)));
    // BatchNorm's step counter is not used in eval mode, and a kernel does not take it.
    if (key == "num_batches_tracked" || key.ends_with(".num_batches_tracked")) continue;
    std::string arg = key;
    std::replace(arg.begin(), arg.end(), '.', '_');
    if (!names.insert(arg).second)
      return fail(bad(fmt::format("the parameter {} is named as another argument", key),
                      "rename the submodule or parameter (in0, in1, ... name the inputs)"));
    auto t = tensor_entry(e, fmt::format("the parameter {}", key), opt);
    if (!t) return fail(t.error());
    if (!is_float(t->dtype) && t->dtype != "bool")
      return fail(bad(fmt::format("the parameter {} holds integers ({})", key, t->dtype),
                      "an inline reference's parameters and buffers are float or bool; pass integer tensors "
                      "through get_inputs()"));
    bytes += elements_of(t->shape) * dtype_bytes(t->dtype);
    out += fmt::format("\n[[args]]\nname = \"{}\"\nkind = \"param\"\ndtype = \"{}\"\nshape = {}\n", arg, t->dtype,
                       shape_text(t->shape));
  }
  if (names.size() > 256) return fail(bad("the reference takes more than 256 tensors"));
  for (size_t i = 0; i < facts["outputs"].size(); ++i) {
    auto t = tensor_entry(facts["outputs"][i], fmt::format("output {} of the forward", i), opt);
    if (!t) return fail(t.error());
    bytes += elements_of(t->shape) * dtype_bytes(t->dtype);
    output_dtypes.insert(t->dtype);
    out += fmt::format("\n[[outputs]]\ndtype = \"{}\"\nshape = {}\n", t->dtype, shape_text(t->shape));
  }
  if (bytes > opt.max_total_bytes)
    return fail(bad(
        fmt::format("the reference's tensors hold {} MiB, more than {} MiB", bytes >> 20, opt.max_total_bytes >> 20),
        "inline references are verified at the shapes get_inputs() gives: keep them small"));
  if (ref.atol || ref.rtol) {
    out += "\n[tolerance]\n";
    for (const auto& d : output_dtypes) {
      if (!is_float(d)) continue;
      auto dt = dtype_from_name(d);
      const Tolerance def = default_tolerance(dt ? *dt : DType::kFloat32);
      const double atol = ref.atol.value_or(def.atol), rtol = ref.rtol.value_or(def.rtol);
      out += fmt::format("{} = {{ atol = {}, rtol = {} }}\n", d, toml_float(atol), toml_float(rtol));
    }
  }
  out += fmt::format("\n[cost]\nbytes = {}\n", bytes);
  return out;
}

Result<void> write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  if (!f) return fail("nkia_reference_cache", fmt::format("cannot write {}", p.string()));
  return {};
}

}  // namespace

std::string default_inline_task_root() {
  const char* tmp = std::getenv("TMPDIR");
  fs::path base = tmp && *tmp ? fs::path(tmp) : fs::path("/tmp");
  return (base / fmt::format("nki-agent-inline-tasks-{}", ::getuid())).string();
}

std::string inline_reference_key(const InlineReference& ref) {
  Hasher h;
  h.field("nki-agent inline task v1").field(kVersion).field(ref.code).field(ref.entry_point).field(ref.kernel_entry);
  h.field(ref.atol ? toml_float(*ref.atol) : "-").field(ref.rtol ? toml_float(*ref.rtol) : "-").field(ref.target);
  return to_hex(h.finish());
}

Result<Task> make_inline_task(const InlineReference& ref, const InlineTaskOptions& options) {
  if (ref.code.empty()) return fail(bad("the reference is empty"));
  if (ref.code.size() > kMaxInlineReferenceBytes)
    return fail(bad(fmt::format("the reference is {} KiB; at most {} KiB are accepted", ref.code.size() >> 10,
                                kMaxInlineReferenceBytes >> 10)));
  if (!identifier(ref.entry_point))
    return fail(bad("entry_point must be a Python identifier (the reference's class, default Model)"));
  if (!identifier(ref.kernel_entry))
    return fail(bad("the kernel's entry must be a Python identifier (the function the kernel defines)"));
  for (const auto& [name, v] : {std::pair{"atol", ref.atol}, std::pair{"rtol", ref.rtol}})
    if (v && !(*v >= 0 && *v <= 1)) return fail(bad(fmt::format("{} must be a number in [0, 1]", name)));
  if (ref.target != "trn1" && ref.target != "trn2") return fail(bad("target must be \"trn1\" or \"trn2\""));
  auto text = python_source_text(ref.code, "reference.py");
  if (!text) return fail(text.error());

  const std::string key = inline_reference_key(ref);
  const std::string id = "inline_" + key.substr(0, 16);
  const fs::path root = options.root.empty() ? fs::path(default_inline_task_root()) : fs::path(options.root);
  const fs::path dir = root / id;
  std::error_code ec;
  auto found = [&]() -> std::optional<Result<Task>> {
    if (!fs::is_regular_file(dir / "task.toml", ec)) return std::nullopt;
    auto t = load_task(dir.string());
    if (t && !t->untrusted_reference)
      return Result<Task>(fail("nkia_task_invalid", fmt::format("{} is not an inline task", dir.string())));
    return t;
  };
  if (auto t = found()) return std::move(*t);

  fs::create_directories(root, ec);
  std::string templ = (root / ".tmp-XXXXXX").string();
  if (ec || ::mkdtemp(templ.data()) == nullptr)
    return fail("nkia_reference_cache", fmt::format("cannot create a folder under {}", root.string()),
                "give the server a writable folder for inline tasks");
  const fs::path tmp(templ);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ignore;
      if (!p.empty()) fs::remove_all(p, ignore);
    }
  } cleanup{tmp};

  // KernelGYM's entry_point names the reference's class; the verifier knows it as Model.
  std::string task_py = *text;
  if (ref.entry_point != "Model")
    task_py += fmt::format("\n\nclass Model({}):  # the reference's entry_point\n    pass\n", ref.entry_point);
  if (auto ok = write_text(tmp / "task.py", task_py); !ok) return fail(ok.error());

  Task probe;
  probe.dir = tmp.string();
  probe.id = id;
  probe.name = "inline";
  probe.task_py = task_py;
  probe.hash = key;
  probe.untrusted_reference = true;
  ReferenceOptions ro = options.reference;
  ro.use_cache = false;
  ro.request_seconds = options.inspect_seconds;
  nlohmann::json facts;
  {
    ReferenceRunner runner(probe, ro);
    auto inspected = runner.inspect(0, /*forward=*/true);
    if (!inspected) return fail(inspected.error());
    facts = std::move(*inspected);
  }
  auto toml_text = task_toml(ref, id, facts, options);
  if (!toml_text) return fail(toml_text.error());
  if (auto ok = write_text(tmp / "task.toml", *toml_text); !ok) return fail(ok.error());
  if (auto t = parse_task(*toml_text, task_py, tmp.string()); !t) {
    Diagnostic d = t.error();
    d.message = "the task made from the inline reference does not read back: " + d.message;
    return fail(std::move(d));
  }
  fs::rename(tmp, dir, ec);
  if (!ec) {
    cleanup.p.clear();
  } else if (auto t = found()) {  // made at the same time by another request: the same bytes
    return std::move(*t);
  } else {
    return fail("nkia_reference_cache",
                fmt::format("cannot store the inline task in {}: {}", dir.string(), ec.message()));
  }
  return load_task(dir.string());
}

}  // namespace nki_agent
