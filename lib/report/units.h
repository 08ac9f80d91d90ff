// How figures read in reports and reasons: one spelling of bytes for every producer and writer.
#pragma once

#include <cstdint>
#include <string>

namespace leakgate {

// "512 B", "1.0 GiB (1073741824 bytes)"
std::string humanBytes(std::int64_t bytes);

} // namespace leakgate
