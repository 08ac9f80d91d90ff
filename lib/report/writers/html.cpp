#include "lib/report/writers/html.h"

#include "lib/base/log.h"
#include "lib/report/rules.h"
#include "lib/report/units.h"
#include "lib/report/writers/junit.h"
#include "lib/report/writers/text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <optional>

namespace leakgate::report {
namespace {

using nlohmann::json;

// Every string that reaches the page goes through here: file names, functions, summaries and
// labels come from the target, and a script may be named `<script>....py`. (No attribute of the
// page carries one of them.)
// Terminal colour codes of the code under test are dropped first: a page shows none of them.
std::string esc(std::string_view text) {
    return escapeMarkup(withoutEscapes(std::string(text)), MarkupContext::kText);
}

// Text written for people (summaries, reasons, fixes, captions), where `name` marks code: each
// pair of backticks becomes <code>. Escaped first, so what is inside stays text; a lone backtick
// is left as it is.
std::string prose(std::string_view text) {
    std::string escaped = esc(text);
    std::string out;
    out.reserve(escaped.size() + 16);
    size_t at = 0;
    while (at < escaped.size()) {
        size_t open = escaped.find('`', at);
        size_t close = open == std::string::npos ? std::string::npos : escaped.find('`', open + 1);
        if (close == std::string::npos) {
            out.append(escaped, at, std::string::npos);
            break;
        }
        out.append(escaped, at, open - at);
        out += "<code>" + escaped.substr(open + 1, close - open - 1) + "</code>";
        at = close + 1;
    }
    return out;
}

// The same for SVG text, which has no <code>: the name is set in bold; a backtick left alone (a
// label cut short) is dropped.
std::string svgProse(std::string_view text) {
    std::string escaped = esc(text);
    std::string out;
    bool open = false;
    for (char c : escaped) {
        if (c != '`') {
            out += c;
            continue;
        }
        out += open ? "</tspan>" : R"(<tspan font-weight="600">)";
        open = !open;
    }
    if (open) {
        size_t at = out.rfind(R"(<tspan font-weight="600">)");
        out.erase(at, std::string_view(R"(<tspan font-weight="600">)").size());
    }
    return out;
}

// A tooltip (an SVG <title>): the text without its backticks.
std::string plain(std::string_view text) {
    std::string out(text);
    std::erase(out, '`');
    return esc(out);
}

// A reason or message of several lines (a Python traceback, most often): the first line, and the
// rest folded under it.
std::string foldedProse(const std::string& text, const char* what) {
    size_t end = text.find('\n');
    if (end == std::string::npos) return prose(text);
    std::string rest = text.substr(end + 1);
    while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' '))
        rest.pop_back();
    if (rest.empty()) return prose(text.substr(0, end));
    return fmt::format("{}<details><summary>{}</summary><pre>{}</pre></details>",
                       prose(text.substr(0, end)), what, esc(rest));
}

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

std::string badge(const char* cssClass, std::string_view text) {
    return fmt::format(R"(<span class="badge {}">{}</span>)", cssClass, esc(text));
}

// Axis bounds on round numbers (1, 2 or 5 times a power of ten) so the ticks read easily.
struct Axis {
    double low = 0;
    double high = 1;
    double step = 1;
    int decimals = 0;
};

Axis niceAxis(double low, double high, int ticks = 5) {
    if (!std::isfinite(low) || !std::isfinite(high)) return {};
    if (high - low < 1e-9) {
        double pad = std::max(std::abs(high) * 0.05, 1.0);
        low -= pad;
        high += pad;
    }
    double raw = (high - low) / ticks;
    double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double normalized = raw / magnitude;
    double step = (normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10) * magnitude;
    Axis axis;
    axis.step = step;
    axis.low = std::floor(low / step) * step;
    axis.high = std::ceil(high / step) * step;
    // Bounds whose distance overflows, or so large that a step is below their precision, leave no
    // axis to walk: the tick loops (`v += step` up to `high + step / 2`) would never end, and the
    // decimals of an infinite step do not convert to int. Such figures get the plain axis.
    if (!std::isfinite(step) || !std::isfinite(axis.low) || !std::isfinite(axis.high + step) ||
        axis.low + step == axis.low || axis.high + step == axis.high)
        return {};
    axis.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step))));
    return axis;
}

std::string tickLabel(const Axis& axis, double value) {
    if (std::abs(value) < axis.step * 1e-6) value = 0; // no "-0"
    return fmt::format("{:.{}f}", value, axis.decimals);
}

