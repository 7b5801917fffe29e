// Drawing task graphs (corpus/generator.h).
#include "corpus/generator.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "corpus/shapes.h"
#include "corpus/vocabulary.h"
#include "tensor/rng.h"

namespace nki_agent::corpus {

namespace {

// A Python float literal that round-trips ("0.125", "1e-05").
std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// The choices of an OpDef ("a=1|2;b=3") for parameter drawing.
std::vector<std::pair<std::string, std::vector<std::string>>> parse_choices(std::string_view text) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  while (!text.empty()) {
    size_t semi = text.find(';');
    std::string_view item = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    std::pair<std::string, std::vector<std::string>> entry{std::string(item.substr(0, eq)), {}};
    std::string_view vals = item.substr(eq + 1);
    while (!vals.empty()) {
      size_t bar = vals.find('|');
      entry.second.emplace_back(vals.substr(0, bar));
      vals = bar == std::string_view::npos ? std::string_view{} : vals.substr(bar + 1);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

const std::string& get(const Params& p, const std::string& name) {
  for (const auto& [k, v] : p)
    if (k == name) return v;
  throw std::out_of_range("corpus: no parameter " + name);
}

class Builder {
 public:
  Builder(uint64_t seed, uint64_t stream, const GeneratorOptions& opt) : rng_(seed, stream), opt_(opt) {}

  int64_t pick(std::initializer_list<int64_t> v) { return *(v.begin() + rng_.integers(0, int64_t(v.size()))); }
  template <typename T>
  const T& pick_of(const std::vector<T>& v) {
    return v[rng_.integers(0, int64_t(v.size()))];
  }
  bool chance(double p) { return rng_.uniform() < p; }
  int64_t integers(int64_t lo, int64_t hi) { return rng_.integers(lo, hi); }

  // A dimension: partition-friendly (multiples of 128 or small powers of two) or ragged.
  int64_t dim(std::initializer_list<int64_t> friendly, std::initializer_list<int64_t> ragged) {
    return chance(ragged_p_) ? pick(ragged) : pick(friendly);
  }

  void begin(const std::string& dtype) {
    g_ = TaskGraph{};
    g_.dtype = dtype;
    prompt_.clear();
    variant_.clear();
    layout_.clear();
    counter_ = 0;
    ragged_p_ = 0.3;
  }

  int sym_for(int64_t p, int64_t v, const std::string& name) {
    for (size_t i = 0; i < g_.syms.size(); ++i)
      if (g_.syms[i].prompt == p && g_.syms[i].variant == v) return int(i);
    std::string n = name;
    for (int k = 2; [&] {
           for (const auto& s : g_.syms)
             if (s.name == n) return true;
           return false;
         }();
         ++k)
      n = name + std::to_string(k);
    g_.syms.push_back({n, p, v});
    return int(g_.syms.size() - 1);
  }

  // A new graph input; dims of equal prompt and variant sizes are fixed, the others symbols.
  int add_input(const std::string& base, const Shape& p, const Shape& v, const std::string& dtype, unsigned layout,
                const std::vector<std::string>& dim_names, int64_t low = 0, int64_t high = 0) {
    GraphInput in;
    in.name = g_.inputs.empty() && base == "x" ? "x" : fmt::format("{}{}", base, g_.inputs.size());
    in.dtype = dtype;
    in.layout = layout;
    in.low = low;
    in.high = high;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] == v[i])
        in.dims.push_back({-1, p[i]});
      else
        in.dims.push_back({sym_for(p[i], v[i], i < dim_names.size() ? dim_names[i] : "D"), 0});
    }
    // Inputs come before every node: renumber node operands.
    const int at = int(g_.inputs.size());
    for (GraphNode& n : g_.nodes)
      for (int& x : n.inputs)
        if (x >= at) ++x;
    for (int& o : g_.outputs)
      if (o >= at) ++o;
    g_.inputs.push_back(std::move(in));
    prompt_.insert(prompt_.begin() + at, p);
    variant_.insert(variant_.begin() + at, v);
    layout_.insert(layout_.begin() + at, layout);
    return at;
  }
  int add_input_like(const std::string& base, int v) {
    return add_input(base, prompt_[v], variant_[v], g_.dtype, layout_[v], {"B", "S", "T", "U"});
  }

