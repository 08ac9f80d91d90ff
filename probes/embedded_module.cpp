// `_leakgate`, embedded in every worker. A file of its own: an extension module links the same
// static library, and a registration of an embedded module there would run after its interpreter
// started (pybind11 refuses that).
#include "probes/leakgate_module.h"

#include <pybind11/embed.h>

PYBIND11_EMBEDDED_MODULE(_leakgate, module) {
    module.doc() = "leakgate's worker module: sentinels whose lifetimes leakgate measures";
    leakgate::probes::defineSentinelModule(module);
}

namespace leakgate::probes {

void registerLeakgateModule() {
    // Nothing to do at run time: referencing this function keeps the object file, and with it the
    // static registration above, in the link.
}

} // namespace leakgate::probes