// The monospace text's width in the SVGs, close enough to size boxes.
constexpr double kCharWidth = 7.3;

std::string shorten(const std::string& text, size_t limit) {
    if (text.size() <= limit) return text;
    size_t cut = limit - 1;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        --cut; // whole UTF-8 only
    return text.substr(0, cut) + "\xE2\x80\xA6";
}

struct Plot {
    double left = 70, right = 32, top = 34, bottom = 48;
    double width = 500, height = 290;
    double innerWidth() const { return width - left - right; }
    double innerHeight() const { return height - top - bottom; }
};

std::string axes(const Plot& plot, const Axis& x, const Axis& y, const std::string& xLabel,
                 const std::string& yLabel, bool xTicks) {
    std::string out;
    auto sy = [&](double v) {
        return plot.top + plot.innerHeight() * (1 - (v - y.low) / (y.high - y.low));
    };
    for (double v = y.low; v <= y.high + y.step / 2; v += y.step) {
        out += fmt::format(R"(<line x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}" stroke="#eaeef2"/>)"
                           R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end" class="muted">{}</text>)",
                           plot.left, plot.width - plot.right, sy(v), sy(v), plot.left - 6, sy(v) + 4,
                           tickLabel(y, v));
    }
    if (xTicks) {
        auto sx = [&](double v) {
            return plot.left + plot.innerWidth() * (v - x.low) / (x.high - x.low);
        };
        for (double v = x.low; v <= x.high + x.step / 2; v += x.step) {
            out += fmt::format(
                R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" class="muted">{}</text>)", sx(v),
                plot.height - plot.bottom + 16, tickLabel(x, v));
        }
    }
    out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" stroke="#57606a"/>)"
                       R"(<line x1="{0:.1f}" x2="{3:.1f}" y1="{2:.1f}" y2="{2:.1f}" stroke="#57606a"/>)",
                       plot.left, plot.top, plot.height - plot.bottom, plot.width - plot.right);
    if (!xLabel.empty()) {
        out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" class="muted">{}</text>)",
                           plot.left + plot.innerWidth() / 2, plot.height - 8, esc(xLabel));
    }
    out +=
        fmt::format(R"(<text x="14" y="{:.1f}" text-anchor="middle" class="muted" )"
                    R"~(transform="rotate(-90 14 {:.1f})">{}</text>)~",
                    plot.top + plot.innerHeight() / 2, plot.top + plot.innerHeight() / 2, esc(yLabel));
    return out;
}

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

// ---- the soak: RSS over steps ----

// A byte figure of the soak's details for humanBytes: the JSON may hold any double, and one
// beyond int64's range does not convert (undefined behaviour), so it is clamped to that range.
std::int64_t clampedBytes(double bytes) {
    constexpr double kTwoTo63 = 9223372036854775808.0;
    if (std::isnan(bytes)) return 0;
    if (bytes >= kTwoTo63) return std::numeric_limits<std::int64_t>::max();
    if (bytes < -kTwoTo63) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(bytes);
}

std::optional<std::vector<std::pair<double, double>>> soakSamples(const WorkloadResult& result) {
    if (result.workload != "soak" || !result.details.is_object()) return std::nullopt;
    auto soak = result.details.find("soak");
    if (soak == result.details.end() || !soak->is_object()) return std::nullopt;
    auto samples = soak->find("samples");
    if (samples == soak->end() || !samples->is_array() || samples->empty()) return std::nullopt;
    std::vector<std::pair<double, double>> points;
    for (const json& sample : *samples) {
        if (!sample.is_array() || sample.size() < 2 || !sample[0].is_number() || !sample[1].is_number())
            continue;
        points.emplace_back(sample[0].get<double>(), sample[1].get<double>() / (1024.0 * 1024.0));
    }
    if (points.empty()) return std::nullopt;
    return points;
}

// "1.1 KiB": a figure for a plot's labels, without humanBytes' exact count.
std::string shortBytes(double bytes) {
    std::string text = humanBytes(clampedBytes(bytes));
    return text.substr(0, text.find(" ("));
}

// One series of the soak plot: a worker's samples, the line fitted to them as the worker fits it,
// and the slope the worker reported.
struct SoakSeries {
    const WorkloadResult* result = nullptr;
    std::vector<std::pair<double, double>> points; // (step, RSS in MiB)
    double fitFrom = 0, fitAt = 0, fitSlope = 0;   // the fit: MiB at step fitFrom, MiB per step
    std::optional<double> reportedSlope;           // bytes per 1000 steps, as the JSON says
    const char* color = "#0969da";
};