  // The first input of a layout.
  int start(unsigned layout) {
    switch (layout) {
      case kRows: {
        const int64_t d = dim({128, 256, 512, 768, 1024}, {96, 300, 500});
        if (chance(0.3)) {
          const int64_t m = dim({128, 256, 512, 1024}, {100, 200, 384 + 1});
          return add_input("x", {m, d}, {m == 100 ? 150 : 77 + m % 64, d}, g_.dtype, kRows, {"M", "D"});
        }
        const int64_t b = pick({1, 2, 4, 8}), s = dim({64, 128, 256}, {100, 200});
        return add_input("x", {b, s, d}, {3, s == 100 ? 150 : 77, d}, g_.dtype, kRows, {"B", "S", "D"});
      }
      case kHeads: {
        const int64_t b = pick({1, 2}), h = pick({2, 4, 8}), s = dim({64, 128, 256}, {100, 200}),
                      d = pick({32, 64, 128});
        return add_input("x", {b, h, s, d}, {3, h, s == 100 ? 150 : 77, d}, g_.dtype, kHeads, {"B", "H", "S", "D"});
      }
      case kImage: {
        const int64_t n = pick({1, 2, 4}), c = dim({16, 32, 64, 128}, {24, 48}),
                      hw = dim({8, 14, 16, 28, 32}, {15, 17, 21});
        return add_input("x", {n, c, hw, hw}, {3, c, hw == 15 ? 19 : 13, hw == 15 ? 11 : 15}, g_.dtype, kImage,
                         {"N", "C", "H", "W"});
      }
      case kSeq: {
        const int64_t n = pick({2, 4}), c = dim({16, 32, 64}, {24, 40}), l = dim({64, 128, 256}, {100, 250});
        return add_input("x", {n, c, l}, {3, c, l == 100 ? 170 : 90}, g_.dtype, kSeq, {"N", "C", "L"});
      }
      case kIds: {
        const int64_t b = pick({1, 2, 4}), s = dim({64, 128, 256}, {100, 200}), vocab = pick({1000, 4096, 8192});
        return add_input("ids", {b, s}, {3, s == 100 ? 150 : 77}, "int64", kIds, {"B", "S"}, 0, vocab);
      }
    }
    throw std::logic_error("corpus: unknown layout");
  }

