// Writing a task graph as a task folder (corpus/emit.h).
#include "corpus/emit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "core/text.h"
#include "corpus/shapes.h"
#include "corpus/vocabulary.h"

namespace nki_agent::corpus {

namespace {

std::string shape_list(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}
std::string shape_args(const Shape& s) {  // "2, 128" for torch.randn(2, 128)
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out;
}
std::string short_dtype(const std::string& dt) {
  return dt == "float32" ? "fp32" : dt == "bfloat16" ? "bf16" : dt == "float16" ? "fp16" : dt;
}

// The operand placeholders of a rule, in node input order.
std::vector<std::string> operand_names(Rule r) {
  switch (r) {
    case Rule::kAttention: return {"x", "k", "v"};
    case Rule::kScores: return {"x", "k"};
    case Rule::kIndexSelect: return {"x", "idx"};
    default: return {"x", "y"};
  }
}

std::string value_name(const TaskGraph& g, int v) {
  return g.is_input(v) ? g.inputs[v].name : fmt::format("h{}", v - int(g.inputs.size()));
}

bool is_int_value(const TaskGraph& g, int v) {
  return g.is_input(v) && g.inputs[v].dtype == "int64";
}

// Fills a template: operands, the module, {P}, parameters.
std::string fill(std::string_view tpl, const TaskGraph& g, const GraphNode& n, bool baseline) {
  const OpDef* op = find_op(n.op);
  const bool low = g.dtype != "float32";
  std::string s(tpl);
  auto names = operand_names(op->rule);
  for (size_t i = 0; i < n.inputs.size() && i < names.size(); ++i) {
    std::string v = value_name(g, n.inputs[i]);
    if (!baseline && low && !is_int_value(g, n.inputs[i])) v += ".float()";
    s = replace_all(s, "{" + names[i] + "}", v);
  }
  s = replace_all(s, "{m}", baseline ? n.module : "self." + n.module);
  s = replace_all(s, "{P}", !baseline && low ? ".float()" : "");
  for (const auto& [k, v] : n.params) s = replace_all(s, "{" + k + "}", v);
  // A placeholder left over is a vocabulary bug: say which.
  for (size_t i = s.find('{'); i != std::string::npos; i = s.find('{', i + 1)) {
    size_t j = i + 1;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    if (j > i + 1 && j < s.size() && s[j] == '}')
      throw std::logic_error(fmt::format("corpus: op {} leaves {} unfilled", n.op, s.substr(i, j - i + 1)));
  }
  return s;
}

std::string torch_dtype(const std::string& dt) {
  return "torch." + dt;
}

struct Module {
  std::vector<std::string> init;                      // lines of __init__
  std::vector<std::pair<std::string, Shape>> params;  // kernel arg name, shape (state_dict order)
};

Module module_of(const TaskGraph& g, const GraphNode& n, const Shape& in) {
  Module m;
  const OpDef* op = find_op(n.op);
  const bool low = g.dtype != "float32";
  const std::string to = low ? fmt::format(".to({})", torch_dtype(g.dtype)) : "";
  const std::string& a = n.module;
  auto p = [&](const std::string& k) { return param(n, k); };
  switch (op->rule) {
    case Rule::kLinear: {
      const bool bias = n.op == "linear";
      m.init.push_back(fmt::format("self.{} = nn.Linear({}, {}, bias={}){}", a, p("in_features"), p("out_features"),
                                   bias ? "True" : "False", to));
      m.params.push_back({a + "_weight", {param_int(n, "out_features"), param_int(n, "in_features")}});
      if (bias) m.params.push_back({a + "_bias", {param_int(n, "out_features")}});
      break;
    }
    case Rule::kLayerNorm:
      m.init.push_back(fmt::format("self.{} = nn.LayerNorm({}){}", a, in.back(), to));
      m.params.push_back({a + "_weight", {in.back()}});
      m.params.push_back({a + "_bias", {in.back()}});
      break;
    case Rule::kRmsNorm:
      m.init.push_back(
          fmt::format("self.{}_weight = nn.Parameter(torch.ones({}, dtype={}))", a, in.back(), torch_dtype(g.dtype)));
      m.params.push_back({a + "_weight", {in.back()}});
      break;
    case Rule::kConv2d:
    case Rule::kConv1d: {
      const bool two = op->rule == Rule::kConv2d;
      m.init.push_back(fmt::format("self.{} = nn.Conv{}d({}, {}, {}, stride={}, padding={}, dilation={}, groups={}){}",
                                   a, two ? 2 : 1, p("in_channels"), p("out_channels"), p("kernel"), p("stride"),
                                   p("padding"), p("dilation"), p("groups"), to));
      const int64_t k = param_int(n, "kernel");
      Shape w = {param_int(n, "out_channels"), param_int(n, "in_channels") / param_int(n, "groups"), k};
      if (two) w.push_back(k);
      m.params.push_back({a + "_weight", w});
      m.params.push_back({a + "_bias", {param_int(n, "out_channels")}});
      break;
    }
    case Rule::kBatchNorm: {
      const int64_t c = in[1];
      m.init.push_back(fmt::format("self.{} = nn.BatchNorm{}d({})", a, in.size() == 4 ? 2 : 1, c));
      m.init.push_back("# Non-trivial affine parameters and running statistics, as after training.");
      m.init.push_back("with torch.no_grad():");
      m.init.push_back(fmt::format("    self.{}.weight.uniform_(0.5, 1.5)", a));
      m.init.push_back(fmt::format("    self.{}.bias.uniform_(-0.5, 0.5)", a));
      m.init.push_back(fmt::format("    self.{}.running_mean.uniform_(-0.5, 0.5)", a));
      m.init.push_back(fmt::format("    self.{}.running_var.uniform_(0.5, 2.0)", a));
      if (low) m.init.push_back(fmt::format("self.{}{}", a, to));
      for (const char* s : {"weight", "bias", "running_mean", "running_var"}) m.params.push_back({a + "_" + s, {c}});
      break;
    }
    case Rule::kGroupNorm:
      m.init.push_back(fmt::format("self.{} = nn.GroupNorm({}, {}){}", a, p("groups"), in[1], to));
      m.params.push_back({a + "_weight", {in[1]}});
      m.params.push_back({a + "_bias", {in[1]}});
      break;
    case Rule::kEmbedding:
      m.init.push_back(fmt::format("self.{} = nn.Embedding({}, {}){}", a, p("num_embeddings"), p("embedding_dim"), to));
      m.params.push_back({a + "_weight", {param_int(n, "num_embeddings"), param_int(n, "embedding_dim")}});
      break;
    default: break;
  }
  return m;
}

double node_flops(const OpDef& op, const GraphNode& n, const std::vector<Shape>& in, const Shape& out) {
  const double o = double(shape_numel(out));
  switch (op.rule) {
    case Rule::kLinear: return 2.0 * o * double(param_int(n, "in_features"));
    case Rule::kMatmulIn: return 2.0 * o * double(in[0].back());
    case Rule::kAttention: return 4.0 * o * double(in[0][in[0].size() - 2]) + 5.0 * o;
    case Rule::kScores: return 2.0 * o * double(in[0].back());
    case Rule::kConv2d:
    case Rule::kConv1d: {
      const int64_t k = param_int(n, "kernel");
      return 2.0 * o * double(param_int(n, "in_channels") / param_int(n, "groups")) *
             double(op.rule == Rule::kConv2d ? k * k : k);
    }
    case Rule::kReduce: return double(shape_numel(in[0]));
    case Rule::kLayerNorm:
    case Rule::kRmsNorm:
    case Rule::kBatchNorm:
    case Rule::kGroupNorm:
    case Rule::kInstanceNorm: return 5.0 * o;
    default: return o;
  }
}

// The low-precision error model (docs/corpus.md, "Tolerances"). Both the reference and a kernel
// round every op's result to the task's dtype, but they compute it differently (another
// accumulation order, intermediates in the dtype), so the two roundings can fall on neighbouring
// values: one unit (an ulp) per op, two for a contraction (its K-term sum in another order, then
// the rounding). An op passes on the error it reads, scaled by its gain: x^p multiplies relative
// error by p; a normalisation or softmax divides by a spread, so the ulp of its largest inputs
// (several sigma) becomes an absolute error of several ulps of an output near 1.
int rounding_units(const OpDef& op) {
  return op.contraction ? 2 : 1;
}
int error_gain(const OpDef& op) {
  if (op.name == "pow3") return 3;
  if (op.name == "square" || op.name == "squared_diff") return 2;
  if (op.category == "normalization" || op.category == "softmax") return 2;
  return 1;
}

// The units of error the worst output carries under that model.
int error_units(const TaskGraph& g) {
  std::vector<int> units(g.value_count(), 0);  // inputs and weights: both sides read the same bits
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const OpDef& op = *find_op(g.nodes[i].op);
    int in = 0;
    for (int v : g.nodes[i].inputs) in = std::max(in, units[v]);
    units[g.inputs.size() + i] = error_gain(op) * in + rounding_units(op);
  }
  int worst = 0;
  for (int o : g.outputs) worst = std::max(worst, units[o]);
  return worst;
}

// The heaviest category: the one a kernel writer would file the task under.
int category_rank(std::string_view c) {
  static const char* kOrder[] = {"attention",     "convolutions", "matrix_ops", "normalization", "embeddings",
                                 "pooling",       "softmax",      "scans",      "reductions",    "gather_index",
                                 "data_movement", "activations",  "elementwise"};
  for (int i = 0; i < int(std::size(kOrder)); ++i)
    if (c == kOrder[i]) return i;
  return 99;
}

}  // namespace

