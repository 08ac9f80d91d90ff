#include "lib/report/writers/junit.h"

#include "lib/report/checks.h"
#include "lib/report/units.h"
#include "lib/report/writers/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>

namespace leakgate::report {
namespace {

// The length of the UTF-8 sequence at `text[at]` and its code point, or 0 when the bytes there
// are not well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
size_t decodeUtf8(std::string_view text, size_t at, char32_t& codePoint) {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    unsigned char lead = byte(at);
    if (lead < 0x80) {
        codePoint = lead;
        return 1;
    }
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF; // the range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0;
        if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;
    } else {
        return 0;
    }
    if (at + length > text.size()) return 0;
    if (byte(at + 1) < low || byte(at + 1) > high) return 0;
    for (size_t i = 2; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80) return 0;
    }
    codePoint = lead & (0xFF >> (length + 1));
    for (size_t i = 1; i < length; ++i)
        codePoint = (codePoint << 6) | (byte(at + i) & 0x3F);
    return length;
}

bool allowedInXml(char32_t codePoint) {
    if (codePoint == '\t' || codePoint == '\n' || codePoint == '\r') return true;
    if (codePoint < 0x20) return false;
    return codePoint != 0xFFFE && codePoint != 0xFFFF;
}

// `prefix` is "leakgate.<command>", or "leakgate.bisect.<version>" for one release of a bisect.
std::string suiteName(const std::string& prefix, const WorkloadResult& result) {
    std::string subject = std::filesystem::path(result.subject).stem().string();
    if (subject.empty()) subject = result.subject.empty() ? "unnamed" : result.subject;
    std::string name = fmt::format("{}.{}", prefix, subject);
    // The built-in reference is named `reference` already.
    if (result.role != Role::kTarget && subject != toString(result.role))
        name += fmt::format(".{}", toString(result.role));
    return name;
}

// A finding as the body of a <failure>: what a person needs without opening the HTML report.
std::string findingText(const Finding& finding) {
    std::string out = fmt::format("{}: {}\n", finding.kind, finding.summary);
    const std::vector<PathStep> steps = pathAsWritten(finding);
    if (!steps.empty()) {
        std::string path = finding.root.empty() ? "its frame" : finding.root;
        for (const auto& step : steps)
            path += fmt::format(" --{}--> {}", step.label, step.to);
        out += fmt::format("  path: {}\n", path);
    }
    const std::vector<FrameInfo> frames = framesAsWritten(finding);
    if (!frames.empty()) out += "  frames (culprit first):\n";
    for (const auto& frame : frames) {
        out += fmt::format("    {}  {}:{}\n", frame.function, frame.file, frame.line);
    }
    if (finding.harnessFrames > 0)
        out += fmt::format("    ... and {} of leakgate's own\n", finding.harnessFrames);
    if (finding.objects > 0 || finding.bytes > 0) {
        std::string payloads;
        for (const auto& [kind, bytes] : finding.payloadBytes)
            payloads += fmt::format(", and {} of {} memory", humanBytes(bytes), kind);
        out += fmt::format("  pins {} objects, about {}{}\n", finding.objects, humanBytes(finding.bytes),
                           payloads);
    }
    if (!finding.fix.empty()) out += fmt::format("  fix: {}\n", finding.fix);
    return out;
}

std::string sentinelText(const WorkloadResult& result) {
    std::string out;
    for (const auto& sentinel : result.sentinels) {
        if (sentinel.verdict == "freed-by-refcount") continue;
        out += fmt::format("{}  {}  {} {}\n", sentinel.label, sentinel.verdict, sentinel.kind,
                           humanBytes(sentinel.bytes));
    }
    return out;
}

std::string errorText(const WorkloadResult& result, const CheckResult* check) {
    std::string out;
    if (check) out += check->reason + "\n";
    if (result.error) {
        if (!check || check->reason != result.error->message) out += result.error->message + "\n";
        if (result.error->signal && result.error->message.find("signal") == std::string::npos) {
            out += fmt::format("signal {}\n", *result.error->signal);
        }
        if (!result.error->stderrTail.empty()) out += "stderr (tail):\n" + result.error->stderrTail;
    }
    return out;
}

struct Counts {
    int tests = 0;
    int failures = 0;
    int errors = 0;
    int skipped = 0;
    double seconds = 0;