double soakNumber(const WorkloadResult& result, const char* field, double otherwise) {
    const json& soak = result.details["soak"];
    auto found = soak.find(field);
    return found != soak.end() && found->is_number() ? found->get<double>() : otherwise;
}

// Least squares over the samples after the first tenth (the worker's warm-up rule, launch.cpp).
SoakSeries soakSeries(const WorkloadResult& result, std::vector<std::pair<double, double>> points) {
    SoakSeries series;
    series.result = &result;
    series.points = std::move(points);
    series.color = result.role == Role::kReference ? "#57606a" : "#0969da";
    size_t from = series.points.size() / 10;
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = from; i < series.points.size(); ++i) {
        auto [x, y] = series.points[i];
        n += 1;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    double denominator = n * sxx - sx * sx;
    series.fitSlope = n >= 2 && denominator > 0 ? (n * sxy - sx * sy) / denominator : 0.0;
    double intercept = n > 0 ? (sy - series.fitSlope * sx) / n : series.points[from].second;
    series.fitFrom = series.points[from].first;
    series.fitAt = intercept + series.fitSlope * series.fitFrom;
    const json& soak = result.details["soak"];
    if (soak.contains("slope_bytes_per_1000_steps") && soak["slope_bytes_per_1000_steps"].is_number())
        series.reportedSlope = soak["slope_bytes_per_1000_steps"].get<double>();
    return series;
}

