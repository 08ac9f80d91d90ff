// What the fuzz harnesses share: a report decoded from leakgate's own JSON (schema leakgate/1,
// docs/reference/json.md), with the library's WorkloadResult codec for its results, and the one
// way a harness says an invariant broke.
#pragma once

#include "leakgate/report.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace leakgate::fuzz {

// A broken invariant is a crash for libFuzzer: it keeps the input and stops.
[[noreturn]] inline void fail(std::string_view what) {
    std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
    std::abort();
}

// The JSON text of the input, or nothing when it is not JSON (nlohmann's parser is not under test
// here; what leakgate makes of the JSON is).
inline std::optional<nlohmann::json> parseJson(const std::uint8_t* data, size_t size) {
    nlohmann::json parsed =
        nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return std::nullopt;
    return parsed;
}

// The library's decoders (leakgate/report.h), which `leakgate merge` uses too.
inline std::optional<Report> decodeReport(const nlohmann::json& in) {
    return reportFromJson(in);
}
inline std::optional<BisectReport> decodeBisectReport(const nlohmann::json& in) {
    return bisectReportFromJson(in);
}

} // namespace leakgate::fuzz