LowTolerance low_precision_tolerance(const TaskGraph& g) {
  const double base = g.dtype == "bfloat16" ? 2e-2 : 1e-2;
  const int ops_factor = g.nodes.size() > 3 ? 2 : 1;
  // The base covers three units (a chain of up to three plain ops); more widen the element
  // tolerance in steps of the base, at most 4x. The norm bound stays at the op-count rule.
  const int units = error_units(g);
  const int factor = std::max(ops_factor, std::min(4, (units + 2) / 3));
  return {base * factor, base * ops_factor, units};
}

std::vector<std::pair<std::string, Shape>> graph_params(const TaskGraph& g) {
  auto shapes = value_shapes(g, false);
  if (!shapes) throw std::logic_error("corpus: a graph whose shapes do not compute");
  std::vector<std::pair<std::string, Shape>> out;
  for (const GraphNode& n : g.nodes) {
    if (n.module.empty()) continue;
    for (auto& p : module_of(g, n, (*shapes)[n.inputs[0]]).params) out.push_back(std::move(p));
  }
  return out;
}

EmittedTask emit_task(const TaskGraph& g, int64_t number, const std::string& provenance) {
  auto ps = value_shapes(g, false);
  auto vs = value_shapes(g, true);
  if (!ps || !vs) throw std::logic_error("corpus: a graph whose shapes do not compute");
  const bool low = g.dtype != "float32";
  EmittedTask t;
  t.id = fmt::format("C{}_{:05d}", g.level, number);
  std::string name;
  std::set<std::string> seen;
  int named = 0;
  for (const GraphNode& n : g.nodes) {
    if (seen.count(n.op) || named == 4) continue;
    seen.insert(n.op);
    name += (name.empty() ? "" : "_") + n.op;
    ++named;
  }
  t.name = name + "_" + short_dtype(g.dtype);
  t.folder = fmt::format("level{}/{}_{}", g.level, t.id, t.name);

  // Categories, modules, forward lines, baseline lines.
  std::string cat = "elementwise";
  std::vector<std::string> init, fwd, base;
  std::set<std::string> lib_modules;
  std::vector<std::pair<std::string, Shape>> params;
  bool has_baseline = true, contraction = false, large_ok = true;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    const OpDef* op = find_op(n.op);
    if (category_rank(op->category) < category_rank(cat)) cat = std::string(op->category);
    contraction |= op->contraction;
    large_ok &= op->large_inputs_ok;
    std::vector<Shape> in;
    for (int v : n.inputs) in.push_back((*ps)[v]);
    const Shape& out = (*ps)[g.inputs.size() + i];
    if (!n.module.empty()) {
      Module m = module_of(g, n, in[0]);
      for (auto& l : m.init) init.push_back(l);
      for (auto& p : m.params) params.push_back(p);
    }
    const std::string var = fmt::format("h{}", i);
    std::string expr = fill(op->torch, g, n, false);
    fwd.push_back(low ? fmt::format("{} = ({}).to({})", var, expr, torch_dtype(g.dtype)) : var + " = " + expr);
    t.flops += node_flops(*op, n, in, out);
    if (op->lib.empty()) {
      has_baseline = false;
    } else {
      std::string call = fill(op->lib, g, n, true);
      for (const char* mod : {"elementwise", "softmax", "norm", "channel_norm", "linear", "conv", "pool", "concat",
                              "embedding", "movement", "shuffle"})
        if (call.find(std::string(mod) + ".") != std::string::npos) lib_modules.insert(mod);
      base.push_back(fmt::format("{} = {}  # {}", var, call, n.op));
    }
  }
  t.category = cat;
  std::string ret;
  for (size_t i = 0; i < g.outputs.size(); ++i) ret += (i ? ", " : "") + value_name(g, g.outputs[i]);
  // The one-line operation: each output's expression with the intermediate names substituted.
  std::vector<std::string> exprs(g.value_count());
  for (size_t i = 0; i < g.inputs.size(); ++i) exprs[i] = g.inputs[i].name;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    std::string s = n.op + "(";
    for (size_t j = 0; j < n.inputs.size(); ++j) s += (j ? ", " : "") + exprs[n.inputs[j]];
    exprs[g.inputs.size() + i] = s + ")";
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) t.operation += (i ? "; " : "") + exprs[g.outputs[i]];
  t.operation += fmt::format(", {}", g.dtype);

  // task.py
  std::string args;
  for (const GraphInput& in : g.inputs) args += ", " + in.name;
  std::string py = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n";
  py += "class Model(nn.Module):\n";
  py += fmt::format("    \"\"\"{}.\n\n    {} (nki-agent corpus).{}\"\"\"\n\n", t.operation, provenance,
                    low ? fmt::format(" Each op computes in float32 and rounds its result to {}.", g.dtype) : "");
  py += "    def __init__(self):\n        super().__init__()\n";
  for (const auto& l : init) py += "        " + l + "\n";
  py += fmt::format("\n    def forward(self{}):\n", args);
  for (const auto& l : fwd) py += "        " + l + "\n";
  py += fmt::format("        return {}\n\n\ndef get_inputs():\n", ret);
  std::string list;
  for (const GraphInput& in : g.inputs) {
    const Shape s = input_shape(g, in, false);
    if (in.dtype == "int64")
      py += fmt::format("    {} = torch.randint({}, {}, ({}{}))\n", in.name, in.low, in.high, shape_args(s),
                        s.size() == 1 ? "," : "");
    else
      py += fmt::format("    {} = torch.randn({}, dtype={})\n", in.name, shape_args(s), torch_dtype(in.dtype));
    list += (list.empty() ? "" : ", ") + in.name;
  }
  py += fmt::format("    return [{}]\n\n\ndef get_init_inputs():\n    return []\n", list);
  t.task_py = py;

  // task.toml
  std::string toml = fmt::format("# {} (nki-agent corpus generate; docs/corpus.md).\n", provenance);
  toml += fmt::format("id = \"{}\"\nname = \"{}\"\nlevel = {}\ncategory = \"{}\"\n", t.id, t.name, g.level, cat);
  toml += fmt::format("operation = \"{}\"\nentry = \"kernel\"\ndialects = [\"legacy\", \"current\"]\n", t.operation);
  toml += fmt::format("target = \"trn1\"\nbaseline = \"baseline.py\"\nsource = \"{}\"\n", provenance);
  const int dsize = g.dtype == "float32" ? 4 : 2;
  for (const GraphInput& in : g.inputs) {
    const Shape s = input_shape(g, in, false);
    toml += fmt::format("\n[[args]]\nname = \"{}\"\nkind = \"input\"\ndtype = \"{}\"\nshape = {}\n", in.name, in.dtype,
                        shape_list(s));
    if (in.dtype == "int64") toml += fmt::format("dist = \"randint\"\nlow = {}\nhigh = {}\n", in.low, in.high);
    t.bytes += double(shape_numel(s)) * (in.dtype == "int64" ? 4 : dsize);
  }
  for (const auto& [nm, s] : params) {
    toml += fmt::format("\n[[args]]\nname = \"{}\"\nkind = \"param\"\ndtype = \"{}\"\nshape = {}\n", nm, g.dtype,
                        shape_list(s));
    t.bytes += double(shape_numel(s)) * dsize;
  }
  for (int o : g.outputs) {
    toml += fmt::format("\n[[outputs]]\ndtype = \"{}\"\nshape = {}\n", g.dtype, shape_list((*ps)[o]));
    t.bytes += double(shape_numel((*ps)[o])) * dsize;
  }
  const double f32 = contraction ? 1e-3 : 1e-4;
  toml += "\n[tolerance]\n";
  if (low) {
    const LowTolerance lt = low_precision_tolerance(g);
    if (lt.element == lt.norm)
      toml += fmt::format("{} = {{ atol = {}, rtol = {} }}\n", g.dtype, lt.element, lt.element);
    else
      toml +=
          fmt::format("{} = {{ atol = {}, rtol = {}, norm_rtol = {} }}\n", g.dtype, lt.element, lt.element, lt.norm);
  } else
    toml += fmt::format("float32 = {{ atol = {}, rtol = {} }}\n", f32, f32);
  toml +=
      "\n# The symbolic dimensions at other sizes (ragged: not multiples of 128 / 512)\n[[variants]]\nname = "
      "\"ragged\"\nargs = { ";
  std::string vargs;
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if ((*ps)[i] != (*vs)[i]) vargs += (vargs.empty() ? "" : ", ") + g.inputs[i].name + " = " + shape_list((*vs)[i]);
  toml += vargs + " }\noutputs = [";
  for (size_t i = 0; i < g.outputs.size(); ++i) toml += (i ? ", " : "") + shape_list((*vs)[g.outputs[i]]);
  toml += "]\n";
  if (contraction || !large_ok) {
    toml += "\n[verify]\n";
    if (contraction) toml += "large_scale = 4\n";
    if (!large_ok) toml += "profiles = [\"normal\", \"uniform\", \"near_zero\", \"negated\", \"scaled\", \"small\"]\n";
  }
  toml += fmt::format("\n[cost]\nflops = {:.0f}\nbytes = {:.0f}\n", t.flops, t.bytes);
  t.task_toml = toml;

  // baseline.py
  if (has_baseline) {
    std::string b = fmt::format("# {} {}: {}, the way eager PyTorch runs it: one lib kernel per op, each\n", t.id,
                                t.name, t.operation);
    b += "# from HBM to HBM (tasks/FORMAT.md, fused tasks). Generated by nki-agent corpus.\n";
    b += "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n";
    std::string mods;
    for (const auto& m : lib_modules) mods += (mods.empty() ? "" : ", ") + m;
    b += fmt::format("from nkibench_ops import {}\n\n\n@nki.jit\ndef kernel(", mods);
    std::string kargs;
    for (const GraphInput& in : g.inputs) kargs += (kargs.empty() ? "" : ", ") + in.name;
    for (const auto& [nm, s] : params) kargs += ", " + nm;
    b += kargs + "):\n";
    for (const auto& l : base) b += "    " + l + "\n";
    b += fmt::format("    return {}\n", ret);
    t.baseline_py = b;
  }
  return t;
}

}  // namespace nki_agent::corpus