// Target and reference on one plot, on the same axes: RSS in MiB over steps, each with its fitted
// line and slope, and the target's budget (the reference's slope plus the gate's allowance) drawn
// dashed from where the target's fit starts. Lines that leave the plot are cut at its edge.
std::string soakChart(const std::vector<SoakSeries>& series) {
    Plot plot;
    plot.width = 760;
    plot.right = 200; // the slope labels, right of the lines' ends
    const SoakSeries* target = nullptr;
    for (const auto& one : series) {
        if (one.result->role == Role::kTarget) target = &one;
    }
    const bool budgeted =
        target && target->result->details["soak"].contains("budget_slope_bytes_per_1000_steps");
    // The legend above the plot, a row per series and one for the budget.
    plot.top = 20 + 15.0 * static_cast<double>(series.size() + (budgeted ? 1 : 0));
    plot.height = 290 + plot.top;
    double maxX = 0, minY = INFINITY, maxY = -INFINITY;
    for (const auto& one : series) {
        for (const auto& [step, mib] : one.points) {
            maxX = std::max(maxX, step);
            minY = std::min(minY, mib);
            maxY = std::max(maxY, mib);
        }
    }
    Axis x = niceAxis(0, maxX, 5);
    Axis y = niceAxis(minY, maxY + (maxY - minY) * 0.08, 5);
    auto sx = [&](double v) { return plot.left + plot.innerWidth() * (v - x.low) / (x.high - x.low); };
    auto sy = [&](double v) {
        return plot.top + plot.innerHeight() * (1 - (v - y.low) / (y.high - y.low));
    };
    // A straight line from (x0, y0) with `slope` (MiB per step) to x1, cut at the plot's top and bottom.
    auto clippedLine = [&](double x0, double y0, double slope, double x1) {
        double y1 = y0 + slope * (x1 - x0);
        if (slope != 0 && (y1 > y.high || y1 < y.low)) {
            double edge = y1 > y.high ? y.high : y.low;
            x1 = x0 + (edge - y0) / slope;
            y1 = edge;
        }
        return std::make_tuple(sx(x0), sy(std::clamp(y0, y.low, y.high)), sx(x1), sy(y1));
    };
    std::string body = axes(plot, x, y, "step", "RSS (MiB)", true);
    std::string labels;
    double legendY = 16;
    std::vector<double> labelRows;
    for (const auto& one : series) {
        std::string line;
        for (const auto& [step, mib] : one.points)
            line += fmt::format("{:.1f},{:.1f} ", sx(step), sy(mib));
        const std::string name = fmt::format("{}: {}", toString(one.result->role), one.result->subject);
        body += fmt::format(R"(<polyline class="series {}" points="{}" fill="none" stroke="{}" )"
                            R"(stroke-width="2" opacity="0.75"><title>{}</title></polyline>)",
                            esc(toString(one.result->role)), line, one.color, esc(name));
        if (one.points.size() <= 80) {
            for (const auto& [step, mib] : one.points) {
                body += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.5" fill="{}">)"
                                    R"(<title>{} step {:.0f}: {:.2f} MiB</title></circle>)",
                                    sx(step), sy(mib), one.color, esc(toString(one.result->role)), step,
                                    mib);
            }
        }
        double lastX = one.points.back().first;
        auto [x0, y0, x1, y1] = clippedLine(one.fitFrom, one.fitAt, one.fitSlope, lastX);
        body += fmt::format(R"(<line class="fit" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" )"
                            R"(stroke="{}" stroke-width="1.5"/>)",
                            x0, y0, x1, y1, one.color);
        std::string slope = one.reportedSlope ? shortBytes(*one.reportedSlope) + "/1000 steps" : "";
        // Beside the line's end, and below the label before it where they would overlap.
        double labelY = std::clamp(y1 + 4, plot.top + 8, plot.height - plot.bottom);
        for (double taken : labelRows) {
            if (std::abs(labelY - taken) < 14) labelY = taken + 14;
        }
        labelRows.push_back(labelY);
        labels += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" style="fill:{}">{}</text>)",
                              plot.width - plot.right + 8, labelY, one.color,
                              esc(shorten(std::string(toString(one.result->role)) + " " + slope, 34)));
        body += fmt::format(R"(<rect x="{0:.1f}" y="{1:.1f}" width="10" height="10" fill="{2}"/>)"
                            R"(<text x="{3:.1f}" y="{4:.1f}">{5}</text>)",
                            plot.left + 8, legendY - 9, one.color, plot.left + 22, legendY,
                            esc(shorten(name, 64)));
        legendY += 15;
    }
    if (budgeted) {
        double budget = soakNumber(*target->result, "budget_slope_bytes_per_1000_steps", 0);
        double perStep = budget / 1000.0 / (1024.0 * 1024.0);
        auto [x0, y0, x1, y1] =
            clippedLine(target->fitFrom, target->fitAt, perStep, target->points.back().first);
        body +=
            fmt::format(R"(<line class="budget" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" )"
                        R"(stroke="#cf222e" stroke-width="1.5" stroke-dasharray="6 4">)"
                        R"(<title>{}</title></line>)",
                        x0, y0, x1, y1,
                        esc(fmt::format("budget: {} per 1000 steps", humanBytes(clampedBytes(budget)))));
        body +=
            fmt::format(R"(<line x1="{0:.1f}" x2="{1:.1f}" y1="{2:.1f}" y2="{2:.1f}" stroke="#cf222e" )"
                        R"(stroke-width="1.5" stroke-dasharray="6 4"/>)"
                        R"(<text x="{3:.1f}" y="{4:.1f}">budget {5}/1000 steps</text>)",
                        plot.left + 6, plot.left + 18, legendY - 4, plot.left + 22, legendY,
                        esc(shortBytes(budget)));
    }
    std::string svg = fmt::format(
        R"(<svg class="chart soak" xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" )"
        R"(viewBox="0 0 {0:.0f} {1:.0f}" role="img"><title>RSS over soak steps</title>{2}{3}</svg>)",
        plot.width, plot.height, body, labels);
    std::string caption;
    for (const auto& one : series) {
        std::string part = toString(one.result->role);
        if (one.reportedSlope)
            part += " grows " + humanBytes(clampedBytes(*one.reportedSlope)) + " per 1000 steps";
        double growth = soakNumber(*one.result, "growth_bytes", NAN);
        if (!std::isnan(growth))
            part += fmt::format(", {} after warm-up", humanBytes(clampedBytes(growth)));
        double steps = soakNumber(*one.result, "steps", NAN);
        if (!std::isnan(steps)) part += fmt::format(" ({:.0f} steps)", steps);
        caption += (caption.empty() ? "" : "; ") + part;
    }
    caption += ". Straight lines: least-squares fits after the first tenth of the samples (warm-up)";
    if (budgeted) caption += "; dashed: the slope the target may have and pass";
    return fmt::format(R"(<figure class="scroll">{}<figcaption>{}.</figcaption></figure>)", svg,
                       prose(caption));
}

// ---- the launch path: allocations per call, per scalar type ----

