#include "lib/report/writers/html_charts.h"

#include "lib/report/units.h"
#include "lib/report/writers/html_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace leakgate::report::html {
namespace {

using nlohmann::json;

// ---- a plot: its axes on round numbers, their ticks and labels ----

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

} // namespace

std::string soakFigure(const Report& report) {
    std::vector<SoakSeries> soak;
    for (const auto& result : report.results) {
        if (auto points = soakSamples(result)) soak.push_back(soakSeries(result, std::move(*points)));
    }
    return soak.empty() ? std::string() : soakChart(soak);
}

std::string launchFigures(const Report& report) {
    std::string launch;
    for (const auto& result : report.results) {
        if (result.role != Role::kTarget) continue; // the reference's figures are in each bar group
        for (const LaunchMetric& metric : kLaunchMetrics) {
            std::vector<TypeBars> bars = launchBars(result, metric);
            if (!bars.empty()) launch += launchChart(result, metric, bars);
        }
    }
    return launch;
}

} // namespace leakgate::report::html