  // Applies one op to value v (for a binary op, `other` is its second operand, or -1 for a new
  // input); the new value, or nullopt when the op does not apply.
  std::optional<int> apply(const OpDef& op, int v, int other = -1) {
    if (!(op.layouts & layout_[v])) return std::nullopt;
    if (opt_.baseline_only && op.lib.empty()) return std::nullopt;
    const Shape& xp = prompt_[v];
    const Shape& xv = variant_[v];
    const bool last_fixed = !xp.empty() && xp.back() == xv.back();
    const bool chan_fixed = xp.size() > 1 && xp[1] == xv[1];
    const int64_t last = xp.empty() ? 0 : xp.back();
    GraphNode n;
    n.op = std::string(op.name);
    n.layout = layout_[v];
    for (auto& [name, vals] : parse_choices(op.choices)) n.params.emplace_back(name, pick_of(vals));
    const std::string tpl = std::string(op.torch) + std::string(op.lib);
    bool needs_last = tpl.find("{D}") != std::string::npos;
    std::vector<int> extra;  // new inputs (created only once the op is known to apply)
    struct NewInput {
      std::string base;
      Shape p, v;
      std::string dtype;
      int64_t low = 0, high = 0;
    };
    std::vector<NewInput> fresh;
    const int id = counter_;
    switch (op.rule) {
      case Rule::kBinary:
      case Rule::kCatLast:
        if (other < 0) fresh.push_back({"y", xp, xv, g_.dtype});
        break;
      case Rule::kLinear:
        needs_last = true;
        n.params.emplace_back("in_features", std::to_string(last));
        n.params.emplace_back("out_features", std::to_string(dim({64, 128, 256, 512}, {96, 200, 320})));
        n.module = fmt::format("fc{}", id);
        break;
      case Rule::kLayerNorm:
      case Rule::kRmsNorm:
        needs_last = true;
        n.module = (op.rule == Rule::kLayerNorm ? "ln" : "rms") + std::to_string(id);
        break;
      case Rule::kMatmulIn: {
        needs_last = true;
        if (xp.size() < 2) return std::nullopt;
        Shape yp = xp, yv = xv;
        yp[yp.size() - 2] = yv[yv.size() - 2] = last;
        yp.back() = yv.back() = dim({64, 128, 256}, {100, 200});
        fresh.push_back({"y", yp, yv, g_.dtype});
        break;
      }
      case Rule::kAttention:
      case Rule::kScores:
        n.params.emplace_back("scale", py_float(1.0 / std::sqrt(double(last))));
        fresh.push_back({"k", xp, xv, g_.dtype});
        if (op.rule == Rule::kAttention) fresh.push_back({"v", xp, xv, g_.dtype});
        break;
      case Rule::kConv2d:
      case Rule::kConv1d: {
        if (!chan_fixed) return std::nullopt;
        const int64_t c = xp[1];
        const std::string mode = get(n.params, "mode");
        int64_t out = pick({16, 32, 64, 128}), k = pick({1, 3, 5}), s = pick({1, 1, 2}), d = 1, groups = 1;
        if (mode == "depthwise") {
          out = c;
          groups = c;
          k = pick({3, 5});
        } else if (mode == "grouped") {
          groups = pick({2, 4, 8});
          if (c % groups != 0) return std::nullopt;
          out = c * pick({1, 2});
          k = 3;
        } else if (mode == "pointwise") {
          k = 1;
          s = 1;
        } else if (k == 3 && chance(0.25)) {
          d = 2;
        }
        const int64_t pad = chance(0.8) ? d * (k / 2) : 0;
        n.params = {{"in_channels", std::to_string(c)}, {"out_channels", std::to_string(out)},
                    {"kernel", std::to_string(k)},      {"stride", std::to_string(s)},
                    {"padding", std::to_string(pad)},   {"dilation", std::to_string(d)},
                    {"groups", std::to_string(groups)}};
        n.module = fmt::format("conv{}", id);
        break;
      }
      case Rule::kPool2d:
      case Rule::kPool1d: {
        const int64_t k = pick({2, 3}), s = pick({1, 2}), pad = chance(0.5) ? k / 2 : 0;
        n.params.emplace_back("kernel", std::to_string(k));
        n.params.emplace_back("stride", std::to_string(s));
        n.params.emplace_back("padding", std::to_string(pad));
        break;
      }
      case Rule::kBatchNorm:
        if (!chan_fixed) return std::nullopt;
        n.module = fmt::format("bn{}", id);
        break;
      case Rule::kGroupNorm:
      case Rule::kChannelShuffle:
        if (!chan_fixed) return std::nullopt;
        n.params.emplace_back("groups", std::to_string(pick({2, 4, 8})));
        if (op.rule == Rule::kGroupNorm) n.module = fmt::format("gn{}", id);
        break;
      case Rule::kPixelShuffle:
        if (!chan_fixed) return std::nullopt;
        break;
      case Rule::kNarrowLast:
        needs_last = true;
        n.params.emplace_back("length", std::to_string(std::max<int64_t>(1, last / pick({2, 4}))));
        break;
      case Rule::kIndexSelect:
        needs_last = true;
        fresh.push_back({"idx", {pick({16, 32, 64, 100})}, {}, "int64", 0, last});
        fresh.back().v = fresh.back().p;
        break;
      case Rule::kRotateHalf:
        needs_last = true;
        n.params.emplace_back("half", std::to_string(last / 2));
        break;
      case Rule::kRepeatLast: {
        std::string reps;
        for (size_t i = 0; i + 1 < xp.size(); ++i) reps += "1, ";
        n.params.emplace_back("reps", reps + get(n.params, "times"));
        break;
      }
      case Rule::kEmbedding:
        n.params.emplace_back("num_embeddings", std::to_string(g_.inputs[0].high));
        n.params.emplace_back("embedding_dim", std::to_string(pick({128, 256, 512, 768})));
        n.module = fmt::format("embed{}", id);
        n.layout = kRows;
        break;
      case Rule::kReduce:
        n.layout = xp.size() == 4 && get(n.params, "keepdim") == "True" ? unsigned{kHeads} : unsigned{kRows};
        if (n.layout == kRows && xp.size() == 4) return std::nullopt;  // [B, H, S] has no layout of ours
        break;
      case Rule::kTransposeLast:
        if (layout_[v] == kSeq) n.layout = kRows;
        break;
      default: break;
    }
    if (needs_last && !last_fixed) return std::nullopt;
    if (tpl.find("{D}") != std::string::npos) n.params.emplace_back("D", std::to_string(last));
    // Shapes at both dimension sets, with the new inputs' shapes standing in for them.
    std::vector<Shape> inp = {xp}, inv = {xv};
    if (other >= 0) {
      inp.push_back(prompt_[other]);
      inv.push_back(variant_[other]);
    }
    for (const NewInput& f : fresh) {
      inp.push_back(f.p);
      inv.push_back(f.v);
    }
    auto sp = out_shape(op, n, inp);
    auto sv = out_shape(op, n, inv);
    if (!sp || !sv || shape_numel(*sp) > (int64_t{4} << 20) || shape_numel(*sp) < 1) return std::nullopt;
    // Commit: the new inputs first (they renumber values), then the node.
    for (const NewInput& f : fresh) {
      const int at = add_input(f.base, f.p, f.v, f.dtype, f.dtype == "int64" ? unsigned{kIds} : layout_[v],
                               {"B", "S", "T", "U"}, f.low, f.high);
      if (v >= at) ++v;
      if (other >= at) ++other;
      extra.push_back(at);
    }
    n.inputs.push_back(v);
    if (other >= 0) n.inputs.push_back(other);
    for (int e : extra) n.inputs.push_back(e);
    g_.nodes.push_back(std::move(n));
    prompt_.push_back(*sp);
    variant_.push_back(*sv);
    layout_.push_back(g_.nodes.back().layout);
    ++counter_;
    return g_.value_count() - 1;
  }

