// Task graph helpers (corpus/graph.h).
#include "corpus/graph.h"

#include <stdexcept>

namespace nki_agent::corpus {

const char* layout_name(unsigned layout) {
  switch (layout) {
    case kRows: return "rows";
    case kImage: return "image";
    case kSeq: return "seq";
    case kHeads: return "heads";
    case kIds: return "ids";
  }
  return "?";
}

const std::string& param(const GraphNode& n, const std::string& name) {
  for (const auto& [k, v] : n.params)
    if (k == name) return v;
  throw std::out_of_range("corpus: node " + n.op + " has no parameter " + name);
}

int64_t param_int(const GraphNode& n, const std::string& name) {
  return std::stoll(param(n, name));
}

Shape input_shape(const TaskGraph& g, const GraphInput& in, bool variant) {
  Shape s;
  for (const Dim& d : in.dims)
    s.push_back(d.sym < 0 ? d.fixed : (variant ? g.syms[d.sym].variant : g.syms[d.sym].prompt));
  return s;
}

}  // namespace nki_agent::corpus
