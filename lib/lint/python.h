// The Python half of `leakgate lint`, run in a worker: lib/lint/python_rules/ over Python
// sources, with the worker's own `ast`. The sources are parsed, never imported or run.
#pragma once

#include "leakgate/report.h"
#include "lib/workloads/spec.h"

namespace leakgate::lint {

// The Python rules, in report order; a finding's kind is "lint:" + rule. The C/C++ rules are
// kCxxLintRules (lib/lint/cxx.h).
inline constexpr const char* kLintRules[] = {"own-frame-local", "frame-stored", "closure-cycle"};

// The `lint` workload: spec.paths.
WorkloadResult runPythonLint(const workloads::WorkerSpec& spec);

} // namespace leakgate::lint
