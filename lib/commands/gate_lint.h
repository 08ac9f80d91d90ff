// `leakgate gate --lint`: the static audit of the target's own sources beside the dynamic checks,
// and where the two agree. A lint finding whose function is a frame of a dynamic frame-cycle or
// retained-frame finding in the same report is marked "confirmed dynamically".
#pragma once

#include "leakgate/report.h"
#include "lib/python/environment.h"
#include "lib/workloads/spec.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace leakgate::commands {

// What to lint for a resolved gate target (a module or a path): a file target's
// file; for the built-in `cute`, the nvidia_cutlass_dsl package installed in `env`; for
// `reference`, leakgate's reference runtime. Empty when the package is not installed there.
std::vector<std::string> gateLintPaths(const workloads::TargetRef& target,
                                       const python::Environment& env);

// Marks the target's lint findings that a dynamic finding of `report` confirms: the summary says
// so, and the lint result's details list them under `confirmed`. Returns how many.
size_t markConfirmedLintFindings(Report& report);

// The lint result when gateLintPaths found nothing: the `lint` check, skipped with the reason.
WorkloadResult gateLintSkipped(const workloads::TargetRef& target, const python::Environment& env);

} // namespace leakgate::commands
