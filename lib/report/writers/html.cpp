#include "lib/report/writers/html.h"

#include "lib/report/writers/junit.h"
#include "lib/report/rules.h"
#include "lib/report/units.h"
#include "lib/report/writers/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

namespace leakgate {
namespace {

using nlohmann::json;

// Every string that reaches the page goes through here: file names, functions, summaries and
// labels come from the target, and a script may be named `<script>....py`. (No attribute of the
// page carries one of them.)
std::string esc(std::string_view text) {
    return escapeMarkup(text, MarkupContext::kText);
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
            esc(nodes[i]), kLeft, boxY(i), boxWidth, kBoxHeight, frame ? "#fff1e5" : "#f6f8fa",
            frame ? "#bc4c00" : "#8c959f", kLeft + 10, boxY(i) + 19, esc(shorten(nodes[i], kTextLimit)));
    }
    const double arrowX = kLeft + 24;
    for (size_t i = 0; i + 1 < nodes.size(); ++i) {
        double from = boxY(i) + kBoxHeight, to = boxY(i + 1);
        body += fmt::format(R"(<line x1="{0}" x2="{0}" y1="{1:.1f}" y2="{2:.1f}" stroke="#1f2328" )"
                            R"~(marker-end="url(#arrow{3})"/><text x="{4}" y="{5:.1f}">{6}</text>)~",
                            arrowX, from, to - 2, id, arrowX + 12, (from + to) / 2 + 4,
                            esc(shorten(labels[i], kTextLimit)));
    }
    if (cycle) {
        double from = boxY(nodes.size() - 1) + kBoxHeight, back = boxY(0) + kBoxHeight / 2;
        body += fmt::format(
            R"(<path d="M{0} {1:.1f} V{2:.1f} H18 V{3:.1f} H{4}" fill="none" stroke="#cf222e" )"
            R"~(stroke-width="1.5" marker-end="url(#arrow{5}r)"/>)~"
            R"(<text x="{6}" y="{7:.1f}" style="fill:#cf222e">{8}</text>)",
            arrowX, from, loopY, back, kLeft - 2, id, arrowX + 12, from + 17,
            esc(shorten(labels.back(), kTextLimit)));
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

std::string findingHtml(const Finding& finding, const WorkloadResult& result, int id) {
    std::string out = R"(<article class="finding">)";
    out += fmt::format("<h3>{} {}</h3>", badge("fail", finding.kind), esc(finding.summary));
    out += fmt::format(R"(<p class="meta">{} on <code>{}</code>)", esc(result.workload),
                       esc(result.subject));
    if (finding.objects > 0 || finding.bytes > 0) {
        out += fmt::format(" &middot; pins {} object{}, about {}", finding.objects,
                           finding.objects == 1 ? "" : "s", esc(humanBytes(finding.bytes)));
    }
    out += "</p>";
    const std::vector<PathStep> path = pathAsWritten(finding);
    if (!finding.cycleShapes.empty()) {
        // Launch garbage: cycle shapes with their counts, not the edges of one path.
        out += "<p>Cycles left per launch:</p><ul>";
        for (const auto& shape : finding.cycleShapes) {
            out += fmt::format("<li>{}: <code>{}</code></li>",
                               esc(cycleShapeCount(shape.count, shape.types)), esc(shape.cycle));
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
        out += fmt::format(R"(<p class="fix"><strong>Fix:</strong> {}</p>)", esc(finding.fix));
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

std::string soakChart(const WorkloadResult& result,
                      const std::vector<std::pair<double, double>>& points) {
    Plot plot;
    auto [minX, maxX] = std::minmax_element(
        points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    auto [minY, maxY] = std::minmax_element(
        points.begin(), points.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    Axis x = niceAxis(std::min(0.0, minX->first), maxX->first, 4);
    Axis y = niceAxis(minY->second, maxY->second, 5);
    auto sx = [&](double v) { return plot.left + plot.innerWidth() * (v - x.low) / (x.high - x.low); };
    auto sy = [&](double v) {
        return plot.top + plot.innerHeight() * (1 - (v - y.low) / (y.high - y.low));
    };
    const char* color = result.role == "reference" ? "#57606a" : "#0969da";
    std::string line;
    for (const auto& [step, mib] : points)
        line += fmt::format("{:.1f},{:.1f} ", sx(step), sy(mib));
    std::string dots;
    if (points.size() <= 80) {
        for (const auto& [step, mib] : points) {
            dots += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.5" fill="{}">)"
                                R"(<title>step {:.0f}: {:.2f} MiB</title></circle>)",
                                sx(step), sy(mib), color, step, mib);
        }
    }
    std::string title = fmt::format("{}: {}", result.role, result.subject);
    std::string svg = fmt::format(
        R"(<svg class="chart soak" xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" )"
        R"(viewBox="0 0 {0:.0f} {1:.0f}" role="img"><title>{2}</title>)"
        R"(<text x="{3:.1f}" y="18" style="font-weight:600">{4}</text>{5})"
        R"(<polyline points="{6}" fill="none" stroke="{7}" stroke-width="2"/>{8}</svg>)",
        plot.width, plot.height, esc("RSS over soak steps, " + title), plot.left,
        esc(shorten(title, 56)), axes(plot, x, y, "step", "RSS (MiB)", true), line, color, dots);
    std::string caption;
    const json& soak = result.details["soak"];
    if (soak.contains("slope_bytes_per_1000_steps") && soak["slope_bytes_per_1000_steps"].is_number()) {
        caption =
            fmt::format("grows {} per 1000 steps",
                        humanBytes(clampedBytes(soak["slope_bytes_per_1000_steps"].get<double>())));
    }
    if (soak.contains("growth_bytes") && soak["growth_bytes"].is_number()) {
        caption += fmt::format("{}{} after warm-up", caption.empty() ? "" : "; ",
                               humanBytes(clampedBytes(soak["growth_bytes"].get<double>())));
    }
    return fmt::format("<figure>{}<figcaption>{}</figcaption></figure>", svg, esc(caption));
}

// ---- the launch path: allocations per call, per scalar type ----

struct TypeBars {
    std::string type;
    double target = 0, targetLow = 0, targetHigh = 0;
    std::optional<double> reference;
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

// Per scalar type, the mean over its cases (values, call forms) and their measured runs.
std::vector<TypeBars> launchBars(const WorkloadResult& result) {
    std::vector<TypeBars> bars;
    if (result.workload != "launch" || !result.details.is_object() || !result.details.contains("cases"))
        return bars;
    const json& cases = result.details["cases"];
    if (!cases.is_array()) return bars;
    struct Sums {
        double target = 0, reference = 0;
        int targetCount = 0, referenceCount = 0;
        double low = INFINITY, high = -INFINITY;
        bool flagged = false;
    };
    std::vector<std::string> order;
    std::map<std::string, Sums> byType;
    for (const json& entry : cases) {
        if (!entry.is_object() || !entry.contains("type") || !entry["type"].is_string()) continue;
        std::string type = entry["type"].get<std::string>();
        if (!byType.count(type)) order.push_back(type);
        Sums& sums = byType[type];
        for (double value : perCall(entry.value("target", json()), "allocations_per_call")) {
            sums.target += value;
            ++sums.targetCount;
            sums.low = std::min(sums.low, value);
            sums.high = std::max(sums.high, value);
        }
        for (double value : perCall(entry.value("reference", json()), "allocations_per_call")) {
            sums.reference += value;
            ++sums.referenceCount;
        }
        if (entry.contains("flagged") && entry["flagged"].is_array()) {
            for (const json& metric : entry["flagged"])
                sums.flagged |= metric == "allocations";
        }
    }
    for (const auto& type : order) {
        const Sums& sums = byType[type];
        if (sums.targetCount == 0) continue;
        TypeBars bar{type,        sums.target / sums.targetCount, sums.low, sums.high, std::nullopt,
                     sums.flagged};
        if (sums.referenceCount > 0) bar.reference = sums.reference / sums.referenceCount;
        bars.push_back(bar);
    }
    return bars;
}

std::string launchChart(const WorkloadResult& result, const std::vector<TypeBars>& bars) {
    constexpr double kBar = 14, kGroupGap = 18;
    Plot plot;
    plot.bottom = 76; // room for the type names, slanted
    bool anyReference = std::any_of(bars.begin(), bars.end(),
                                    [](const TypeBars& bar) { return bar.reference.has_value(); });
    double group = (anyReference ? 2 * kBar : kBar) + kGroupGap;
    plot.width =
        std::max(520.0, plot.left + plot.right + group * static_cast<double>(bars.size()) + kGroupGap);
    double top = 0;
    for (const auto& bar : bars)
        top = std::max({top, bar.target, bar.reference.value_or(0)});
    Axis y = niceAxis(0, std::max(top, 1.0), 5);
    auto sy = [&](double v) {
        return plot.top + plot.innerHeight() * (1 - (v - y.low) / (y.high - y.low));
    };
    std::string body = axes(plot, Axis{}, y, "", "allocations per call", false);
    for (size_t i = 0; i < bars.size(); ++i) {
        const TypeBars& bar = bars[i];
        double x = plot.left + kGroupGap + group * static_cast<double>(i);
        body += fmt::format(
            R"(<rect x="{:.1f}" y="{:.1f}" width="{}" height="{:.1f}" fill="{}">)"
            R"(<title>{}</title></rect>)",
            x, sy(bar.target), kBar, sy(0) - sy(bar.target), bar.flagged ? "#cf222e" : "#0969da",
            esc(fmt::format("{} target: {:.2f} allocations per call (runs {:.2f} to {:.2f}){}", bar.type,
                            bar.target, bar.targetLow, bar.targetHigh, bar.flagged ? ", flagged" : "")));
        if (bar.reference) {
            // At least a sliver: "the reference allocates nothing" is the point of the comparison.
            double height = std::max(sy(0) - sy(*bar.reference), 2.0);
            body += fmt::format(
                R"(<rect x="{:.1f}" y="{:.1f}" width="{}" height="{:.1f}" fill="#8c959f">)"
                R"(<title>{}</title></rect>)",
                x + kBar, sy(0) - height, kBar, height,
                esc(fmt::format("{} reference: {:.2f} allocations per call", bar.type, *bar.reference)));
        }
        double labelX = x + (anyReference ? kBar : kBar / 2);
        double labelY = plot.height - plot.bottom + 14;
        body += fmt::format(R"(<text x="{0:.1f}" y="{1:.1f}" text-anchor="end" )"
                            R"~(transform="rotate(-40 {0:.1f} {1:.1f})">{2}</text>)~",
                            labelX, labelY, esc(shorten(bar.type, 16)));
    }
    double legendX = plot.width - plot.right - 250;
    body += fmt::format(R"(<rect x="{0:.1f}" y="8" width="10" height="10" fill="#0969da"/>)"
                        R"(<text x="{1:.1f}" y="17">target</text>)"
                        R"(<rect x="{2:.1f}" y="8" width="10" height="10" fill="#cf222e"/>)"
                        R"(<text x="{3:.1f}" y="17">flagged</text>)",
                        legendX, legendX + 14, legendX + 76, legendX + 90);
    if (anyReference) {
        body += fmt::format(R"(<rect x="{0:.1f}" y="8" width="10" height="10" fill="#8c959f"/>)"
                            R"(<text x="{1:.1f}" y="17">reference</text>)",
                            legendX + 160, legendX + 174);
    }
    std::string svg = fmt::format(
        R"(<svg class="chart launch" xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" )"
        R"(height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" role="img"><title>{2}</title>{3}</svg>)",
        plot.width, plot.height, esc("allocations per call per scalar type, " + result.subject), body);
    return fmt::format(
        R"(<figure class="scroll">{}<figcaption>Mean allocator calls per launch call, over each type's )"
        R"(values, call forms and measured runs; hover a bar for the range.</figcaption></figure>)",
        svg);
}

// ---- the page ----

std::string summaryHtml(const Report& report) {
    std::map<Status, int> counts;
    for (const auto& result : report.results) {
        if (result.role != "target") continue;
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
            bool baseline = result.role != "target" && check.status == Status::kFail;
            out += fmt::format(
                R"(<tr><td>{}</td><td>{}</td><td class="mono">{}</td><td class="mono">{}</td>)"
                R"(<td>{}</td><td>{}</td></tr>)",
                esc(result.workload), esc(result.role), esc(result.subject), esc(check.name),
                baseline ? badge("baseline", "fail")
                         : badge(statusClass(check.status), toString(check.status)),
                esc(check.reason));
        }
        if (result.error) {
            out += fmt::format(
                R"(<tr><td>{}</td><td>{}</td><td class="mono">{}</td><td class="mono">worker</td>)"
                R"(<td>{}</td><td>{}</td></tr>)",
                esc(result.workload), esc(result.role), esc(result.subject), badge("error", "error"),
                esc(result.error->message));
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
                           esc(result.workload), esc(result.subject), esc(result.role),
                           esc(result.error->message));
        if (result.error->signal && result.error->message.find("signal") == std::string::npos) {
            out += fmt::format(" (signal {})", *result.error->signal);
        }
        out += "</p>";
        if (!result.error->stderrTail.empty()) {
            out += fmt::format("<p>stderr (tail):</p><pre>{}</pre>", esc(result.error->stderrTail));
        }
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
            outlived > 0 && result.role == "target" ? " open" : "", esc(result.workload),
            esc(result.role), esc(result.subject), outlived, result.sentinels.size());
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

} // namespace

std::string formatHtml(const Report& report) {
    const int exitCode = static_cast<int>(report.exitCode());
    std::string out = kHead;
    out += fmt::format("<title>leakgate {}: exit {}</title>\n", esc(report.command), exitCode);
    out += kStyle;
    out += "</head>\n<body>\n";
    out += fmt::format("<header><h1>leakgate {}</h1>", esc(report.command));
    out += fmt::format(R"(<p class="meta">leakgate {} &middot; Python {} <code>{}</code></p>)",
                       LEAKGATE_VERSION, esc(report.pythonVersion), esc(report.pythonExecutable));
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
        if (result.role != "target") continue; // the reference's findings are the baseline
        for (const auto& finding : result.findings)
            findings += findingHtml(finding, result, id++);
    }
    if (!findings.empty()) out += "<h2>Findings</h2>\n" + findings;

    std::string soak;
    for (const auto& result : report.results) {
        if (auto points = soakSamples(result)) soak += soakChart(result, *points);
    }
    if (!soak.empty()) {
        out += "<h2>Soak: RSS over steps</h2>\n<div class=\"charts\">" + soak + "</div>\n";
    }

    std::string launch;
    for (const auto& result : report.results) {
        std::vector<TypeBars> bars = launchBars(result);
        if (!bars.empty()) launch += launchChart(result, bars);
    }
    if (!launch.empty()) out += "<h2>Launch: allocations per call</h2>\n" + launch + "\n";

    out += sentinelsHtml(report);
    out += errorsHtml(report);
    out += "</main>\n</body>\n</html>\n";
    return out;
}

} // namespace leakgate
