// Reading task.toml (toml++) into a Task, with every field checked. toml++ reports syntax errors by
// exception; they stop here and become Diagnostics with the file's line and column.
#include "tasks/task.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/hash.h"
#include "nki/target.h"
#include "runtime/python_source.h"

namespace nki_agent {

namespace fs = std::filesystem;

std::string_view dist_name(Dist d) {
  switch (d) {
    case Dist::kNormal: return "normal";
    case Dist::kUniform: return "uniform";
    case Dist::kRandint: return "randint";
    case Dist::kPositive: return "positive";
  }
  return "?";
}

std::string_view profile_name(InputProfile p) {
  switch (p) {
    case InputProfile::kNormal: return "normal";
    case InputProfile::kUniform: return "uniform";
    case InputProfile::kLarge: return "large";
    case InputProfile::kNearZero: return "near_zero";
    case InputProfile::kNegated: return "negated";
    case InputProfile::kScaled: return "scaled";
    case InputProfile::kSmall: return "small";
  }
  return "?";
}

std::optional<InputProfile> profile_from_name(std::string_view name) {
  for (auto p : kAllInputProfiles)
    if (profile_name(p) == name) return p;
  return std::nullopt;
}

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {1e-4, 1e-4, 1e-4};
    case DType::kTFloat32: return {1e-3, 1e-3, 1e-3};
    case DType::kBFloat16: return {2e-2, 2e-2, 2e-2};
    case DType::kFloat16: return {1e-2, 1e-2, 1e-2};
    case DType::kFloat8E4M3:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2: return {1.25e-1, 1.25e-1, 1.25e-1};
    default: return {0, 0, 0};  // integers and bool: exact
  }
}

Diagnostic toml_syntax_error(std::string description, const std::string& file, int line, int col) {
  Diagnostic d =
      Diagnostic::error("nkia_task_toml_syntax", std::move(description), "fix the TOML syntax (https://toml.io)");
  d.at(SourceLoc{file, line, col});
  return d;
}

std::string Task::baseline_path() const {
  return (fs::path(dir) / baseline).string();
}

const Tolerance& Task::tolerance_for(DType dtype) const {
  auto it = tolerance.find(dtype);
  if (it != tolerance.end()) return it->second;
  static thread_local Tolerance t;
  t = default_tolerance(dtype);
  return t;
}

std::vector<ShapeSet> Task::shape_sets() const {
  std::vector<ShapeSet> sets;
  ShapeSet prompt{"prompt", {}, {}};
  for (const auto& a : args) prompt.args.push_back(a.shape);
  for (const auto& o : outputs) prompt.outputs.push_back(o.shape);
  sets.push_back(prompt);
  for (const auto& v : variants) {
    ShapeSet s{v.name, prompt.args, v.outputs};
    for (size_t i = 0; i < args.size(); ++i)
      if (auto it = v.args.find(args[i].name); it != v.args.end()) s.args[i] = it->second;
    sets.push_back(std::move(s));
  }
  return sets;
}

namespace {

// Precision rank of a float type: a kernel may not use a float type of lower rank than the task's
// narrowest one.
int precision_rank(DType t) {
  switch (t) {
    case DType::kFloat32: return 3;
    case DType::kTFloat32: return 2;
    case DType::kBFloat16:
    case DType::kFloat16: return 1;
    default: return 0;  // the float8 formats
  }
}

}  // namespace

std::vector<DType> Task::forbidden_dtypes() const {
  if (!strict_precision) return {};
  int narrowest = -1;
  auto see = [&](DType t) {
    if (!dtype_is_float(t)) return;
    int r = precision_rank(t);
    narrowest = narrowest < 0 ? r : std::min(narrowest, r);
  };
  for (const auto& a : args) see(a.dtype);
  for (const auto& o : outputs) see(o.dtype);
  if (narrowest < 0) return {};
  std::vector<DType> out;
  for (DType t : {DType::kTFloat32, DType::kBFloat16, DType::kFloat16, DType::kFloat8E4M3, DType::kFloat8E4M3FN,
                  DType::kFloat8E5M2}) {
    if (precision_rank(t) >= narrowest) continue;
    if (std::find(allow_dtypes.begin(), allow_dtypes.end(), t) != allow_dtypes.end()) continue;
    out.push_back(t);
  }
  return out;
}

