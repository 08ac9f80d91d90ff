// `leakgate repro`: from one finding of a gate, scan or bisect JSON report, a standalone Python
// reproducer (no leakgate import) that exits 1 while the finding reproduces and 0 once it is gone,
// the script an upstream report carries; and, when asked, its verdict in given interpreters (the
// leaking release's venv and the fixed one's).
#pragma once

#include "leakgate/api.h"
#include "leakgate/errors.h"
#include "leakgate/report.h"
#include "lib/commands/repro_reduce.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

// The finding shapes repro writes a reproducer for (docs/reference/cli.md, "leakgate repro").
enum class ReproShape {
    // A frame-cycle whose culprit is one of the target's decorators (gate's decorate and import
    // workloads, scan): a caller holds a payload while a function is decorated one call below.
    kDecoratorFrameCycle,
    // launch-cyclic-garbage (gate's launch workload): the scalar packing call repeated, the objects
    // that each call leaves in reference cycles counted with gc.collect().
    kLaunchCyclicGarbage,
    // A scan's frame-cycle or cyclic-garbage finding, given the scanned script: the script re-run
    // as it was (its arguments, gc off), then one collection that saves what it finds; it
    // reproduces when that garbage holds a frame of the culprit, or as many objects of the cycle
    // shape's types as the finding's instances (at most the instance limit, 100).
    kScanScript,
};
LEAKGATE_API const char* toString(ReproShape shape);
// The shapes in words, for the usage error of a finding of another shape.
LEAKGATE_API std::string supportedReproShapes();

// How the reproducer reaches the DSL, read from the target file: its top-level imports and the
// one-line assignments of its decorators (`kernel = cute.kernel`), so the script calls the
// package's public API; else, for a target that defines its DSL itself (a regression model), the
// file loaded by path.
struct ReproTarget {
    std::string name;                      // the report's subject ("cute", "frame_cycle_461")
    std::vector<std::string> imports;      // "import cutlass.cute as cute", in the file's order
    std::string kernel, jit;               // expressions: "cute.kernel"; empty where the file has none
    std::string kernelOptions, jitOptions; // dict literals as the file writes them; may be empty
    std::string scalarModule; // what the scalar types are attributes of ("cutlass"); may be empty
    std::string package;      // TARGET_PACKAGE when it is one name
    std::string loadPath;     // set: the script loads this file as module `dsl` instead
};

// Reads a target file's source (`file` is where it lives, for the by-path fallback). `builtin`:
// a target leakgate ships, whose file must not be loaded by path (the script would need leakgate's
// data); UsageError when its decorators cannot be read.
LEAKGATE_API ReproTarget readReproTarget(const std::string& name, const std::string& source,
                                         const std::string& file, bool builtin);

// The settings of one reproducer, beside the finding.
struct ReproSettings {
    std::int64_t payloadBytes = 0; // 0: sized from the finding (its bytes, 1 to 256 MiB)
    std::string releaseWindow;     // "fails from 4.6.0 (4.5.3 passes); fixed in 4.6.3", if known
    std::string reportFile;        // named in the header
    // A scan report's script, re-run by the reproducer (kScanScript; an absolute path), and its
    // arguments. Empty: a scan's frame cycle in a built-in DSL is reproduced by its decorator.
    std::string script;
    std::vector<std::string> scriptArgs;
    // Set: the script's source cut down by --reduce, which the reproducer carries and runs under the
    // script's name in place of the file.
    std::string scriptSource;
};

// The reproducer written for one finding.
struct ReproScript {
    ReproShape shape = ReproShape::kDecoratorFrameCycle;
    int findingIndex = 0; // 0-based, among the report's target findings
    std::string check;    // "decorate-frame-cycle"
    std::string summary;  // the finding's summary
    std::string calls;    // what it calls, in words: "@cute.kernel, @cute.kernel(preprocess=False)"
    std::string text;     // the script
};

// The reproducer for finding `index` of `report` (0-based among its target findings; none: the
// first finding of a supported shape), reaching the DSL through `target`. UsageError for an index
// out of range or a finding of another shape (naming the supported shapes).
LEAKGATE_API ReproScript writeReproducer(const Report& report, std::optional<int> index,
                                         const ReproTarget& target, const ReproSettings& settings);

// What one interpreter made of the reproducer.
enum class ReproVerdict { kReproduces, kClean, kError };
LEAKGATE_API const char* toString(ReproVerdict verdict);

struct ReproRun {
    std::string python;
    std::optional<ReproVerdict> expected; // --expect-leak, --expect-clean
    ReproVerdict verdict = ReproVerdict::kError;
    std::optional<int> exitCode;
    std::string detail; // the script's verdict line, or why the run is an error

    // An expectation given and contradicted by a clean verdict (an error contradicts nothing: it
    // is counted as an error).
    bool contradicted() const {
        return expected && verdict != ReproVerdict::kError && verdict != *expected;
    }
};

struct ReproOptions {
    std::string from;      // a gate, scan or bisect JSON report, or
    bool fromScan = false; // scan `script` (with `scriptArgs`, in `python`) and use its report
    bool fromGate = false; // gate `target` (in `python`; the decorate, import and launch checks)
    std::string script;    // a scan's script (kScanScript); with `from`, a scan report's
    std::vector<std::string> scriptArgs;
    std::optional<std::string>
        python;                 // --from-scan's and --from-gate's interpreter; default: the build's
    std::optional<int> finding; // 1-based, as the text report counts; none: the first supported
    std::string release;        // bisect reports: the row (default: the newest failing one)
    std::string target;         // the target, where the report does not say which file it was
    std::string out;            // where the script goes ("-" or empty: the caller prints it)
    std::int64_t payloadBytes = 0;
    std::vector<std::string> verifyWith;  // run in each, no expectation
    std::vector<std::string> expectLeak;  // run in each, must exit 1
    std::vector<std::string> expectClean; // run in each, must exit 0
    std::chrono::seconds timeout{300};    // per run
    // Cut the scanned script down to the statements the finding needs (kScanScript): a statement is
    // dropped where the reproducer still reproduces in every --expect-leak interpreter (else the
    // --python of --from-scan) and stays clean in every --expect-clean one.
    bool reduce = false;
    std::chrono::seconds reduceBudget{300}; // then it stops, keeping what it has
};

struct ReproResult {
    ReproScript script;
    std::string release; // the bisect row it was written from, if any
    std::vector<ReproRun> runs;
    std::optional<Reduction> reduction; // --reduce

    // 1: an expectation did not hold; 3: else a run errored; 0: written and every run as expected.
    LEAKGATE_API ExitCode exitCode() const;
};

// Reads the report, writes the reproducer (to options.out when set) and runs it in each
// interpreter given, each in a scratch directory with the timeout. UsageError for a report that
// does not decode, a finding it cannot reproduce, a target it cannot find.
LEAKGATE_API ReproResult runRepro(const ReproOptions& options);

// The summary a person reads: which finding, what the script does, each run's verdict.
LEAKGATE_API std::string describeRepro(const ReproResult& result, const ReproOptions& options);

} // namespace leakgate::commands
