// runtime/kernel_call.h — a kernel call and its outcome, and their wire form between the host and
// a sandboxed worker.
//
// The wire form is one byte string: an 8-byte little-endian length, a JSON header of that length,
// then the arrays as .npy images (bf16/fp8 as tagged raw bits, so types survive exactly) at the
// offsets the header gives. A call's large inputs may instead live in sealed shared memory sent
// with the request (share_large_inputs): their entries say which buffer and where. Decoding validates everything —
// lengths, offsets, JSON types — since a compromised worker's reply must not be able to hurt the host.
//
// An outcome's trace travels as one more binary section, compact: the header holds its record
// count, its dropped count and a table of the strings it uses (opcodes, tensor names, files); the
// section holds the records as bytes and LEB128 varints (signed ones zigzag-coded), each string as
// its index in the table:
//   record:  engine u8, opcode, file, line, col, elements, operand count, operands...
//   operand: tensor, tensor id, buffer u8, dtype u8, is_write u8, ndim, shape[ndim], strides[ndim], offset,
//            partitions, start_partition, bytes
// An outcome's warnings travel in the header as "warnings": an array of Diagnostic JSON objects, at
// most kMaxWarnings, each with a code and severity warning or note.
// Decoding rejects unknown enums, indices outside the table, negative sizes, more than
// kMaxTraceRecords records, counts that disagree with the bytes, and trailing bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "nki/trace.h"
#include "runtime/reply.h"
#include "runtime/shared_memory.h"
#include "tensor/tensor.h"
#include "tensor/tensor_spec.h"

namespace nki_agent {

// A kernel's Python sources: paths relative to a root folder, '/'-separated.
struct KernelFiles {
  std::string root;                          // the folder they came from, to turn relative paths back into real ones
  std::string main_path;                     // the file that holds the entry, relative to root
  std::map<std::string, std::string> files;  // relative path -> source
  // Files that do not live under root (a library added by add_kernel_library): relative path ->
  // the folder the path is relative to instead of root.
  std::map<std::string, std::string> roots;