namespace {

// Largest dimension and element count a task may declare: the simulator's HBM is host memory.
constexpr int64_t kMaxTaskDim = int64_t{1} << 24;
constexpr int64_t kMaxTaskElements = int64_t{1} << 30;
constexpr int kMaxSeeds = 64;

struct Reader {
  std::string file;  // for messages
  std::vector<std::string>* warnings;

  tl::unexpected<Diagnostic> bad(const std::string& field, const std::string& what, std::string hint = {}) const {
    if (hint.empty()) hint = "see tasks/FORMAT.md for the task format";
    return fail("nkia_task_invalid", fmt::format("{}: {}: {}", file, field, what), hint);
  }

  void warn_unknown(const toml::table& t, const std::string& where,
                    std::initializer_list<std::string_view> known) const {
    for (auto&& [k, v] : t) {
      if (std::find(known.begin(), known.end(), k.str()) == known.end())
        warnings->push_back(fmt::format("{}: unknown key '{}{}' (ignored)", file, where, k.str()));
    }
  }

  Result<std::string> str(const toml::table& t, std::string_view key, const std::string& field, bool required,
                          std::string dflt = {}) const {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) return bad(field, "missing");
      return dflt;
    }
    if (auto s = n->value<std::string>()) return *s;
    return bad(field, "must be a string");
  }

  Result<double> num(const toml::node* n, const std::string& field) const {
    if (auto i = n->value_exact<int64_t>()) return static_cast<double>(*i);
    if (auto d = n->value_exact<double>()) {
      if (!std::isfinite(*d)) return bad(field, "must be finite");
      return *d;
    }
    return bad(field, "must be a number");
  }

  Result<Shape> shape(const toml::node* n, const std::string& field) const {
    const toml::array* a = n ? n->as_array() : nullptr;
    if (!a) return bad(field, "must be an array of positive integers, e.g. [128, 512]");
    if (a->size() > 8) return bad(field, "more than 8 dimensions");
    Shape s;
    int64_t numel = 1;
    for (size_t i = 0; i < a->size(); ++i) {
      auto v = (*a)[i].value_exact<int64_t>();
      if (!v || *v <= 0 || *v > kMaxTaskDim)
        return bad(fmt::format("{}[{}]", field, i), fmt::format("must be an integer in [1, {}]", kMaxTaskDim));
      s.push_back(*v);
      numel *= *v;
      if (numel > kMaxTaskElements) return bad(field, fmt::format("more than {} elements", kMaxTaskElements));
    }
    return s;
  }

  // "float32", "bfloat16", "int64", "int64->int32", ... -> (kernel dtype, torch dtype name).
  Result<std::pair<DType, std::string>> dtype(const toml::table& t, const std::string& field) const {
    auto text = str(t, "dtype", field + ".dtype", true);
    if (!text) return fail(text.error());
    std::string s = *text;
    std::string torch_name = s, kernel_name = s;
    if (auto arrow = s.find("->"); arrow != std::string::npos) {
      torch_name = s.substr(0, arrow);
      kernel_name = s.substr(arrow + 2);
    }
    if (torch_name == "int64" && kernel_name == "int64") kernel_name = "int32";  // no 64-bit types on the device
    auto kd = dtype_from_name(kernel_name);
    if (!kd || !is_task_dtype(torch_name) || (torch_name != kernel_name && torch_name != "int64"))
      return bad(field + ".dtype", fmt::format("unsupported dtype '{}'", s),
                 "use float32, float16, bfloat16, int32, int64 (given to the kernel as int32), int16, int8, uint8 "
                 "or bool");
    return std::make_pair(*kd, torch_name);
  }
};

