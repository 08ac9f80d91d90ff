#include "lib/report/writers/html_findings.h"

#include "lib/report/rules.h"
#include "lib/report/units.h"
#include "lib/report/writers/html_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <utility>
#include <vector>

namespace leakgate::report::html {
namespace {

// ---- a finding's path: boxes for objects, arrows labelled with the edges ----

// Objects top to bottom, each edge an arrow down with its label beside it. A frame cycle ends
// where it started: its last edge loops back up to the first box.
std::string pathSvg(const Finding& finding, const std::vector<PathStep>& path, int id) {
    constexpr size_t kTextLimit = 80;
    constexpr double kLeft = 56, kBoxHeight = 30, kGap = 46, kTop = 12;
    const bool cycle = finding.kind != "retained-frame";
    std::vector<std::string> nodes;
    std::vector<std::string> labels; // labels[i]: the edge out of nodes[i]
    if (cycle) {
        nodes.push_back(path.back().to); // the culprit frame: where the cycle closes
        for (size_t i = 0; i + 1 < path.size(); ++i)
            nodes.push_back(path[i].to);
        for (const auto& step : path)
            labels.push_back(step.label);
    } else {
        nodes.push_back(finding.root.empty() ? "root" : finding.root);
        for (const auto& step : path) {
            labels.push_back(step.label);
            nodes.push_back(step.to);
        }
    }
    auto boxY = [&](size_t i) { return kTop + static_cast<double>(i) * (kBoxHeight + kGap); };
    double width = 0;
    for (const auto& node : nodes) {
        width = std::max(
            width, kLeft + static_cast<double>(std::min(node.size(), kTextLimit)) * kCharWidth + 24);
    }
    for (const auto& label : labels) {
        width = std::max(
            width, kLeft + 40 + static_cast<double>(std::min(label.size(), kTextLimit)) * kCharWidth);
    }
    double loopY = boxY(nodes.size() - 1) + kBoxHeight + 26;
    double height = (cycle ? loopY : boxY(nodes.size() - 1) + kBoxHeight) + 12;

    std::string body;
    for (size_t i = 0; i < nodes.size(); ++i) {
        double boxWidth = static_cast<double>(std::min(nodes[i].size(), kTextLimit)) * kCharWidth + 20;
        bool frame = nodes[i].starts_with("frame of") || (cycle && i == 0);
        body += fmt::format(
            R"(<g><title>{}</title><rect x="{}" y="{:.1f}" width="{:.1f}" height="{}" rx="5" )"
            R"(fill="{}" stroke="{}"/><text x="{}" y="{:.1f}">{}</text></g>)",
            plain(nodes[i]), kLeft, boxY(i), boxWidth, kBoxHeight, frame ? "#fff1e5" : "#f6f8fa",
            frame ? "#bc4c00" : "#8c959f", kLeft + 10, boxY(i) + 19,
            svgProse(shorten(nodes[i], kTextLimit)));
    }
    const double arrowX = kLeft + 24;
    for (size_t i = 0; i + 1 < nodes.size(); ++i) {
        double from = boxY(i) + kBoxHeight, to = boxY(i + 1);
        body += fmt::format(R"(<line x1="{0}" x2="{0}" y1="{1:.1f}" y2="{2:.1f}" stroke="#1f2328" )"
                            R"~(marker-end="url(#arrow{3})"/><text x="{4}" y="{5:.1f}">{6}</text>)~",
                            arrowX, from, to - 2, id, arrowX + 12, (from + to) / 2 + 4,
                            svgProse(shorten(labels[i], kTextLimit)));
    }
    if (cycle) {
        double from = boxY(nodes.size() - 1) + kBoxHeight, back = boxY(0) + kBoxHeight / 2;
        body += fmt::format(
            R"(<path d="M{0} {1:.1f} V{2:.1f} H18 V{3:.1f} H{4}" fill="none" stroke="#cf222e" )"
            R"~(stroke-width="1.5" marker-end="url(#arrow{5}r)"/>)~"
            R"(<text x="{6}" y="{7:.1f}" style="fill:#cf222e">{8}</text>)",
            arrowX, from, loopY, back, kLeft - 2, id, arrowX + 12, from + 17,
            svgProse(shorten(labels.back(), kTextLimit)));
    }
    std::string markers = fmt::format(
        R"(<defs><marker id="arrow{0}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" )"
        R"(markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#1f2328"/>)"
        R"(</marker><marker id="arrow{0}r" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" )"
        R"(markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#cf222e"/>)"
        R"(</marker></defs>)",
        id);
    return fmt::format(R"(<div class="scroll"><svg class="path" xmlns="http://www.w3.org/2000/svg" )"
                       R"(width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" role="img">)"
                       R"(<title>{2}</title>{3}{4}</svg></div>)",
                       width, height, esc(cycle ? "the reference cycle" : "the path from the root"),
                       markers, body);
}

// ---- a lint finding: the lines around it, the column marked ----

