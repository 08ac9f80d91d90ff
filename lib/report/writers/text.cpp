#include "lib/report/writers/text.h"

#include "lib/base/log.h"
#include "lib/report/rules.h"
#include "lib/report/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace leakgate::report {
namespace {

std::string paint(const TextOptions& options, const char* code, const std::string& text) {
    return options.color ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
}

std::string statusWord(const TextOptions& options, Status status) {
    switch (status) {
    case Status::kPass:
        return paint(options, "32", "PASS ");
    case Status::kFail:
        return paint(options, "31;1", "FAIL ");
    case Status::kSkip:
        return paint(options, "33", "SKIP ");
    case Status::kError:
        return paint(options, "35;1", "ERROR");
    }
    return "?";
}

// A name as a terminal may show it: control characters (a carriage return that would overwrite the
// line, an escape sequence that would recolour it) written as Python writes them in a repr.
std::string printable(const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
        if (c >= 0x20 && c != 0x7f) {
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else {
            out += fmt::format("\\x{:02x}", c);
        }
    }
    return out;
}

std::string displayPath(const std::string& file) {
    if (file.empty() || file.front() == '<') return printable(file);
    std::error_code error;
    auto relative = std::filesystem::relative(file, std::filesystem::current_path(), error);
    if (error || relative.empty() || relative.string().starts_with("../..")) return printable(file);
    return printable(relative.string());
}

// A launch finding: the allocation sites tracemalloc named, or the shapes of the cycles left.
// A scan's cyclic-garbage finding is read the same way: where one example was made (tracemalloc,
// innermost first) and the shape of its cycles.
void writeLaunchFinding(std::string& out, const Finding& finding) {
    const bool scan = finding.kind == "cyclic-garbage";
    if (scan && !finding.frames.empty()) {
        out += "  made at (tracemalloc, innermost first):\n";
        for (const FrameInfo& frame : finding.frames)
            out += fmt::format("    {}  {}:{}\n", frame.function, displayPath(frame.file), frame.line);
    }
    if (!finding.allocationSites.empty()) out += "  allocation sites (tracemalloc, the worst case):\n";
    for (const auto& site : finding.allocationSites) {
        out += fmt::format("    {}:{}  {}\n", displayPath(site.file), site.line,
                           blocksPerCall(site.blocksPerCall));
    }
    if (!finding.cycleShapes.empty())
        out += scan ? "  cycles in the garbage (scanner):\n"
                    : "  cycles left per batch of calls (scanner):\n";
    for (const auto& shape : finding.cycleShapes)
        out += fmt::format("    {}:{}\n", cycleShapeCount(shape.count, shape.types), shape.cycle);
    out += fmt::format("  fix:   {}\n", finding.fix);
}

void writeFinding(std::string& out, const TextOptions& options, const Finding& finding) {
    out += fmt::format("\n{} {}\n", paint(options, "1", finding.kind + ":"), finding.summary);
    const Evidence evidence = evidenceOf(finding.kind);
    if (evidence == Evidence::kLaunchLoop) {
        writeLaunchFinding(out, finding);
        return;
    }
    if (evidence == Evidence::kSource) {
        // A static finding: where it is, and the fix; nothing was run, so nothing is pinned.
        for (const auto& frame : finding.frames) {
            std::string column = finding.column ? ":" + std::to_string(*finding.column) : "";
            out += fmt::format("  at:    {}:{}{} in {}\n", displayPath(frame.file), frame.line, column,
                               frame.function);
        }
        out += fmt::format("  fix:   {}\n", finding.fix);
        return;
    }
    if (!finding.path.empty()) {
        std::string path = finding.kind == "retained-frame" ? finding.root : "its frame";
        for (const auto& step : finding.path)
            path += fmt::format(" --{}--> {}", step.label, step.to);
        out += fmt::format("  path:  {}\n", path);
    }
    if (!finding.frames.empty()) {
        std::string hidden = finding.harnessFrames
                                 ? fmt::format(", and {} of leakgate's own", finding.harnessFrames)
                                 : "";
        // Frames held otherwise than through f_back (a traceback's tb_frame, a generator) say how.
        const bool otherwise =
            std::any_of(finding.frames.begin(), finding.frames.end(),
                        [](const FrameInfo& f) { return !f.heldBy.empty() && f.heldBy != "f_back"; });
        out += fmt::format("  pins {} frame{}{}{} (culprit first):\n", finding.frames.size(),
                           finding.frames.size() == 1 ? "" : "s", otherwise ? "" : " through f_back",
                           hidden);
        // A long chain (a test runner's, an event loop's) is cut after the first frames: the culprit
        // and its nearest callers are what a person acts on.
        constexpr size_t kShown = 10;
        const size_t shown = finding.frames.size() > kShown + 2 ? kShown : finding.frames.size();
        size_t width = 0;
        for (size_t i = 0; i < shown; ++i)
            width = std::max(width, finding.frames[i].function.size());
        std::vector<std::string> places;
        size_t placeWidth = 0;
        for (size_t i = 0; i < shown; ++i) {
            places.push_back(
                fmt::format("{}:{}", displayPath(finding.frames[i].file), finding.frames[i].line));
            placeWidth = std::max(placeWidth, places.back().size());
        }
        for (size_t i = 0; i < shown; ++i) {
            const FrameInfo& frame = finding.frames[i];
            if (otherwise && !frame.heldBy.empty()) {
                out += fmt::format("    {:<{}}  {:<{}}  held by {}\n", frame.function, width, places[i],
                                   placeWidth, frame.heldBy);
            } else {
                out += fmt::format("    {:<{}}  {}\n", frame.function, width, places[i]);
            }
        }
        if (shown < finding.frames.size()) {
            out += fmt::format("    ... and {} more, out to {} (all in the JSON report)\n",
                               finding.frames.size() - shown, finding.frames.back().function);
        }
    }
    // A plug-in's finding says what it measured and no more: its reason may be all there is.
    const bool plugin = evidence == Evidence::kPlugin;
    if (!plugin || finding.objects > 0 || finding.bytes > 0) {
        std::string payloads;
        for (const auto& [kind, bytes] : finding.payloadBytes)
            payloads += fmt::format(", and {} of {} memory", humanBytes(bytes), kind);
        if (finding.kind == "held-growth") {
            // Entries, not objects; and only what no other holder keeps too.
            out += fmt::format("  holds {} new entr{} in `{}`, about {} that nothing else keeps{}\n",
                               finding.objects, finding.objects == 1 ? "y" : "ies", finding.root,
                               humanBytes(finding.bytes), payloads);
        } else {
            out += fmt::format("  pins {} object{}, about {}{}\n", finding.objects,
                               finding.objects == 1 ? "" : "s", humanBytes(finding.bytes), payloads);
        }
    }
    if (!plugin || !finding.fix.empty()) out += fmt::format("  fix:   {}\n", finding.fix);
}

void writeSentinels(std::string& out, const std::vector<SentinelVerdict>& sentinels) {
    std::map<std::string, std::pair<int, std::int64_t>> byVerdict; // verdict -> (count, bytes)
    for (const auto& sentinel : sentinels) {
        auto& [count, bytes] = byVerdict[sentinel.verdict];
        ++count;
        bytes += sentinel.bytes;
    }
    std::vector<std::string> parts;
    for (const char* verdict : {"never-freed", "freed-by-gc-only", "freed-by-refcount"}) {
        auto found = byVerdict.find(verdict);
        if (found == byVerdict.end()) continue;
        parts.push_back(
            fmt::format("{} {} ({})", found->second.first, verdict, humanBytes(found->second.second)));
    }
    out += fmt::format("  sentinels: {}\n", fmt::join(parts, ", "));
    constexpr int kShown = 6;
    int shown = 0;
    int outlived = static_cast<int>(sentinels.size()) -
                   (byVerdict.count("freed-by-refcount") ? byVerdict["freed-by-refcount"].first : 0);
    for (const auto& sentinel : sentinels) {
        if (sentinel.verdict == "freed-by-refcount") continue;
        if (shown++ == kShown) {
            out += fmt::format("    ... and {} more (all in the JSON report)\n", outlived - kShown);
            break;
        }
        out += fmt::format("    {:<32} {:<17} {} {}\n", sentinel.label, sentinel.verdict, sentinel.kind,
                           humanBytes(sentinel.bytes));
    }
}

// The end of what the worker or the target wrote (tracebacks, most often): its last lines, the
// rest folded into a count; all of it is in the JSON report.
void writeStderrTail(std::string& out, const std::string& tail) {
    std::vector<std::string_view> lines;
    std::string_view rest = tail;
    while (!rest.empty()) {
        size_t end = rest.find('\n');
        lines.push_back(rest.substr(0, end));
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
    constexpr size_t kShownLines = 12;
    out += "  stderr (tail):\n";
    size_t first = 0;
    if (lines.size() > kShownLines + 2) {
        first = lines.size() - kShownLines;
        out += fmt::format("    | ... {} lines before these (all in the JSON report)\n", first);
    }
    for (size_t i = first; i < lines.size(); ++i)
        out += fmt::format("    | {}\n", lines[i]);
}

std::string reportText(const Report& report, const TextOptions& options) {
    std::string out;
    for (const auto& result : report.results) {
        std::string role = result.role == Role::kReference ? " [reference]" : "";
        out += fmt::format("{} {}: {} {}{} (Python {})\n", base::log::programName(), report.command,
                           result.workload, displayPath(result.subject), role, report.pythonVersion);
        for (const auto& check : result.checks) {
            out += fmt::format("  {} {:<15} {}\n", statusWord(options, check.status), check.name,
                               check.reason);
        }
        if (result.error) {
            out += fmt::format("  {} {}\n", paint(options, "35;1", "error:"), result.error->message);
            if (!result.error->stderrTail.empty()) writeStderrTail(out, result.error->stderrTail);
        }
        if (!result.sentinels.empty()) writeSentinels(out, result.sentinels);
        for (const std::string& note : result.notes)
            out += fmt::format("  note: {}\n", printable(note));
        // The reference is the baseline: its findings are in the JSON, its checks say enough here.
        if (result.role != Role::kReference) {
            for (const auto& finding : result.findings)
                writeFinding(out, options, finding);
        }
        out += "\n";
    }
    size_t findings = report.findings().size();
    out += fmt::format("{} finding{}; exit {}\n", findings, findings == 1 ? "" : "s",
                       options.exitCode.value_or(static_cast<int>(report.exitCode())));
    return out;
}

} // namespace

// Escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL or ESC \\`, and two-byte ones) out of
// text that is not to be coloured: the code under test may colour what it writes and raises.
std::string withoutEscapes(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\x1b') {
            out += text[i];
            continue;
        }
        if (i + 1 >= text.size()) break;
        char kind = text[++i];
        if (kind == '[') {
            while (i + 1 < text.size() && !(text[i + 1] >= 0x40 && text[i + 1] <= 0x7e))
                ++i;
            ++i; // the final byte
        } else if (kind == ']') {
            while (i + 1 < text.size() && text[i + 1] != '\a' &&
                   !(text[i + 1] == '\x1b' && i + 2 < text.size() && text[i + 2] == '\\'))
                ++i;
            if (i + 1 >= text.size()) break;
            i += text[i + 1] == '\a' ? 1 : 2;
        }
    }
    return out;
}

