#include "lib/report/units.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace leakgate::report {

std::string humanBytes(std::int64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    // A difference can be negative (less in use than at the first reading): same units, a sign.
    double value = std::fabs(static_cast<double>(bytes));
    size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        ++unit;
    }
    return unit == 0
               ? fmt::format("{} B", bytes)
               : fmt::format("{}{:.1f} {} ({} bytes)", bytes < 0 ? "-" : "", value, units[unit], bytes);
}

std::string blocksPerCall(double blocks) {
    return fmt::format("{:.2f} blocks per call", blocks);
}

std::string cycleShapeCount(std::int64_t count, const std::string& types) {
    return fmt::format("{} cycles of [{}]", count, types);
}

} // namespace leakgate::report