// Read when the page is written (lint's files are the user's own and still there); a file that
// cannot be read shows its location only.
std::string sourceSnippet(const Finding& finding) {
    constexpr int kAround = 2;
    constexpr size_t kLineLimit = 160;
    if (finding.frames.empty() || finding.frames[0].line <= 0) return "";
    const FrameInfo& at = finding.frames[0];
    std::string where = fmt::format("{}:{}", at.file, at.line);
    if (finding.column) where += fmt::format(":{}", *finding.column);
    std::ifstream file(at.file);
    std::vector<std::pair<int, std::string>> lines;
    std::string line;
    for (int number = 1; file && std::getline(file, line) && number <= at.line + kAround; ++number) {
        if (number >= at.line - kAround) lines.emplace_back(number, line);
    }
    if (lines.empty() || lines.back().first < at.line) {
        return fmt::format(R"(<p class="meta">at <code>{}</code> (the source could not be read)</p>)",
                           esc(where));
    }
    std::string out =
        fmt::format(R"(<p class="meta">at <code>{}</code></p><pre class="source">)", esc(where));
    for (const auto& [number, text] : lines) {
        std::string shown = shorten(text, kLineLimit);
        bool hit = number == at.line;
        out += fmt::format(R"(<span class="{}">{:>5} | {}</span>)", hit ? "hit" : "ctx", number,
                           esc(shown));
        out += "\n";
        if (hit && finding.column && *finding.column >= 1 &&
            static_cast<size_t>(*finding.column) <= shown.size() + 1) {
            // Tabs kept, so the caret lines up under the same characters.
            std::string pad;
            for (int i = 0; i + 1 < *finding.column; ++i)
                pad += shown[static_cast<size_t>(i)] == '\t' ? '\t' : ' ';
            out += fmt::format(R"(<span class="caret">      | {}^</span>)", pad) + "\n";
        }
    }
    return out + "</pre>";
}

} // namespace

std::string findingHtml(const Finding& finding, const WorkloadResult& result, int id) {
    std::string out = R"(<article class="finding">)";
    out += fmt::format("<h3>{} {}</h3>", badge("fail", finding.kind), prose(finding.summary));
    out += fmt::format(R"(<p class="meta">{} on <code>{}</code>)", esc(result.workload),
                       esc(result.subject));
    if (finding.objects > 0 || finding.bytes > 0) {
        out += fmt::format(" &middot; pins {} object{}, about {}", finding.objects,
                           finding.objects == 1 ? "" : "s", esc(humanBytes(finding.bytes)));
        for (const auto& [kind, bytes] : finding.payloadBytes)
            out += fmt::format(", and {} of {} memory", esc(humanBytes(bytes)), esc(kind));
    }
    out += "</p>";
    if (finding.kind.starts_with("lint:")) {
        // A lint finding is a place in a file: its lines, not a cycle.
        out += sourceSnippet(finding);
        if (!finding.fix.empty())
            out += fmt::format(R"(<p class="fix"><strong>Fix:</strong> {}</p>)", prose(finding.fix));
        return out + "</article>\n";
    }
    const std::vector<PathStep> path = pathAsWritten(finding);
    if (!finding.cycleShapes.empty()) {
        // Launch garbage: cycle shapes with their counts, not the edges of one path.
        out += "<p>Cycles left per launch:</p><ul>";
        for (const auto& shape : finding.cycleShapes) {
            out += fmt::format("<li>{}: <code>{}</code></li>",
                               esc(cycleShapeCount(shape.count, shape.types)), plain(shape.cycle));
        }
        out += "</ul>";
    } else if (!path.empty()) {
        out += pathSvg(finding, path, id);
    }
    const std::vector<FrameInfo> frames = framesAsWritten(finding);
    if (!frames.empty()) {
        bool sites = evidenceOf(finding.kind) == Evidence::kLaunchLoop;
        out += sites ? "<p>Top allocation sites of the worst case:</p>"
                       "<table><tr><th>#</th><th>per call</th><th>file</th><th>line</th></tr>"
                     : "<p>Pinned frames, culprit first:</p>"
                       "<table><tr><th>#</th><th>function</th><th>file</th><th>line</th></tr>";
        for (size_t i = 0; i < frames.size(); ++i) {
            const FrameInfo& frame = frames[i];
            out += fmt::format(
                R"(<tr><td>{}</td><td class="mono">{}</td><td class="mono">{}</td><td>{}</td></tr>)",
                i == 0 && !sites ? "culprit" : std::to_string(i + 1), esc(frame.function),
                esc(frame.file), frame.line);
        }
        out += "</table>";
        if (finding.harnessFrames > 0) {
            out += fmt::format(R"(<p class="meta">and {} of leakgate's own frames, left out</p>)",
                               finding.harnessFrames);
        }
    }
    if (!finding.fix.empty())
        out += fmt::format(R"(<p class="fix"><strong>Fix:</strong> {}</p>)", prose(finding.fix));
    out += "</article>\n";
    return out;
}

} // namespace leakgate::report::html
