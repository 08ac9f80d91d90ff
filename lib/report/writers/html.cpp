// The page of a report and the page of a bisect: the head and style, the summary of the checks,
// the sentinels and the errors, and the bisect's matrix and transitions. The rest is in files of
// its own: each finding (html_findings.h), the soak's and the launch path's figures
// (html_charts.h), and the text of all of them, escaped (html_text.h).
#include "lib/report/writers/html.h"

#include "lib/base/log.h"
#include "lib/report/units.h"
#include "lib/report/writers/html_charts.h"
#include "lib/report/writers/html_findings.h"
#include "lib/report/writers/html_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <vector>

namespace leakgate::report {

using html::badge;
using html::esc;
using html::findingHtml;
using html::foldedProse;
using html::launchFigures;
using html::soakFigure;

namespace {

// default-src 'none' keeps the page offline and script-free even if an escape were ever missed.
constexpr const char* kHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
)";

constexpr const char* kStyle = R"(<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff;
  max-width:1180px;margin:0 auto;padding:1.5rem}
h1{font-size:1.6rem;margin:0 0 .3rem}
h2{font-size:1.25rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2.2rem}
h3{font-size:1.05rem;margin:.2rem 0 .6rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}
th,td{text-align:left;padding:.3rem .55rem;border-bottom:1px solid #eaeef2;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#f6f8fa;border:1px solid #eaeef2;border-radius:6px;padding:.75rem;overflow:auto;
  white-space:pre-wrap;word-break:break-all}
