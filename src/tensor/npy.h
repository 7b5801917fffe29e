// tensor/npy.h — reading and writing NumPy .npy files.
//
// Format (numpy/lib/format.py, "NEP 1"): the magic "\x93NUMPY", a major and minor version byte,
// the header length (uint16 little-endian in 1.0, uint32 in 2.0 and 3.0), then the header: a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces
// and ended by '\n' (latin-1 text in 1.0/2.0, utf-8 in 3.0), then the raw element data.
//
// Reading accepts versions 1.0, 2.0 and 3.0, C and Fortran order (a Fortran file loads as an
// ordinary C-order tensor), and the little-endian types
//   <f4 <f2 <i1 <i2 <i4 <u1 <u2 <u4 |b1 |i1 |u1     as the matching DType
//   <f8                                             converted to float32 (RNE; beyond range → ±inf)
//   <i8 <u8                                         converted to int32; a value outside int32 is a
//                                                   Diagnostic, never a silent wrap
// because the simulator has no 64-bit types. Big-endian, structured, object, string, complex and
// datetime arrays are Diagnostics. The header dict is read by a small parser for the Python literal
// subset NumPy writes, never by anything that evaluates code. A hostile file (random bytes, a shape
// that overflows, a header or data length beyond the file) gives a Diagnostic: nothing is
// allocated for the data before its size has been checked against the bytes present.
//
// Writing uses version 1.0 (2.0 only when the header exceeds 65535 bytes), C order, little-endian,
// with the header padded so the data starts at a multiple of 64 bytes; a strided view is written in
// C order. Types NumPy lacks are written, by default (NarrowAs::kRawBits), as their raw bits —
// bfloat16 as <u2, the float8 formats as |u1 — with a tag after the dict, in the header padding,
// that NumPy reads as a Python comment and ignores:
//   {'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), } # nki_agent dtype=bfloat16
// Our reader turns tagged files back into the tagged dtype; NumPy loads the bits as unsigned
// integers (a.view(ml_dtypes.bfloat16) restores the values). tfloat32 is written as <f4 with a
// "dtype=tfloat32" tag. NarrowAs::kFloat32 instead writes every narrow type's values as <f4,
// untagged. A tag naming an unknown dtype, or one whose carrier type disagrees with descr, is a
// Diagnostic.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "tensor/tensor.h"

namespace nki_agent {

enum class NarrowAs : uint8_t {
  kRawBits,  // bf16 → <u2, fp8 → |u1, tf32 → <f4, each tagged with its real dtype
  kFloat32,  // their values as <f4, untagged (loses the dtype, keeps the values exactly)
};

struct NpyOptions {
  NarrowAs narrow_as = NarrowAs::kRawBits;
};

// Loads a .npy file. Diagnostic codes: nkia_npy_not_found, nkia_npy_unreadable and those of
// npy_parse.
Result<Tensor> npy_load(const std::string& path);

// Parses the bytes of a whole .npy file; `name_for_messages` names it in Diagnostics. Codes:
// nkia_npy_bad_magic, nkia_npy_unsupported_version, nkia_npy_truncated_header,
// nkia_npy_bad_header, nkia_npy_bad_shape, nkia_npy_unsupported_dtype, nkia_npy_big_endian,
// nkia_npy_object_array, nkia_npy_bad_tag, nkia_npy_size_mismatch, nkia_npy_value_range.
Result<Tensor> npy_parse(std::span<const uint8_t> bytes, std::string_view name_for_messages);

// npy_parse of the `size` bytes at `offset` in `memory`, without a copy where it can: when the
// elements lie there as a tensor's storage would (its own dtype, C order, 64-byte aligned), the
// tensor views them and keeps `memory` alive; otherwise they are copied, as npy_parse does.
Result<Tensor> npy_view(const std::shared_ptr<ExternalMemory>& memory, int64_t offset, int64_t size,
                        std::string_view name_for_messages);

// Writes `t` (any view) to `path`. Code: nkia_npy_unwritable. Throws std::invalid_argument for an
// undefined tensor, as npy_serialize does.
Result<void> npy_save(const std::string& path, const Tensor& t, NpyOptions opts = {});

// The bytes npy_save writes. Throws std::invalid_argument for an undefined tensor.
std::vector<uint8_t> npy_serialize(const Tensor& t, NpyOptions opts = {});
// How many bytes npy_serialize(t, opts) gives, and those bytes appended to `out` (a message built
// in one buffer, without a copy in between). Both throw std::invalid_argument as npy_serialize does.
size_t npy_serialized_size(const Tensor& t, NpyOptions opts = {});
void npy_serialize_append(const Tensor& t, std::string& out, NpyOptions opts = {});
// The preamble and header npy_serialize_append writes before the elements, when the elements that
// follow are t's own bytes as they lie in memory (a contiguous tensor written in its own dtype), so
// that a writer can take them from t's storage; empty when they are not.
std::string npy_header_before_storage(const Tensor& t, NpyOptions opts = {});

}  // namespace nki_agent
