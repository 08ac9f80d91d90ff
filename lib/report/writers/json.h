// The JSON writer: schema leakgate/1, documented in docs/reference/json.md.
#pragma once

#include "leakgate/report.h"

#include <string>

namespace leakgate::report {

nlohmann::json toJson(const Report& report);
std::string formatJson(const Report& report);
std::string formatBisectJson(const BisectReport& report);

} // namespace leakgate::report
