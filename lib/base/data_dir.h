// Where leakgate finds the files it ships beside the binary: the reference runtime and the
// workload harness. A build uses its source tree; an installed leakgate uses
// <prefix>/share/leakgate, and the Python package leakgate_dsl/share/leakgate beside its extension
// module. LEAKGATE_DATA_DIR overrides all three.
#pragma once

#include <filesystem>

namespace leakgate::base {

std::filesystem::path dataDir();

// The file leakgate's code was loaded from: libleakgate.so or a binary linking the library
// statically, or the Python package's extension module (leakgate_dsl/_native*.so).
std::filesystem::path loadedFrom();

} // namespace leakgate::base
