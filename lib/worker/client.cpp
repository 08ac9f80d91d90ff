#include "lib/worker/client.h"

#include "leakgate/errors.h"
#include "lib/base/log.h"
#include "lib/base/subprocess.h"
#include "lib/worker/main.h"
#include "lib/worker/registry.h"

#include <fmt/format.h>

#include <filesystem>
#include <sys/random.h>

namespace leakgate::worker {
namespace {

std::string selfExecutable() {
    return std::filesystem::read_symlink("/proc/self/exe").string();
}

// A fresh token per worker: the one result it sends starts with it, so nothing else written to
// the channel is taken for a result.
std::string resultToken() {
    unsigned char bytes[16];
    if (::getrandom(bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes)))
        throw EnvironmentError("cannot read random bytes for the worker's token");
    std::string token;
    for (unsigned char byte : bytes)
        token += fmt::format("{:02x}", byte);
    return token;
}

// The worker process itself, and what came back from it.
WorkloadResult runWorkerProcess(const WorkerRequest& request) {
    ProcessSpec spec;
    const std::string token = resultToken();
    // The spec travels on a descriptor, not in argv: no 128 KiB limit, any byte of a path kept.
    spec.argv = {selfExecutable(), kWorkerMode, std::to_string(kInputFd), token};
    spec.input = workloads::serialize(request.spec);
    spec.timeout = request.timeout;
    spec.resultPipe = true;
    spec.forwardOutput = request.forwardOutput;
    auto started = std::chrono::steady_clock::now();
    ProcessOutcome outcome = runProcess(spec);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    WorkloadResult result;
    const bool forged = !outcome.resultText.empty() && !outcome.resultText.starts_with(token + "\n");
    if (!outcome.timedOut && !forged && !outcome.resultText.empty()) {
        if (std::optional<WorkloadResult> sent = parseWorkerResult(outcome.resultText, token)) {
            result = std::move(*sent);
            if (outcome.signal) {
                // The result was complete; the interpreter died on the way out.
                result.details["worker_exit"] = describeSignal(*outcome.signal);
            }
            if (outcome.lingered) {
                // Kept: the result was whole. What held on after it is said, not hidden.
                result.details["worker_lingered"] =
                    "after its result, the worker (an exit hook) or a process it started kept running "
                    "or kept its output open; its process group was killed";
                if (outcome.orphansKilled > 0) result.details["worker_orphans_killed"] = outcome.orphansKilled;
            }
            return result;
        }
    }
    result.workload = request.spec.workload;
    result.subject = request.spec.subject;
    result.seconds = seconds;
    WorkloadError error;
    error.stderrTail = outcome.stderrTail;
    if (forged) {
        error.message = "the result channel held something other than the worker's one result (a write "
                        "to it by the code under test?); the measurement is not trusted";
    } else if (outcome.timedOut) {
        error.message = fmt::format("timed out after {} s; the worker's process group was killed",
                                    std::chrono::duration<double>(request.timeout).count());
    } else if (outcome.signal) {
        error.signal = outcome.signal;
        error.message = fmt::format("the worker was {}", describeSignal(*outcome.signal));
    } else {
        error.message = fmt::format("the worker exited with status {} without a result",
                                    outcome.exitCode.value_or(-1));
    }
    result.error = std::move(error);
    return result;
}

} // namespace

std::optional<WorkloadResult> parseWorkerResult(const std::string& text, const std::string& token) {
    const std::string prefix = token + "\n";
    if (!text.starts_with(prefix)) return std::nullopt;
    try {
        // Exactly one result: anything after its JSON makes the text unreadable.
        return nlohmann::json::parse(text.substr(prefix.size())).get<WorkloadResult>();
    } catch (const nlohmann::json::exception& error) {
        log::debug("unreadable worker result: {}", error.what());
        return std::nullopt;
    }
}

WorkloadResult runInWorker(const WorkerRequest& request) {
    const WorkloadEntry& entry = findWorkload(request.spec.workload);
    WorkloadResult result = runWorkerProcess(request);
    addUndecidedChecks(result, entry);
    // A check cannot pass in a run that errored: whatever it read, it did not read a clean,
    // whole measurement (docs/definitions.md, "Check statuses"). Failures stand: what was found
    // was found.
    if (result.error) {
        for (auto& check : result.checks) {
            if (check.status != Status::kPass) continue;
            check.status = Status::kError;
            check.reason = fmt::format("not measured cleanly: {}", result.error->message);
        }
    }
    return result;
}

} // namespace leakgate::worker