  // One op drawn for value v: `same_shape` keeps the shape (residual and branch bodies).
  std::optional<int> step(int v, bool same_shape) {
    // A category first, then an op of it: every category is drawn as often, however many ops it has.
    static const std::vector<std::string_view> cats = vocabulary_categories();
    const auto& ops = vocabulary();
    for (int tries = 0; tries < 60; ++tries) {
      const std::string_view cat = pick_of(cats);
      std::vector<const OpDef*> in_cat;
      for (const OpDef& o : ops)
        if (o.category == cat && (o.layouts & layout_[v])) in_cat.push_back(&o);
      if (in_cat.empty()) continue;
      const OpDef& op = *pick_of(in_cat);
      if (op.rule == Rule::kEmbedding) continue;
      if (same_shape && op.rule != Rule::kUnary && op.rule != Rule::kBinary && op.rule != Rule::kLayerNorm &&
          op.rule != Rule::kRmsNorm && op.rule != Rule::kBatchNorm && op.rule != Rule::kGroupNorm &&
          op.rule != Rule::kInstanceNorm && op.rule != Rule::kRotateHalf && op.rule != Rule::kAttention &&
          op.rule != Rule::kChannelShuffle)
        continue;
      if (auto r = apply(op, v)) return r;
    }
    return std::nullopt;
  }

  // The value v renumbered for inputs added since it was taken: values are stable apart from that.
  int value_after(int v, size_t inputs_then) const {
    return g_.is_input(v) && v < int(inputs_then) ? v : v + int(g_.inputs.size() - inputs_then);
  }

