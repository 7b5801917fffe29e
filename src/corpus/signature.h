// corpus/signature.h — what makes two tasks the same: the canonical op graph (each output as a
// term over the vocabulary's op names, operands of commutative ops sorted, inputs anonymous) and
// the shape class (per input: its rank, each dimension aligned to 128 or ragged, its dtype).
//
// Dedup inside the corpus keys on both; decontamination against NKIBench keys on the op graph
// alone (corpus/decontam.h), so a corpus task never repeats a benchmark task's computation at any
// shape.
#pragma once

#include <string>

#include "corpus/graph.h"

namespace nki_agent::corpus {

// "add(in,relu(linear(in)))"; several outputs joined by ";" in sorted order.
std::string canonical_op_graph(const TaskGraph& g);
// "f32:r3[a,a,a]|i64:r1[r]".
std::string shape_class(const TaskGraph& g);
// The dedup key: both, hashed (sha256 hex, 16 characters).
std::string dedup_key(const TaskGraph& g);

}  // namespace nki_agent::corpus
