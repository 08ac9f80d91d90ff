// How figures read in reports and reasons: one spelling of bytes for every producer and writer.
#pragma once

#include <cstdint>
#include <string>

namespace leakgate::report {

// "512 B", "1.0 GiB (1073741824 bytes)"
std::string humanBytes(std::int64_t bytes);

// "3.00 blocks per call": an allocation site's figure.
std::string blocksPerCall(double blocks);

// "12 cycles of [CField, tuple]": a cycle shape and how many a batch of calls left.
std::string cycleShapeCount(std::int64_t count, const std::string& types);

} // namespace leakgate::report
