// agent/docs_db.cpp — the lookup database: loading the compiled-in TOML, the error table, and
// scoring queries against them.
#include "agent/docs_db.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "agent/embedded_text.h"
#include "core/text.h"
#include "nki/error_catalogue.h"

namespace nki_agent {

namespace {

// Field weights of a term: where it occurs in an entry.
constexpr double kKeyWeight = 6.0;    // the key or an alias
constexpr double kTitleWeight = 3.0;  // the title
constexpr double kBodyWeight = 0.5;   // per body occurrence, at most kBodyCap of them
constexpr int kBodyCap = 4;
constexpr double kExactKey = 1000.0;    // the whole query is the entry's key
constexpr double kExactAlias = 900.0;   // ... or one of its aliases
constexpr double kNamedInQuery = 12.0;  // one query word is the entry's key or alias ("nl.load mask")
constexpr size_t kMaxQueryTerms = 32;

const std::set<std::string, std::less<>>& stopwords() {
  static const std::set<std::string, std::less<>> kWords = {
      "a",    "an",  "and", "are", "as",   "at",   "be",  "by",   "can",  "do",   "does", "for",
      "from", "how", "i",   "if",  "in",   "into", "is",  "it",   "its",  "me",   "my",   "not",
      "of",   "on",  "or",  "the", "this", "to",   "use", "what", "when", "with", "why",  "you"};
  return kWords;
}

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// A light suffix stripper so that "reductions" meets "reduction" and "accumulate" meets
// "accumulation". Applied alike to documents and queries; identifiers are not stemmed.
std::string stem_once(std::string w) {
  static const char* const kSuffixes[] = {"ations", "ation", "ions", "ion", "ing", "ate", "ed", "s"};
  for (const char* suf : kSuffixes) {
    std::string_view s(suf);
    if (w.size() >= s.size() + 3 && w.compare(w.size() - s.size(), s.size(), s) == 0) {
      if (s == "s" && w[w.size() - 2] == 's') return w;  // "class", "pass"
      w.resize(w.size() - s.size());
      return w;
    }
  }
  return w;
}

// Stripped to a fixed point, so that "exceeds" and "exceed" meet (both "exce").
std::string stem(std::string w) {
  for (int i = 0; i < 3; ++i) {
    std::string next = stem_once(w);
    if (next == w) break;
    w = std::move(next);
  }
  return w;
}

// The terms of a text: lower-case words of [a-z0-9_.]; an identifier ("nl.load", "nc_matmul")
// also yields its dotted and underscored parts, stemmed plain words, no stopwords.
void add_terms(std::string_view text, std::vector<std::string>& out, size_t max_terms = SIZE_MAX) {
  size_t i = 0;
  while (i < text.size() && out.size() < max_terms) {
    while (i < text.size() && !word_char(to_lower(text[i]))) ++i;
    size_t b = i;
    while (i < text.size() && word_char(to_lower(text[i]))) ++i;
    std::string w = to_lower(text.substr(b, i - b));
    while (!w.empty() && (w.back() == '.' || w.back() == '_')) w.pop_back();
    while (!w.empty() && (w.front() == '.' || w.front() == '_')) w.erase(w.begin());
    if (w.empty()) continue;
    bool ident = w.find_first_of("._") != std::string::npos;
    if (!ident) {
      if (w.size() >= 2 && !stopwords().count(w)) out.push_back(stem(w));
      continue;
    }
    out.push_back(w);
    size_t p = 0;
    while (p <= w.size()) {
      size_t q = w.find_first_of("._", p);
      if (q == std::string::npos) q = w.size();
      std::string part = w.substr(p, q - p);
      if (part.size() >= 2 && !stopwords().count(part)) out.push_back(stem(part));
      p = q + 1;
    }
  }
}

// The form exact matching compares: lower case, trimmed, without quotes / backticks around it, a
// trailing call "(...)" or "()" and a leading "import ".
std::string normalise_name(std::string_view q) {
  std::string s = to_lower(q);
  auto trim = [&] {
    size_t b = s.find_first_not_of(" \t\r\n`'\"");
    size_t e = s.find_last_not_of(" \t\r\n`'\"");
    s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  trim();
  if (s.size() > 1 && s.back() == ')') {
    size_t open = s.find('(');
    if (open != std::string::npos && open > 0) s.resize(open);
  }
  trim();
  return s;
}

// ---- the TOML data -------------------------------------------------------------------------------

Diagnostic data_error(std::string what) {
  return Diagnostic::error("nkia_docs_data", std::move(what));
}

struct FieldReader {
  const toml::table& t;
  std::string where;  // "api[3] (nl.load)"

  Result<std::string> str(std::string_view key, bool required) const {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) return fail(data_error(fmt::format("{}: missing field '{}'", where, key)));
      return std::string();
    }
    auto v = n->value<std::string>();
    if (!v) return fail(data_error(fmt::format("{}: field '{}' must be a string", where, key)));
    return *v;
  }

