// The lookup tool's documentation database (agent/docs_db.h): every error code is there; every
// public name of our nl / nisa Python modules (both dialects) has an api entry, and every api entry
// names a real public name — the list is read from the module SOURCES at test time, so a new op
// without documentation (or documentation of an op we do not have) fails here; typical queries
// find the right entry first; render_doc keeps its cap; hostile queries return; broken data is a
// Diagnostic.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/docs_db.h"
#include "nki/error_catalogue.h"
#include "nki/opcodes.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

const fs::path kPylib = fs::path(NKIA_SOURCE_DIR) / "src" / "runtime" / "python" / "pylib";

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string strip_comment(const std::string& line) {
  size_t hash = line.find('#');
  return hash == std::string::npos ? line : line.substr(0, hash);
}

// The file of a dotted module under pylib ("_nkia.lang" -> _nkia/lang.py, a package -> __init__.py).
fs::path module_file(const std::string& module) {
  fs::path p = kPylib;
  std::stringstream ss(module);
  for (std::string part; std::getline(ss, part, '.');) p /= part;
  if (fs::is_directory(p)) return p / "__init__.py";
  return p.string() + ".py";
}

// The public names a module exports, read from its source: top-level def / class / assignments
// (including tuple targets) and names imported with `from X import a, b` (not submodules, not
// `import X`), `from X import *` expanded recursively; `__all__` as a literal list replaces them, a
// computed `__all__` (a comprehension) contributes the string literals it excludes. Names starting
// with `_` are private.
std::set<std::string> public_names(const fs::path& file, int depth = 0) {
  EXPECT_TRUE(fs::exists(file)) << file;
  std::set<std::string> names, excluded;
  std::optional<std::set<std::string>> all_literal;
  static const std::regex def_re(R"(^(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*))");
  static const std::regex assign_re(R"(^([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*=[^=])");
  static const std::regex ident_re(R"([A-Za-z_][A-Za-z0-9_]*)");
  static const std::regex string_re(R"(["']([A-Za-z_][A-Za-z0-9_]*)["'])");
  std::istringstream in(read_text(file));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '#') continue;
    std::smatch m;
    if (line.rfind("from ", 0) == 0) {
      std::string stmt = strip_comment(line);
      if (stmt.find('(') != std::string::npos)
        while (stmt.find(')') == std::string::npos && std::getline(in, line)) stmt += " " + strip_comment(line);
      std::string module = stmt.substr(5, stmt.find(" import ") - 5);
      module.erase(module.find_last_not_of(' ') + 1);
      std::string what = stmt.substr(stmt.find(" import ") + 8);
      if (what.find('*') != std::string::npos) {
        if (depth < 4)
          for (const std::string& n : public_names(module_file(module), depth + 1)) names.insert(n);
        continue;
      }
      std::string cleaned;
      for (char c : what) cleaned += (c == '(' || c == ')') ? ' ' : c;
      std::stringstream parts(cleaned);
      for (std::string item; std::getline(parts, item, ',');) {
        std::vector<std::string> words;
        for (auto it = std::sregex_iterator(item.begin(), item.end(), ident_re); it != std::sregex_iterator(); ++it)
          words.push_back(it->str());
        if (words.empty()) continue;
        const std::string& bound = words.size() >= 3 && words[1] == "as" ? words[2] : words[0];
        const fs::path as_module = module_file(module + "." + words[0]);
        if (fs::exists(as_module)) continue;  // a submodule, not an API name
        names.insert(bound);
      }
      continue;
    }
    if (line.rfind("import ", 0) == 0) continue;
    if (line.rfind("__all__", 0) == 0) {
      std::string stmt = strip_comment(line);
      if (stmt.find('[') != std::string::npos && stmt.find(" for ") == std::string::npos) {
        while (stmt.find(']') == std::string::npos && std::getline(in, line)) stmt += strip_comment(line);
        all_literal.emplace();
        for (auto it = std::sregex_iterator(stmt.begin(), stmt.end(), string_re); it != std::sregex_iterator(); ++it)
          all_literal->insert((*it)[1]);
      } else {
        for (auto it = std::sregex_iterator(stmt.begin(), stmt.end(), string_re); it != std::sregex_iterator(); ++it)
          excluded.insert((*it)[1]);
      }
      continue;
    }
    if (std::regex_search(line, m, def_re)) {
      names.insert(m[1]);
      continue;
    }
    if (std::regex_search(line, m, assign_re)) {
      std::string lhs = m[1];
      for (auto it = std::sregex_iterator(lhs.begin(), lhs.end(), ident_re); it != std::sregex_iterator(); ++it)
        names.insert(it->str());
    }
  }
  std::set<std::string> out;
  for (const std::string& n : all_literal ? *all_literal : names)
    if (!n.empty() && n[0] != '_' && !excluded.count(n)) out.insert(n);
  return out;
}