    void add(const Counts& other) {
        tests += other.tests;
        failures += other.failures;
        errors += other.errors;
        skipped += other.skipped;
        seconds += other.seconds;
    }
};

// A <testsuite>'s counts; <testsuites> has no `skipped` (junit-10.xsd), so `withSkipped` is false there.
std::string countAttributes(const Counts& counts, bool withSkipped = true) {
    std::string skipped = withSkipped ? fmt::format(R"( skipped="{}")", counts.skipped) : "";
    return fmt::format(R"(tests="{}" failures="{}" errors="{}"{} time="{:.3f}")", counts.tests,
                       counts.failures, counts.errors, skipped, counts.seconds);
}

std::string attr(std::string_view text) {
    return escapeMarkup(text, MarkupContext::kAttribute);
}

// A test case's id is its class name and name: the suite's name with the workload, so that the
// target's and the reference's cases of one check are two tests in a CI system's history.
std::string testcase(const std::string& suite, const WorkloadResult& result, const std::string& name,
                     const std::string& inner) {
    std::string open = fmt::format(R"(    <testcase classname="{}.{}" name="{}")", attr(suite),
                                   attr(result.workload), attr(name));
    if (inner.empty()) return open + "/>\n";
    return open + ">\n" + inner + "    </testcase>\n";
}

std::string element(const char* tag, const std::string& message, const char* type,
                    const std::string& body) {
    std::string open = fmt::format(R"(      <{} message="{}")", tag, attr(message));
    if (type) open += fmt::format(R"( type="{}")", type);
    if (body.empty()) return open + "/>\n";
    return fmt::format("{}>{}</{}>\n", open, escapeMarkup(body), tag);
}

// What the worker wrote last (the target's traceback, most often), beside the error.
std::string systemErr(const WorkloadResult& result) {
    if (!result.error || result.error->stderrTail.empty()) return "";
    return fmt::format("      <system-err>{}</system-err>\n", escapeMarkup(result.error->stderrTail));
}

// One result's testcases, counted as they are written.
std::string writeResult(const std::string& suite, const WorkloadResult& result, Counts& counts) {
    std::string out;
    counts.seconds += result.seconds;
    bool checkErrored = false;
    for (const auto& check : result.checks) {
        ++counts.tests;
        std::string inner;
        switch (check.status) {
        case Status::kPass:
            break;
        case Status::kSkip:
            ++counts.skipped;
            inner = element("skipped", check.reason, nullptr, "");
            break;
        case Status::kError:
            ++counts.errors;
            checkErrored = true;
            inner = element("error", check.reason, "leakgate.error", errorText(result, &check)) +
                    systemErr(result);
            break;
        case Status::kFail: {
            if (result.role != Role::kTarget) {
                // The reference is the baseline, not the thing under test: what it retains does
                // not fail the gate (Report::exitCode), so it does not fail the CI job either.
                inner =
                    fmt::format("      <system-out>{}</system-out>\n",
                                escapeMarkup("baseline (not a failure of the target): " + check.reason));
                break;
            }
            ++counts.failures;
            std::string body;
            for (const auto& finding : result.findings) {
                if (explains(finding.kind, check.name)) body += findingText(finding);
            }
            if (check.name.ends_with("sentinels")) body += sentinelText(result);
            inner = element("failure", check.reason, "leakgate.fail", body);
            break;
        }
        }
        out += testcase(suite, result, check.name, inner);
    }
    if (result.error && !checkErrored) {
        // The worker failed in a way no check carries (it died before deciding any): the error
        // must still show, under the workload's own name.
        ++counts.tests;
        ++counts.errors;
        out += testcase(
            suite, result, result.workload,
            element("error", result.error->message, "leakgate.error", errorText(result, nullptr)) +
                systemErr(result));
    }
    return out;
}

} // namespace

std::string escapeMarkup(std::string_view text, MarkupContext context) {
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    size_t at = 0;
    while (at < text.size()) {
        char32_t codePoint = 0;
        size_t length = decodeUtf8(text, at, codePoint);
        if (length == 0) {
            out += "\xEF\xBF\xBD"; // U+FFFD for a byte that starts no valid sequence
            ++at;
            continue;
        }
        if (!allowedInXml(codePoint)) {
            out += codePoint < 0x100 ? fmt::format("\\x{:02x}", static_cast<unsigned>(codePoint))
                                     : fmt::format("\\u{:04x}", static_cast<unsigned>(codePoint));
            at += length;
            continue;
        }
        switch (codePoint) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        // A parser turns a raw CR into LF, and raw whitespace in an attribute into spaces.
        case '\r':
            out += "&#13;";
            break;
        case '\n':
            out += context == MarkupContext::kAttribute ? "&#10;" : "\n";
            break;
        case '\t':
            out += context == MarkupContext::kAttribute ? "&#9;" : "\t";
            break;
        default:
            out.append(text.substr(at, length));
        }
        at += length;
    }
    return out;
}

