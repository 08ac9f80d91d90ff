// Parent side of a worker: spawns `leakgate __worker SPEC`, and turns whatever happens to it
// into a WorkloadResult. A crash, a hang or a missing result becomes an `error` result; it never
// throws for the target's misbehaviour. Every check the workload decides (lib/worker/registry.h)
// has a status in the result: those the worker did not decide are `error`, and so is every check
// that would pass in a result that errored.
#pragma once

#include "leakgate/report.h"
#include "lib/workloads/spec.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::worker {

struct WorkerRequest {
    workloads::WorkerSpec spec;
    std::chrono::milliseconds timeout{300'000};
    bool forwardOutput = true; // show the target's output on our stderr
};

WorkloadResult runInWorker(const WorkerRequest& request);
// A spec with `then`: one worker runs spec.workload and then each of `then`, in order; their
// results in that order. What befalls the worker (a crash, a hang, a forged result) befalls
// every result of it: the worker sends them together, after the last.
std::vector<WorkloadResult> runChainInWorker(const WorkerRequest& request);

// What the parent reads from a worker's result channel: `token`, a newline, then exactly one
// WorkloadResult's JSON, or for a chain of `count` workloads a JSON array of exactly `count`.
// Nothing (std::nullopt) when the text does not start with the token line or the rest is not
// that.
std::optional<WorkloadResult> parseWorkerResult(const std::string& text, const std::string& token);
std::optional<std::vector<WorkloadResult>> parseWorkerResults(const std::string& text,
                                                              const std::string& token, size_t count);

} // namespace leakgate::worker
