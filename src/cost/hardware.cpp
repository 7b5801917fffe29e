// Reading hardware descriptions: a target's TOML into HardwareSpec, with every field checked for
// presence, type and range, and unknown keys refused (a typo must not silently fall back to a
// default), through the target reader of nki/target_toml.h; [target] and [limits] are the
// target's own (nki/target.h), the rest is timing data.
#include "cost/hardware.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "nki/target_toml.h"

namespace nki_agent {

namespace {

Result<EngineSpec> read_engine(const toml::table* t, std::string path, std::string_view origin, bool is_pe) {
  TableReader r(t, std::move(path), origin);
  NKIA_TRY_VOID(r.only({"clock_ghz", "dependency_overhead_cycles", "access_overhead_cycles", "strided_factor",
                        "strided_threshold_bytes", "pe_rows", "pe_cols", "throttle_idle_ns", "throttle_ramp_ns",
                        "throttle_start_utilization"}));
  EngineSpec e;
  NKIA_TRY(clock, r.number("clock_ghz", std::nullopt, 0.01, 100));
  e.clock_ghz = clock;
  NKIA_TRY(dep, r.number("dependency_overhead_cycles", 0.0, 0, 1e6));
  e.dependency_overhead_cycles = dep;
  NKIA_TRY(access, r.number("access_overhead_cycles", 0.0, 0, 1e6));
  e.access_overhead_cycles = access;
  NKIA_TRY(sf, r.number("strided_factor", 1.0, 1, 100));
  e.strided_factor = sf;
  NKIA_TRY(st, r.integer("strided_threshold_bytes", 16, 1, 1 << 20));
  e.strided_threshold_bytes = st;
  if (is_pe) {
    NKIA_TRY(rows, r.integer("pe_rows", 128, 1, 4096));
    NKIA_TRY(cols, r.integer("pe_cols", 128, 1, 4096));
    e.pe_rows = static_cast<int>(rows);
    e.pe_cols = static_cast<int>(cols);
    NKIA_TRY(ti, r.number("throttle_idle_ns", 0.0, 0, 1e9));
    NKIA_TRY(tr, r.number("throttle_ramp_ns", 0.0, 0, 1e9));
    NKIA_TRY(tu, r.number("throttle_start_utilization", 1.0, 0.01, 1.0));
    e.throttle_idle_ns = ti;
    e.throttle_ramp_ns = tr;
    e.throttle_start_utilization = tu;
  }
  NKIA_TRY_VOID(r.finish());
  return e;
}

// The operators an `ops` name stands for among the sub-op kinds `kinds` (kSub* bits).
void operators_named(std::string_view name, uint8_t kinds, std::vector<AluOp>& out) {
  if (kinds & kSubBinary)
    if (auto op = binary_op_from_name(name)) out.push_back(*op);
  if (kinds & kSubUnary)
    if (auto op = unary_op_from_name(name)) out.push_back(*op);
  if (kinds & kSubReduce)
    if (auto op = reduce_op_from_name(name)) out.push_back(*op);
  if (kinds & kSubMode)
    if (auto m = op_mode_from_name(name)) out.push_back(*m);
}

// Resolves a rule's opcode pattern and `ops` against the opcode table (CostRule).
Result<void> resolve_rule(CostRule& rule, const TableReader& r, std::string_view origin) {
  auto unmatched = [&](std::string why) {
    Diagnostic d = r.invalid(fmt::format("{} (line {}): {}", r.path(), rule.line, why))
                       .with_note("the opcodes are those of nki/opcodes.h, as traces spell them (docs/cost-model.md)");
    d.loc.file = std::string(origin);
    d.loc.line = rule.line;
    return fail(std::move(d));
  };
  const std::string_view pat = rule.opcode;
  if (pat == "*") {
    rule.opcodes.fill(true);
  } else if (pat.back() == '*') {
    const std::string_view prefix = pat.substr(0, pat.size() - 1);
    for (const OpcodeInfo& row : kOpcodeTable) {
      const std::string_view name = row.name;
      if (name.starts_with(prefix)) {
        rule.opcodes[static_cast<size_t>(row.opcode)] = true;
      } else if (prefix.size() > name.size() && prefix.starts_with(name) && prefix[name.size()] == ':') {
        if (prefix.size() > name.size() + 1)
          return unmatched(
              fmt::format("opcode = '{}': a pattern ends in '*' at an opcode's name or right after its "
                          "':', not inside a sub-op",
                          pat));
        rule.opcodes[static_cast<size_t>(row.opcode)] = true;
        rule.sub_match = CostRule::SubMatch::kSome;
      }
    }
  } else if (pat.find(':') != std::string_view::npos) {
    const auto op = parse_instruction(pat);
    if (!op) return unmatched(fmt::format("opcode = '{}' is no instruction", pat));
    rule.opcodes[static_cast<size_t>(op->opcode)] = true;
    rule.sub_match = CostRule::SubMatch::kExact;
    rule.exact = *op;
  } else {
    const auto op = opcode_from_name(pat);
    if (!op) return unmatched(fmt::format("opcode = '{}' is no opcode", pat));
    rule.opcodes[static_cast<size_t>(*op)] = true;
    rule.sub_match = CostRule::SubMatch::kNone;
  }
  uint8_t kinds = 0;
  bool any = false;
  for (const OpcodeInfo& row : kOpcodeTable) {
    bool& m = rule.opcodes[static_cast<size_t>(row.opcode)];
    if (rule.engine && !(row.engines & engine_bit(*rule.engine))) m = false;
    if (rule.sub_match == CostRule::SubMatch::kSome && row.max_sub == 0) m = false;
    if (m) kinds |= row.sub_kinds;
    any = any || m;
  }
  if (!any)
    return unmatched(fmt::format("opcode = '{}'{} matches no opcode", pat,
                                 rule.engine ? fmt::format(" on the {} engine", engine_name(*rule.engine)) : ""));
  if (!rule.ops.empty() && rule.sub_match == CostRule::SubMatch::kNone)
    return unmatched(fmt::format("ops = [...] with opcode = '{}', which has no sub-op", pat));
  for (const std::string& name : rule.ops) {
    std::vector<AluOp> named;
    operators_named(name, kinds, named);
    if (named.empty())
      return unmatched(fmt::format("ops entry '{}' is no operator of the opcodes '{}' matches", name, pat));
    for (AluOp op : named)
      if (std::find(rule.op_set.begin(), rule.op_set.end(), op) == rule.op_set.end()) rule.op_set.push_back(op);
  }
  return {};
}

Result<CostRule> read_rule(const toml::table* t, size_t index, std::string_view origin) {
  TableReader r(t, fmt::format("rules[{}]", index), origin);
  NKIA_TRY_VOID(r.only({"engine", "opcode", "ops", "dtypes", "all_sbuf", "mixed_psum_sbuf_inputs", "unit_stride",
                        "model", "fixed", "per_element", "min", "extra", "init", "fp32_factor", "source"}));
  CostRule rule;
  NKIA_TRY(eng, r.string("engine", std::string()));
  if (!eng.empty()) {
    auto e = engine_from_name(eng);
    if (!e || *e == Engine::kDma)
      return fail(r.invalid(fmt::format("{} = '{}' is not tensor, vector, scalar or gpsimd", r.where("engine"), eng)));
    rule.engine = *e;
  }
  NKIA_TRY(op, r.string("opcode", std::nullopt));
  if (op.empty()) return fail(r.invalid(fmt::format("{} is empty", r.where("opcode"))));
  rule.opcode = op;
  NKIA_TRY(ops, r.strings("ops"));
  rule.ops = ops;
  NKIA_TRY(dts, r.strings("dtypes"));
  for (const auto& d : dts) {
    auto dt = dtype_from_name(d);
    if (!dt) return fail(r.invalid(fmt::format("{}: '{}' is not an element type", r.where("dtypes"), d)));
    rule.dtypes.push_back(*dt);
  }
  NKIA_TRY(all_sbuf, r.flag("all_sbuf"));
  NKIA_TRY(mixed, r.flag("mixed_psum_sbuf_inputs"));
  NKIA_TRY(unit, r.flag("unit_stride"));
  rule.all_sbuf = all_sbuf;
  rule.mixed_psum_sbuf_inputs = mixed;
  rule.unit_stride = unit;
  NKIA_TRY(model, r.string("model", std::string("elementwise")));
  if (model == "elementwise")
    rule.model = CostRule::Model::kElementwise;
  else if (model == "matmul")
    rule.model = CostRule::Model::kMatmul;
  else if (model == "pe_transpose")
    rule.model = CostRule::Model::kPeTranspose;
  else
    return fail(
        r.invalid(fmt::format("{} = '{}' is not elementwise, matmul or pe_transpose", r.where("model"), model)));
  NKIA_TRY(fixed, r.number("fixed", 0.0, 0, 1e9));
  NKIA_TRY(per, r.number("per_element", 1.0, 0, 1e6));
  NKIA_TRY(mn, r.number("min", 0.0, 0, 1e9));
  NKIA_TRY(extra, r.number("extra", 0.0, 0, 1e9));
  NKIA_TRY(init, r.number("init", 64.0, 0, 1e6));
  NKIA_TRY(f32, r.number("fp32_factor", 4.0, 1, 1e3));
  rule.fixed = fixed;
  rule.per_element = per;
  rule.min_cycles = mn;
  rule.extra = extra;
  rule.init = init;
  rule.fp32_factor = f32;
  NKIA_TRY(source, r.string("source", std::string()));
  rule.source = source;
  NKIA_TRY_VOID(r.finish());
  rule.line = t ? static_cast<int>(t->source().begin.line) : 0;
  NKIA_TRY_VOID(resolve_rule(rule, r, origin));
  return rule;
}

// The number a dotted key ("dma.descriptor_overhead_ns") names in the file, or null.
const toml::node* number_at(const toml::table& root, std::string_view key) {
  const toml::node* n = root.at_path(key).node();
  return n && (n->is_floating_point() || n->is_integer()) ? n : nullptr;
}

// [[calibrate]]: each entry names a number of this file, a non-empty range (a fit starts from the
// value clamped into it) and a source; a key given twice is refused.
Result<std::vector<FreeParameter>> read_free_parameters(const toml::table& root, std::string_view origin) {
  std::vector<FreeParameter> out;
  const toml::node* c = root.get("calibrate");
  if (!c) return out;
  const toml::array* arr = c->as_array();
  if (!arr || !arr->is_array_of_tables())
    return fail("nkia_hardware_invalid",
                fmt::format("{}: calibrate must be an array of tables ([[calibrate]])", origin),
                "see data/targets/trn1.toml");
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table* t = (*arr)[i].as_table();
    TableReader r(t, fmt::format("calibrate[{}]", i), origin);
    NKIA_TRY_VOID(r.only({"key", "min", "max", "source"}));
    FreeParameter p;
    NKIA_TRY(key, r.string("key", std::nullopt));
    NKIA_TRY(lo, r.number("min", std::nullopt, -1e12, 1e12));
    NKIA_TRY(hi, r.number("max", std::nullopt, -1e12, 1e12));
    NKIA_TRY(src, r.string("source", std::nullopt));
    NKIA_TRY_VOID(r.finish());
    const toml::node* n = number_at(root, key);
    if (!n || key.rfind("calibrate", 0) == 0 || key.rfind("target", 0) == 0 || key.rfind("limits", 0) == 0)
      return fail(
          r.invalid(fmt::format("{} = '{}' names no number of the cost model in this file", r.where("key"), key)));
    if (!(lo < hi)) return fail(r.invalid(fmt::format("{}: the range [{}, {}] is empty", r.where("min"), lo, hi)));
    for (const auto& q : out)
      if (q.key == key) return fail(r.invalid(fmt::format("{}: '{}' is free twice", r.where("key"), key)));
    p.key = key;
    p.min = lo;
    p.max = hi;
    p.source = src;
    p.line = t ? static_cast<int>(t->source().begin.line) : 0;
    out.push_back(std::move(p));
  }
  return out;
}

Result<HardwareSpec> build_spec(const toml::table& root, std::string_view origin) {
  HardwareSpec hw;
  hw.origin = std::string(origin);
  {
    TableReader top(&root, "", origin);
    const std::set<std::string> known = {"target", "limits",      "memory", "sync",     "engines",
                                         "dma",    "concurrency", "rules",  "calibrate"};
    for (const auto& [k, v] : root)
      if (!known.count(std::string(k.str())))
        return fail(top.invalid(fmt::format("unknown table or key '{}'", k.str())));
  }
  NKIA_TRY(target, read_target(root, origin));
  hw.target = std::move(target);
  NKIA_TRY(mem_t, sub_table(root, "memory", origin, true));
  {
    TableReader r(mem_t, "memory", origin);
    NKIA_TRY_VOID(r.only({"hbm_bytes_per_ns"}));
    NKIA_TRY(hbm, r.number("hbm_bytes_per_ns", std::nullopt, 0.001, 1e6));
    hw.hbm_bytes_per_ns = hbm;
    NKIA_TRY_VOID(r.finish());
  }
  NKIA_TRY(sync_t, sub_table(root, "sync", origin, false));
  {
    TableReader r(sync_t, "sync", origin);
    NKIA_TRY_VOID(r.only({"semaphore_latency_ns", "launch_overhead_ns"}));
    NKIA_TRY(sem, r.number("semaphore_latency_ns", 0.0, 0, 1e9));
    hw.semaphore_latency_ns = sem;
    NKIA_TRY(launch, r.number("launch_overhead_ns", 0.0, 0, 1e9));
    hw.launch_overhead_ns = launch;
    NKIA_TRY_VOID(r.finish());
  }
  NKIA_TRY(eng_t, sub_table(root, "engines", origin, true));
  {
    static constexpr std::array<std::pair<const char*, Engine>, 4> kEngines = {{{"tensor", Engine::kTensor},
                                                                                {"vector", Engine::kVector},
                                                                                {"scalar", Engine::kScalar},
                                                                                {"gpsimd", Engine::kGpSimd}}};
    for (const auto& [k, v] : *eng_t)
      if (!engine_from_name(k.str()) || k.str() == "dma" || k.str() == "pe" || k.str() == "dve" || k.str() == "act" ||
          k.str() == "pool")
        return fail("nkia_hardware_invalid", fmt::format("{}: unknown engine [engines.{}]", origin, k.str()),
                    "the engines are tensor, vector, scalar and gpsimd");
    for (const auto& [key, e] : kEngines) {
      NKIA_TRY(t, sub_table(*eng_t, key, origin, true));
      NKIA_TRY(spec, read_engine(t, fmt::format("engines.{}", key), origin, e == Engine::kTensor));
      hw.engines[static_cast<size_t>(e)] = spec;
    }
  }
  NKIA_TRY(dma_t, sub_table(root, "dma", origin, true));
  {
    TableReader r(dma_t, "dma", origin);
    NKIA_TRY_VOID(
        r.only({"engines", "partitions_per_engine", "bytes_per_ns", "efficiency", "descriptor_overhead_ns",
                "transfer_overhead_ns", "min_descriptor_bytes", "gather_pitch_ref_bytes", "gather_pitch_exponent",
                "trigger_latency_ns", "max_inflight_per_queue", "transpose_efficiency", "compute_efficiency"}));
    NKIA_TRY(n, r.integer("engines", std::nullopt, 1, 256));
    NKIA_TRY(ppe, r.integer("partitions_per_engine", std::nullopt, 1, 1024));
    NKIA_TRY(bw, r.number("bytes_per_ns", std::nullopt, 0.001, 1e6));
    NKIA_TRY(eff, r.number("efficiency", 1.0, 0.001, 1.0));
    NKIA_TRY(desc, r.number("descriptor_overhead_ns", 0.0, 0, 1e9));
    NKIA_TRY(xfer, r.number("transfer_overhead_ns", 0.0, 0, 1e9));
    NKIA_TRY(mind, r.integer("min_descriptor_bytes", 1, 1, 1 << 20));
    NKIA_TRY(gref, r.number("gather_pitch_ref_bytes", 0.0, 0, 1e9));
    NKIA_TRY(gexp, r.number("gather_pitch_exponent", 0.0, 0, 4));
    NKIA_TRY(lat, r.number("trigger_latency_ns", 0.0, 0, 1e9));
    NKIA_TRY(inflight, r.integer("max_inflight_per_queue", 0, 0, 1 << 20));
    NKIA_TRY(teff, r.number("transpose_efficiency", 1.0, 0.001, 1.0));
    NKIA_TRY(ceff, r.number("compute_efficiency", 1.0, 0.001, 1.0));
    hw.dma.engines = static_cast<int>(n);
    hw.dma.partitions_per_engine = static_cast<int>(ppe);
    hw.dma.bytes_per_ns = bw;
    hw.dma.efficiency = eff;
    hw.dma.descriptor_overhead_ns = desc;
    hw.dma.transfer_overhead_ns = xfer;
    hw.dma.gather_pitch_ref_bytes = gref;
    hw.dma.gather_pitch_exponent = gexp;
    hw.dma.min_descriptor_bytes = mind;
    hw.dma.trigger_latency_ns = lat;
    hw.dma.max_inflight_per_queue = static_cast<int>(inflight);
    hw.dma.transpose_efficiency = teff;
    hw.dma.compute_efficiency = ceff;
    NKIA_TRY_VOID(r.finish());
  }
  if (const toml::node* c = root.get("concurrency")) {
    const toml::array* arr = c->as_array();
    if (!arr || !arr->is_array_of_tables())
      return fail("nkia_hardware_invalid",
                  fmt::format("{}: concurrency must be an array of tables ([[concurrency]])", origin),
                  "see data/targets/trn1.toml");
    for (size_t i = 0; i < arr->size(); ++i) {
      TableReader r((*arr)[i].as_table(), fmt::format("concurrency[{}]", i), origin);
      NKIA_TRY_VOID(r.only({"memory", "engines", "source"}));
      ConcurrencyGroup g;
      NKIA_TRY(mem, r.string("memory", std::nullopt));
      if (mem == "sbuf")
        g.memory = Buffer::kSbuf;
      else if (mem == "psum")
        g.memory = Buffer::kPsum;
      else
        return fail(r.invalid(fmt::format("{} = '{}' is not sbuf or psum", r.where("memory"), mem)));
      NKIA_TRY(engs, r.strings("engines"));
      for (const auto& s : engs) {
        auto e = engine_from_name(s);
        if (!e || *e == Engine::kDma)
          return fail(r.invalid(fmt::format("{}: '{}' is not an engine", r.where("engines"), s)));
        g.engines.push_back(*e);
      }
      if (g.engines.size() < 2) return fail(r.invalid(fmt::format("{} needs two engines or more", r.where("engines"))));
      NKIA_TRY(src, r.string("source", std::string()));
      g.source = src;
      NKIA_TRY_VOID(r.finish());
      hw.concurrency.push_back(std::move(g));
    }
    if (hw.concurrency.size() > 8)
      return fail("nkia_hardware_invalid", fmt::format("{}: at most 8 [[concurrency]] groups", origin), "merge groups");
  }
  const toml::node* rules = root.get("rules");
  const toml::array* arr = rules ? rules->as_array() : nullptr;
  if (!arr || !arr->is_array_of_tables() || arr->empty())
    return fail("nkia_hardware_invalid", fmt::format("{}: no instruction cost rules ([[rules]])", origin),
                "give at least one [[rules]] table per engine with opcode = \"*\"");
  for (size_t i = 0; i < arr->size(); ++i) {
    NKIA_TRY(rule, read_rule((*arr)[i].as_table(), i, origin));
    hw.rules.push_back(std::move(rule));
  }
  NKIA_TRY(free, read_free_parameters(root, origin));
  hw.free_parameters = std::move(free);
  return hw;
}

}  // namespace