struct ModuleNames {
  std::set<std::string> nl, nisa;
};

ModuleNames simulator_names() {
  ModuleNames m;
  for (const char* mod : {"neuronxcc.nki.language", "nki.language"})
    for (const std::string& n : public_names(module_file(mod))) m.nl.insert(n);
  for (const char* mod : {"neuronxcc.nki.isa", "nki.isa"})
    for (const std::string& n : public_names(module_file(mod))) m.nisa.insert(n);
  return m;
}

const DocDatabase& db() {
  return DocDatabase::builtin();
}

std::string first_key(std::string_view query) {
  auto hits = db().lookup(query, 3);
  return hits.empty() ? std::string("<none>") : hits[0].entry->key;
}

bool in_top(std::string_view query, const std::string& key, int k = 3) {
  for (const DocHit& h : db().lookup(query, k))
    if (h.entry->key == key) return true;
  return false;
}

TEST(AgentDocs, SourceParserSeesTheModules) {
  // The parser itself: the modules are large, and names defined in every supported way show up.
  ModuleNames m = simulator_names();
  EXPECT_GT(m.nl.size(), 100u);
  EXPECT_GT(m.nisa.size(), 30u);
  for (const char* n : {"load", "store", "matmul", "int8", "int32", "affine_range", "tile_size", "program_id", "fp32"})
    EXPECT_TRUE(m.nl.count(n)) << "nl." << n;
  for (const char* n : {"nc_matmul", "dma_copy", "engine", "vector_engine", "get_nc_version"})
    EXPECT_TRUE(m.nisa.count(n)) << "nisa." << n;
  // Private names, module imports, and what lang.py's computed __all__ excludes stay out.
  for (const char* n : {"np", "core", "NkiError", "builtins", "_loop", "_Mask"}) EXPECT_FALSE(m.nl.count(n)) << n;
  for (const char* n : {"lang", "isa_common", "core"}) EXPECT_FALSE(m.nisa.count(n)) << n;
}

TEST(AgentDocs, EveryPublicNameOfOurModulesHasAnApiEntry) {
  ModuleNames m = simulator_names();
  for (const std::string& n : m.nl) {
    const DocEntry* e = db().find("nl." + n);
    ASSERT_NE(e, nullptr) << "nl." << n << " has no entry in data/docs/api.toml";
    EXPECT_EQ(e->kind, "api");
    EXPECT_EQ(e->key, "nl." + n);
    EXPECT_FALSE(e->body.empty());
  }
  for (const std::string& n : m.nisa) {
    const DocEntry* e = db().find("nisa." + n);
    ASSERT_NE(e, nullptr) << "nisa." << n << " has no entry in data/docs/api.toml";
    EXPECT_EQ(e->kind, "api");
  }
}

TEST(AgentDocs, EveryOpcodeHasItsApiEntry) {
  // The opcode table's docs key is what profiles and traces point a model to.
  for (const OpcodeInfo& row : kOpcodeTable) {
    const DocEntry* e = db().find(row.docs_key);
    ASSERT_NE(e, nullptr) << row.name << ": its docs key " << row.docs_key << " has no entry in data/docs/api.toml";
    EXPECT_EQ(e->kind, "api") << row.docs_key;
  }
}

