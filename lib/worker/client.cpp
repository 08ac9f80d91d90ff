#include "lib/worker/client.h"

#include "leakgate/errors.h"
#include "lib/base/data_dir.h"
#include "lib/base/log.h"
#include "lib/base/subprocess.h"
#include "lib/python/compat.h"
#include "lib/worker/main.h"
#include "lib/worker/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <sys/random.h>

namespace leakgate::worker {
namespace {

std::string selfExecutable() {
    return std::filesystem::read_symlink("/proc/self/exe").string();
}

std::string g_extensionModule; // set before any worker starts; empty: the binary's worker mode

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

} // namespace

void startWorkersThroughInterpreter(std::string module) {
    g_extensionModule = std::move(module);
}

std::vector<std::string> workerCommand(const workloads::WorkerSpec& spec, int specFd,
                                       const std::string& token) {
    if (g_extensionModule.empty()) return {selfExecutable(), kWorkerMode, std::to_string(specFd), token};
    std::vector<std::string> argv{spec.environment.executable, "-B"};
    // As the embedded interpreter does (lib/python/interpreter.cpp): the standard modules load from
    // their files, with their __file__ (the environment is this build's Python version).
    if (python::kStandardModulesFromFilesOption)
        argv.insert(argv.end(), {"-X", python::kStandardModulesFromFilesOption});
    const std::string boot = (base::dataDir() / "lib/worker/boot.py").string();
    argv.insert(argv.end(), {boot, g_extensionModule, std::to_string(specFd), token});
    return argv;
}

namespace {

// The worker process itself, and what came back from it: one result per workload of its chain.
std::vector<WorkloadResult> runWorkerProcess(const WorkerRequest& request) {
    std::vector<std::string> chain{request.spec.workload};
    chain.insert(chain.end(), request.spec.then.begin(), request.spec.then.end());
    base::ProcessSpec spec;
    const std::string token = resultToken();
    // The spec travels on a descriptor, not in argv: no 128 KiB limit, any byte of a path kept.
    spec.argv = workerCommand(request.spec, base::kInputFd, token);
    spec.input = workloads::serialize(request.spec);
    spec.timeout = request.timeout * static_cast<int>(chain.size());
    spec.resultPipe = true;
    spec.forwardOutput = request.forwardOutput;
    auto started = std::chrono::steady_clock::now();
    base::ProcessOutcome outcome = base::runProcess(spec);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    const bool forged = !outcome.resultText.empty() && !outcome.resultText.starts_with(token + "\n");
    std::vector<WorkloadResult> results;
    if (!forged && !outcome.resultText.empty()) {
        if (auto sent = parseWorkerResults(outcome.resultText, token, chain.size()))
            results = std::move(*sent);
    }
    // A single worker that timed out sent nothing whole; a chain's results before it are whole.
    if (outcome.timedOut && chain.size() == 1) results.clear();
    const bool whole = results.size() == chain.size();
    for (WorkloadResult& result : results) {
        if (outcome.signal && whole) {
            // The result was complete; the interpreter died on the way out. (In a chain cut short,
            // the signal ended a later workload: its error says so, not the whole results before it.)
            result.details["worker_exit"] = base::describeSignal(*outcome.signal);
        }
        if (outcome.lingered) {
            // Kept: the result was whole. What held on after it is said, not hidden.
            result.details["worker_lingered"] =
                "after its result, the worker (an exit hook) or a process it started kept running "
                "or kept its output open; its process group was killed";
            if (outcome.orphansKilled > 0)
                result.details["worker_orphans_killed"] = outcome.orphansKilled;
        }
    }
    if (whole) return results;
    WorkloadError error;
    error.stderrTail = outcome.stderrTail;
    if (forged) {
        error.message = "the result channel held something other than the worker's results (a write "
                        "to it by the code under test?); the measurement is not trusted";
    } else if (outcome.timedOut) {
        error.message = fmt::format("timed out after {} s; the worker's process group was killed",
                                    std::chrono::duration<double>(spec.timeout).count());
    } else if (outcome.signal) {
        error.signal = outcome.signal;
        error.message = fmt::format("the worker was {}", base::describeSignal(*outcome.signal));
    } else if (outcome.exitCode == kChannelLostExit) {
        error.message =
            "the code under test closed or replaced leakgate's result descriptor (os.closerange() "
            "or os.dup2() over it), so the worker sent no result and "
            "wrote nothing into the file that took its number";
    } else {
        // Exited by itself before the reads sent anything: the code under test ended the process
        // (os._exit, sys.exit from a thread that was the last, an exec of another program).
        error.message =
            fmt::format("the worker exited with status {} without a result (the code under test "
                        "ended the process before leakgate's reads: os._exit(), or os.execv() and "
                        "the like, which replace the worker)",
                        outcome.exitCode.value_or(-1));
    }
    if (chain.size() > 1)
        error.message +=
            fmt::format(" (one worker ran {}, in that order; this one's result did not come)",
                        fmt::join(chain, " then "));
    for (size_t i = results.size(); i < chain.size(); ++i) {
        WorkloadResult result;
        result.workload = chain[i];
        result.subject = request.spec.subject;
        result.seconds = seconds;
        result.error = error;
        results.push_back(std::move(result));
    }
    return results;
}

} // namespace

std::optional<std::vector<WorkloadResult>> parseWorkerResults(const std::string& text,
                                                              const std::string& token, size_t count) {
    const std::string prefix = token + "\n";
    if (!text.starts_with(prefix)) return std::nullopt;
    std::vector<WorkloadResult> results;
    try {
        if (count == 1) {
            // Exactly one result: anything after its JSON makes the text unreadable.
            results.push_back(nlohmann::json::parse(text.substr(prefix.size())).get<WorkloadResult>());
            return results;
        }
        // A chain's: each result its own token line, JSON and newline, up to `count` of them;
        // fewer when the worker died on the way, nothing readable when any byte is out of place.
        for (size_t at = 0; at < text.size();) {
            if (results.size() == count || text.compare(at, prefix.size(), prefix) != 0)
                return std::nullopt;
            const size_t end = text.find('\n', at + prefix.size());
            if (end == std::string::npos) return std::nullopt;
            results.push_back(
                nlohmann::json::parse(text.substr(at + prefix.size(), end - at - prefix.size()))
                    .get<WorkloadResult>());
            at = end + 1;
        }
        return results;
    } catch (const nlohmann::json::exception& error) {
        base::log::debug("unreadable worker result: {}", error.what());
        return std::nullopt;
    }
}

std::optional<WorkloadResult> parseWorkerResult(const std::string& text, const std::string& token) {
    auto results = parseWorkerResults(text, token, 1);
    if (!results) return std::nullopt;
    return std::move(results->front());
}

std::vector<WorkloadResult> runChainInWorker(const WorkerRequest& request) {
    std::vector<WorkloadResult> results = runWorkerProcess(request);
    for (size_t i = 0; i < results.size(); ++i) {
        WorkloadResult& result = results[i];
        const WorkloadEntry& entry =
            findWorkload(i == 0 ? request.spec.workload : request.spec.then[i - 1]);
        addUndecidedChecks(result, entry);
        // A check cannot pass in a run that errored: whatever it read, it did not read a clean,
        // whole measurement (docs/definitions.md, "Check statuses"). Failures stand: what was
        // found was found.
        if (result.error) {
            for (auto& check : result.checks) {
                if (check.status != Status::kPass) continue;
                check.status = Status::kError;
                check.reason = fmt::format("not measured cleanly: {}", result.error->message);
            }
        }
    }
    return results;
}

WorkloadResult runInWorker(const WorkerRequest& request) {
    WorkerRequest one = request;
    one.spec.then.clear();
    return std::move(runChainInWorker(one).front());
}

} // namespace leakgate::worker
