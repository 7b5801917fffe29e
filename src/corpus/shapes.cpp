// Shape rules of the vocabulary (corpus/shapes.h).
#include "corpus/shapes.h"

#include <stdexcept>

namespace nki_agent::corpus {

namespace {

// floor((n + 2p - d (k - 1) - 1) / s) + 1, or 0 when the window does not fit.
int64_t window_out(int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t span = n + 2 * p - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

int64_t get(const GraphNode& n, const char* name, int64_t dflt) {
  for (const auto& [k, v] : n.params)
    if (k == name) return std::stoll(v);
  return dflt;
}

}  // namespace

std::optional<Shape> out_shape(const OpDef& op, const GraphNode& node, const std::vector<Shape>& in) {
  if (in.empty()) return std::nullopt;
  Shape x = in[0];
  const size_t r = x.size();
  auto need = [&](size_t n) { return in.size() >= n; };
  switch (op.rule) {
    case Rule::kUnary:
    case Rule::kLayerNorm:
    case Rule::kRmsNorm:
      if ((op.layouts & ~unsigned{kRows | kHeads | kSeq}) == 0 && r < 1) return std::nullopt;
      if ((op.name == "tril" || op.name == "triu" || op.name == "causal_mask_fill") && r < 2) return std::nullopt;
      if (op.rule != Rule::kUnary && r < 2) return std::nullopt;
      return x;
    case Rule::kBinary:
      if (!need(2) || in[1] != x) return std::nullopt;
      return x;
    case Rule::kCatLast:
      if (!need(2) || in[1] != x) return std::nullopt;
      x.back() *= 2;
      return x;
    case Rule::kReduce:
      if (r < 2) return std::nullopt;
      if (param(node, "keepdim") == "True")
        x.back() = 1;
      else
        x.pop_back();
      return x;
    case Rule::kLinear:
      if (r < 2) return std::nullopt;
      x.back() = get(node, "out_features", 0);
      return x;
    case Rule::kMatmulIn: {
      if (!need(2) || r < 2 || in[1].size() != r || in[1][r - 2] != x[r - 1]) return std::nullopt;
      for (size_t i = 0; i + 2 < r; ++i)
        if (in[1][i] != x[i]) return std::nullopt;
      x.back() = in[1].back();
      return x;
    }
    case Rule::kAttention:
      if (!need(3) || in[1] != x || in[2] != x || r != 4) return std::nullopt;
      return x;
    case Rule::kScores:
      if (!need(2) || in[1] != x || r != 4) return std::nullopt;
      x.back() = x[r - 2];
      return x;
    case Rule::kConv2d:
    case Rule::kConv1d: {
      const size_t want = op.rule == Rule::kConv2d ? 4 : 3;
      if (r != want || x[1] != get(node, "in_channels", -1)) return std::nullopt;
      const int64_t k = get(node, "kernel", 1), s = get(node, "stride", 1), p = get(node, "padding", 0),
                    d = get(node, "dilation", 1);
      x[1] = get(node, "out_channels", 0);
      for (size_t i = 2; i < r; ++i) {
        x[i] = window_out(x[i], k, s, p, d);
        if (x[i] < 1) return std::nullopt;
      }
      return x;
    }
    case Rule::kPool2d:
    case Rule::kPool1d: {
      const size_t want = op.rule == Rule::kPool2d ? 4 : 3;
      if (r != want) return std::nullopt;
      const int64_t k = get(node, "kernel", 2), s = get(node, "stride", 2), p = get(node, "padding", 0);
      for (size_t i = 2; i < r; ++i) {
        x[i] = window_out(x[i], k, s, p, 1);
        if (x[i] < 1) return std::nullopt;
      }
      return x;
    }
    case Rule::kGlobalPool2d: {
      if (r != 4) return std::nullopt;
      const int64_t o = get(node, "out", 1);
      if (x[2] < o || x[3] < o) return std::nullopt;
      x[2] = x[3] = o;
      return x;
    }
    case Rule::kBatchNorm:
    case Rule::kInstanceNorm:
      if (r < 3 || shape_numel(Shape(x.begin() + 2, x.end())) < 2) return std::nullopt;
      return x;
    case Rule::kGroupNorm:
      if (r < 3 || x[1] % get(node, "groups", 1) != 0) return std::nullopt;
      return x;
    case Rule::kTransposeLast:
      if (r < 2) return std::nullopt;
      std::swap(x[r - 1], x[r - 2]);
      return x;
    case Rule::kPadLast: x.back() += get(node, "left", 0) + get(node, "right", 0); return x;
    case Rule::kNarrowLast: {
      const int64_t len = get(node, "length", 0);
      if (len < 1 || len >= x.back()) return std::nullopt;
      x.back() = len;
      return x;
    }
    case Rule::kIndexSelect:
      if (!need(2) || in[1].size() != 1) return std::nullopt;
      x.back() = in[1][0];
      return x;
    case Rule::kEmbedding:
      if (r != 2) return std::nullopt;
      x.push_back(get(node, "embedding_dim", 0));
      return x;
    case Rule::kPixelShuffle: {
      const int64_t f = get(node, "r", 2);
      if (r != 4 || x[1] % (f * f) != 0) return std::nullopt;
      x[1] /= f * f;
      x[2] *= f;
      x[3] *= f;
      return x;
    }
    case Rule::kChannelShuffle:
      if (r != 4 || x[1] % get(node, "groups", 1) != 0) return std::nullopt;
      return x;
    case Rule::kRotateHalf:
      if (x.back() % 2 != 0) return std::nullopt;
      return x;
    case Rule::kRepeatLast: x.back() *= get(node, "times", 2); return x;
  }
  return std::nullopt;
}

std::optional<std::vector<Shape>> value_shapes(const TaskGraph& g, bool variant) {
  std::vector<Shape> shapes;
  for (const GraphInput& in : g.inputs) shapes.push_back(input_shape(g, in, variant));
  for (const GraphNode& n : g.nodes) {
    const OpDef* op = find_op(n.op);
    if (!op) return std::nullopt;
    std::vector<Shape> in;
    for (int v : n.inputs) in.push_back(shapes.at(v));
    auto s = out_shape(*op, n, in);
    if (!s) return std::nullopt;
    shapes.push_back(*s);
  }
  return shapes;
}

}  // namespace nki_agent::corpus
