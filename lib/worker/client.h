// Parent side of a worker: spawns `leakgate __worker SPEC`, and turns whatever happens to it
// into a WorkloadResult. A crash, a hang or a missing result becomes an `error` result; it never
// throws for the target's misbehaviour.
#pragma once

#include "lib/report/model.h"

#include <nlohmann/json.hpp>

#include <chrono>

namespace leakgate::worker {

struct WorkerRequest {
    nlohmann::json spec; // must hold workload, subject, environment, argv
    std::chrono::milliseconds timeout{300'000};
    bool forwardOutput = true; // show the target's output on our stderr
};

WorkloadResult runInWorker(const WorkerRequest& request);

} // namespace leakgate::worker