TEST(AgentDocs, EveryApiEntryNamesARealPublicName) {
  // Documentation of an API our simulator does not have would teach a model to call it.
  ModuleNames m = simulator_names();
  int api = 0;
  for (const DocEntry& e : db().entries()) {
    if (e.kind != "api") continue;
    ++api;
    if (e.key.rfind("nl.", 0) == 0) {
      EXPECT_TRUE(m.nl.count(e.key.substr(3))) << e.key << " is documented but not in our nl modules";
    } else {
      ASSERT_EQ(e.key.rfind("nisa.", 0), 0u) << e.key;
      EXPECT_TRUE(m.nisa.count(e.key.substr(5))) << e.key << " is documented but not in our nisa modules";
    }
  }
  EXPECT_EQ(static_cast<size_t>(api), m.nl.size() + m.nisa.size());
}

TEST(AgentDocs, EveryKernelFacingErrorCodeIsFindableByItsCode) {
  size_t errors = 0;
  for (const ErrorInfo& info : error_catalogue()) {
    const std::string code(info.code);
    if (!error_origin_reaches_kernel(info.origin)) {  // the CLI's, the tasks' and the agent's own codes
      EXPECT_EQ(db().find(code), nullptr) << code;
      continue;
    }
    const DocEntry* e = db().find(code);
    ASSERT_NE(e, nullptr) << code;
    EXPECT_EQ(e->kind, "error");
    EXPECT_NE(e->body.find(std::string(info.hint)), std::string::npos) << code;
    EXPECT_EQ(first_key(code), code);
    ++errors;
  }
  size_t error_entries = 0;
  for (const DocEntry& e : db().entries()) error_entries += e.kind == "error";
  EXPECT_EQ(error_entries, errors);
}

TEST(AgentDocs, GuidesCoverTheTopics) {
  for (const char* g :
       {"guide.tiling", "guide.matmul", "guide.softmax", "guide.reductions", "guide.masks", "guide.memory",
        "guide.psum", "guide.dialects", "guide.rank", "guide.dtypes", "guide.loops", "guide.performance"}) {
    const DocEntry* e = db().find(g);
    ASSERT_NE(e, nullptr) << g;
    EXPECT_EQ(e->kind, "guide");
    EXPECT_GT(e->body.size(), 300u) << g;
  }
}

TEST(AgentDocs, ExactNamesRankFirst) {
  EXPECT_EQ(first_key("nl.matmul"), "nl.matmul");
  EXPECT_EQ(first_key("nki.language.matmul"), "nl.matmul");
  EXPECT_EQ(first_key("neuronxcc.nki.language.matmul"), "nl.matmul");
  EXPECT_EQ(first_key("matmul"), "nl.matmul");
  EXPECT_EQ(first_key("nisa.nc_matmul"), "nisa.nc_matmul");
  EXPECT_EQ(first_key("nki.isa.nc_matmul"), "nisa.nc_matmul");
  EXPECT_EQ(first_key("err_unsupported_memory"), "err_unsupported_memory");
  EXPECT_EQ(first_key("  `NL.LOAD()`  "), "nl.load");
  EXPECT_EQ(first_key("nl.load(src, mask=...)"), "nl.load");
  EXPECT_EQ(first_key("tiling"), "guide.tiling");
  // A bare name both modules define finds both.
  EXPECT_TRUE(in_top("reciprocal", "nl.reciprocal", 2));
  EXPECT_TRUE(in_top("reciprocal", "nisa.reciprocal", 2));
}

