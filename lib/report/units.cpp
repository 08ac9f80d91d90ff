#include "lib/report/units.h"

#include <fmt/format.h>

#include <iterator>

namespace leakgate {

std::string humanBytes(std::int64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        ++unit;
    }
    return unit == 0 ? fmt::format("{} B", bytes)
                     : fmt::format("{:.1f} {} ({} bytes)", value, units[unit], bytes);
}

} // namespace leakgate
