// agent/prompts.cpp — building the system and task prompts from prompts/<version>/*.md.
#include "agent/prompts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "agent/embedded_text.h"
#include "tensor/dtype.h"

namespace nki_agent {

namespace {

constexpr std::string_view kPromptsDir = "prompts/";
constexpr std::string_view kFragmentMarker = "<!-- fragment: ";
constexpr int64_t kPartitions = 128;  // partitions of a tile (nl.tile_size.pmax)
constexpr int64_t kPsumFree = 512;    // float32 per partition in a PSUM bank (nl.tile_size.psum_fmax)

using Vars = std::map<std::string, std::string, std::less<>>;

// The text without its HTML comments; a line that held only a comment goes entirely.
std::string strip_comments(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find("<!--", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    size_t close = text.find("-->", open + 4);
    size_t end = close == std::string_view::npos ? text.size() : close + 3;
    size_t line_start = text.rfind('\n', open == 0 ? 0 : open - 1);
    line_start = (line_start == std::string_view::npos || open == 0) ? 0 : line_start + 1;
    bool alone_before = text.substr(line_start, open - line_start).find_first_not_of(" \t") == std::string_view::npos;
    bool alone_after = end >= text.size() || text[end] == '\n';
    if (alone_before && alone_after) {
      out.append(text.substr(pos, line_start > pos ? line_start - pos : 0));
      pos = end < text.size() ? end + 1 : end;  // drop the line and its newline
    } else {
      out.append(text.substr(pos, open - pos));
      pos = end;
    }
  }
  return out;
}

std::string trim_newlines(std::string s) {
  size_t b = s.find_first_not_of('\n');
  size_t e = s.find_last_not_of('\n');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The fragments of a fragment file: name -> text (comments stripped, outer blank lines trimmed).
std::map<std::string, std::string> fragments(std::string_view text) {
  std::map<std::string, std::string> out;
  size_t pos = text.find(kFragmentMarker);
  while (pos != std::string_view::npos) {
    size_t name_begin = pos + kFragmentMarker.size();
    size_t name_end = text.find(" -->", name_begin);
    if (name_end == std::string_view::npos) throw InternalError("an unterminated fragment marker in the prompts");
    std::string name(text.substr(name_begin, name_end - name_begin));
    size_t body_begin = name_end + 4;
    size_t next = text.find(kFragmentMarker, body_begin);
    std::string_view body =
        text.substr(body_begin, next == std::string_view::npos ? std::string_view::npos : next - body_begin);
    out[name] = trim_newlines(strip_comments(body));
    pos = next;
  }
  return out;
}

// `{{name}}` replaced by vars[name] in one pass: inserted text is never scanned again, so a task's
// source may contain braces. A placeholder without a value is a bug in our prompt files.
std::string substitute(std::string_view tmpl, const Vars& vars) {
  std::string out;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t open = tmpl.find("{{", pos);
    if (open == std::string_view::npos) {
      out.append(tmpl.substr(pos));
      break;
    }
    size_t close = tmpl.find("}}", open + 2);
    if (close == std::string_view::npos) throw InternalError("an unterminated {{ placeholder in the prompts");
    std::string_view name = tmpl.substr(open + 2, close - open - 2);
    auto it = vars.find(name);
    if (it == vars.end()) throw InternalError(fmt::format("the prompts use an unknown placeholder {{{{{}}}}}", name));
    out.append(tmpl.substr(pos, open - pos));
    out.append(it->second);
    pos = close + 2;
  }
  return out;
}

// What the model sees of a system prompt: complete-kernel fences as plain python fences.
std::string for_model(std::string text) {
  static constexpr std::string_view kTagged = "```python kernel";
  for (size_t p = text.find(kTagged); p != std::string::npos; p = text.find(kTagged, p))
    text.replace(p, kTagged.size(), "```python");
  return trim_newlines(std::move(text)) + "\n";
}

const std::string& fragment(const std::map<std::string, std::string>& frags, const std::string& name,
                            std::string_view file) {
  auto it = frags.find(name);
  if (it == frags.end()) throw InternalError(fmt::format("prompt fragment '{}' is missing from {}", name, file));
  return it->second;
}

std::string rank_label(size_t rank) {
  return rank == 0 ? "scalar" : fmt::format("rank {}", rank);
}

std::string arg_kind(ArgKind k) {
  return k == ArgKind::kInput ? "input" : "parameter";
}

std::string dtype_text(DType kernel, const std::string& torch) {
  std::string k(dtype_name(kernel));
  if (!torch.empty() && torch != k) return fmt::format("{} (the reference's {})", k, torch);
  return k;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string lower_copy(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

std::vector<std::string> prompt_versions() {
  std::set<std::string> versions;
  for (const EmbeddedText& t : embedded_agent_texts()) {
    if (t.path.rfind(kPromptsDir, 0) != 0) continue;
    std::string_view rest = t.path.substr(kPromptsDir.size());
    size_t slash = rest.find('/');
    if (slash != std::string_view::npos) versions.insert(std::string(rest.substr(0, slash)));
  }
  return {versions.begin(), versions.end()};
}

std::string prompt_text(std::string_view version, std::string_view file) {
  if (version.empty() || file.empty() || version.find('/') != std::string_view::npos) return {};
  const std::string_view* text = find_embedded_text(fmt::format("{}{}/{}", kPromptsDir, version, file));
  return text ? std::string(*text) : std::string();
}

namespace {

std::string rank_section_of(const Task& task, std::string_view version) {
  const auto frags = fragments(prompt_text(version, "rank_aware.md"));
  auto frag = [&](const std::string& name) { return fragment(frags, name, "rank_aware.md"); };

  std::string out = frag("header") + "\n";
  std::set<size_t> ranks;
  std::vector<std::string> large_partition, large_free, ragged;
  // Each axis, and for rank >= 3 the rows its leading axes make when flattened (B·S of (B, S, D)).
  auto note_dims = [&](const std::string& what, const Shape& shape, bool prompt) {
    std::vector<std::pair<std::string, int64_t>> dims;
    for (size_t a = 0; a < shape.size(); ++a)
      dims.emplace_back(fmt::format("{} axis {} = {}", what, a, shape[a]), shape[a]);
    if (shape.size() >= 3) {
      int64_t rows = 1;
      for (size_t a = 0; a + 1 < shape.size(); ++a) rows *= shape[a];
      dims.emplace_back(fmt::format("{} leading axes flattened = {} rows", what, rows), rows);
    }
    for (const auto& [label, d] : dims) {
      if (prompt && d > kPartitions) large_partition.push_back(label);
      if (prompt && d > kPsumFree) large_free.push_back(label);
      if (d > kPartitions && d % kPartitions != 0 && std::find(ragged.begin(), ragged.end(), label) == ragged.end())
        ragged.push_back(label);
    }
  };
  for (const TaskArg& a : task.args) {
    out += fmt::format("- `{}` ({}): shape {}, {}, {}\n", a.name, arg_kind(a.kind), shape_str(a.shape),
                       dtype_text(a.dtype, a.torch_dtype), rank_label(a.shape.size()));
    ranks.insert(a.shape.size());
    note_dims("`" + a.name + "`", a.shape, true);
  }
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    const TaskOutput& o = task.outputs[i];
    out += fmt::format("- output {}: shape {}, {}, {}\n", i, shape_str(o.shape), dtype_text(o.dtype, o.torch_dtype),
                       rank_label(o.shape.size()));
    ranks.insert(o.shape.size());
    note_dims(fmt::format("output {}", i), o.shape, true);
  }
  // Variant shapes count for ragged sizes and ranks too.
  for (const TaskVariant& v : task.variants) {
    for (const auto& [name, shape] : v.args) note_dims(fmt::format("`{}` ({})", name, v.name), shape, false);
    for (size_t i = 0; i < v.outputs.size(); ++i)
      note_dims(fmt::format("output {} ({})", i, v.name), v.outputs[i], false);
  }

  out += "\n";
  for (size_t r : ranks) out += frag(fmt::format("rank{}", std::min<size_t>(r, 5))) + "\n";
  const std::string topic = lower_copy(task.category + " " + task.operation + " " + task.name);
  if (ranks.count(3) + ranks.count(4) + ranks.count(5) > 0 &&
      (topic.find("conv") != std::string::npos || topic.find("pool") != std::string::npos))
    out += frag("conv") + "\n";
  if (!large_partition.empty())
    out += substitute(frag("large_partition"), {{"dims", join(large_partition, ", ")}}) + "\n";
  if (!large_free.empty()) out += substitute(frag("large_free"), {{"dims", join(large_free, ", ")}}) + "\n";
  if (!ragged.empty()) out += substitute(frag("ragged"), {{"dims", join(ragged, ", ")}}) + "\n";

  if (!task.variants.empty()) {
    std::string lines;
    for (const ShapeSet& s : task.shape_sets()) {
      if (s.name == "prompt") continue;
      std::vector<std::string> parts;
      for (size_t i = 0; i < s.args.size() && i < task.args.size(); ++i)
        parts.push_back(fmt::format("{} {}", task.args[i].name, shape_str(s.args[i])));
      std::vector<std::string> outs;
      for (const Shape& o : s.outputs) outs.push_back(shape_str(o));
      lines += fmt::format("- `{}`: {} -> {}\n", s.name, join(parts, ", "), join(outs, ", "));
    }
    out += "\n" + substitute(frag("variants"), {{"variants", trim_newlines(lines)}}) + "\n";
  }
  return trim_newlines(std::move(out));
}

}  // namespace

std::string rank_section(const Task& task) {
  return rank_section_of(task, PromptOptions{}.version);
}

Result<Prompt> build_prompt(const Task& task, const PromptOptions& opt) {
  const std::vector<std::string> versions = prompt_versions();
  if (std::find(versions.begin(), versions.end(), opt.version) == versions.end())
    return fail("nkia_prompt_version", fmt::format("there is no prompt version '{}'", opt.version),
                fmt::format("use one of: {}", join(versions, ", ")));
  if (opt.dialect != "legacy" && opt.dialect != "current")
    return fail("nkia_prompt_dialect", fmt::format("unknown dialect '{}'", opt.dialect),
                "use \"legacy\" (neuronxcc.nki) or \"current\" (nki)");
  if (!task.dialects.empty() &&
      std::find(task.dialects.begin(), task.dialects.end(), opt.dialect) == task.dialects.end())
    return fail("nkia_prompt_dialect", fmt::format("task {} does not accept the {} dialect", task.label(), opt.dialect),
                fmt::format("use one of the task's dialects: {}", join(task.dialects, ", ")));

  const std::string& v = opt.version;
  const auto common = fragments(prompt_text(v, "common.md"));
  const std::string dialect_file = "dialect_" + opt.dialect + ".md";
  const auto dialect = fragments(prompt_text(v, dialect_file));
  const std::string system_file = opt.tools ? "system_tools.md" : "system_single_shot.md";
  const std::string system_text = prompt_text(v, system_file);
  const std::string task_text = prompt_text(v, "task.md");
  if (system_text.empty() || task_text.empty())
    throw InternalError(fmt::format("prompt version {} lacks {} or task.md", v, system_file));

  Vars sys_vars = {{"model", fragment(common, "model", "common.md")},
                   {"rules", fragment(common, "rules", "common.md")},
                   {"dialect_guide", fragment(dialect, "guide", dialect_file)},
                   {"example", fragment(dialect, "example", dialect_file)},
                   {"max_turns", std::to_string(opt.max_turns)}};

  std::vector<std::string> names, arg_lines, out_lines, tol_lines;
  for (size_t i = 0; i < task.args.size(); ++i) {
    const TaskArg& a = task.args[i];
    names.push_back(a.name);
    arg_lines.push_back(fmt::format("{}. `{}` — {}, {}, shape {} ({})", i + 1, a.name, arg_kind(a.kind),
                                    dtype_text(a.dtype, a.torch_dtype), shape_str(a.shape),
                                    rank_label(a.shape.size())));
  }
  std::set<DType> out_dtypes;
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    const TaskOutput& o = task.outputs[i];
    out_lines.push_back(fmt::format("{}. {}, shape {} ({})", i + 1, dtype_text(o.dtype, o.torch_dtype),
                                    shape_str(o.shape), rank_label(o.shape.size())));
    out_dtypes.insert(o.dtype);
  }
  for (DType d : out_dtypes) {
    const Tolerance& t = task.tolerance_for(d);
    tol_lines.push_back(
        fmt::format("{}: atol {:g}, rtol {:g} per element (|got - want| <= atol + rtol * |want|), "
                    "and ||got - want|| / ||want|| <= {:g}",
                    dtype_name(d), t.atol, t.rtol, t.norm_rtol));
  }
  std::string precision;
  if (task.strict_precision) {
    std::vector<std::string> forbidden;
    for (DType d : task.forbidden_dtypes()) forbidden.emplace_back(dtype_name(d));
    precision = "strict — keep the task's precision";
    if (!forbidden.empty())
      precision += fmt::format("; these types may not appear in the kernel: {}", join(forbidden, ", "));
  } else {
    precision = "any — lower-precision arithmetic is allowed as long as the tolerance holds";
  }
  if (!task.allow_dtypes.empty()) {
    std::vector<std::string> allowed;
    for (DType d : task.allow_dtypes) allowed.emplace_back(dtype_name(d));
    precision += fmt::format(" (explicitly allowed: {})", join(allowed, ", "));
  }

  Vars task_vars = {{"task_label", task.label()},
                    {"operation", task.operation.empty() ? task.name : task.operation},
                    {"dialect", opt.dialect},
                    {"target", task.target},
                    {"task_py", trim_newlines(task.task_py)},
                    {"entry", task.entry},
                    {"arg_names", join(names, ", ")},
                    {"arguments", join(arg_lines, "\n")},
                    {"outputs", join(out_lines, "\n")},
                    {"tolerance", join(tol_lines, "; ")},
                    {"precision", precision},
                    {"rank_section", rank_section_of(task, v)},
                    {"closing", fragment(common, opt.tools ? "closing_tools" : "closing_single_shot", "common.md")}};

  Prompt p;
  p.version = v;
  p.system = for_model(substitute(strip_comments(system_text), sys_vars));
  p.user = trim_newlines(substitute(strip_comments(task_text), task_vars)) + "\n";
  return p;
}

}  // namespace nki_agent