namespace {

using Properties = std::vector<std::pair<std::string, std::string>>;

std::string propertiesXml(const Properties& properties) {
    std::string out = "    <properties>\n";
    for (const auto& [name, value] : properties)
        out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", attr(name), attr(value));
    return out + "    </properties>\n";
}

// The <testsuite>s of one report, one per (subject, role) in the order each first appears (a gate
// gives one per role), their counts added to `total`; `extra` are properties of every suite.
std::string reportSuites(const Report& report, const std::string& prefix, const Properties& extra,
                         Counts& total) {
    std::vector<std::pair<std::string, Role>> keys;
    for (const auto& result : report.results) {
        std::pair key{result.subject, result.role};
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
    std::string suites;
    for (const auto& [subject, role] : keys) {
        Counts counts;
        std::string cases;
        const WorkloadResult* first = nullptr;
        // The figures a baseline compares, as properties (junit-10.xsd has them per suite only).
        Properties properties = {{"subject", subject},
                                 {"role", toString(role)},
                                 {"python", report.pythonVersion},
                                 {"leakgate", LEAKGATE_VERSION}};
        properties.insert(properties.end(), extra.begin(), extra.end());
        for (const auto& result : report.results) {
            if (result.subject != subject || result.role != role) continue;
            if (!first) first = &result;
            cases += writeResult(suiteName(prefix, *first), result, counts);
            for (const auto& check : result.checks) {
                if (check.amount)
                    properties.emplace_back("amount." + check.name, std::to_string(*check.amount));
            }
        }
        suites += fmt::format("  <testsuite name=\"{}\" {}>\n", attr(suiteName(prefix, *first)),
                              countAttributes(counts));
        suites += propertiesXml(properties) + cases + "  </testsuite>\n";
        total.add(counts);
    }
    return suites;
}

std::string document(const std::string& name, const Counts& total, const std::string& suites) {
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format("<testsuites name=\"{}\" {}>\n", attr(name), countAttributes(total, false));
    return out + suites + "</testsuites>\n";
}

} // namespace

std::string formatJunit(const Report& report) {
    Counts total;
    const std::string suites = reportSuites(report, "leakgate." + report.command, {}, total);
    return document("leakgate " + report.command, total, suites);
}

std::string formatBisectJunit(const BisectReport& report) {
    Counts total;
    std::string suites;
    for (const auto& row : report.rows) {
        const std::string prefix = "leakgate.bisect." + row.version;
        Properties extra = {{"package", report.package}, {"release", row.version}};
        // A transition is a property of the release it leads to.
        for (const auto& transition : report.transitions) {
            if (transition.to != row.version) continue;
            for (const auto& change : transition.changes) {
                extra.emplace_back(
                    fmt::format("transition.{}", change.check),
                    fmt::format("{} from {}: {} -> {}{}", changeKind(change), transition.from,
                                toString(change.before.status), toString(change.after.status),
                                change.after.culprit.empty() ? ""
                                                             : ", culprit " + change.after.culprit));
            }
        }
        if (row.report) {
            suites += reportSuites(*row.report, prefix, extra, total);
            continue;
        }
        // The release could not be installed: one erroring case in a suite of its own.
        Counts counts;
        counts.tests = counts.errors = 1;
        suites += fmt::format("  <testsuite name=\"{}\" {}>\n", attr(prefix), countAttributes(counts));
        suites += propertiesXml(extra);
        suites += fmt::format("    <testcase classname=\"{}\" name=\"install\">\n", attr(prefix));
        suites += element("error", row.error ? *row.error : "not gated", "leakgate.error",
                          row.error.value_or(""));
        suites += "    </testcase>\n  </testsuite>\n";
        total.add(counts);
    }
    return document("leakgate bisect " + report.package, total, suites);
}

} // namespace leakgate::report
