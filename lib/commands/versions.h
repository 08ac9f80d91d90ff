// PEP 440 for bisect: which releases a selection takes and their order, decided by the
// `packaging` library (lib/commands/versions.py, run with the build's Python) rather than by a
// hand-written ordering, so that 4.8.0.dev0 < 4.8.0rc1 < 4.8.0 < 4.8.0.post1 as pip sees them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

struct VersionSelection {
    std::vector<std::string> selected; // oldest first
    std::vector<std::string> invalid;  // not PEP 440 versions: left out
    std::string implementation;        // "packaging 21.3"
};

// `versions` filtered by `specifier` (">=4.6,<4.8"; pre-releases only with `pre`) and sorted.
// Without a specifier all valid versions are kept. Throws UsageError for a specifier that is not
// one, EnvironmentError when the build's Python cannot run the selection.
VersionSelection selectVersions(const std::vector<std::string>& versions,
                                const std::optional<std::string>& specifier, bool pre);

// Whether a --versions value is a specifier set (">=4.6,<4.8", "~=4.6") rather than a list.
bool isSpecifier(const std::string& text);

} // namespace leakgate::commands
