#include "runtime/python/kernel_handler.h"

#include "runtime/kernel_call.h"
#include "runtime/kernel_service.h"
#include "runtime/python/py_host.h"
#include "runtime/python/replay.h"

namespace nki_agent {

void register_kernel_handler(HandlerRegistry& registry) {
  registry.set_warmup([]() -> Result<void> { return python_host_init(); });
  registry.register_handler(kKernelHandler,
                            [](const std::string& payload, const Attachments& attachments) -> Result<Reply> {
                              auto call = decode_call(payload, attachments);
                              if (!call) return fail(call.error());
                              // The kernel's own failures travel inside the outcome, so the host tells them from the
                              // sandbox's verdicts only by their codes.
                              // The outputs go out from their own storage (runtime/reply.h), not copied.
                              if (call->runs == 1) return encode_outcome_reply(python_run(*call));
                              // Several sets of inputs: each its own run in this one process, in Python or
                              // replayed from an earlier run of the same shapes (runtime/python/replay.h); each
                              // outcome encoded as it ends (the reply keeps only its outputs' storage).
                              Reply reply;
                              RunSeries series(*call);
                              for (int i = 0; i < call->runs; ++i) {
                                auto outcome = series.run(i);
                                append_run_outcome(reply, outcome);
                                if (!outcome) break;
                              }
                              return reply;
                            });
}

}  // namespace nki_agent
