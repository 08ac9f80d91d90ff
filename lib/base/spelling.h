// "Did you mean": the closest of a few known names to one that was mistyped (a subcommand, an
// option, a lint rule, a key of a configuration table).
#pragma once

#include "leakgate/api.h"

#include <string>
#include <vector>

namespace leakgate::base {

// The candidate `typed` is a prefix of, or the one a few edits away; empty when none is close.
LEAKGATE_API std::string closestName(const std::string& typed,
                                     const std::vector<std::string>& candidates);

// " (did you mean `NAME`?)", or empty: to append to an error message.
LEAKGATE_API std::string didYouMean(const std::string& typed,
                                    const std::vector<std::string>& candidates);

} // namespace leakgate::base