Result<void> read_args(const Reader& r, const toml::table& root, Task& task) {
  const toml::array* args = root.get("args") ? root.get("args")->as_array() : nullptr;
  if (!args || args->empty()) return r.bad("args", "missing: at least one [[args]] table is needed");
  std::set<std::string> seen;
  bool seen_param = false;
  for (size_t i = 0; i < args->size(); ++i) {
    std::string f = fmt::format("args[{}]", i);
    const toml::table* t = (*args)[i].as_table();
    if (!t) return r.bad(f, "must be a table ([[args]])");
    r.warn_unknown(*t, f + ".", {"name", "kind", "dtype", "shape", "dist", "low", "high"});
    TaskArg a;
    auto name = r.str(*t, "name", f + ".name", true);
    if (!name) return fail(name.error());
    if (!is_identifier(*name)) return r.bad(f + ".name", fmt::format("'{}' is not a Python identifier", *name));
    if (!seen.insert(*name).second) return r.bad(f + ".name", fmt::format("'{}' appears twice", *name));
    a.name = *name;
    f = fmt::format("args[{}] ({})", i, a.name);
    auto kind = r.str(*t, "kind", f + ".kind", false, "input");
    if (!kind) return fail(kind.error());
    if (*kind == "input") {
      a.kind = ArgKind::kInput;
      if (seen_param)
        task.warnings.push_back(fmt::format("{}: {} is an input after a param; inputs come first", r.file, f));
    } else if (*kind == "param") {
      a.kind = ArgKind::kParam;
      seen_param = true;
    } else {
      return r.bad(f + ".kind", fmt::format("'{}' is neither \"input\" nor \"param\"", *kind));
    }
    auto dt = r.dtype(*t, f);
    if (!dt) return fail(dt.error());
    a.dtype = dt->first;
    a.torch_dtype = dt->second;
    auto shape = r.shape(t->get("shape"), f + ".shape");
    if (!shape) return fail(shape.error());
    a.shape = *shape;
    if (const toml::node* d = t->get("dist")) {
      auto ds = d->value<std::string>();
      if (!ds) return r.bad(f + ".dist", "must be a string");
      a.dist_explicit = true;
      if (*ds == "normal")
        a.dist = Dist::kNormal;
      else if (*ds == "uniform")
        a.dist = Dist::kUniform;
      else if (*ds == "randint")
        a.dist = Dist::kRandint;
      else if (*ds == "positive")
        a.dist = Dist::kPositive;
      else
        return r.bad(f + ".dist", fmt::format("unknown '{}'", *ds), "normal, uniform, randint or positive");
    }
    for (auto [key, slot] : {std::pair{"low", &a.low}, std::pair{"high", &a.high}}) {
      if (const toml::node* n = t->get(key)) {
        auto v = r.num(n, f + "." + key);
        if (!v) return fail(v.error());
        *slot = *v;
      }
    }
    if (a.dist == Dist::kRandint) {
      if (!a.high) return r.bad(f, "dist = \"randint\" needs high (and optionally low, default 0)");
      double lo = a.low.value_or(0);
      if (lo != std::floor(lo) || *a.high != std::floor(*a.high) || !(lo < *a.high) || lo < INT32_MIN ||
          *a.high > INT32_MAX)
        return r.bad(f, "randint needs integer low < high within int32");
      if (dtype_is_float(a.dtype))
        task.warnings.push_back(fmt::format("{}: {} draws integers into a float type", r.file, f));
    } else if (!dtype_is_float(a.dtype) && a.dtype != DType::kBool) {
      return r.bad(f + ".dist", "an integer argument needs dist = \"randint\" with low/high");
    }
    if (a.dist == Dist::kUniform && a.low && a.high && !(*a.low < *a.high)) return r.bad(f, "uniform needs low < high");
    task.args.push_back(std::move(a));
  }
  return {};
}

Result<void> read_outputs(const Reader& r, const toml::table& root, Task& task) {
  const toml::array* outs = root.get("outputs") ? root.get("outputs")->as_array() : nullptr;
  if (!outs || outs->empty()) return r.bad("outputs", "missing: at least one [[outputs]] table is needed");
  for (size_t i = 0; i < outs->size(); ++i) {
    std::string f = fmt::format("outputs[{}]", i);
    const toml::table* t = (*outs)[i].as_table();
    if (!t) return r.bad(f, "must be a table ([[outputs]])");
    r.warn_unknown(*t, f + ".", {"dtype", "shape", "name"});
    TaskOutput o;
    auto dt = r.dtype(*t, f);
    if (!dt) return fail(dt.error());
    o.dtype = dt->first;
    o.torch_dtype = dt->second;
    auto shape = r.shape(t->get("shape"), f + ".shape");
    if (!shape) return fail(shape.error());
    o.shape = *shape;
    task.outputs.push_back(std::move(o));
  }
  return {};
}