  bool draw(int level) {
    const unsigned layouts[] = {kRows, kRows, kRows, kHeads, kImage, kImage, kSeq, kIds};
    const unsigned layout = layouts[integers(0, 8)];
    int x = start(layout);
    size_t in0 = g_.inputs.size();
    if (layout == kIds) {
      const OpDef* e = find_op(chance(0.7) ? "embedding" : "embedding_scaled");
      auto r = apply(*e, x);
      if (!r) return false;
      x = *r;
      in0 = g_.inputs.size();
    }
    const int have = int(g_.nodes.size());
    auto chain = [&](int from, int n, bool same) -> std::optional<int> {
      int cur = from;
      for (int i = 0; i < n; ++i) {
        const size_t before = g_.inputs.size();
        auto r = step(cur, same);
        if (!r) return std::nullopt;
        (void)before;
        cur = *r;
      }
      return cur;
    };
    auto join = [&](int a, int b) -> std::optional<int> {
      static const char* kJoins[] = {"add", "add", "mul", "sub", "maximum", "cat_last"};
      for (int tries = 0; tries < 6; ++tries)
        if (auto r = apply(*find_op(kJoins[integers(0, 6)]), a, b)) return r;
      return std::nullopt;
    };
    if (level == 1) {
      g_.structure = "single";
      if (have == 1) {
        g_.outputs = {x};
        return true;
      }
      auto r = chain(x, 1, false);
      if (!r) return false;
      g_.outputs = {*r};
      return true;
    }
    const int total = level == 2 ? int(integers(2, 4)) : int(integers(4, 7));
    const int body = total - have;
    const int64_t kind = integers(0, level == 2 ? 2 : 4);
    if (kind == 0) {
      g_.structure = "chain";
      auto r = chain(x, body, false);
      if (!r) return false;
      g_.outputs = {*r};
    } else if (kind == 1) {
      g_.structure = "residual";
      if (body < 2) return false;
      const int nodes_before = g_.value_count();
      auto r = chain(x, body - 1, true);
      if (!r) return false;
      // x keeps its number unless inputs were added before it (x is an input or a node value).
      int xs = x;
      if (x >= int(in0)) xs = x + int(g_.inputs.size() - in0);
      (void)nodes_before;
      auto j = join(*r, xs);
      if (!j) return false;
      g_.outputs = {*j};
    } else if (kind == 2) {
      g_.structure = "branch";
      if (body < 3) return false;
      const int n1 = (body - 1) / 2, n2 = body - 1 - n1;
      auto a = chain(x, n1, true);
      if (!a) return false;
      size_t in1 = g_.inputs.size();
      int xs = x >= int(in0) ? x + int(in1 - in0) : x;
      auto b = chain(xs, n2, true);
      if (!b) return false;
      const int aa = value_after(*a, in1);
      auto j = join(aa, *b);
      if (!j) return false;
      g_.outputs = {*j};
    } else {
      g_.structure = "multi_output";
      auto r = chain(x, body, false);
      if (!r) return false;
      // A second output: an intermediate (a node value before the last).
      const int first_node = int(g_.inputs.size());
      const int last = g_.value_count() - 1;
      if (last - first_node < 1) return false;
      g_.outputs = {last, int(integers(first_node, last))};
    }
    return true;
  }

  TaskGraph take(int level) {
    g_.level = level;
    return std::move(g_);
  }

 private:
  Rng rng_;
  GeneratorOptions opt_;
  TaskGraph g_;
  std::vector<Shape> prompt_, variant_;
  std::vector<unsigned> layout_;
  int counter_ = 0;
  double ragged_p_ = 0.3;
};

}  // namespace

TaskGraph generate_graph(uint64_t seed, uint64_t index, const GeneratorOptions& options) {
  Builder b(seed, index * 16 + uint64_t(options.attempt_stream), options);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const double u = b.integers(0, 100);
    const int level = u < 25 ? 1 : u < 65 ? 2 : 3;
    const int64_t d = b.integers(0, 10);
    b.begin(d < 6 ? "float32" : d < 8 ? "bfloat16" : "float16");
    if (b.draw(level)) {
      TaskGraph g = b.take(level);
      // Level by structure: joins and several outputs are level 3 whatever the op count.
      if (g.structure == "multi_output" || (g.structure == "branch")) g.level = 3;
      if (g.nodes.size() == 1) g.level = 1;
      return g;
    }
  }
  throw std::runtime_error(fmt::format("corpus: no task graph drawn for seed {} index {}", seed, index));
}

}  // namespace nki_agent::corpus
