#include "lib/worker/main.h"

#include "lib/base/errors.h"
#include "lib/python/interpreter.h"
#include "probes/leakgate_module.h"
#include "lib/base/subprocess.h"
#include "lib/worker/registry.h"
#include "probes/probe.h"
#include "probes/sentinel_probe.h"

#include <fmt/format.h>

#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace leakgate::worker {
namespace {

// Where the result pipe was moved: well above the descriptors a program opens.
constexpr int kHiddenResultFd = 730;

int hideResultChannel() {
    int fd = ::fcntl(kResultFd, F_DUPFD_CLOEXEC, kHiddenResultFd);
    ::close(kResultFd);
    return fd; // -1 when the parent gave no pipe: nobody to tell
}

void sendResult(int channel, const std::string& token, const WorkloadResult& result) {
    if (channel < 0) return;
    std::string text =
        token + "\n" + nlohmann::json(result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string_view left = text;
    while (!left.empty()) {
        ssize_t written = ::write(channel, left.data(), left.size());
        if (written <= 0) return; // the parent is gone: nobody to tell
        left.remove_prefix(static_cast<size_t>(written));
    }
    ::close(channel);
}

} // namespace

int workerMain(const std::string& specJson, const std::string& token) {
    const int channel = hideResultChannel();
    const workloads::WorkerSpec spec = workloads::parseWorkerSpec(specJson);
    const WorkloadEntry& entry = findWorkload(spec.workload);
    WorkloadResult result;
    result.workload = spec.workload;
    result.subject = spec.subject;
    probes::registerLeakgateModule();
    {
        python::Interpreter interpreter(spec.environment, spec.argv);
        probes::Session session; // ends before the interpreter does
        try {
            probes::watchGc();
            result = entry.run(spec);
        } catch (const pybind11::error_already_set& error) {
            // Converted here, while the interpreter that raised it still lives.
            result.error = WorkloadError{
                fmt::format("Python error in leakgate's harness: {}", error.what()), std::nullopt, ""};
        } catch (const Error& error) {
            result.error = WorkloadError{error.what(), std::nullopt, ""};
        }
        std::fflush(stdout);
        sendResult(channel, token, result);
    }
    return 0;
}

} // namespace leakgate::worker