  // Where the file a Diagnostic or a trace record names as `rel` really is.
  std::string real_path(const std::string& rel) const;
};

// Limits on what load_kernel_files() reads: a kernel with its helpers is a few files, not a tree.
inline constexpr int kMaxKernelFiles = 256;
inline constexpr int64_t kMaxKernelSourceBytes = 8 << 20;

// Reads `path` and the .py files that it may import: those in its folder, and, when that folder is
// inside a package (has __init__.py), the whole tree from the outermost package's parent down.
// Sources are read as Python reads them (runtime/python_source.h: UTF-8, or decoded from a PEP 263
// declaration). The kernel's own file must be readable; a helper that is not becomes a module that
// raises, on import only, the SyntaxError Python would raise with the same code and location;
// files whose names are not UTF-8 cannot be imported and are left out.
// Codes: nkia_kernel_not_found, nkia_kernel_unreadable, nkia_kernel_too_large, nkia_not_utf8 (the
// kernel's bytes or its path), nkia_source_encoding.
Result<KernelFiles> load_kernel_files(const std::string& path);
// Adds the Python packages of `lib_dir` (its subfolders with an __init__.py, recursively) to `kf`,
// importable by their names (`lib_dir/ops/conv.py` is `ops.conv`). A path `kf` already holds keeps
// its own file. The same limits and codes as load_kernel_files, counted over all files.
Result<void> add_kernel_library(KernelFiles& kf, const std::string& lib_dir);
// The sources of a kernel's files in path order (not a hash: compare them, or hash them): two
// kernels with the same digest run alike.
std::string kernel_files_digest(const KernelFiles& f);
// A single in-memory file (tests, the agent's candidate kernels).
KernelFiles kernel_files_from_source(std::string source, std::string name = "kernel.py");

struct KernelCall {
  KernelFiles src;
  std::string entry;
  std::vector<Tensor> inputs;  // the tensor arguments, in order
  // Optional names of the inputs (empty, or one per input). When every name is a parameter of the
  // entry function the inputs bind by name, else by position.
  std::vector<std::string> input_names;
  std::map<std::string, std::string> kwargs;  // Python literals ("128", "True", "'x'", "(1, 2)")
  std::vector<int64_t> grid;                  // an SPMD launch grid; empty: a plain call
  std::string target;                         // "trn1" or "trn2"; empty: trn1
  // false: timing-only — every instruction runs its checks and is traced, but nothing is
  // computed; outputs come back as the poison fresh memory holds (nki/isa.h).
  bool compute = true;
  bool collect_trace = true;  // false: the outcome's trace stays empty
  // true: no lazy state — fresh memory poisoned at once, DMA copies carried out at once
  // (ExecContext::eager_state); the results are the same.
  bool eager_state = false;
  // Inputs the worker makes as zeros of these types and shapes, after `inputs` (input_names, when
  // given, name both, in that order): a timing-only check reads no values, so no data travels.
  std::vector<TensorSpec> zero_inputs;
  // false: the outcome's outputs stay empty; output_specs still describe them. A timing-only run's
  // outputs hold poison (NaN, or kPoisonInt for integers): it computed no values.
  bool want_outputs = true;
  // true: the entry runs as a kernel launch even when it is a plain function — a candidate under
  // verification has no host side. Whenever the entry is a kernel, no NumPy array of the inputs
  // exists in the run and Python can read no values (nkia_trace_time_value_read).
  bool kernel_only = false;
  // How many argument sets `inputs` holds, one after another, each inputs.size() / runs tensors
  // (input_names, when given, names one set): each set runs as its own call, one after another in
  // one process (KernelService::run_each). More than one run takes no zero_inputs.
  int runs = 1;
};

// Most runs one call may hold.
inline constexpr int kMaxRunsPerCall = 64;
// The call of run `i` of a call with several runs: the same kernel and options, the i-th set of inputs.
KernelCall call_of_run(const KernelCall& call, int i);

// Makes `call` a timing-only run on zeros of `shapes` (named after them, after its other inputs):
// every instruction checked and traced, nothing computed, no outputs back (their specs do).
void make_timing_only(KernelCall& call, std::vector<TensorSpec> shapes);

// Which elements of one output the kernel never stored to (NkiTensor::stored_mask), known for the
// HBM tensors a kernel entry returns: what tells an output's unwritten elements from stored garbage.
struct OutputStores {
  bool known = false;  // false: an array a host function returned, or a view
  // Runs of never-stored elements: (first flat index, row-major; length). Empty: all stored.
  std::vector<std::pair<int64_t, int64_t>> unstored;
  bool truncated = false;  // more runs than kMaxUnstoredRuns: those past the last are not listed
  // Whether flat element i was never stored to (false when not known).
  bool unstored_at(int64_t i) const;
};
inline constexpr size_t kMaxUnstoredRuns = 65536;

struct KernelOutcome {
  std::vector<Tensor> outputs;  // in return order (a tuple's elements, or the one tensor)
  std::string printed;          // what the kernel printed (capped)
  Trace trace;                  // every instruction the run executed, in order (at most kMaxTraceRecords)
  // Every output's dtype and shape (named out0, out1, ...), whether its data came back or not.
  std::vector<TensorSpec> output_specs;
  // What the run found that did not stop it (severity warning; at most kMaxWarnings, each distinct
  // code and line once, its message saying how often it was raised), in the order first raised.
  std::vector<Diagnostic> warnings;
  std::vector<OutputStores> output_stores;  // one per output spec (or none)
};

// Most zero inputs and output specs a message may hold.
inline constexpr size_t kMaxTensorSpecs = 4096;
// Most strings a trace's table, and most operands one record, may hold on the wire.
inline constexpr size_t kMaxTraceStrings = 1'000'000;
inline constexpr uint64_t kMaxTraceOperands = 64;
inline constexpr uint64_t kMaxTraceRank = 64;

// Inputs at least this large cross into the worker as shared memory, not through the socket.
inline constexpr int64_t kShareInputBytes = 1 << 20;
// Most shared buffers one call's inputs may live in (protocol.h's kMaxAttachments bounds a request).
inline constexpr size_t kMaxAttachmentsPerCall = 32;

// Readies `call`'s inputs to cross without copies: those already in sealed shared memory stay
// where they are; the others of at least `min_bytes` are copied, once, into one new sealed buffer, and
// the call's tensors replaced by views of it. Returns the buffers to send with the call (at most
// kMaxAttachmentsPerCall). kSharedMemoryError when the system refuses the memory.
Result<Attachments> share_large_inputs(KernelCall& call, int64_t min_bytes = kShareInputBytes);
// An input whose storage lies in one of `shared` travels as a reference into it; the others as
// .npy images in the bytes. decode_call resolves the references against the buffers received.
std::string encode_call(const KernelCall& call, const Attachments& shared = {});
Result<KernelCall> decode_call(std::string_view bytes, const Attachments& shared = {});
// A worker's reply: the outcome, or the Diagnostic that ended the run. encode_outcome_reply gives
// the same bytes as a Reply whose contiguous outputs are spans of their storage, not copies.
std::string encode_outcome(const Result<KernelOutcome>& outcome);
Reply encode_outcome_reply(const Result<KernelOutcome>& outcome);
// With `memory` (which holds `bytes`), large outputs are tensors that view it instead of copies.
Result<KernelOutcome> decode_outcome(std::string_view bytes, const std::shared_ptr<ExternalMemory>& memory = nullptr);
// The reply of a call with several runs: each run's encode_outcome_reply, appended as it ends, after
// an 8-byte little-endian length. A kernel's failure ends the call: the runs after it have no outcome.
void append_run_outcome(Reply& reply, const Result<KernelOutcome>& outcome);
// The outcomes of at most `runs` runs, in order; a malformed reply (lengths beyond the bytes, more
// outcomes than runs, an outcome after a failure) is the call's error.
Result<std::vector<Result<KernelOutcome>>> decode_run_outcomes(std::string_view bytes, int runs,
                                                               const std::shared_ptr<ExternalMemory>& memory = nullptr);

}  // namespace nki_agent