Result<void> read_tolerance(const Reader& r, const toml::table& root, Task& task) {
  for (const auto& o : task.outputs) task.tolerance[o.dtype] = default_tolerance(o.dtype);
  const toml::node* n = root.get("tolerance");
  if (!n) return {};
  const toml::table* t = n->as_table();
  if (!t) return r.bad("tolerance", "must be a table of dtype = { atol = .., rtol = .. }");
  for (auto&& [k, v] : *t) {
    std::string f = fmt::format("tolerance.{}", k.str());
    auto dt = dtype_from_name(k.str());
    if (!dt) return r.bad(f, "not a dtype name");
    const toml::table* e = v.as_table();
    if (!e) return r.bad(f, "must be { atol = .., rtol = .. }");
    r.warn_unknown(*e, f + ".", {"atol", "rtol", "norm_rtol"});
    Tolerance tol = default_tolerance(*dt);
    bool has_norm = false;
    for (auto [key, slot] :
         {std::pair{"atol", &tol.atol}, std::pair{"rtol", &tol.rtol}, std::pair{"norm_rtol", &tol.norm_rtol}}) {
      if (const toml::node* x = e->get(key)) {
        auto val = r.num(x, f + "." + key);
        if (!val) return fail(val.error());
        if (*val < 0 || *val > 1e6) return r.bad(f + "." + key, "must be in [0, 1e6]");
        *slot = *val;
        if (std::string_view(key) == "norm_rtol") has_norm = true;
      }
    }
    if (!has_norm) tol.norm_rtol = tol.rtol;
    task.tolerance[*dt] = tol;
  }
  return {};
}

Result<void> read_variants(const Reader& r, const toml::table& root, Task& task) {
  const toml::node* n = root.get("variants");
  if (!n) {
    task.warnings.push_back(
        fmt::format("{}: no [[variants]]: the kernel is checked at the prompt's shapes only", r.file));
    return {};
  }
  const toml::array* vs = n->as_array();
  if (!vs) return r.bad("variants", "must be an array of tables ([[variants]])");
  std::set<std::string> names = {"prompt"};
  for (size_t i = 0; i < vs->size(); ++i) {
    std::string f = fmt::format("variants[{}]", i);
    const toml::table* t = (*vs)[i].as_table();
    if (!t) return r.bad(f, "must be a table");
    r.warn_unknown(*t, f + ".", {"name", "args", "outputs"});
    TaskVariant v;
    auto name = r.str(*t, "name", f + ".name", true);
    if (!name) return fail(name.error());
    if (name->empty() || name->find_first_of("/\\ ") != std::string::npos || !names.insert(*name).second)
      return r.bad(
          f + ".name",
          fmt::format("'{}' must be unique, non-empty, without spaces or slashes (and not \"prompt\")", *name));
    v.name = *name;
    f = fmt::format("variants[{}] ({})", i, v.name);
    const toml::table* args = t->get("args") ? t->get("args")->as_table() : nullptr;
    if (!args) return r.bad(f + ".args", "missing: a table of arg name = [shape]");
    for (auto&& [k, sv] : *args) {
      auto it = std::find_if(task.args.begin(), task.args.end(), [&](const TaskArg& a) { return a.name == k.str(); });
      if (it == task.args.end()) return r.bad(f + ".args." + std::string(k.str()), "no such arg");
      if (it->kind == ArgKind::kParam)
        return r.bad(f + ".args." + std::string(k.str()), "parameter shapes stay fixed across variants",
                     "a variant changes only the inputs a kernel must generalise over");
      auto s = r.shape(&sv, f + ".args." + std::string(k.str()));
      if (!s) return fail(s.error());
      v.args[std::string(k.str())] = *s;
    }
    const toml::array* outs = t->get("outputs") ? t->get("outputs")->as_array() : nullptr;
    if (!outs || outs->size() != task.outputs.size())
      return r.bad(f + ".outputs",
                   fmt::format("must list the shape of each of the {} outputs, e.g. [[3, 300]]", task.outputs.size()));
    for (size_t j = 0; j < outs->size(); ++j) {
      auto s = r.shape(&(*outs)[j], fmt::format("{}.outputs[{}]", f, j));
      if (!s) return fail(s.error());
      v.outputs.push_back(*s);
    }
    task.variants.push_back(std::move(v));
  }
  return {};
}

