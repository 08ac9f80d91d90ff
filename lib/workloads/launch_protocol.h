// The launch protocol's words that the gate and the launch-path workloads share.
#pragma once

namespace leakgate::workloads {

// Why the launch-path checks (launch, values, soak, device) skip on a target without
// `scalar_types`.
inline constexpr const char* kNoScalarTypesReason =
    "the target exposes no `scalar_types` (see the launch protocol)";

// Why the real-launch checks (launch-real) skip on a target without `launch_cases`.
inline constexpr const char* kNoLaunchCasesReason =
    "the target defines no `launch_cases` (see the launch protocol)";

} // namespace leakgate::workloads
