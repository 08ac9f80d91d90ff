// The one report model (public, leakgate/api.h). Workers fill WorkloadResults, the parent
// gathers them into a Report, and only the writers (lib/report/writers/) format it. The same JSON
// encoding carries a WorkloadResult from a worker to the parent over its result pipe.
#pragma once

#include "leakgate/api.h"
#include "leakgate/errors.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leakgate {

inline constexpr const char* kSchema = "leakgate/1";

// One Python frame, as a person reads it: qualified name and file:line.
struct FrameInfo {
    std::string function;
    std::string file;
    int line = 0;
    // How a pinned frame is held, for the frames of a frame-cycle finding after the culprit:
    // "f_back", or the edge that reaches it from what the cycle keeps ("tb_frame", "gi_frame",
    // "local `job`"), with the object it leaves ("tb_frame of `traceback` object"). Empty for the
    // culprit, and for the frames of other findings.
    std::string heldBy;
};

// One labelled edge of a reference path: `kind` is local, cell, attribute, item, key, f_back,
// tb_frame, tb_next, __traceback__, __context__, ...; `label` is how a person reads the edge
// ("local `cur_frame`"); `to` names the object the edge reaches.
struct PathStep {
    std::string kind;
    std::string label;
    std::string to;
};

// One text replacement of a machine-applicable fix (lint: lib/lint/python_rules/fixes.py): the
// text from (startLine, startColumn) up to, not including, (endLine, endColumn) becomes `text`.
// Lines and columns 1-based, columns counted in characters (Unicode code points).
struct FixEdit {
    std::string file;
    int startLine = 0;
    int startColumn = 1;
    int endLine = 0;
    int endColumn = 1;
    std::string text;
    bool operator==(const FixEdit&) const = default;
};

// Where the allocations of a launch come from (tracemalloc on the worst case).
struct AllocationSite {
    std::string file;
    int line = 0;
    double blocksPerCall = 0;
};

// One shape of reference cycle that a launch leaves, with how many of it a batch of calls left.
struct CycleShapeCount {
    std::int64_t count = 0;
    std::string types;                 // the types in the cycle: "CField, tuple"
    std::string cycle;                 // its edges: " --_objects--> `dict` object --..."
    std::optional<std::int64_t> bytes; // what its cycles pin in all, where the scanner measured it
    std::int64_t atImport = 0;         // of `count`, made while a module was imported (scan): not judged
};

// A local of a frame that a cycle pins, holding payloads (a tensor, an array, a list of them):
// the names a user reads to know what the cycle keeps ("`weights` of `train_step`").
struct PayloadHolder {
    std::string local;
    std::string function;
    std::map<std::string, std::int64_t> bytes; // by kind: "device", "host"
};

// What a loop's calls leave alive after a full collection (launch-real-retained,
// decorations-retained): one type, with how many per call.
struct KeptType {
    std::string type;
    double perCall = 0;
};

// What holds the newest kept object of one type: the route from a root, as far as its container
// ("sys.modules['taichi.lang.impl'].pytaichi.kernels[i]").
struct KeptHolder {
    std::string type;
    std::string route;
};

// One finding. What produced it (lib/report/rules.h, evidenceOf(kind)) says which fields it
// fills: the scanner's frame-cycle and retained-frame explain a retention (frames, path, locals,
// root, objects, bytes); a launch loop's findings name allocation sites or cycle shapes; lint's
// name a line and column in a source file (frames.front() and column).
struct Finding {
    std::string kind;              // "frame-cycle", "retained-frame", "launch-...", "lint:..."
    std::string summary;           // one line: the culprit and what closes the cycle
    std::vector<FrameInfo> frames; // culprit first, then its f_back chain, then the other frames it pins
    int harnessFrames = 0;         // leakgate's own frames in that chain, left out of `frames`
    std::vector<std::string> locals; // variable names on the path that closes the cycle
    std::vector<PathStep> path;      // the labelled path (culprit back to itself, or root to frame)
    std::string root;                // retained-frame: the live root the path starts from
    std::int64_t objects = 0;        // objects pinned (estimate)
    std::int64_t bytes = 0;          // their summed sys.getsizeof (estimate)
    // What sys.getsizeof cannot see: the payloads of the sentinels among the objects pinned, by
    // kind ("device", "torch"), for a frame-cycle finding.
    std::map<std::string, std::int64_t> payloadBytes;
    std::vector<PayloadHolder> payloadHolders; // frame-cycle: the locals that hold the most of them
    std::string fix;                           // the fix pattern, in words
    // The statement to change, where the lint found it for a dynamic finding: the line that binds
    // a cycle's closing local, or the store of a frame on an attribute (SARIF's primary location).
    std::optional<FrameInfo> fixSite;
    std::optional<int> column;                   // lint: 1-based, as editors and compilers count
    std::vector<FixEdit> fixEdits;               // lint: the edits that fix it, where one is known
    std::vector<AllocationSite> allocationSites; // launch-allocations: most blocks per call first
    std::vector<CycleShapeCount> cycleShapes;    // launch-cyclic-garbage
    std::vector<KeptType> keptTypes;             // the retained checks: most per call first
    std::vector<KeptHolder> keptHolders;         // and what holds them, a decorated function's first
};