  Result<void> only(std::initializer_list<std::string_view> allowed) const {
    for (const auto& [k, v] : t) {
      (void)v;
      if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
        return fail(data_error(fmt::format("{}: unknown field '{}'", where, k.str())));
    }
    return {};
  }

  Result<std::vector<std::string>> strings(std::string_view key) const {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) return fail(data_error(fmt::format("{}: field '{}' must be an array of strings", where, key)));
    for (const auto& e : *a) {
      auto v = e.value<std::string>();
      if (!v) return fail(data_error(fmt::format("{}: field '{}' must be an array of strings", where, key)));
      out.push_back(*v);
    }
    return out;
  }
};

std::string strip_newlines(std::string s) {
  size_t b = s.find_first_not_of('\n');
  size_t e = s.find_last_not_of('\n');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The aliases every api entry gets: the module's full names and the bare name.
std::vector<std::string> module_aliases(const std::string& name) {
  std::vector<std::string> out;
  size_t dot = name.find('.');
  std::string prefix = name.substr(0, dot), fn = name.substr(dot + 1);
  if (prefix == "nl") {
    out = {"nki.language." + fn, "neuronxcc.nki.language." + fn, "language." + fn};
  } else {
    out = {"nki.isa." + fn, "neuronxcc.nki.isa." + fn, "isa." + fn};
  }
  out.push_back(fn);
  return out;
}

struct StringField {
  std::string* out;
  const char* key;
  bool required;
};

Result<void> read_fields(const FieldReader& r, std::initializer_list<StringField> fields) {
  for (const StringField& f : fields) {
    auto v = r.str(f.key, f.required);
    if (!v) return fail(v.error());
    *f.out = *v;
  }
  return {};
}

struct ApiFields {
  std::string name, title, signature, current_signature, body, example, current;
  std::vector<std::string> aliases;
};

Result<DocEntry> api_entry(const ApiFields& f, const std::string& where) {
  if (f.name.rfind("nl.", 0) != 0 && f.name.rfind("nisa.", 0) != 0)
    return fail(data_error(fmt::format("{}: name '{}' must start with nl. or nisa.", where, f.name)));
  DocEntry e;
  e.key = f.name;
  e.kind = "api";
  e.title = f.title;
  e.aliases = module_aliases(f.name);
  e.aliases.insert(e.aliases.end(), f.aliases.begin(), f.aliases.end());
  std::string body;
  if (f.current_signature.empty()) {
    body = fmt::format("`{}`\n\n", f.signature);
  } else {
    body = fmt::format("Legacy: `{}`\nCurrent: `{}`\n\n", f.signature, f.current_signature);
  }
  body += strip_newlines(f.body) + "\n";
  if (!f.example.empty()) body += "\nExample:\n```python\n" + strip_newlines(f.example) + "\n```\n";
  if (!f.current.empty()) body += "\n" + strip_newlines(f.current) + "\n";
  e.body = std::move(body);
  for (const std::string* s : {&e.title, &e.body})
    if (s->find('{') != std::string::npos && s->find('}') != std::string::npos &&
        (s->find("{name}") != std::string::npos || s->find("{fn}") != std::string::npos ||
         s->find("{what}") != std::string::npos))
      return fail(data_error(fmt::format("{}: unreplaced placeholder in '{}'", where, f.name)));
  return e;
}

Result<std::vector<DocEntry>> parse_api(std::string_view text) {
  toml::table root;
  try {
    root = toml::parse(text, std::string_view("data/docs/api.toml"));
  } catch (const toml::parse_error& err) {
    return fail(data_error(fmt::format("data/docs/api.toml: {}", err.description())));
  }
  FieldReader top{root, "data/docs/api.toml"};
  if (auto ok = top.only({"api", "api_group"}); !ok) return fail(ok.error());
  std::vector<DocEntry> out;
  if (const toml::array* apis = root["api"].as_array()) {
    for (size_t i = 0; i < apis->size(); ++i) {
      const toml::table* t = (*apis)[i].as_table();
      if (!t) return fail(data_error(fmt::format("api[{}] must be a table", i)));
      FieldReader r{*t, fmt::format("api[{}]", i)};
      if (auto ok =
              r.only({"name", "title", "signature", "current_signature", "body", "example", "current", "aliases"});
          !ok)
        return fail(ok.error());
      ApiFields f;
      if (auto ok = read_fields(r, {{&f.name, "name", true},
                                    {&f.title, "title", true},
                                    {&f.signature, "signature", true},
                                    {&f.current_signature, "current_signature", false},
                                    {&f.body, "body", true},
                                    {&f.example, "example", false},
                                    {&f.current, "current", false}});
          !ok)
        return fail(ok.error());
      auto aliases = r.strings("aliases");
      if (!aliases) return fail(aliases.error());
      f.aliases = *aliases;
      auto e = api_entry(f, r.where + " (" + f.name + ")");
      if (!e) return fail(e.error());
      out.push_back(std::move(*e));
    }
  }
  if (const toml::array* groups = root["api_group"].as_array()) {
    for (size_t i = 0; i < groups->size(); ++i) {
      const toml::table* t = (*groups)[i].as_table();
      if (!t) return fail(data_error(fmt::format("api_group[{}] must be a table", i)));
      FieldReader r{*t, fmt::format("api_group[{}]", i)};
      if (auto ok = r.only({"members", "title", "signature", "body", "example", "current"}); !ok)
        return fail(ok.error());
      ApiFields tmpl;
      if (auto ok = read_fields(r, {{&tmpl.title, "title", true},
                                    {&tmpl.signature, "signature", true},
                                    {&tmpl.body, "body", true},
                                    {&tmpl.example, "example", false},
                                    {&tmpl.current, "current", false}});
          !ok)
        return fail(ok.error());
      const toml::array* members = t->get_as<toml::array>("members");
      if (!members || members->empty())
        return fail(data_error(fmt::format("{}: 'members' must be a non-empty array of [name, what]", r.where)));
      for (const auto& m : *members) {
        const toml::array* pair = m.as_array();
        std::optional<std::string> name, what;
        if (pair && pair->size() == 2) {
          name = (*pair)[0].value<std::string>();
          what = (*pair)[1].value<std::string>();
        }
        if (!name || !what) return fail(data_error(fmt::format("{}: each member must be [name, what]", r.where)));
        std::string fn = name->substr(name->find('.') + 1);
        auto fill = [&](const std::string& s) {
          return replace_all(replace_all(replace_all(s, "{name}", *name), "{fn}", fn), "{what}", *what);
        };
        ApiFields f;
        f.name = *name;
        f.title = fill(tmpl.title);
        f.signature = fill(tmpl.signature);
        f.body = fill(tmpl.body);
        f.example = fill(tmpl.example);
        f.current = fill(tmpl.current);
        auto e = api_entry(f, r.where + " (" + *name + ")");
        if (!e) return fail(e.error());
        out.push_back(std::move(*e));
      }
    }
  }
  return out;
}

Result<std::vector<DocEntry>> parse_guides(std::string_view text) {
  toml::table root;
  try {
    root = toml::parse(text, std::string_view("data/docs/guides.toml"));
  } catch (const toml::parse_error& err) {
    return fail(data_error(fmt::format("data/docs/guides.toml: {}", err.description())));
  }
  FieldReader top{root, "data/docs/guides.toml"};
  if (auto ok = top.only({"guide"}); !ok) return fail(ok.error());
  std::vector<DocEntry> out;
  const toml::array* guides = root["guide"].as_array();
  if (!guides) return out;
  for (size_t i = 0; i < guides->size(); ++i) {
    const toml::table* t = (*guides)[i].as_table();
    if (!t) return fail(data_error(fmt::format("guide[{}] must be a table", i)));
    FieldReader r{*t, fmt::format("guide[{}]", i)};
    if (auto ok = r.only({"name", "title", "aliases", "body"}); !ok) return fail(ok.error());
    DocEntry e;
    e.kind = "guide";
    auto name = r.str("name", true);
    auto title = r.str("title", true);
    auto body = r.str("body", true);
    auto aliases = r.strings("aliases");
    if (!name) return fail(name.error());
    if (!title) return fail(title.error());
    if (!body) return fail(body.error());
    if (!aliases) return fail(aliases.error());
    if (name->rfind("guide.", 0) != 0)
      return fail(data_error(fmt::format("{}: name '{}' must start with guide.", r.where, *name)));
    e.key = *name;
    e.title = *title;
    e.body = strip_newlines(*body) + "\n";
    e.aliases = *aliases;
    e.aliases.push_back(name->substr(6));  // "guide.tiling" is also "tiling"
    out.push_back(std::move(e));
  }
  return out;
}

DocEntry error_entry(const ErrorInfo& info) {
  DocEntry e;
  e.key = std::string(info.code);
  e.kind = "error";
  e.title = std::string(info.title);
  std::string_view bare = info.code;
  for (std::string_view prefix : {"err_", "nkia_"})
    if (bare.rfind(prefix, 0) == 0) bare.remove_prefix(prefix.size());
  e.aliases.push_back(std::string(bare));
  std::string origin = info.origin == ErrorOrigin::kCatalogue    ? "a code of the NKI compiler's error catalogue"
                       : info.origin == ErrorOrigin::kConstraint ? "an nki-agent check of a hardware or language rule"
                       : info.origin == ErrorOrigin::kSimulator
                           ? "an nki-agent finding while running the kernel"
                           : fmt::format("nki-agent: {}", error_origin_heading(info.origin));
  std::string body = fmt::format("`{}` ({}, {}): {}\n\n{}\n\n**Fix:** {}\n", info.code, origin,
                                 severity_name(info.severity), info.title, info.meaning, info.hint);
  if (!info.example_bad.empty()) {
    body += fmt::format("\nWrong:\n```python\n{}\n```\n", strip_newlines(std::string(info.example_bad)));
    body += fmt::format("Fixed:\n```python\n{}\n```\n", strip_newlines(std::string(info.example_fix)));
  }
  if (!info.note.empty()) body += fmt::format("\nNote: {}\n", info.note);
  e.body = std::move(body);
  return e;
}

}  // namespace

