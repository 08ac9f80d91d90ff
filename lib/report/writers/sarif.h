// The SARIF 2.1.0 writer, for code-scanning services (GitHub code scanning, Azure DevOps): a rule
// per finding kind, a result per finding of the target, located at the culprit frame.
#pragma once

#include "leakgate/report.h"

#include <filesystem>
#include <string>

namespace leakgate::report {

// File locations under the current directory are written relative to it (%SRCROOT%), the way
// code-scanning services match them to a checkout; others as absolute file:// URIs.
std::string formatSarif(const Report& report);
std::string formatSarif(const Report& report, const std::filesystem::path& sourceRoot);

// A bisect: a run per release (its gate's results, each with a `release` property), its own
// category (automationDetails.id "leakgate/bisect/<package>/<release>/"), the transitions that
// lead to it as run properties; a release that could not be installed is a run with no results
// and its error as the tool's notification.
std::string formatBisectSarif(const BisectReport& report);
std::string formatBisectSarif(const BisectReport& report, const std::filesystem::path& sourceRoot);

// The fingerprint a code-scanning service uses to tell a new alert from one it has seen: a hash
// of what identifies the leak (rule, culprit file name and function, the locals that close the
// cycle), never of addresses, counts, orders or the lines of the frames it happens to pin.
std::string findingFingerprint(const Finding& finding, const WorkloadResult& result);

} // namespace leakgate::report
