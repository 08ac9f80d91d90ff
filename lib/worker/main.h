// The worker mode of the leakgate binary: `leakgate __worker FD TOKEN`, its spec (CBOR, as
// lib/workloads/spec.h writes it, or JSON text) readable on descriptor FD. Embeds the
// interpreter the spec names, runs one workload and sends its WorkloadResult as JSON on the result
// pipe, once, after TOKEN and a newline. The pipe arrives on fd 3 (kResultFd) and is moved off it,
// close-on-exec, before any code of the target's runs: a write to fd 3, a child's `echo >&3` or a
// file opened on fd 3 cannot reach or be mistaken for the channel.
#pragma once

#include "leakgate/api.h"

#include <string>

namespace leakgate::worker {

inline constexpr const char* kWorkerMode = "__worker";
// The worker's own exit statuses, read by the parent (lib/worker/client.cpp): its result
// descriptor was closed or replaced by the code under test, so no result was sent; its parent
// went away.
inline constexpr int kChannelLostExit = 121;
inline constexpr int kParentGoneExit = 122;

LEAKGATE_API int workerMain(const std::string& specFd, const std::string& token);

} // namespace leakgate::worker
