// corpus/shapes.h — an op's output shape from its operands' (the vocabulary's shape rules), and
// every value's shape of a task graph at the prompt's or the variant's dimensions.
#pragma once

#include <optional>
#include <vector>

#include "corpus/graph.h"
#include "corpus/vocabulary.h"

namespace nki_agent::corpus {

// The output shape of `node` (an `op` entry) on operands of shapes `in`; nullopt when the rule
// does not apply to them (a rank, a divisibility, a window larger than the input).
std::optional<Shape> out_shape(const OpDef& op, const GraphNode& node, const std::vector<Shape>& in);

// Every value's shape, inputs first; nullopt when some node does not apply (a generator bug or a
// variant too small for a window).
std::optional<std::vector<Shape>> value_shapes(const TaskGraph& g, bool variant);

}  // namespace nki_agent::corpus
