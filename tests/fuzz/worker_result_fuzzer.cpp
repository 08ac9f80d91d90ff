// The parent's side of the worker pipe (lib/worker/client.h, parseWorkerResult and, for a chain of
// two, parseWorkerResults): the text a worker wrote to its result channel, a token line then one
// WorkloadResult's JSON (the codec of lib/report/model.cpp), or a chain's token-line-and-JSON
// messages. Any text is results or nothing, never more than asked for; a result read must survive
// its own encoding: encoded and read back, it encodes the same (the parent reports what the
// worker sent).
#include "lib/worker/client.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
    using namespace leakgate;
    // The seeds (tests/fuzz/corpus/worker_result/) start with this token's line.
    static const std::string kToken = "0123456789abcdef0123456789abcdef";
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto survives = [](const WorkloadResult& result) {
        const nlohmann::json once = result;
        const WorkloadResult again = once.get<WorkloadResult>();
        const nlohmann::json twice = again;
        if (once != twice) fuzz::fail("a result read back from its own encoding encodes differently");
    };
    if (std::optional<WorkloadResult> result = worker::parseWorkerResult(text, kToken))
        survives(*result);
    if (auto chain = worker::parseWorkerResults(text, kToken, 2)) {
        if (chain->size() > 2) fuzz::fail("a chain of two read more than two results");
        for (const WorkloadResult& result : *chain)
            survives(result);
    }
    return 0;
}