// The launch workload's three figures, as its cases record them (scalar_cases.cpp, runsJson).
struct LaunchMetric {
    const char* field; // the per-run array of a case's target and reference
    const char* flag;  // the name in a case's "flagged"
    const char* what;  // the y axis
};
constexpr LaunchMetric kLaunchMetrics[] = {
    {"allocations_per_call", "allocations", "allocator calls per call"},
    {"net_blocks_per_call", "net-blocks", "net blocks per call"},
    {"cyclic_garbage_per_call", "cyclic-garbage", "cyclic garbage per call"},
};

// Per scalar type, the figure the check's text quotes: the worst case (values and call forms),
// each case counted by its lowest run (the every-run rule); the spread is every run of every case.
struct TypeBars {
    std::string type;
    double worst = -INFINITY, low = INFINITY, high = -INFINITY;
    std::string worstCase;           // "Int32(7) T(v).__c_pointers__()"
    std::optional<double> reference; // the reference's highest run of any case
    bool flagged = false;
};

std::vector<double> perCall(const json& side, const char* field) {
    std::vector<double> values;
    if (!side.is_object() || !side.contains(field) || !side[field].is_array()) return values;
    for (const json& value : side[field]) {
        if (value.is_number()) values.push_back(value.get<double>());
    }
    return values;
}

std::vector<TypeBars> launchBars(const WorkloadResult& result, const LaunchMetric& metric) {
    std::vector<TypeBars> bars;
    if (result.workload != "launch" || !result.details.is_object() || !result.details.contains("cases"))
        return bars;
    const json& cases = result.details["cases"];
    if (!cases.is_array()) return bars;
    std::vector<std::string> order;
    std::map<std::string, TypeBars> byType;
    for (const json& entry : cases) {
        if (!entry.is_object() || !entry.contains("type") || !entry["type"].is_string()) continue;
        std::string type = entry["type"].get<std::string>();
        if (!byType.count(type)) order.push_back(type);
        TypeBars& bar = byType[type];
        bar.type = type;
        std::vector<double> runs = perCall(entry.value("target", json()), metric.field);
        if (!runs.empty()) {
            auto [low, high] = std::minmax_element(runs.begin(), runs.end());
            if (*low > bar.worst) {
                bar.worst = *low;
                bar.worstCase = fmt::format("{}({}) {}", type, entry.value("value", std::string()),
                                            entry.value("form", std::string()));
            }
            bar.low = std::min(bar.low, *low);
            bar.high = std::max(bar.high, *high);
        }
        for (double value : perCall(entry.value("reference", json()), metric.field))
            bar.reference = std::max(bar.reference.value_or(-INFINITY), value);
        if (entry.contains("flagged") && entry["flagged"].is_array()) {
            for (const json& flag : entry["flagged"])
                bar.flagged |= flag == metric.flag;
        }
    }
    for (const auto& type : order) {
        if (std::isfinite(byType[type].worst)) bars.push_back(byType[type]);
    }
    return bars;
}

