// Canonical op graphs and shape classes (corpus/signature.h).
#include "corpus/signature.h"

#include <algorithm>
#include <set>

#include "core/hash.h"
#include "corpus/shapes.h"

namespace nki_agent::corpus {

namespace {

bool commutative(const std::string& op) {
  static const std::set<std::string> kOps = {"add", "mul", "maximum", "minimum", "hypot", "logaddexp", "squared_diff"};
  return kOps.count(op) > 0;
}

std::string term(const TaskGraph& g, int v) {
  if (g.is_input(v)) return g.inputs[v].dtype == "int64" ? "idx" : "in";
  const GraphNode& n = g.node_of(v);
  std::vector<std::string> args;
  for (int x : n.inputs) args.push_back(term(g, x));
  if (commutative(n.op)) std::sort(args.begin(), args.end());
  std::string s = n.op + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? "," : "") + args[i];
  return s + ")";
}

}  // namespace

std::string canonical_op_graph(const TaskGraph& g) {
  std::vector<std::string> outs;
  for (int o : g.outputs) outs.push_back(term(g, o));
  std::sort(outs.begin(), outs.end());
  std::string s;
  for (size_t i = 0; i < outs.size(); ++i) s += (i ? ";" : "") + outs[i];
  return s;
}

std::string shape_class(const TaskGraph& g) {
  std::string s;
  for (const GraphInput& in : g.inputs) {
    const Shape sh = input_shape(g, in, false);
    s += (s.empty() ? "" : "|") + in.dtype + ":r" + std::to_string(sh.size()) + "[";
    for (size_t i = 0; i < sh.size(); ++i)
      s += std::string(i ? "," : "") + (sh[i] % 128 == 0 || (sh[i] < 128 && (sh[i] & (sh[i] - 1)) == 0) ? "a" : "r");
    s += "]";
  }
  return s;
}

std::string dedup_key(const TaskGraph& g) {
  return sha256_hex(canonical_op_graph(g) + "#" + shape_class(g)).substr(0, 16);
}

}  // namespace nki_agent::corpus
