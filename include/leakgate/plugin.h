// C++ probe plug-ins (public, leakgate/api.h): a shared library that `leakgate gate --probe
// libX.so` loads in each of its probe workers, on the target and on the reference.
//
// A plug-in defines exactly one symbol, with LEAKGATE_PLUGIN. The loader reads the symbol's ABI
// version before it calls anything of the plug-in, and refuses one built for another; then it
// calls the registration function once, with the GIL held, before anything of the target's is
// imported. The worker measures the registration's workload with the three reads (leakgate/probe.h): the
// gc guard, the sentinel probe (when the workload made sentinels) and the plug-in's probes, whose checks
// appear under their own names in every output. Whatever a plug-in throws (at registration, in its
// workload, in any of its probes' phases) is an `error` of its checks, not of the run.
//
// A plug-in is built against the installed package (find_package(leakgate) and
// leakgate::leakgate, or pkg-config's `leakgate`) with the same compiler family and C++ standard
// library as leakgate: what crosses the boundary is C++ (the classes of leakgate/probe.h and
// leakgate/report.h). It links libleakgate.so, the one the leakgate executable links, so that
// the gc watch, the sentinel session and the allocation counter it calls are the host's own.
#pragma once

#include "leakgate/api.h"
#include "leakgate/probe.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <string>

// Changes whenever anything a plug-in shares with leakgate changes (leakgate/api.h).
#define LEAKGATE_PLUGIN_ABI_VERSION 5

namespace leakgate::plugin {

// What the registration function is given and fills in.
struct Registration {
    // Given: "target", or "reference" (the baseline, measured the same way).
    std::string role;

    // Filled in: the probes, read at the three reads; each decides the check of its name().
    probes::ProbeList probes;
    // Filled in, optionally: the code the probes measure, run once between their before() and
    // the reads, with the target's module (borrowed; imported before the measurement began).
    // Left empty, the probes measure the target's import itself.
    std::function<void(pybind11::handle target)> workload;
};

} // namespace leakgate::plugin

extern "C" {
// The plug-in's one symbol, `leakgate_plugin`.
struct leakgate_plugin {
    std::uint32_t abi_version; // first, so that any ABI can read it: LEAKGATE_PLUGIN_ABI_VERSION
    const char* name;          // for messages: "kernel-cache growth"
    void (*register_probes)(leakgate::plugin::Registration* registration);
};
}

// LEAKGATE_PLUGIN("kernel cache", registerProbes); at namespace scope in one file of the plug-in.
#define LEAKGATE_PLUGIN(plugin_name, register_function)                                                 \
    extern "C" LEAKGATE_API const leakgate_plugin leakgate_plugin = {LEAKGATE_PLUGIN_ABI_VERSION,       \
                                                                     plugin_name, register_function}