// [reference]: the reference implementation's metadata, kept for prompts, reports and suites.
Result<void> read_reference(const Reader& r, const toml::node* n, Task& task) {
  static const std::vector<std::string> kEngines = {"tensor_engine", "vector_engine", "dma_engine"};
  static const std::vector<std::string> kTiles = {"tile_m",   "tile_n",    "tile_k", "tile_size", "tile_c",
                                                  "tile_seq", "tile_head", "tile_d", "tile_cache"};
  const toml::table* t = n->as_table();
  if (!t) return r.bad("reference", "must be a table");
  r.warn_unknown(*t, "reference.", {"task_id", "expected_speedup", "engine_hints", "tile_suggestions"});
  auto id = r.str(*t, "task_id", "reference.task_id", false);
  if (!id) return fail(id.error());
  task.reference_task_id = *id;
  if (const toml::node* x = t->get("expected_speedup")) {
    const toml::array* a = x->as_array();
    if (!a || a->size() != 2) return r.bad("reference.expected_speedup", "must be [low, high]");
    auto lo = r.num(a->get(0), "reference.expected_speedup[0]");
    if (!lo) return fail(lo.error());
    auto hi = r.num(a->get(1), "reference.expected_speedup[1]");
    if (!hi) return fail(hi.error());
    if (!(*lo > 0) || !(*hi >= *lo)) return r.bad("reference.expected_speedup", "must be 0 < low <= high");
    task.expected_speedup = std::pair{*lo, *hi};
  }
  if (const toml::node* x = t->get("engine_hints")) {
    const toml::array* a = x->as_array();
    if (!a) return r.bad("reference.engine_hints", "must be an array of engine names");
    for (auto&& e : *a) {
      auto s = e.value<std::string>();
      if (!s || std::find(kEngines.begin(), kEngines.end(), *s) == kEngines.end())
        return r.bad("reference.engine_hints", "unknown engine", "tensor_engine, vector_engine or dma_engine");
      task.engine_hints.push_back(*s);
    }
  }
  if (const toml::node* x = t->get("tile_suggestions")) {
    const toml::table* tt = x->as_table();
    if (!tt) return r.bad("reference.tile_suggestions", "must be a table of tile sizes");
    for (auto&& [k, v] : *tt) {
      const std::string key(k.str());
      if (std::find(kTiles.begin(), kTiles.end(), key) == kTiles.end())
        return r.bad("reference.tile_suggestions." + key, "unknown tile key",
                     "tile_m, tile_n, tile_k, tile_size, tile_c, tile_seq, tile_head, tile_d or tile_cache");
      auto iv = v.value_exact<int64_t>();
      if (!iv || *iv < 1) return r.bad("reference.tile_suggestions." + key, "must be a positive integer");
      task.tile_suggestions[key] = *iv;
    }
  }
  return {};
}

