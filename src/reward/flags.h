// reward/flags.h — what marks a kernel as gaming the verifier rather than failing it.
//
// A verification says pass or fail; a reward must also tell a kernel that tried and failed from
// one that tried to be paid without doing the work, because a shaped reward that pays partial
// credit (for compiling, say) would otherwise pay a hack as much as an honest attempt. The flags
// are read off the verification: the static policy's rules (a syntax error is a compile failure,
// not a flag), the sandbox refusing what a kernel may not do (reading values at trace time,
// reaching outside), and the degenerate-output checks (all zeros, one constant, a copy of an input).
// `excessive_speedup` (KernelBench's >10x) is reported and changes no score.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/verify.h"

namespace nki_agent {

struct RewardFlag {
  std::string_view name;  // as reported; static-policy flags are "static_policy:<rule>"
  std::string_view meaning;
  bool zeroes;  // puts every preset that sees flags at its floor
};

std::span<const RewardFlag> reward_flags();

inline constexpr double kExcessiveSpeedup = 10.0;

// The flags of one verification, in table order.
std::vector<std::string> flags_of(const VerifyResult& v);
// Whether any of `flags` zeroes a reward.
bool has_zeroing_flag(const std::vector<std::string>& flags);

}  // namespace nki_agent
