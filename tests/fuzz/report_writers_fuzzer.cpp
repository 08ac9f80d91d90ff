// The report writers (lib/report/writers/: text, json, junit, sarif, html). The input is decoded
// as leakgate's JSON (a scan/gate/lint report, or a bisect table) with the library's codec; when
// it decodes, every writer runs on it, in memory. A writer must neither throw nor crash on any
// report, and the JSON it writes must read back.
#include "lib/report/writers/html.h"
#include "lib/report/writers/json.h"
#include "lib/report/writers/junit.h"
#include "lib/report/writers/sarif.h"
#include "lib/report/writers/text.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

using namespace leakgate;

void mustBeJson(const std::string& text, const char* writer) {
    if (!nlohmann::json::accept(text)) fuzz::fail(std::string(writer) + " wrote text that is not JSON");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
    std::optional<nlohmann::json> document = fuzz::parseJson(data, size);
    if (!document) return 0;
    if (std::optional<Report> report = fuzz::decodeReport(*document)) {
        (void)report::formatText(*report, report::TextOptions{false});
        (void)report::formatText(*report, report::TextOptions{true});
        mustBeJson(report::formatJson(*report), "formatJson");
        (void)report::formatJunit(*report);
        mustBeJson(report::formatSarif(*report, "/work/main"), "formatSarif");
        (void)report::formatHtml(*report);
        for (const WorkloadResult& result : report->results) {
            for (const Finding& finding : result.findings)
                (void)report::findingFingerprint(finding, result);
        }
    }
    if (std::optional<BisectReport> bisect = fuzz::decodeBisectReport(*document)) {
        (void)report::formatBisectText(*bisect, report::TextOptions{false});
        (void)report::formatBisectText(*bisect, report::TextOptions{true});
        mustBeJson(report::formatBisectJson(*bisect), "formatBisectJson");
        (void)report::formatBisectJunit(*bisect);
        mustBeJson(report::formatBisectSarif(*bisect, "/work/main"), "formatBisectSarif");
        (void)report::formatBisectHtml(*bisect);
    }
    return 0;
}
