// nki/error_table.h — the parts of the error table and the compile-time checks each part passes.
//
// The table (nki/error_catalogue.h) is written in several files, one per group of origins, so that
// no file grows past a readable size: error_table_catalogue.cpp (the NKI compiler's `err_*`
// codes), error_table_constraint.cpp (our kernel constraint and simulator codes),
// error_table_run.cpp (the kernel front end's own codes, how a kernel's Python ran, verify and the
// static policy) and error_table_host.cpp (the sandbox, tasks, the command-line tools and the
// agent). Each part is sorted by code and checked here at compile time; error_catalogue.cpp merges
// them into one sorted table and checks that no code is in two parts.
//
// Only the error_table_*.cpp files and error_catalogue.cpp include this header; everything else
// reads the table through nki/error_catalogue.h. It holds no state and does no I/O.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>

#include "nki/error_catalogue.h"

namespace nki_agent::error_table {

constexpr ErrorOrigin kCatalogue = ErrorOrigin::kCatalogue;
constexpr ErrorOrigin kConstraint = ErrorOrigin::kConstraint;
constexpr ErrorOrigin kSimulator = ErrorOrigin::kSimulator;
constexpr ErrorOrigin kRuntime = ErrorOrigin::kRuntime;
constexpr ErrorOrigin kVerify = ErrorOrigin::kVerify;
constexpr ErrorOrigin kSandbox = ErrorOrigin::kSandbox;
constexpr ErrorOrigin kTask = ErrorOrigin::kTask;
constexpr ErrorOrigin kTool = ErrorOrigin::kTool;
constexpr ErrorOrigin kAgent = ErrorOrigin::kAgent;

// Lets a raw-string snippet start on the line after its opening delimiter.
constexpr std::string_view snippet(std::string_view s) {
  return s.substr(s.starts_with('\n') ? 1 : 0);
}

// `err_` + lower-case name for the catalogue, `nkia_` + lower-case name for every other origin.
constexpr bool well_formed(std::string_view code, ErrorOrigin origin) {
  std::string_view rest;
  if (code.starts_with("err_")) {
    if (origin != kCatalogue) return false;
    rest = code.substr(4);
  } else if (code.starts_with("nkia_")) {
    if (origin == kCatalogue) return false;
    rest = code.substr(5);
  } else {
    return false;
  }
  if (rest.empty() || rest.back() == '_') return false;
  return std::all_of(rest.begin(), rest.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

// One entry is complete: a title, a meaning and a hint always; a spec reference for a kernel code;
// examples only for kernel codes, and both or neither.
constexpr bool entry_ok(const ErrorInfo& e) {
  if (!well_formed(e.code, e.origin)) return false;
  if (e.title.empty() || e.meaning.empty() || e.hint.empty()) return false;
  if (error_origin_is_kernel(e.origin) && e.spec.empty()) return false;
  if (!error_origin_is_kernel(e.origin) && !e.example_bad.empty()) return false;
  return e.example_bad.empty() == e.example_fix.empty();
}

// Every entry complete, codes sorted and unique.
template <size_t N>
constexpr bool part_ok(const ErrorInfo (&part)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (!entry_ok(part[i])) return false;
    if (i > 0 && !(part[i - 1].code < part[i].code)) return false;
  }
  return true;
}

// The parts, each sorted by code.
std::span<const ErrorInfo> catalogue_part();   // error_table_catalogue.cpp
std::span<const ErrorInfo> constraint_part();  // error_table_constraint.cpp
std::span<const ErrorInfo> run_part();         // error_table_run.cpp
std::span<const ErrorInfo> host_part();        // error_table_host.cpp

}  // namespace nki_agent::error_table
