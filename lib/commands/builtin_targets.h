// The targets leakgate ships, in one table: each one's name, where its target file or module is,
// the PyPI package of the DSL it measures (what `bisect --target NAME` installs) and the
// directory that package installs (what the gate's lint reads). lib/data/targets/ holds the files.
#pragma once

#include "leakgate/api.h"

#include <span>
#include <string>
#include <string_view>

namespace leakgate::commands {

struct BuiltinTarget {
    const char* name;
    const char* module;      // an importable module, or
    const char* file;        // a target file under the data directory
    const char* pypiPackage; // nullptr: leakgate's own (the reference)
    const char* packageDir;  // the import directory of the DSL's sources
};

std::span<const BuiltinTarget> builtinTargets();
// Null for a name no row has.
const BuiltinTarget* findBuiltinTarget(std::string_view name);
// The rows' names, comma-separated, in the table's order (the CLI's help); `dslsOnly`: only the
// rows with a PyPI package (what bisect can install).
LEAKGATE_API std::string builtinTargetNames(bool dslsOnly = false);

} // namespace leakgate::commands
