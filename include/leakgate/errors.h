// The error tree: every user-facing failure is an Error, mapped to an exit code once, at the
// boundary in cmd/main.cpp. Internal invariants use LEAKGATE_CHECK (lib/base/check.h) instead.
// Public (leakgate/api.h): a plug-in may throw these.
#pragma once

#include "leakgate/api.h"

#include <stdexcept>
#include <string>

namespace leakgate {

// Exit codes, as documented in docs/reference/exit-codes.md and docs/definitions.md ("Exit codes").
enum class ExitCode : int {
    kClean = 0,    // every check passed or was skipped with a reason
    kFindings = 1, // at least one check failed
    kUsage = 2,    // usage or configuration error, nothing ran
    kErrored = 3,  // nothing failed, but something errored (target or environment)
};

class LEAKGATE_API Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
    virtual ExitCode exitCode() const { return ExitCode::kErrored; }
};

// The command line or the configuration is wrong; nothing ran.
class LEAKGATE_API UsageError : public Error {
  public:
    using Error::Error;
    ExitCode exitCode() const override { return ExitCode::kUsage; }
};

// The environment could not be set up (no interpreter, a version mismatch, a pipe or fork
// that failed).
class LEAKGATE_API EnvironmentError : public Error {
  public:
    using Error::Error;
};

// A Python exception converted while its interpreter still lives.
class LEAKGATE_API PythonError : public Error {
  public:
    using Error::Error;
};

} // namespace leakgate
