// The JUnit XML writer, for CI systems that show test results (Jenkins, GitLab, GitHub actions
// that read JUnit): a <testsuite> per (subject, role), a <testcase> per check.
#pragma once

#include "leakgate/report.h"

#include <string>
#include <string_view>

namespace leakgate::report {

std::string formatJunit(const Report& report);
// A bisect: each release's gate suites under leakgate.bisect.<version>, its transitions as
// properties of the release they lead to, a release that could not be installed as one error.
std::string formatBisectJunit(const BisectReport& report);

enum class MarkupContext { kText, kAttribute };

// `text` made safe for XML 1.0 and for HTML, as element content or as a quoted attribute value:
// & < > " ' escaped, invalid UTF-8 replaced with U+FFFD, and the characters XML 1.0 forbids (C0
// controls other than tab, newline and carriage return; U+FFFE, U+FFFF) written as `\xNN` text.
// The target's stderr and names reach the reports unfiltered, so every string goes through here.
std::string escapeMarkup(std::string_view text, MarkupContext context = MarkupContext::kText);

} // namespace leakgate::report
