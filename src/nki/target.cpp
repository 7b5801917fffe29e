#include "nki/target.h"

#include <fmt/format.h>

namespace nki_agent {

const TargetSpec& target_trn1() {
  static const TargetSpec kSpec{.name = "trn1", .core = "NeuronCore-v2", .sbuf_bytes_per_partition = 180224};
  return kSpec;
}

const TargetSpec& target_trn2() {
  static const TargetSpec kSpec{
      .name = "trn2", .core = "NeuronCore-v3", .core_version = 3, .sbuf_bytes_per_partition = 212984};
  return kSpec;
}

Result<const TargetSpec*> target_by_name(std::string_view name) {
  if (name == "trn1") return &target_trn1();
  if (name == "trn2") return &target_trn2();
  return fail("nkia_unknown_target", fmt::format("unknown target '{}'", name), "use trn1 or trn2");
}

}  // namespace nki_agent