Result<void> read_extras(const Reader& r, const toml::table& root, Task& task) {
  if (const toml::node* n = root.get("cost")) {
    const toml::table* t = n->as_table();
    if (!t) return r.bad("cost", "must be a table");
    r.warn_unknown(*t, "cost.", {"flops", "bytes"});
    for (auto [key, slot] : {std::pair{"flops", &task.flops}, std::pair{"bytes", &task.bytes}}) {
      if (const toml::node* x = t->get(key)) {
        auto v = r.num(x, std::string("cost.") + key);
        if (!v) return fail(v.error());
        if (*v < 0) return r.bad(std::string("cost.") + key, "must be >= 0");
        *slot = *v;
      }
    }
  }
  if (const toml::node* n = root.get("verify")) {
    const toml::table* t = n->as_table();
    if (!t) return r.bad("verify", "must be a table");
    r.warn_unknown(*t, "verify.", {"seeds", "profiles", "large_scale", "prompt_seeds"});
    if (const toml::node* x = t->get("seeds")) {
      auto v = x->value_exact<int64_t>();
      if (!v || *v < 1 || *v > kMaxSeeds)
        return r.bad("verify.seeds", fmt::format("must be an integer in [1, {}]", kMaxSeeds));
      task.seeds = static_cast<int>(*v);
    }
    if (const toml::node* x = t->get("profiles")) {
      const toml::array* a = x->as_array();
      if (!a || a->empty()) return r.bad("verify.profiles", "must be a non-empty array of names");
      task.profiles.clear();
      for (auto&& e : *a) {
        auto s = e.value<std::string>();
        auto p = s ? profile_from_name(*s) : std::nullopt;
        if (!p)
          return r.bad("verify.profiles", "unknown profile",
                       "normal, uniform, large, near_zero, negated, scaled or small");
        task.profiles.push_back(*p);
      }
    }
    if (const toml::node* x = t->get("large_scale")) {
      auto v = r.num(x, "verify.large_scale");
      if (!v) return fail(v.error());
      if (*v <= 0 || *v > 1e6) return r.bad("verify.large_scale", "must be in (0, 1e6]");
      task.large_scale = *v;
    }
    if (const toml::node* x = t->get("prompt_seeds")) {
      auto v = x->value_exact<int64_t>();
      if (!v || *v < 1 || *v > kMaxSeeds)
        return r.bad("verify.prompt_seeds", fmt::format("must be an integer in [1, {}]", kMaxSeeds));
      task.prompt_seeds = static_cast<int>(*v);
    }
  }
  if (const toml::node* n = root.get("reference")) {
    if (auto ok = read_reference(r, n, task); !ok) return fail(ok.error());
  }
  if (const toml::node* n = root.get("policy")) {
    const toml::table* t = n->as_table();
    if (!t) return r.bad("policy", "must be a table");
    r.warn_unknown(*t, "policy.", {"precision", "allow_dtypes"});
    auto prec = r.str(*t, "precision", "policy.precision", false, "strict");
    if (!prec) return fail(prec.error());
    if (*prec != "strict" && *prec != "any") return r.bad("policy.precision", "must be \"strict\" or \"any\"");
    task.strict_precision = *prec == "strict";
    if (const toml::node* x = t->get("allow_dtypes")) {
      const toml::array* a = x->as_array();
      if (!a) return r.bad("policy.allow_dtypes", "must be an array of dtype names");
      for (auto&& e : *a) {
        auto s = e.value<std::string>();
        auto d = s ? dtype_from_name(*s) : std::nullopt;
        if (!d) return r.bad("policy.allow_dtypes", "unknown dtype name");
        task.allow_dtypes.push_back(*d);
      }
    }
  }
  return {};
}

Result<std::string> read_file(const fs::path& p, int64_t max_bytes) {
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (ec) return fail("nkia_task_not_found", fmt::format("cannot read {}: {}", p.string(), ec.message()));
  if (static_cast<int64_t>(size) > max_bytes)
    return fail("nkia_task_invalid", fmt::format("{} is larger than {} bytes", p.string(), max_bytes));
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in && !in.eof()) return fail("nkia_task_not_found", fmt::format("cannot read {}", p.string()));
  return ss.str();
}

}  // namespace

