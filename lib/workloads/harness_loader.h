// Loads lib/workloads/harness.py, the Python half of the gate's workloads, under the file name
// "<leakgate:harness>" so that its frames are known as leakgate's own, and seals it; loads
// leakgate's other Python the same way, unsealed (the lint's rules, a package: loadOwnPackage).
#pragma once

#include "leakgate/report.h"
#include "lib/workloads/spec.h"

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace leakgate::workloads {

// Loads `relativePath` (under the data directory) as module `moduleName`, compiled under
// `fileName`, which must start with "<leakgate": frames of its functions are then known as
// leakgate's own and never appear in a finding.
pybind11::module_ loadOwnModule(const std::string& relativePath, const std::string& moduleName,
                                const std::string& fileName);

// Loads the Python package in the folder `relativeDir` (under the data directory) as `packageName`:
// its __init__.py compiled under `fileName`, and each module of the folder that it imports
// (`from .scopes import Scope`) as `packageName.scopes`, compiled under the same name with the
// module's file ("<leakgate:lint>": "<leakgate:lint/scopes.py>"), so that frames of all of them
// are known as leakgate's own. The modules are read from the folder, never from bytecode caches;
// sys.path plays no part, and nothing of the folder can be imported once this returns.
pybind11::module_ loadOwnPackage(const std::string& relativeDir, const std::string& packageName,
                                 const std::string& fileName);

// The harness's name in sys.modules.
inline constexpr const char* kHarnessModule = "_leakgate_harness";

// The harness, with the reference runtime put on sys.path.
pybind11::module_ loadHarness();

// The reference runtime the harness imported, before the target (prepare_reference): its modules
// must be leakgate's own files, and their functions and classes join the harness's seal. Returns
// what is wrong (a module from elsewhere: the run is `error`).
std::optional<std::string> sealReference();

// The decorate workload's kernels module (the functions that hold the sentinels while the target's
// decorators run), loaded from `file` after the target was imported and before the measurement:
// it must be that file, and its functions join the harness's seal, so that a decorator that
// replaces one of them (or swaps its code) makes the measurement `error`. Returns what is wrong.
std::optional<std::string> sealKernels(const std::string& file);

// The target of a spec as the harness takes it: {"module": name} or {"path": file}.
pybind11::dict targetSpec(const WorkerSpec& spec);

// A result named after the spec's target and role.
WorkloadResult newResult(const WorkerSpec& spec, const char* workload);

// The workload's error when the harness could not import the target (`error` is what it raised).
WorkloadError targetImportError(const pybind11::error_already_set& error);

// "in `__getattr__` (numpy/__init__.py:769), called from `<module>` (arrayobj.py:6860)": where a
// Python error was raised (its traceback's innermost frame and the one that called it), for saying
// whose code raised it; empty without a traceback.
std::string raisedAt(const pybind11::error_already_set& error);

} // namespace leakgate::workloads