// ---- the database ----------------------------------------------------------------------------------

Result<void> DocDatabase::add(DocEntry e) {
  std::string key = normalise_name(e.key);
  for (const DocEntry& other : entries_)
    if (normalise_name(other.key) == key) return fail(data_error(fmt::format("duplicate entry '{}'", e.key)));
  entries_.push_back(std::move(e));
  return {};
}

void DocDatabase::finish() {
  index_.clear();
  idf_.clear();
  names_.clear();
  std::map<std::string, size_t> df;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const DocEntry& e = entries_[i];
    Index ix;
    ix.names.push_back(normalise_name(e.key));
    for (const std::string& a : e.aliases) ix.names.push_back(normalise_name(a));
    std::vector<std::string> terms;
    for (const std::string& n : ix.names) add_terms(n, terms);
    for (const std::string& t : terms) ix.weight[t] = std::max(ix.weight[t], kKeyWeight);
    terms.clear();
    add_terms(e.title, terms);
    for (const std::string& t : terms) ix.weight[t] = std::max(ix.weight[t], kTitleWeight);
    terms.clear();
    add_terms(e.body, terms);
    std::map<std::string, int> tf;
    for (const std::string& t : terms) ++tf[t];
    for (const auto& [t, n] : tf) {
      double w = kBodyWeight * std::min(n, kBodyCap);
      double& cur = ix.weight[t];
      cur = cur >= kTitleWeight ? cur + w : std::max(cur, w);
    }
    for (const auto& [t, w] : ix.weight) {
      (void)w;
      ++df[t];
    }
    // The first entry to claim a name keeps it for find(); lookup() sees every entry's names.
    for (const std::string& n : ix.names) names_.emplace(n, i);
    index_.push_back(std::move(ix));
  }
  const double n = static_cast<double>(entries_.size());
  for (const auto& [t, d] : df) idf_[t] = std::log(1.0 + n / static_cast<double>(d));
}