TEST(AgentDocs, TypicalQueriesFindSensibleEntries) {
  EXPECT_EQ(first_key("softmax"), "nl.softmax");
  EXPECT_TRUE(in_top("softmax", "guide.softmax"));
  EXPECT_EQ(first_key("matmul accumulate psum"), "guide.psum");
  EXPECT_EQ(first_key("nl.load mask"), "nl.load");
  EXPECT_EQ(first_key("err_num_partition_exceed_arch_limit"), "err_num_partition_exceed_arch_limit");
  EXPECT_EQ(first_key("transpose"), "nl.transpose");
  // The nl wrapper first; the Tensor-engine and DMA instructions among the next (with the error codes
  // about transposes).
  EXPECT_TRUE(in_top("transpose", "nisa.nc_transpose", 5));
  EXPECT_TRUE(in_top("transpose", "nisa.dma_transpose", 5));
  EXPECT_EQ(first_key("ragged edges not a multiple of 128"), "guide.masks");
  EXPECT_EQ(first_key("how do I lay out a 4-D NCHW tensor (rank)"), "guide.rank");
  EXPECT_EQ(first_key("layer norm mean variance bn_stats"), "nisa.bn_stats");
  EXPECT_TRUE(in_top("layer norm mean variance bn_stats", "nisa.bn_aggr"));
  EXPECT_EQ(first_key("layer norm"), "guide.softmax");
  EXPECT_EQ(first_key("conv2d"), "guide.rank");
  EXPECT_EQ(first_key("cumsum"), "nisa.tensor_tensor_scan");
  EXPECT_EQ(first_key("top k"), "nisa.max8");
  EXPECT_EQ(first_key("more than 128 partitions"), "err_num_partition_exceed_arch_limit");
  EXPECT_EQ(first_key("partition limit exceeded"), "err_num_partition_exceed_arch_limit");
  EXPECT_TRUE(in_top("legacy vs current dialect imports", "guide.dialects"));
  EXPECT_EQ(first_key("exp2"), "guide.not_simulated");
}

TEST(AgentDocs, ScoresAreOrderedAndTopKHolds) {
  auto hits = db().lookup("reduce along the free axis", 10);
  ASSERT_EQ(hits.size(), 10u);
  for (size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].score, hits[i].score);
  EXPECT_EQ(db().lookup("sum", 1).size(), 1u);
  EXPECT_TRUE(db().lookup("sum", 0).empty());
  EXPECT_TRUE(db().lookup("sum", -3).empty());
  EXPECT_LE(db().lookup("tile", 100000).size(), db().size());
}

TEST(AgentDocs, ApiEntriesShowBothDialectsWhereTheyDiffer) {
  const DocEntry* mm = db().find("nisa.nc_matmul");
  ASSERT_NE(mm, nullptr);
  EXPECT_NE(mm->body.find("Legacy: `nisa.nc_matmul(stationary"), std::string::npos) << mm->body;
  EXPECT_NE(mm->body.find("Current: `nisa.nc_matmul(dst"), std::string::npos) << mm->body;
  const DocEntry* load = db().find("nl.load");
  ASSERT_NE(load, nullptr);
  EXPECT_NE(load->body.find("```python"), std::string::npos);
  EXPECT_NE(load->body.find("current dialect"), std::string::npos);
  const DocEntry* exp = db().find("nl.exp");  // a member of a group: its own text, placeholders filled
  ASSERT_NE(exp, nullptr);
  EXPECT_NE(exp->body.find("e raised to x"), std::string::npos);
  EXPECT_EQ(exp->body.find('{'), std::string::npos) << exp->body;
  EXPECT_EQ(db().find("no.such.thing"), nullptr);
}