Result<Task> parse_task(std::string_view toml_text, std::string task_py, const std::string& dir) {
  Task task;
  task.dir = dir;
  std::string file = (fs::path(dir) / "task.toml").string();
  Reader r{file, &task.warnings};
  toml::table root;
  try {
    root = toml::parse(toml_text, file);
  } catch (const toml::parse_error& e) {
    return fail(toml_syntax_error(std::string(e.description()), file, static_cast<int>(e.source().begin.line),
                                  static_cast<int>(e.source().begin.column)));
  }
  r.warn_unknown(root, "",
                 {"id",        "name",  "level",   "category",           "operation", "entry", "dialects", "target",
                  "baseline",  "args",  "outputs", "tolerance",          "variants",  "cost",  "verify",   "policy",
                  "reference", "notes", "source",  "untrusted_reference"});
  auto id = r.str(root, "id", "id", true);
  if (!id) return fail(id.error());
  task.id = *id;
  auto name = r.str(root, "name", "name", true);
  if (!name) return fail(name.error());
  task.name = *name;
  for (auto [key, slot] : {std::pair{"category", &task.category}, std::pair{"operation", &task.operation}}) {
    auto v = r.str(root, key, key, false);
    if (!v) return fail(v.error());
    *slot = *v;
  }
  if (const toml::node* n = root.get("level")) {
    auto v = n->value_exact<int64_t>();
    if (!v || *v < 0 || *v > 100) return r.bad("level", "must be a small integer");
    task.level = static_cast<int>(*v);
  }
  if (const toml::node* n = root.get("untrusted_reference")) {
    auto v = n->value_exact<bool>();
    if (!v) return r.bad("untrusted_reference", "must be true or false");
    task.untrusted_reference = *v;
  }
  auto entry = r.str(root, "entry", "entry", false, "kernel");
  if (!entry) return fail(entry.error());
  if (!is_identifier(*entry)) return r.bad("entry", "must be a Python identifier");
  task.entry = *entry;
  auto target = r.str(root, "target", "target", false, "trn1");
  if (!target) return fail(target.error());
  if (!target_by_name(*target))
    return r.bad("target", fmt::format("must be one of {}", fmt::join(target_names(), ", ")));
  task.target = *target;
  auto baseline = r.str(root, "baseline", "baseline", false, "baseline.py");
  if (!baseline) return fail(baseline.error());
  if (baseline->empty() || baseline->find("..") != std::string::npos || (*baseline)[0] == '/')
    return r.bad("baseline", "must be a file name inside the task folder");
  task.baseline = *baseline;
  if (const toml::node* n = root.get("dialects")) {
    const toml::array* a = n->as_array();
    if (!a) return r.bad("dialects", "must be an array of \"legacy\" / \"current\"");
    for (auto&& e : *a) {
      auto s = e.value<std::string>();
      if (!s || (*s != "legacy" && *s != "current"))
        return r.bad("dialects", "entries must be \"legacy\" or \"current\"");
      task.dialects.push_back(*s);
    }
  }
  if (auto ok = read_args(r, root, task); !ok) return fail(ok.error());
  if (auto ok = read_outputs(r, root, task); !ok) return fail(ok.error());
  if (auto ok = read_tolerance(r, root, task); !ok) return fail(ok.error());
  if (auto ok = read_variants(r, root, task); !ok) return fail(ok.error());
  if (auto ok = read_extras(r, root, task); !ok) return fail(ok.error());
  auto py_text = python_source_text(task_py, (fs::path(dir) / "task.py").string());
  if (!py_text) return fail(py_text.error());
  task_py = std::move(*py_text);
  if (task_py.find("class Model") == std::string::npos)
    return fail("nkia_task_invalid", fmt::format("{}: task.py defines no class Model", dir),
                "task.py holds the PyTorch reference: class Model(nn.Module), get_inputs(), get_init_inputs()");
  task.task_toml = std::string(toml_text);
  task.task_py = std::move(task_py);
  Hasher h;
  h.field("nki-agent task v1").field(task.task_py).field(task.task_toml);
  task.hash = to_hex(h.finish());
  return task;
}

// Largest task.toml / task.py read: tasks are small text files.
constexpr int64_t kMaxTaskFileBytes = 1 << 20;

Result<Task> load_task(const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  if (fs::is_regular_file(p, ec) && p.filename() == "task.toml") p = p.parent_path();
  if (p.empty()) p = ".";
  if (!fs::is_directory(p, ec) || !fs::is_regular_file(p / "task.toml", ec))
    return fail(
        "nkia_task_not_found", fmt::format("{} is not a task folder (no task.toml)", path),
        "give the task's folder, e.g. tasks/nkibench/level1/L1_014_relu_fp32; 'nki-agent tasks list' lists them");
  auto toml_text = read_file(p / "task.toml", kMaxTaskFileBytes);
  if (!toml_text) return fail(toml_text.error());
  auto py = read_file(p / "task.py", kMaxTaskFileBytes);
  if (!py)
    return fail("nkia_task_invalid", fmt::format("{}: task.py is missing or unreadable", p.string()),
                "a task folder holds task.py, task.toml and baseline.py");
  return parse_task(*toml_text, std::move(*py), p.string());
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool is_task_dtype(std::string_view torch_name) {
  static constexpr std::string_view kTorch[] = {"float32", "float16", "bfloat16", "int32", "int64",
                                                "int16",   "int8",    "uint8",    "bool"};
  return std::find(std::begin(kTorch), std::end(kTorch), torch_name) != std::end(kTorch);
}

}  // namespace nki_agent
