// Parent side of a worker: spawns it (lib/worker/main.h: the binary's worker mode, or the
// environment's interpreter loading the extension module), and turns whatever happens to it
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

// Where leakgate runs as the Python package's extension module (the wheel's CLI, which links no
// libpython): every worker from now on starts as its spec's interpreter loading `module`, the
// extension module's file, instead of as this process's binary (an interpreter, then).
LEAKGATE_API void startWorkersThroughInterpreter(std::string module);

// The command line of a worker for `spec`, its spec on descriptor `specFd`.
std::vector<std::string> workerCommand(const workloads::WorkerSpec& spec, int specFd,
                                       const std::string& token);

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