.badge{display:inline-block;min-width:3.6em;text-align:center;border-radius:4px;padding:0 .45em;
  font-weight:600;color:#fff;font-size:12px;text-transform:uppercase}
.pass{background:#1a7f37}.fail{background:#cf222e}.skip{background:#9a6700}.error{background:#8250df}
.baseline{background:#8c959f}
.exit{font-size:1.05rem;padding:.4rem .8rem;border-radius:6px;display:inline-block;color:#fff;
  font-weight:600}
.exit-0{background:#1a7f37}.exit-1{background:#cf222e}
.exit-2{background:#57606a}.exit-3{background:#8250df}
.meta{color:#57606a}
.finding{border:1px solid #d0d7de;border-left:5px solid #cf222e;border-radius:6px;padding:.8rem 1rem;
  margin:1rem 0}
.fix{background:#dafbe1;border-radius:6px;padding:.5rem .75rem}
.charts{display:flex;flex-wrap:wrap;gap:1.2rem;align-items:flex-start}
figure{margin:0}
figcaption{color:#57606a;font-size:12.5px;max-width:520px}
svg{max-width:100%;height:auto}
svg text{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;fill:#1f2328}
svg .muted{fill:#57606a}
.scroll{overflow-x:auto}
pre.source{white-space:pre;word-break:normal}
pre.source .ctx{color:#57606a}pre.source .hit{font-weight:600}pre.source .caret{color:#cf222e}
details>summary{cursor:pointer;color:#57606a}
</style>
)";

const char* statusClass(Status status) {
    return toString(status);
}

const char* exitMeaning(int code) {
    switch (code) {
    case 0:
        return "clean: every check passed or was skipped with a reason";
    case 1:
        return "findings: at least one check failed";
    case 2:
        return "usage error";
    default:
        return "errored: nothing failed, but something could not be measured";
    }
}

// ---- the page ----

// What the worker wrote before it failed (the Python stack, most often), folded under its line.
std::string stackHtml(const WorkloadError& error) {
    std::string tail = error.stderrTail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' '))
        tail.pop_back();
    if (tail.empty()) return "";
    bool python = tail.find("Traceback (most recent call last)") != std::string::npos;
    return fmt::format("<details class=\"stack\"><summary>{}</summary><pre>{}</pre></details>",
                       python ? "Python stack" : "what the worker wrote (tail)", esc(tail));
}

std::string summaryHtml(const Report& report) {
    std::map<Status, int> counts;
    for (const auto& result : report.results) {
        if (result.role != Role::kTarget) continue;
        for (const auto& check : result.checks)
            ++counts[check.status];
    }
    std::string out = "<h2>Checks</h2>";
    out += fmt::format("<p>{} pass, {} fail, {} skip, {} error (the target's checks); {} finding{}</p>",
                       counts[Status::kPass], counts[Status::kFail], counts[Status::kSkip],
                       counts[Status::kError], report.findings().size(),
                       report.findings().size() == 1 ? "" : "s");
    out += "<table><tr><th>workload</th><th>role</th><th>subject</th><th>check</th><th>status</"
           "th><th>reason</th></tr>";
    for (const auto& result : report.results) {
        for (const auto& check : result.checks) {
            // The reference's failures are the baseline the target is measured against.
            bool baseline = result.role != Role::kTarget && check.status == Status::kFail;
            out += fmt::format(
                R"(<tr><td>{}</td><td>{}</td><td class="mono">{}</td><td class="mono">{}</td>)"
                R"(<td>{}</td><td>{}</td></tr>)",
                esc(result.workload), esc(toString(result.role)), esc(result.subject), esc(check.name),
                baseline ? badge("baseline", "fail")
                         : badge(statusClass(check.status), toString(check.status)),
                foldedProse(check.reason, "the rest"));
        }
        if (result.error) {
            out += fmt::format(
                R"(<tr><td>{}</td><td>{}</td><td class="mono">{}</td><td class="mono">worker</td>)"
                R"(<td>{}</td><td>{}</td></tr>)",
                esc(result.workload), esc(toString(result.role)), esc(result.subject),
                badge("error", "error"),
                foldedProse(result.error->message, "the rest") + stackHtml(*result.error));
        }
    }
    out += "</table>\n";
    return out;
}

std::string errorsHtml(const Report& report) {
    std::string out;
    for (const auto& result : report.results) {
        if (!result.error) continue;
        out += fmt::format(R"(<h3>{} {} on <code>{}</code> ({})</h3><p>{})", badge("error", "error"),
                           esc(result.workload), esc(result.subject), esc(toString(result.role)),
                           foldedProse(result.error->message, "the rest"));
        if (result.error->signal && result.error->message.find("signal") == std::string::npos) {
            out += fmt::format(" (signal {})", *result.error->signal);
        }
        out += "</p>"; // its stack is folded under its row of the table
    }
    return out.empty() ? out : "<h2>Errors</h2>" + out + "\n";
}

std::string sentinelsHtml(const Report& report) {
    std::string out;
    for (const auto& result : report.results) {
        if (result.sentinels.empty()) continue;
        int outlived = 0;
        for (const auto& sentinel : result.sentinels)
            outlived += sentinel.verdict != "freed-by-refcount";
        out += fmt::format(
            "<details{}><summary>{} ({}) on <code>{}</code>: {} of {} sentinels outlived their "
            "frames</summary><table><tr><th>label</th><th>kind</th><th>bytes</th><th>verdict</th></tr>",
            outlived > 0 && result.role == Role::kTarget ? " open" : "", esc(result.workload),
            esc(toString(result.role)), esc(result.subject), outlived, result.sentinels.size());
        for (const auto& sentinel : result.sentinels) {
            const char* cssClass = sentinel.verdict == "freed-by-refcount"  ? "pass"
                                   : sentinel.verdict == "freed-by-gc-only" ? "skip"
                                                                            : "fail";
            out += fmt::format(R"(<tr><td class="mono">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>)",
                               esc(sentinel.label), esc(sentinel.kind), esc(humanBytes(sentinel.bytes)),
                               badge(cssClass, sentinel.verdict));
        }
        out += "</table></details>\n";
    }
    return out.empty() ? out : "<h2>Sentinels</h2>" + out;
}

// When the page was written, in UTC: "2026-12-03 07:12 UTC".
std::string writtenAt() {
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &utc);
    return text;
}

// The distributions the target results name (`details.target_package`, recorded by the worker
// from the target's TARGET_PACKAGE or its module), each once: "<code>nvidia-cutlass-dsl 4.6.1</code>".
std::string packagesUnderTest(const Report& report) {
    std::vector<std::string> seen;
    for (const auto& result : report.results) {
        if (result.role != Role::kTarget) continue;
        auto package = result.details.find("target_package");
        if (package == result.details.end() || !package->is_object() || !package->contains("name") ||
            !(*package)["name"].is_string())
            continue;
        std::string text = (*package)["name"].get<std::string>();
        auto version = package->find("version");
        text += version != package->end() && version->is_string() ? " " + version->get<std::string>()
                                                                  : " (version not installed)";
        if (std::find(seen.begin(), seen.end(), text) == seen.end()) seen.push_back(text);
    }
    std::string out;
    for (const auto& text : seen)
        out += (out.empty() ? "" : ", ") + fmt::format("<code>{}</code>", esc(text));
    return out;
}

} // namespace

std::string formatHtml(const Report& report) {
    const int exitCode = static_cast<int>(report.exitCode());
    std::string out = kHead;
    out += fmt::format("<title>{} {}: exit {}</title>\n", esc(base::log::programName()),
                       esc(report.command), exitCode);
    out += kStyle;
    out += "</head>\n<body>\n";
    out += fmt::format("<header><h1>{} {}</h1>", esc(base::log::programName()), esc(report.command));
    out += fmt::format(
        R"(<p class="meta">{} &middot; leakgate {} &middot; Python {} <code>{}</code></p>)",
        esc(writtenAt()), LEAKGATE_VERSION, esc(report.pythonVersion), esc(report.pythonExecutable));
    if (std::string packages = packagesUnderTest(report); !packages.empty())
        out += fmt::format(R"(<p class="meta">under test: {}</p>)", packages);
    if (!report.arguments.empty()) {
        std::string commandLine;
        for (const auto& argument : report.arguments)
            commandLine += (commandLine.empty() ? "" : " ") + argument;
        out += fmt::format(R"(<p class="meta">command: <code>{}</code></p>)", esc(commandLine));
    }
    out += fmt::format(R"(<p><span class="exit exit-{}">exit {}</span> {}</p></header>)",
                       std::clamp(exitCode, 0, 3), exitCode, esc(exitMeaning(exitCode)));
    out += "\n<main>\n";
    out += summaryHtml(report);

    std::string findings;
    int id = 0;
    for (const auto& result : report.results) {
        if (result.role != Role::kTarget) continue; // the reference's findings are the baseline
        for (const auto& finding : result.findings)
            findings += findingHtml(finding, result, id++);
    }
    if (!findings.empty()) out += "<h2>Findings</h2>\n" + findings;

    // The soak: target and reference on one plot (a gate soaks one target).
    if (std::string soak = soakFigure(report); !soak.empty())
        out += "<h2>Soak: RSS over steps</h2>\n" + soak + "\n";

    if (std::string launch = launchFigures(report); !launch.empty()) {
        out +=
            "<h2>Launch: per call, per scalar type</h2>\n<div class=\"charts\">" + launch + "</div>\n";
    }

    out += sentinelsHtml(report);
    out += errorsHtml(report);
    out += "</main>\n</body>\n</html>\n";
    return out;
}

namespace {

// ---- a bisect: the matrix, the transitions, each release's findings ----

std::string bisectPackage(const BisectReport& report) {
    return report.extras.empty() ? report.package
                                 : fmt::format("{}[{}]", report.package, fmt::join(report.extras, ","));
}

std::string culpritHtml(const std::string& culprit) {
    return culprit.empty() ? std::string("&ndash;") : fmt::format("<code>{}</code>", esc(culprit));
}

// Release by check, oldest first, with the culprits a release's failing checks blame.
std::string bisectMatrixHtml(const BisectReport& report) {
    std::string out = "<h2>Releases</h2>\n<div class=\"scroll\"><table><tr><th>release</th>";
    for (const auto& check : report.checks)
        out += fmt::format(R"(<th class="mono">{}</th>)", esc(check));
    out += "<th>culprit</th></tr>\n";
    for (const auto& row : report.rows) {
        out += fmt::format(R"(<tr><td class="mono">{}</td>)", esc(row.version));
        if (row.error) {
            out +=
                fmt::format(R"(<td colspan="{}">{} {}</td><td>&ndash;</td></tr>)", report.checks.size(),
                            badge("error", "error"), foldedProse(*row.error, "the rest"));
            out += "\n";
            continue;
        }
        std::vector<std::string> culprits;
        for (const auto& check : report.checks) {
            auto cell = row.cells.find(check);
            if (cell == row.cells.end()) {
                out += "<td>&ndash;</td>";
                continue;
            }
            out += fmt::format("<td>{}</td>",
                               badge(statusClass(cell->second.status), toString(cell->second.status)));
            const std::string& culprit = cell->second.culprit;
            if (!culprit.empty() &&
                std::find(culprits.begin(), culprits.end(), culprit) == culprits.end())
                culprits.push_back(culprit);
        }
        std::string named;
        for (const auto& culprit : culprits)
            named += (named.empty() ? "" : ", ") + culpritHtml(culprit);
        out += fmt::format("<td>{}</td></tr>\n", named.empty() ? "&ndash;" : named);
    }
    out += "</table></div>\n<table><tr><th>check</th><th>first bad</th><th>first good</th></tr>";
    for (const auto& check : report.checks) {
        auto bad = report.firstBad.find(check);
        auto good = report.firstGood.find(check);
        out += fmt::format(
            R"(<tr><td class="mono">{}</td><td class="mono">{}</td><td class="mono">{}</td></tr>)",
            esc(check), bad == report.firstBad.end() ? "&ndash;" : esc(bad->second),
            good == report.firstGood.end() ? "&ndash;" : esc(good->second));
    }
    return out + "</table>\n";
}

std::string bisectTransitionsHtml(const BisectReport& report) {
    std::string out = fmt::format("<h2>Transitions ({})</h2>\n", report.transitions.size());
    if (report.transitions.empty())
        return out + "<p>None: every check kept its verdict and culprit.</p>\n";
    out += fmt::format(R"(<p class="meta">Consecutive releases with a verdict, in PEP 440 order{}.</p>)",
                       report.versionOrder.empty() ? "" : " (" + esc(report.versionOrder) + ")");
    out += "\n<ul>\n";
    for (const auto& transition : report.transitions) {
        out += fmt::format(R"(<li><strong class="mono">{} &rarr; {}</strong>)", esc(transition.from),
                           esc(transition.to));
        if (!transition.across.empty()) {
            std::string across;
            for (const auto& version : transition.across)
                across += (across.empty() ? "" : ", ") + fmt::format("<code>{}</code>", esc(version));
            out += fmt::format(" across {} (no verdict there)", across);
        }
        out += "<ul>";
        for (const auto& change : transition.changes) {
            const std::string kind = changeKind(change);
            out += fmt::format(R"(<li>{} <code>{}</code>: {} &rarr; {})",
                               badge(kind == "regressed" ? "fail"
                                     : kind == "fixed"   ? "pass"
                                                         : "skip",
                                     kind),
                               esc(change.check), esc(toString(change.before.status)),
                               esc(toString(change.after.status)));
            if (kind == "regressed" && !change.after.culprit.empty())
                out += ", culprit " + culpritHtml(change.after.culprit);
            else if (kind == "fixed" && !change.before.culprit.empty())
                out += " (was " + culpritHtml(change.before.culprit) + ")";
            else if (kind == "culprit")
                out += ", culprit " + culpritHtml(change.before.culprit) + " &rarr; " +
                       culpritHtml(change.after.culprit);
            out += "</li>";
        }
        out += "</ul></li>\n";
    }
    return out + "</ul>\n";
}

// Each release's target findings, folded: the page of one gate, release by release.
std::string bisectFindingsHtml(const BisectReport& report) {
    std::string out;
    int id = 0;
    for (const auto& row : report.rows) {
        if (!row.report) continue;
        std::string findings, errors;
        int count = 0;
        for (const auto& result : row.report->results) {
            if (result.role != Role::kTarget) continue;
            for (const auto& finding : result.findings) {
                findings += findingHtml(finding, result, id++);
                ++count;
            }
        }
        for (const auto& result : row.report->results) {
            for (const auto& check : result.checks) {
                if (result.role != Role::kTarget || check.status != Status::kError) continue;
                errors += fmt::format(R"(<p>{} <code>{}</code>: {}</p>)", badge("error", "error"),
                                      esc(check.name), foldedProse(check.reason, "the rest"));
            }
        }
        if (findings.empty() && errors.empty()) continue;
        out += fmt::format(
            R"(<details><summary><strong class="mono">{}</strong>: {} finding{}{}</summary>)",
            esc(row.version), count, count == 1 ? "" : "s",
            errors.empty() ? "" : ", checks that errored");
        out += errors + findings + "</details>\n";
    }
    return out.empty() ? out : "<h2>Findings by release</h2>\n" + out;
}

} // namespace

std::string formatBisectHtml(const BisectReport& report) {
    const int exitCode = static_cast<int>(report.exitCode());
    const std::string package = bisectPackage(report);
    std::string out = kHead;
    out += fmt::format("<title>{} bisect {}: exit {}</title>\n", esc(base::log::programName()),
                       esc(package), exitCode);
    out += kStyle;
    out += "</head>\n<body>\n";
    out += fmt::format("<header><h1>{} bisect <code>{}</code></h1>", esc(base::log::programName()),
                       esc(package));
    out += fmt::format(
        R"(<p class="meta">{} &middot; leakgate {} &middot; target <code>{}</code> &middot; Python {}{}</p>)",
        esc(writtenAt()), LEAKGATE_VERSION, esc(report.target), esc(report.pythonVersion),
        report.shard.empty() ? "" : " &middot; shard " + esc(report.shard));
    out += fmt::format(R"(<p class="meta">{} release{} gated</p>)", report.rows.size(),
                       report.rows.size() == 1 ? "" : "s");
    out += fmt::format(R"(<p><span class="exit exit-{}">exit {}</span> {}</p></header>)",
                       std::clamp(exitCode, 0, 3), exitCode, esc(exitMeaning(exitCode)));
    out += "\n<main>\n";
    out += bisectMatrixHtml(report);
    out += bisectTransitionsHtml(report);
    out += bisectFindingsHtml(report);
    out += "</main>\n</body>\n</html>\n";
    return out;
}

} // namespace leakgate::report
