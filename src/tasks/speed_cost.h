// tasks/speed_cost.h — the SpeedModel that verify uses: the cost model (src/cost) over the trace of a
// timing-only run, and the roofline bound of the target's hardware description.
#pragma once

#include "cost/hardware.h"
#include "tasks/speed.h"

namespace nki_agent {

// simulate: the scheduled latency of profile_trace() on hardware_for_target(target), each target's
// description parsed once per model.
// roofline: max(flops / TensorE peak, bytes / HBM bandwidth). The peak is the dense BF16 one when
// the task lets a kernel compute in lower precision, and the FP32 one (the matmul rules'
// fp32_factor slower) when it does not: the bound a legal kernel could reach.
SpeedModel cost_speed_model();
// The same on one given description (a `--hardware` file, a calibrated target) whatever the task's
// target: simulate and roofline read `hw`. Its identity is left empty (results over it are not
// cached) unless the caller names the description, e.g. by a hash of its file.
SpeedModel cost_speed_model(HardwareSpec hw);

}  // namespace nki_agent