enum class Status { kPass, kFail, kSkip, kError };
LEAKGATE_API const char* toString(Status status);
LEAKGATE_API Status statusFromString(const std::string& text);

struct CheckResult {
    std::string name;
    Status status = Status::kPass;
    std::string reason;
    std::optional<std::int64_t> amount; // the figure compared with the reference (bytes pinned)
};

// What happened to one sentinel (docs/definitions.md, "Verdicts"): freed-by-refcount, freed-by-gc-only
// or never-freed.
struct SentinelVerdict {
    std::string label; // where it was placed: "kernel(options)@depth2"
    std::string kind;  // payload kind: host, device, torch
    std::int64_t bytes = 0;
    std::string verdict;
};

// Why a workload's measurement is invalid: it raised, crashed, hung or re-enabled gc.
struct WorkloadError {
    std::string message;
    std::optional<int> signal;
    std::string stderrTail;
    // The input was wrong (a target that is no target, a spec the worker refused): the run is a
    // usage error (exit 2), as it would have been had the parent seen it before starting anything.
    bool usage = false;
};

// A result's part in a run: the target judged, or the reference runtime it is judged against
// (its results are the baseline, never alerts). JSON spells them "target" and "reference".
enum class Role { kTarget, kReference };
LEAKGATE_API const char* toString(Role role);

struct WorkloadResult {
    std::string workload; // "scan", "decorate", ...
    std::string subject;  // the script or target it ran on
    Role role = Role::kTarget;
    std::optional<WorkloadError> error; // set: the result is an `error` result
    std::vector<CheckResult> checks;
    std::vector<Finding> findings;
    std::vector<SentinelVerdict> sentinels;
    nlohmann::json details = nlohmann::json::object(); // workload-specific facts
    // What the workload observed beside its checks, judged by none, each a sentence for a person
    // ("the program's 2 atexit callbacks ran after the reads and freed ...").
    std::vector<std::string> notes;
    double seconds = 0;

    bool ok() const { return !error.has_value(); }
};

struct Report {
    std::string command;
    std::string pythonVersion;
    std::string pythonExecutable;
    std::vector<WorkloadResult> results;
    std::vector<std::string> arguments; // the command line that made it (argv), when known

    // Failures count only in target results (the reference is the baseline); errors count in
    // every result.
    LEAKGATE_API ExitCode exitCode() const;
    // Whether any result or check errored (in any role): something was not measured.
    LEAKGATE_API bool hasErrors() const;
    // The target's findings (the reference's stay in its results).
    LEAKGATE_API std::vector<const Finding*> findings() const;
};

// The report of `leakgate bisect`: the gate's Report per release, the matrix of release by
// check, and every transition between consecutive releases (docs/definitions.md, "Transitions").
struct BisectCell {
    Status status = Status::kPass;
    std::optional<std::int64_t> amount; // the check's figure
    std::string culprit; // a failing check's culprit: "ModelDSL.kernel (frame_cycle_461.py)"
};

struct BisectRow {
    std::string version;
    std::optional<std::string> error;        // the environment could not be made: an `error` row
    std::optional<Report> report;            // the gate's report in that environment
    std::map<std::string, BisectCell> cells; // check -> its target result
};

