// The worker mode of the leakgate binary: `leakgate __worker SPEC_JSON`. Embeds the interpreter
// the spec names, runs one workload and writes its WorkloadResult as JSON to the result pipe.
#pragma once

#include <string>

namespace leakgate::worker {

inline constexpr const char* kWorkerMode = "__worker";

int workerMain(const std::string& specJson);

} // namespace leakgate::worker
