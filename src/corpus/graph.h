// corpus/graph.h — a generated task as an op graph: its inputs, its nodes (one vocabulary op
// each, every parameter explicit), its outputs, and the symbolic dimensions its variants change.
//
// Values are numbered: the inputs first (0 .. inputs.size() - 1), then one per node in order. A
// node reads earlier values only, so the node list is a topological order. Shapes are concrete
// for the prompt's dimensions; corpus/shapes.h recomputes them for a variant's.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace nki_agent::corpus {

// The layout a value is read in, which decides the ops that apply to it.
enum Layout : unsigned {
  kRows = 1,   // [M, D] or [B, S, D]: the last dimension is the feature one
  kImage = 2,  // [N, C, H, W]
  kSeq = 4,    // [N, C, L]
  kHeads = 8,  // [B, H, S, D]
  kIds = 16,   // integer token ids [B, S]
};
const char* layout_name(unsigned layout);

// A dimension of an input: fixed, or one of the task's symbols (a batch, a length, a spatial size).
struct Dim {
  int sym = -1;       // index into TaskGraph::syms; -1: fixed
  int64_t fixed = 0;  // the size when fixed
};

struct Symbol {
  std::string name;     // "B", "S", "H", ...
  int64_t prompt = 0;   // the prompt's size
  int64_t variant = 0;  // the "ragged" variant's size
};

struct GraphInput {
  std::string name;  // x, y, ids, idx, ...
  std::vector<Dim> dims;
  std::string dtype;  // torch dtype name: float32, bfloat16, float16, int64
  unsigned layout = kRows;
  int64_t low = 0, high = 0;  // randint range of an integer input
};

using Params = std::vector<std::pair<std::string, std::string>>;  // name -> Python literal, in order

struct GraphNode {
  std::string op;           // vocabulary name
  std::vector<int> inputs;  // value ids
  Params params;            // every parameter, explicit
  std::string module;       // the attribute of its learned weights ("fc0"); empty: none
  unsigned layout = kRows;  // of its output
};

struct TaskGraph {
  std::vector<Symbol> syms;
  std::vector<GraphInput> inputs;
  std::vector<GraphNode> nodes;
  std::vector<int> outputs;  // value ids, in return order
  std::string dtype;         // the task's float dtype
  std::string structure;     // single, chain, residual, branch, multi_output
  int level = 1;

  int value_count() const { return static_cast<int>(inputs.size() + nodes.size()); }
  bool is_input(int v) const { return v < static_cast<int>(inputs.size()); }
  const GraphNode& node_of(int v) const { return nodes[v - inputs.size()]; }
};

// A parameter's value; throws std::out_of_range for a name the node lacks (a generator bug).
const std::string& param(const GraphNode& n, const std::string& name);
int64_t param_int(const GraphNode& n, const std::string& name);

// The input's shape at the prompt's dimensions (variant = false) or the ragged variant's.
Shape input_shape(const TaskGraph& g, const GraphInput& in, bool variant);

}  // namespace nki_agent::corpus
