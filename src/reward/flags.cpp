// reward/flags.cpp — the flag table and how a verification maps onto it.
#include "reward/flags.h"

#include <algorithm>

namespace nki_agent {

namespace {

constexpr RewardFlag kFlags[] = {
    {"static_policy", "the source breaks the static policy (the rule follows the colon)", true},
    {"trace_time_value_read", "the kernel read a tensor's values while it was traced", true},
    {"sandbox_refused", "the kernel tried an operation the sandbox refuses (files, processes, network)", true},
    {"zero_output", "an output is all zeros where the reference is not", true},
    {"constant_output", "an output holds one value where the reference does not", true},
    {"input_copy", "an output is a copy of an input", true},
    {"excessive_speedup", "the speedup over the baseline is above 10x: worth a look, not a penalty", false},
};

std::string_view base_name(std::string_view flag) {
  return flag.substr(0, flag.find(':'));
}

}  // namespace

std::span<const RewardFlag> reward_flags() {
  return kFlags;
}

std::vector<std::string> flags_of(const VerifyResult& v) {
  std::vector<std::string> out;
  auto add = [&](std::string f) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(std::move(f));
  };
  for (const auto& viol : v.violations)
    if (viol.rule != "syntax") add("static_policy:" + viol.rule);
  if (v.check == "kernel_error" && v.diagnostic) {
    const std::string& code = v.diagnostic->code;
    if (code == "nkia_trace_time_value_read") add("trace_time_value_read");
    if (code == "nkia_sandbox_refused" || code == "nkia_sandbox_forbidden_syscall") add("sandbox_refused");
  }
  if (v.check == "zero_output" || v.check == "constant_output" || v.check == "input_copy") add(v.check);
  if (v.passed && v.speed.available && v.speed.speedup > kExcessiveSpeedup) add("excessive_speedup");
  return out;
}

bool has_zeroing_flag(const std::vector<std::string>& flags) {
  for (const auto& f : flags)
    for (const auto& row : kFlags)
      if (row.zeroes && row.name == base_name(f)) return true;
  return false;
}

}  // namespace nki_agent
