// `_leakgate`, the Python module that leakgate embeds in every worker: sentinels for workloads
// and custom probes. Registered before the interpreter starts.
#pragma once

namespace leakgate::probes {

// Keeps the module's registration in the link (the library is static). Call before the
// interpreter is created.
void registerLeakgateModule();

} // namespace leakgate::probes
