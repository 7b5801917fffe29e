// corpus/vocabulary.h — the operators a generated task may use: one entry per op with its
// NKIBench category, its PyTorch expression, the layouts it applies to (its shape rule), its
// parameters and, where tasks/nkibench/lib/nkibench_ops has the operation, the lib call a baseline
// makes for it.
//
// Templates are filled by corpus/emit.cpp:
//   {x} {y}   the node's first and second operand (a variable, `.float()` added in bf16/fp16 tasks)
//   {m}       the node's module attribute (`self.fc0` in task.py, `fc0` in baseline.py)
//   {P}       `.float()` on a learned weight in a bf16/fp16 task, empty in float32
//   {name}    any parameter of the node (corpus/generator.cpp draws them; `choices` lists some)
// A lib template names the arguments of the baseline's entry (`{m}_weight`) and nl functions.
#pragma once

#include <string_view>
#include <vector>

#include "corpus/graph.h"

namespace nki_agent::corpus {

// How an op's output shape follows from its inputs' (corpus/shapes.cpp) and what it draws.
enum class Rule {
  kUnary,      // same shape
  kBinary,     // two operands of one shape, same shape out
  kReduce,     // over dim -1 (keepdim a parameter): the last dimension dropped or 1
  kLayerNorm,  // nn.LayerNorm over the last dimension
  kRmsNorm,    // a learned scale over the last dimension
  kLinear,     // nn.Linear: the last dimension D -> out_features
  kMatmulIn,   // x [.., M, K] @ a new input [.., K, N]
  kAttention,  // softmax(q k^T * scale) v with k, v new inputs of q's shape
  kScores,     // q k^T * scale with k a new input: [B, H, S, S]
  kConv2d,     // nn.Conv2d, `groups` mode a parameter (dense, depthwise, grouped)
  kConv1d,     // nn.Conv1d
  kPool2d,     // kernel, stride, padding
  kPool1d,
  kGlobalPool2d,    // [N, C, H, W] -> [N, C, out, out]
  kBatchNorm,       // eval-mode BatchNorm over C (2-D or 1-D by layout)
  kGroupNorm,       // nn.GroupNorm(groups, C)
  kInstanceNorm,    // no weights
  kTransposeLast,   // swap the last two dimensions
  kCatLast,         // two operands of one shape, the last dimension doubled
  kPadLast,         // the last dimension + left + right
  kNarrowLast,      // the first `length` of the last dimension
  kIndexSelect,     // a new integer input idx [K] in [0, D): the last dimension becomes K
  kEmbedding,       // ids [B, S] -> [B, S, D] (a task's first op only)
  kPixelShuffle,    // [N, C r^2, H, W] -> [N, C, H r, W r]
  kChannelShuffle,  // same shape, groups divide C
  kRotateHalf,      // same shape, even last dimension
  kRepeatLast,      // the last dimension times `times`
};

struct OpDef {
  std::string_view name;      // the vocabulary name, also the canonical op-graph name
  std::string_view category;  // an NKIBench category
  Rule rule;
  unsigned layouts;             // corpus/graph.h Layout bits it accepts
  std::string_view torch;       // task.py expression
  std::string_view lib;         // baseline.py expression; empty: no lib kernel for it
  std::string_view choices;     // "name=a|b|c;name2=..." : parameters drawn from a list
  bool large_inputs_ok = true;  // false: the x100 "large" input profile overflows it (exp, ...)
  bool contraction = false;     // sums over a long axis: a looser float32 tolerance
};

const std::vector<OpDef>& vocabulary();
// The entry of that name; nullptr when there is none.
const OpDef* find_op(std::string_view name);
// The NKIBench categories the vocabulary covers, in a fixed order.
std::vector<std::string_view> vocabulary_categories();

}  // namespace nki_agent::corpus
