// agent/docs_db.h — the documentation the agent's `lookup` tool searches.
//
// Three kinds of entries, all in our own words:
//   "api"    one per public name of the nl (neuronxcc.nki.language / nki.language) and nisa
//            (neuronxcc.nki.isa / nki.isa) modules that nki-agent's simulator implements: signature,
//            what it does, shapes / memories / limits, an example, how the current dialect differs.
//            Source: data/docs/api.toml, compiled in (agent/embedded_text.h).
//   "error"  one per code of the error table (nki/error_catalogue.h), built from it at run time, so
//            a new code is documented the moment it is added there.
//   "guide"  a topic (tiling, matmul, PSUM accumulation, softmax, reductions, masks, rank mapping,
//            dialects, dtypes, loops, performance, memory, what is not simulated): data/docs/guides.toml.
//
// Search: an exact key or alias ("nl.matmul", "nki.language.matmul", "nisa.nc_matmul", "matmul",
// "err_unsupported_memory") ranks first; otherwise the query is tokenized and entries are scored by
// where its terms occur (key and aliases weigh most, then the title, then the body), weighted by
// how rare each term is. Queries are untrusted model output: any bytes, any length; only the first
// kMaxQueryBytes are read.
//
// The database holds no mutable state after construction and does no I/O.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

struct DocEntry {
  std::string key;                   // "nl.load", "nisa.nc_matmul", "err_unsupported_memory", "guide.tiling"
  std::string kind;                  // "api", "error" or "guide"
  std::string title;                 // one line
  std::string body;                  // Markdown
  std::vector<std::string> aliases;  // other exact names: "nki.language.load", "load", ...
};

struct DocHit {
  const DocEntry* entry = nullptr;
  double score = 0;
};

// The longest query prefix that lookup() reads; the rest is ignored.
inline constexpr size_t kMaxQueryBytes = 4096;

class DocDatabase {
 public:
  // Built once from the compiled-in data and the error table. Broken compiled-in data is a bug of
  // nki-agent (InternalError); tests/unit/test_agent_docs.cpp keeps it sound.
  static const DocDatabase& builtin();

  // A database from the given api and guide TOML texts (the structure is described at the top of
  // data/docs/api.toml and data/docs/guides.toml), plus the error table when with_errors.
  // Code: nkia_docs_data (the message names the entry and field).
  static Result<DocDatabase> build(std::string_view api_toml, std::string_view guides_toml, bool with_errors);

  // The best top_k entries for `query`, best first; empty for an empty (or all-separator) query or
  // top_k <= 0. Exact key / alias matches come first.
  std::vector<DocHit> lookup(std::string_view query, int top_k = 3) const;

  // The entry whose key (or, failing that, alias) is `key`, ignoring case; nullptr when none.
  const DocEntry* find(std::string_view key) const;

  size_t size() const { return entries_.size(); }
  const std::vector<DocEntry>& entries() const { return entries_; }

 private:
  struct Index {
    std::vector<std::string> names;        // key and aliases, normalised for exact matching
    std::map<std::string, double> weight;  // term -> field weight (key/alias, title, body)
  };

  DocDatabase() = default;
  Result<void> add(DocEntry e);
  void finish();  // builds the indexes once every entry is in

  std::vector<DocEntry> entries_;
  std::vector<Index> index_;             // parallel to entries_
  std::map<std::string, double> idf_;    // term -> inverse document frequency
  std::map<std::string, size_t> names_;  // normalised key / alias -> first entry index
};

// One entry as Markdown ("## key — title", the body), at most max_chars bytes: a longer text is
// cut at a line (or UTF-8 character) boundary and ends with "[truncated]".
std::string render_doc(const DocEntry& e, size_t max_chars);

}  // namespace nki_agent