std::string launchChart(const WorkloadResult& result, const LaunchMetric& metric,
                        const std::vector<TypeBars>& bars) {
    constexpr double kBar = 14, kGroupGap = 18;
    Plot plot;
    plot.bottom = 76; // room for the type names, slanted
    bool anyReference = std::any_of(bars.begin(), bars.end(),
                                    [](const TypeBars& bar) { return bar.reference.has_value(); });
    bool anyFlagged =
        std::any_of(bars.begin(), bars.end(), [](const TypeBars& bar) { return bar.flagged; });
    double group = (anyReference ? 2 * kBar : kBar) + kGroupGap;
    plot.width =
        std::max(520.0, plot.left + plot.right + group * static_cast<double>(bars.size()) + kGroupGap);
    double top = 0, bottom = 0;
    for (const auto& bar : bars) {
        top = std::max({top, bar.high, bar.reference.value_or(0)});
        bottom = std::min({bottom, bar.low, bar.reference.value_or(0)});
    }
    Axis y = niceAxis(bottom, std::max(top, bottom + 1.0), 5);
    auto sy = [&](double v) {
        return plot.top + plot.innerHeight() * (1 - (v - y.low) / (y.high - y.low));
    };
    // A bar from zero to `value`, up or down, at least a sliver: "nothing" is a figure here.
    auto barBox = [&](double value) {
        double from = sy(0), to = sy(value);
        double top = std::min(from, to), height = std::max(std::abs(from - to), 2.0);
        if (value >= 0 && std::abs(from - to) < 2.0) top = from - 2.0;
        return std::make_pair(top, height);
    };
    std::string body = axes(plot, Axis{}, y, "", metric.what, false);
    for (size_t i = 0; i < bars.size(); ++i) {
        const TypeBars& bar = bars[i];
        double x = plot.left + kGroupGap + group * static_cast<double>(i);
        auto [barTop, barHeight] = barBox(bar.worst);
        body += fmt::format(
            R"(<rect class="target{}" x="{:.1f}" y="{:.1f}" width="{}" height="{:.1f}" fill="{}">)"
            R"(<title>{}</title></rect>)",
            bar.flagged ? " flagged" : "", x, barTop, kBar, barHeight,
            bar.flagged ? "#cf222e" : "#0969da",
            esc(fmt::format("{} target: worst case {} at {:.2f} in every run; runs of all its cases "
                            "{:.2f} to {:.2f}{}",
                            bar.type, bar.worstCase, bar.worst, bar.low, bar.high,
                            bar.flagged ? "; flagged" : "")));
        // The spread: every run of every case of the type.
        double middle = x + kBar / 2;
        body +=
            fmt::format(R"(<path class="spread" d="M{0:.1f} {1:.1f}V{2:.1f}M{3:.1f} {1:.1f}H{4:.1f})"
                        R"(M{3:.1f} {2:.1f}H{4:.1f}" stroke="#1f2328" stroke-width="1.2" fill="none"/>)",
                        middle, sy(bar.high), sy(bar.low), middle - 4, middle + 4);
        if (bar.reference) {
            auto [refTop, refHeight] = barBox(*bar.reference);
            body += fmt::format(
                R"(<rect class="reference" x="{:.1f}" y="{:.1f}" width="{}" height="{:.1f}" fill="#8c959f">)"
                R"(<title>{}</title></rect>)",
                x + kBar, refTop, kBar, refHeight,
                esc(fmt::format("{} reference: at most {:.2f} in any run", bar.type, *bar.reference)));
        }
        double labelX = x + (anyReference ? kBar : kBar / 2);
        double labelY = plot.height - plot.bottom + 14;
        body += fmt::format(R"(<text x="{0:.1f}" y="{1:.1f}" text-anchor="end" )"
                            R"~(transform="rotate(-40 {0:.1f} {1:.1f})">{2}</text>)~",
                            labelX, labelY, esc(shorten(bar.type, 16)));
    }
    // The legend names what the plot shows, nothing more.
    double legendX = plot.left + 8;
    auto entry = [&](const char* color, const char* name) {
        body += fmt::format(R"(<rect x="{:.1f}" y="8" width="10" height="10" fill="{}"/>)"
                            R"(<text x="{:.1f}" y="17">{}</text>)",
                            legendX, color, legendX + 14, name);
        legendX += 14 + kCharWidth * static_cast<double>(std::string_view(name).size()) + 16;
    };
    entry("#0969da", "target (worst case)");
    if (anyFlagged) entry("#cf222e", "flagged");
    if (anyReference) entry("#8c959f", "reference");
    std::string svg = fmt::format(
        R"(<svg class="chart launch" data-metric="{0}" xmlns="http://www.w3.org/2000/svg" width="{1:.0f}" )"
        R"(height="{2:.0f}" viewBox="0 0 {1:.0f} {2:.0f}" role="img"><title>{3}</title>{4}</svg>)",
        metric.flag, plot.width, plot.height,
        esc(std::string(metric.what) + " per scalar type, " + result.subject), body);
    return fmt::format(R"(<figure class="scroll">{}<figcaption>{} ({}): the bar is the type's worst )"
                       R"(case, counted by its lowest run as the check counts it; the whisker spans )"
                       R"(every run of every case; hover for the case.</figcaption></figure>)",
                       svg, esc(metric.what), esc(toString(result.role)));
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
    std::vector<SoakSeries> soak;
    for (const auto& result : report.results) {
        if (auto points = soakSamples(result)) soak.push_back(soakSeries(result, std::move(*points)));
    }
    if (!soak.empty()) out += "<h2>Soak: RSS over steps</h2>\n" + soakChart(soak) + "\n";

    std::string launch;
    for (const auto& result : report.results) {
        if (result.role != Role::kTarget) continue; // the reference's figures are in each bar group
        for (const LaunchMetric& metric : kLaunchMetrics) {
            std::vector<TypeBars> bars = launchBars(result, metric);
            if (!bars.empty()) launch += launchChart(result, metric, bars);
        }
    }
    if (!launch.empty()) {
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
