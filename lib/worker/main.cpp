#include "lib/worker/main.h"

#include "lib/base/errors.h"
#include "lib/python/interpreter.h"
#include "probes/leakgate_module.h"
#include "lib/base/subprocess.h"
#include "lib/workloads/workload.h"
#include "probes/probe.h"

#include <fmt/format.h>

#include <cstdio>
#include <unistd.h>

namespace leakgate::worker {
namespace {

void sendResult(const WorkloadResult& result) {
    std::string text =
        nlohmann::json(result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string_view left = text;
    while (!left.empty()) {
        ssize_t written = ::write(kResultFd, left.data(), left.size());
        if (written <= 0) return; // the parent is gone: nobody to tell
        left.remove_prefix(static_cast<size_t>(written));
    }
    ::close(kResultFd);
}

} // namespace

int workerMain(const std::string& specJson) {
    nlohmann::json spec = nlohmann::json::parse(specJson);
    WorkloadResult result;
    result.workload = spec.value("workload", "?");
    result.subject = spec.value("subject", "");
    python::registerLeakgateModule();
    {
        auto env = spec.at("environment").get<python::Environment>();
        python::Interpreter interpreter(env, spec.at("argv").get<std::vector<std::string>>());
        try {
            probes::watchGcEnable();
            result = workloads::run(spec);
        } catch (const pybind11::error_already_set& error) {
            // Converted here, while the interpreter that raised it still lives.
            result.error = WorkloadError{
                fmt::format("Python error in leakgate's harness: {}", error.what()), std::nullopt, ""};
        } catch (const Error& error) {
            result.error = WorkloadError{error.what(), std::nullopt, ""};
        }
        std::fflush(stdout);
        sendResult(result);
    }
    return 0;
}

} // namespace leakgate::worker
