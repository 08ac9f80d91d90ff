// Where leakgate finds the files it ships beside the binary: the reference runtime and the
// workload harness. A build uses its source tree; an installed leakgate uses
// <prefix>/share/leakgate. LEAKGATE_DATA_DIR overrides both.
#pragma once

#include <filesystem>

namespace leakgate {

std::filesystem::path dataDir();

} // namespace leakgate