// One check's verdict or culprit changing between two judged releases.
struct CheckChange {
    std::string check;
    BisectCell before, after;
};

// Consecutive judged releases of one check, `from` then `to`, with what changed. `across` holds
// the releases between them (PEP 440 order) where the check has no verdict (error, skip or
// missing): the transition is reported across them, never from or to one of them.
struct BisectTransition {
    std::string from, to;
    std::vector<std::string> across;
    std::vector<CheckChange> changes;
};

struct BisectReport {
    std::string package;
    std::vector<std::string> extras; // --extra: installed as package[extra,...]
    std::vector<std::string> with;   // --with: requirements installed beside every release
    std::string target;
    std::string pythonVersion;
    std::string versionOrder; // what ordered the releases: "packaging 21.3"
    std::string shard;        // "2/4" for one shard of a history (--shard), else empty
    std::vector<std::string> checks;
    std::vector<BisectRow> rows; // oldest first (PEP 440)
    std::vector<BisectTransition> transitions;
    std::map<std::string, std::string> firstBad;  // check -> earliest version where it fails
    std::map<std::string, std::string> firstGood; // check -> earliest version where it passes

    LEAKGATE_API ExitCode exitCode() const;
};

// Fills `transitions`, `firstBad` and `firstGood` from the rows' cells (rows oldest first). A
// check's verdict is pass or fail; an error, a skip or no result at all is none, and the check's
// transition then runs across that release.
LEAKGATE_API void computeTransitions(BisectReport& report);
// "regressed" (pass to fail), "fixed" (fail to pass) or "culprit" (fails in both, blaming another).
LEAKGATE_API const char* changeKind(const CheckChange& change);

// The Report that a `leakgate scan|gate|lint --json` document describes, and the BisectReport of
// a `leakgate bisect --json` one (transitions recomputed from its cells); nothing when it does not
// decode. Throw nothing.
LEAKGATE_API std::optional<Report> reportFromJson(const nlohmann::json& in);
LEAKGATE_API std::optional<BisectReport> bisectReportFromJson(const nlohmann::json& in);

// JSON encodings (ADL hooks for nlohmann::json).
LEAKGATE_API void to_json(nlohmann::json& out, const FrameInfo& frame);
LEAKGATE_API void from_json(const nlohmann::json& in, FrameInfo& frame);
LEAKGATE_API void to_json(nlohmann::json& out, const PathStep& step);
LEAKGATE_API void from_json(const nlohmann::json& in, PathStep& step);
// A finding's frames and path as schema leakgate/1 writes them: allocation sites as frames
// ("3.00 blocks per call" in `function`), a lint column and cycle shapes as path steps.
LEAKGATE_API std::vector<FrameInfo> framesAsWritten(const Finding& finding);
LEAKGATE_API std::vector<PathStep> pathAsWritten(const Finding& finding);

LEAKGATE_API void to_json(nlohmann::json& out, const FixEdit& edit);
LEAKGATE_API void from_json(const nlohmann::json& in, FixEdit& edit);
LEAKGATE_API void to_json(nlohmann::json& out, const AllocationSite& site);
LEAKGATE_API void from_json(const nlohmann::json& in, AllocationSite& site);
LEAKGATE_API void to_json(nlohmann::json& out, const CycleShapeCount& shape);
LEAKGATE_API void from_json(const nlohmann::json& in, CycleShapeCount& shape);
LEAKGATE_API void to_json(nlohmann::json& out, const Finding& finding);
LEAKGATE_API void from_json(const nlohmann::json& in, Finding& finding);
LEAKGATE_API void to_json(nlohmann::json& out, const CheckResult& check);
LEAKGATE_API void from_json(const nlohmann::json& in, CheckResult& check);
LEAKGATE_API void to_json(nlohmann::json& out, const SentinelVerdict& sentinel);
LEAKGATE_API void from_json(const nlohmann::json& in, SentinelVerdict& sentinel);
LEAKGATE_API void to_json(nlohmann::json& out, const WorkloadError& error);
LEAKGATE_API void from_json(const nlohmann::json& in, WorkloadError& error);
LEAKGATE_API void to_json(nlohmann::json& out, const WorkloadResult& result);
LEAKGATE_API void from_json(const nlohmann::json& in, WorkloadResult& result);

} // namespace leakgate