bool CostRule::matches(Engine e, const InstrOp& op) const {
  if (engine && *engine != e) return false;
  if (!opcodes[static_cast<size_t>(op.opcode)]) return false;
  switch (sub_match) {
    case SubMatch::kAny: break;
    case SubMatch::kNone:
      if (!op.sub[0].none()) return false;
      break;
    case SubMatch::kSome:
      if (op.sub[0].none()) return false;
      break;
    case SubMatch::kExact:
      if (op != exact) return false;
      break;
  }
  return op_set.empty() || std::find(op_set.begin(), op_set.end(), op.sub[0]) != op_set.end();
}

Result<HardwareSpec> parse_hardware(std::string_view toml_text, std::string_view origin) {
  NKIA_TRY(root, parse_target_toml(toml_text, origin));
  return build_spec(root, origin);
}

Result<HardwareSpec> load_hardware_file(const std::string& path) {
  NKIA_TRY(text, read_hardware_file(path));
  return parse_hardware(text, path);
}

Result<std::string> read_hardware_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return fail("nkia_hardware_unreadable", fmt::format("cannot read the hardware description {}", path),
                "give the path of a .toml file like data/targets/trn1.toml");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  if (text.size() > (8u << 20))
    return fail("nkia_hardware_invalid", fmt::format("{}: larger than 8 MiB", path),
                "a hardware description is a few KiB");
  return text;
}

Result<HardwareSpec> hardware_for_target(std::string_view target) {
  if (auto known = target_by_name(target); !known) return fail(known.error());
  const std::string_view text = target_text(target);
  return parse_hardware(text, fmt::format("data/targets/{}.toml", target));
}

}  // namespace nki_agent