Result<DocDatabase> DocDatabase::build(std::string_view api_toml, std::string_view guides_toml, bool with_errors) {
  DocDatabase db;
  auto api = parse_api(api_toml);
  if (!api) return fail(api.error());
  auto guides = parse_guides(guides_toml);
  if (!guides) return fail(guides.error());
  for (auto* list : {&*api, &*guides})
    for (DocEntry& e : *list)
      if (auto ok = db.add(std::move(e)); !ok) return fail(ok.error());
  if (with_errors)
    for (const ErrorInfo& info : error_catalogue())
      if (error_origin_reaches_kernel(info.origin))
        if (auto ok = db.add(error_entry(info)); !ok) return fail(ok.error());
  db.finish();
  return db;
}

const DocDatabase& DocDatabase::builtin() {
  static const DocDatabase kDb = [] {
    const std::string_view* api = find_embedded_text("data/docs/api.toml");
    const std::string_view* guides = find_embedded_text("data/docs/guides.toml");
    if (!api || !guides) throw InternalError("the lookup documentation (data/docs/*.toml) was not compiled in");
    auto db = build(*api, *guides, true);
    if (!db) throw InternalError("the compiled-in lookup documentation is broken: " + db.error().message);
    return std::move(*db);
  }();
  return kDb;
}