TEST(AgentDocs, RenderDocKeepsItsCap) {
  for (const DocEntry& e : db().entries()) {
    const std::string full = render_doc(e, 1 << 20);
    EXPECT_EQ(full.rfind("## " + e.key + " — " + e.title, 0), 0u) << e.key;
    EXPECT_EQ(full.find("[truncated]"), std::string::npos) << e.key;
    for (size_t cap : {size_t{0}, size_t{5}, size_t{40}, size_t{200}, size_t{400}}) {
      const std::string r = render_doc(e, cap);
      EXPECT_LE(r.size(), cap) << e.key;
      if (full.size() > cap && cap >= 12) {
        EXPECT_NE(r.find("[truncated]"), std::string::npos) << e.key;
      }
    }
  }
  const DocEntry* nl_load = db().find("nl.load");
  ASSERT_NE(nl_load, nullptr);
  const std::string cut = render_doc(*nl_load, 150);
  // Never cut inside a UTF-8 character.
  ASSERT_NE(cut.find("[truncated]"), std::string::npos);
  const std::string kept = cut.substr(0, cut.find("\n[truncated]"));
  ASSERT_FALSE(kept.empty());
  // Never cut inside a UTF-8 character: the kept text ends with a complete one.
  size_t lead = kept.size() - 1;
  while (lead > 0 && (static_cast<unsigned char>(kept[lead]) & 0xC0) == 0x80) --lead;
  const unsigned char c = static_cast<unsigned char>(kept[lead]);
  const size_t want = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  EXPECT_EQ(kept.size() - lead, want);
}

TEST(AgentDocs, HostileQueriesReturn) {
  EXPECT_TRUE(db().lookup("").empty());
  EXPECT_TRUE(db().lookup("   \n\t").empty());
  EXPECT_TRUE(db().lookup("!!! ??? ...").empty());
  std::string big(1 << 20, 'a');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = ' ';
  const auto t0 = std::chrono::steady_clock::now();
  auto hits = db().lookup(big, 3);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_LE(hits.size(), 3u);
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>(i % 256);
  EXPECT_LE(db().lookup(binary, 5).size(), 5u);
  EXPECT_LE(db().lookup(std::string_view("nl.load\0mask", 12), 3).size(), 3u);
  std::string repeated;
  for (int i = 0; i < 20000; ++i) repeated += "matmul ";
  EXPECT_EQ(db().lookup(repeated, 1).at(0).entry->key, "nl.matmul");
}

TEST(AgentDocs, BrokenDataIsADiagnostic) {
  const std::string guide = "[[guide]]\nname = \"guide.x\"\ntitle = \"X\"\nbody = \"text\"\n";
  const std::string api = "[[api]]\nname = \"nl.x\"\ntitle = \"X\"\nsignature = \"nl.x()\"\nbody = \"b\"\n";
  auto ok = DocDatabase::build(api, guide, false);
  ASSERT_TRUE(ok) << ok.error().format();
  EXPECT_EQ(ok->size(), 2u);
  EXPECT_EQ(ok->lookup("x", 3).size(), 2u);
  ASSERT_NE(ok->find("nki.language.x"), nullptr);
  EXPECT_EQ(ok->find("nki.language.x")->key, "nl.x");

  struct Case {
    std::string api, guides, what;
  };
  for (const Case& c : std::vector<Case>{
           {"[[api]\n", guide, "syntax"},
           {api + "colour = \"red\"\n", guide, "unknown field"},
           {"[[api]]\nname = \"nl.x\"\ntitle = \"X\"\nbody = \"b\"\n", guide, "missing signature"},
           {api + api, guide, "duplicate"},
           {"[[api]]\nname = \"torch.x\"\ntitle = \"X\"\nsignature = \"s\"\nbody = \"b\"\n", guide, "bad prefix"},
           {"[[api_group]]\nmembers = [[\"nl.a\"]]\ntitle = \"{name}\"\nsignature = \"s\"\nbody = \"b\"\n", guide,
            "bad member"},
           {api, "[[guide]]\nname = \"x\"\ntitle = \"X\"\nbody = \"b\"\n", "guide without prefix"},
           {api, "[[guide]]\nname = \"guide.y\"\ntitle = \"X\"\nbody = 3\n", "body not a string"},
       }) {
    auto r = DocDatabase::build(c.api, c.guides, false);
    ASSERT_FALSE(r) << c.what;
    EXPECT_EQ(r.error().code, "nkia_docs_data") << c.what;
  }
}

}  // namespace
}  // namespace nki_agent
