// reward/extract.cpp — fenced blocks (agent/tools.h's scanner) and tool-call tags, by position.
#include "reward/extract.h"

#include <algorithm>

#include "agent/tools.h"
#include "core/json_bounded.h"

namespace nki_agent {

namespace {

// arguments.kernel_code of a tool call, whose arguments may be an object or its JSON text.
std::optional<std::string> tool_call_kernel(const nlohmann::json& call) {
  if (!call.is_object()) return std::nullopt;
  auto it = call.find("arguments");
  if (it == call.end()) it = call.find("parameters");
  if (it == call.end()) return std::nullopt;
  nlohmann::json args = *it;
  if (args.is_string()) args = parse_json_bounded(args.get<std::string>());
  if (!args.is_object()) return std::nullopt;
  auto code = args.find("kernel_code");
  if (code == args.end() || !code->is_string() || code->get<std::string>().empty()) return std::nullopt;
  return code->get<std::string>();
}

struct Found {
  size_t offset;
  std::string kernel;
};

// <tool_call> ... </tool_call> tags whose JSON names a kernel_code.
void tool_call_tags(const std::string& text, std::vector<Found>& out) {
  static const std::string kOpen = "<tool_call>", kClose = "</tool_call>";
  size_t pos = 0;
  while ((pos = text.find(kOpen, pos)) != std::string::npos) {
    const size_t body = pos + kOpen.size();
    const size_t close = text.find(kClose, body);
    const std::string json_text = text.substr(body, close == std::string::npos ? std::string::npos : close - body);
    if (auto k = tool_call_kernel(parse_json_bounded(json_text))) out.push_back({pos, *k});
    if (close == std::string::npos) break;
    pos = close + kClose.size();
  }
}

}  // namespace

ExtractedKernels extract_kernels(const Submission& s, const std::string& entry) {
  ExtractedKernels out;
  if (s.kernel_code) {
    out.source = "kernel_code";
    if (!s.kernel_code->empty()) out.kernels.push_back(*s.kernel_code);
    return out;
  }
  if (s.tool_call) {
    out.source = "tool_call";
    if (auto k = tool_call_kernel(*s.tool_call)) out.kernels.push_back(*k);
    return out;
  }
  out.source = "response";
  std::string text = s.response;
  // The prompt (which may show example code) is cut wherever the response repeats it: OpenRLHF's
  // query is the prompt decoded with special tokens, which may precede it.
  if (!s.prompt.empty())
    if (size_t at = text.find(s.prompt); at != std::string::npos) text.erase(0, at + s.prompt.size());
  std::vector<Found> found;
  for (auto& b : python_blocks(text)) found.push_back({b.offset, std::move(b.body)});
  tool_call_tags(text, found);
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.offset < b.offset; });
  for (const auto& f : found)
    if (defines_function(f.kernel, entry)) out.kernels.push_back(f.kernel);
  if (out.kernels.empty() && !found.empty()) out.kernels.push_back(found.back().kernel);
  return out;
}

}  // namespace nki_agent