const DocEntry* DocDatabase::find(std::string_view key) const {
  std::string k = normalise_name(key);
  for (const DocEntry& e : entries_)
    if (normalise_name(e.key) == k) return &e;
  auto it = names_.find(k);
  return it == names_.end() ? nullptr : &entries_[it->second];
}

std::vector<DocHit> DocDatabase::lookup(std::string_view query, int top_k) const {
  std::vector<DocHit> hits;
  if (top_k <= 0 || query.empty()) return hits;
  query = query.substr(0, std::min(query.size(), kMaxQueryBytes));
  const std::string whole = normalise_name(query);

  // The query's distinct terms, and its words as written (for "one word names an entry").
  std::vector<std::string> terms;
  add_terms(query, terms, kMaxQueryTerms * 4);
  std::vector<std::string> distinct;
  for (const std::string& t : terms)
    if (std::find(distinct.begin(), distinct.end(), t) == distinct.end() && distinct.size() < kMaxQueryTerms)
      distinct.push_back(t);
  if (whole.empty() && distinct.empty()) return hits;

  for (size_t i = 0; i < entries_.size(); ++i) {
    const Index& ix = index_[i];
    double score = 0;
    if (!whole.empty()) {
      if (ix.names[0] == whole) {
        score = kExactKey;
      } else if (std::find(ix.names.begin() + 1, ix.names.end(), whole) != ix.names.end()) {
        score = kExactAlias;
      }
    }
    if (score == 0) {
      int matched = 0;
      for (const std::string& t : distinct) {
        auto w = ix.weight.find(t);
        if (w == ix.weight.end()) continue;
        ++matched;
        auto idf = idf_.find(t);
        score += w->second * (idf == idf_.end() ? 1.0 : idf->second);
        if (std::find(ix.names.begin(), ix.names.end(), t) != ix.names.end()) score += kNamedInQuery;
      }
      if (matched > 0 && !distinct.empty())
        score *= 0.5 + 0.5 * static_cast<double>(matched) / static_cast<double>(distinct.size());
    }
    if (score > 0) hits.push_back({&entries_[i], score});
  }
  // Best first; ties: api, then guide, then error entries, then by key — a stable, total order.
  auto kind_rank = [](const std::string& k) { return k == "api" ? 0 : k == "guide" ? 1 : 2; };
  std::sort(hits.begin(), hits.end(), [&](const DocHit& a, const DocHit& b) {
    if (a.score != b.score) return a.score > b.score;
    if (kind_rank(a.entry->kind) != kind_rank(b.entry->kind))
      return kind_rank(a.entry->kind) < kind_rank(b.entry->kind);
    return a.entry->key < b.entry->key;
  });
  if (hits.size() > static_cast<size_t>(top_k)) hits.resize(static_cast<size_t>(top_k));
  return hits;
}

std::string render_doc(const DocEntry& e, size_t max_chars) {
  static constexpr std::string_view kMarker = "\n[truncated]";
  std::string text = fmt::format("## {} — {}\n\n{}", e.key, e.title, e.body);
  if (text.size() <= max_chars) return text;
  if (max_chars <= kMarker.size()) return std::string(kMarker.substr(kMarker.size() - max_chars));
  size_t cut = max_chars - kMarker.size();
  size_t nl = text.rfind('\n', cut);
  if (nl != std::string::npos && nl >= cut / 2) {
    cut = nl;
  } else {
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 char
  }
  text.resize(cut);
  text += kMarker;
  return text;
}

}  // namespace nki_agent