std::string formatText(const Report& report, const TextOptions& options) {
    std::string text = reportText(report, options);
    return options.color ? text : withoutEscapes(text);
}

} // namespace leakgate::report

namespace leakgate::report {

namespace {

std::string culpritText(const BisectCell& cell) {
    return cell.culprit.empty() ? std::string("-") : "`" + cell.culprit + "`";
}

std::string transitionsText(const BisectReport& report, const TextOptions& options) {
    if (report.transitions.empty())
        return "transitions: none (every check kept its verdict and culprit)\n";
    std::string out = fmt::format("transitions ({}, in PEP 440 order{}):\n", report.transitions.size(),
                                  report.versionOrder.empty() ? "" : ", " + report.versionOrder);
    for (const auto& transition : report.transitions) {
        out += fmt::format("  {} -> {}", transition.from, transition.to);
        if (!transition.across.empty()) {
            std::vector<std::string> across;
            const std::string& check = transition.changes.front().check;
            for (const auto& version : transition.across) {
                auto row = std::find_if(report.rows.begin(), report.rows.end(),
                                        [&](const BisectRow& r) { return r.version == version; });
                std::string status = "no result";
                if (row != report.rows.end() && row->error) {
                    status = "error";
                } else if (row != report.rows.end()) {
                    auto cell = row->cells.find(check);
                    if (cell != row->cells.end()) status = toString(cell->second.status);
                }
                across.push_back(fmt::format("{} ({})", version, status));
            }
            out += fmt::format(", across {}", fmt::join(across, ", "));
        }
        out += "\n";
        for (const auto& change : transition.changes) {
            const std::string kind = changeKind(change);
            std::string label = fmt::format("{:<9}", kind);
            if (kind == "regressed") label = paint(options, "31;1", label);
            out += fmt::format("    {}  {}: {} -> {}", label, change.check,
                               toString(change.before.status), toString(change.after.status));
            if (kind == "regressed" && !change.after.culprit.empty())
                out += fmt::format(", culprit {}", culpritText(change.after));
            else if (kind == "fixed" && !change.before.culprit.empty())
                out += fmt::format(" (was {})", culpritText(change.before));
            else if (kind == "culprit")
                out += fmt::format(", culprit {} -> {}", culpritText(change.before),
                                   culpritText(change.after));
            out += "\n";
        }
    }
    return out;
}

} // namespace

std::string formatBisectText(const BisectReport& report, const TextOptions& options) {
    const std::string package =
        report.extras.empty() ? report.package
                              : fmt::format("{}[{}]", report.package, fmt::join(report.extras, ","));
    std::string out = fmt::format(
        "{} bisect: {}{}, target {} (Python {}){}\n\n", base::log::programName(), package,
        report.with.empty() ? "" : fmt::format(" with {}", fmt::join(report.with, ", ")), report.target,
        report.pythonVersion, report.shard.empty() ? "" : ", shard " + report.shard);
    size_t width = 5;
    for (const auto& check : report.checks)
        width = std::max(width, check.size());
    size_t cellWidth = 8;
    for (const auto& row : report.rows)
        cellWidth = std::max(cellWidth, row.version.size());
    out += fmt::format("{:<{}}", "check", width + 2);
    for (const auto& row : report.rows)
        out += fmt::format("  {:<{}}", row.version, cellWidth);
    out += "  first bad  first good\n";
    for (const auto& check : report.checks) {
        out += fmt::format("{:<{}}", check, width + 2);
        for (const auto& row : report.rows) {
            std::string cell = "error";
            if (!row.error) {
                auto found = row.cells.find(check);
                cell = found == row.cells.end() ? "-" : toString(found->second.status);
            }
            if (cell == "fail")
                cell = paint(options, "31;1", fmt::format("{:<{}}", "FAIL", cellWidth));
            else
                cell = fmt::format("{:<{}}", cell, cellWidth);
            out += "  " + cell;
        }
        auto bad = report.firstBad.find(check);
        auto good = report.firstGood.find(check);
        out += fmt::format("  {:<9}  {}\n", bad == report.firstBad.end() ? "-" : bad->second,
                           good == report.firstGood.end() ? "-" : good->second);
    }
    out += "\n" + transitionsText(report, options) + "\n";
    // One line each (the reasons in full, tracebacks included, are in the JSON report); a
    // workload's error is said once, not again for each of its checks.
    auto firstLine = [](const std::string& text) { return text.substr(0, text.find('\n')); };
    for (const auto& row : report.rows) {
        if (row.error) {
            out += fmt::format("{}: error: {}\n", row.version, firstLine(*row.error));
            continue;
        }
        for (const auto& result : row.report->results) {
            if (result.role != Role::kTarget) continue;
            if (result.error)
                out += fmt::format("{} {}: error: {}\n", row.version, result.workload,
                                   firstLine(result.error->message));
            for (const auto& check : result.checks) {
                if (check.status == Status::kError && result.error &&
                    check.reason == result.error->message)
                    continue;
                if (check.status == Status::kFail || check.status == Status::kError) {
                    out += fmt::format("{} {} {}: {}\n", row.version, toString(check.status), check.name,
                                       firstLine(check.reason));
                }
            }
        }
    }
    out += fmt::format("\nexit {}\n", options.exitCode.value_or(static_cast<int>(report.exitCode())));
    return out;
}

} // namespace leakgate::report
