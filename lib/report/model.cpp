#include "leakgate/report.h"

#include "lib/report/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace leakgate {

using nlohmann::json;

namespace {

// An integer field from its JSON: a whole number that the field's type holds, or a json
// exception (the text is unreadable). json::get<int> would take a float as well, and converting
// one beyond the type's range is undefined behaviour; an integer too large would silently wrap.
template <typename Integer> Integer wholeNumber(const json& value) {
    if (value.is_number_unsigned()) {
        const auto number = value.get<std::uint64_t>();
        if (number <= static_cast<std::uint64_t>(std::numeric_limits<Integer>::max()))
            return static_cast<Integer>(number);
    } else if (value.is_number_integer()) {
        const auto number = value.get<std::int64_t>();
        if (number >= std::numeric_limits<Integer>::min() &&
            number <= std::numeric_limits<Integer>::max())
            return static_cast<Integer>(number);
    }
    throw json::type_error::create(302,
                                   fmt::format("expected a whole number that fits its field, got {}",
                                               value.is_number() ? value.dump() : value.type_name()),
                                   &value);
}

} // namespace

const char* toString(Status status) {
    switch (status) {
    case Status::kPass:
        return "pass";
    case Status::kFail:
        return "fail";
    case Status::kSkip:
        return "skip";
    case Status::kError:
        return "error";
    }
    return "error";
}

const char* toString(Role role) {
    return role == Role::kReference ? "reference" : "target";
}

Status statusFromString(const std::string& text) {
    if (text == "pass") return Status::kPass;
    if (text == "fail") return Status::kFail;
    if (text == "skip") return Status::kSkip;
    return Status::kError;
}

ExitCode Report::exitCode() const {
    bool failed = false;
    for (const auto& result : results) {
        if (result.error && result.error->usage) return ExitCode::kUsage;
        for (const auto& check : result.checks)
            failed |= check.status == Status::kFail && result.role == Role::kTarget;
    }
    if (failed) return ExitCode::kFindings;
    if (hasErrors()) return ExitCode::kErrored;
    return ExitCode::kClean;
}

bool Report::hasErrors() const {
    for (const auto& result : results) {
        if (!result.ok()) return true;
        for (const auto& check : result.checks) {
            if (check.status == Status::kError) return true;
        }
    }
    return false;
}

std::vector<const Finding*> Report::findings() const {
    std::vector<const Finding*> all;
    for (const auto& result : results) {
        if (result.role != Role::kTarget) continue;
        for (const auto& finding : result.findings)
            all.push_back(&finding);
    }
    return all;
}

ExitCode BisectReport::exitCode() const {
    bool failed = false, errored = false;
    for (const auto& row : rows) {
        errored |= row.error.has_value();
        if (row.report) {
            ExitCode code = row.report->exitCode();
            failed |= code == ExitCode::kFindings;
            errored |= code == ExitCode::kErrored || code == ExitCode::kUsage;
        }
    }
    if (failed) return ExitCode::kFindings;
    if (errored) return ExitCode::kErrored;
    return ExitCode::kClean;
}

namespace {

bool judged(const BisectCell& cell) {
    return cell.status == Status::kPass || cell.status == Status::kFail;
}

} // namespace

void computeTransitions(BisectReport& report) {
    report.transitions.clear();
    report.firstBad.clear();
    report.firstGood.clear();
    // (from, to) row indices -> its transition, kept in the order of `to`, then `from`.
    std::map<std::pair<size_t, size_t>, BisectTransition> byPair;
    for (const auto& check : report.checks) {
        std::optional<size_t> previous;
        for (size_t i = 0; i < report.rows.size(); ++i) {
            const BisectRow& row = report.rows[i];
            if (row.error) continue;
            auto found = row.cells.find(check);
            if (found == row.cells.end() || !judged(found->second)) continue;
            const BisectCell& cell = found->second;
            if (cell.status == Status::kFail && !report.firstBad.count(check))
                report.firstBad[check] = row.version;
            if (cell.status == Status::kPass && !report.firstGood.count(check))
                report.firstGood[check] = row.version;
            if (previous) {
                const BisectCell& before = report.rows[*previous].cells.at(check);
                if (before.status != cell.status || before.culprit != cell.culprit) {
                    BisectTransition& transition = byPair[{i, *previous}];
                    if (transition.changes.empty()) {
                        transition.from = report.rows[*previous].version;
                        transition.to = row.version;
                        for (size_t j = *previous + 1; j < i; ++j)
                            transition.across.push_back(report.rows[j].version);
                    }
                    transition.changes.push_back({check, before, cell});
                }
            }
            previous = i;
        }
    }
    for (auto& [pair, transition] : byPair)
        report.transitions.push_back(std::move(transition));
}

const char* changeKind(const CheckChange& change) {
    if (change.before.status == change.after.status) return "culprit";
    return change.after.status == Status::kFail ? "regressed" : "fixed";
}

// The Report that a `leakgate scan|gate|lint --json` document describes; nothing when its
// command, python or results do not decode. Throws nothing.
std::optional<Report> reportFromJson(const json& in) {
    try {
        Report report;
        in.at("command").get_to(report.command);
        const json& python = in.at("python");
        python.at("version").get_to(report.pythonVersion);
        if (python.contains("executable")) python.at("executable").get_to(report.pythonExecutable);
        in.at("results").get_to(report.results);
        return report;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

// The BisectReport that a `leakgate bisect --json` document describes (each version's `report` a
// gate document); nothing when it does not decode. Throws nothing.
std::optional<BisectReport> bisectReportFromJson(const json& in) {
    try {
        BisectReport bisect;
        in.at("package").get_to(bisect.package);
        in.at("target").get_to(bisect.target);
        in.at("python").at("version").get_to(bisect.pythonVersion);
        in.at("checks").get_to(bisect.checks);
        for (const json& version : in.at("versions")) {
            BisectRow row;
            version.at("version").get_to(row.version);
            if (!version.at("error").is_null()) row.error = version.at("error").get<std::string>();
            for (const auto& [check, status] : version.at("checks").items())
                row.cells[check].status = statusFromString(status.get<std::string>());
            if (version.contains("cells")) {
                for (const auto& [check, cell] : version.at("cells").items()) {
                    if (cell.contains("amount") && !cell.at("amount").is_null())
                        row.cells[check].amount = cell.at("amount").get<std::int64_t>();
                    if (cell.contains("culprit") && !cell.at("culprit").is_null())
                        row.cells[check].culprit = cell.at("culprit").get<std::string>();
                }
            }
            if (!version.at("report").is_null()) {
                row.report = reportFromJson(version.at("report"));
                if (!row.report) return std::nullopt;
            }
            bisect.rows.push_back(std::move(row));
        }
        if (in.contains("extras")) in.at("extras").get_to(bisect.extras);
        if (in.contains("with")) in.at("with").get_to(bisect.with);
        if (in.contains("version_order")) in.at("version_order").get_to(bisect.versionOrder);
        if (in.contains("shard") && !in.at("shard").is_null()) in.at("shard").get_to(bisect.shard);
        computeTransitions(bisect);
        return bisect;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

void to_json(json& out, const FrameInfo& frame) {
    out = json{{"function", frame.function}, {"file", frame.file}, {"line", frame.line}};
    if (!frame.heldBy.empty()) out["held_by"] = frame.heldBy;
}

void from_json(const json& in, FrameInfo& frame) {
    in.at("function").get_to(frame.function);
    in.at("file").get_to(frame.file);
    frame.line = wholeNumber<int>(in.at("line"));
    if (auto held = in.find("held_by"); held != in.end()) held->get_to(frame.heldBy);
}

void to_json(json& out, const PathStep& step) {
    out = json{{"kind", step.kind}, {"label", step.label}, {"to", step.to}};
}

void from_json(const json& in, PathStep& step) {
    in.at("kind").get_to(step.kind);
    in.at("label").get_to(step.label);
    in.at("to").get_to(step.to);
}

std::vector<FrameInfo> framesAsWritten(const Finding& finding) {
    std::vector<FrameInfo> frames = finding.frames;
    for (const auto& site : finding.allocationSites)
        frames.push_back(FrameInfo{report::blocksPerCall(site.blocksPerCall), site.file, site.line});
    return frames;
}

std::vector<PathStep> pathAsWritten(const Finding& finding) {
    std::vector<PathStep> path = finding.path;
    if (finding.column) path.push_back(PathStep{"column", std::to_string(*finding.column), ""});
    for (const auto& shape : finding.cycleShapes)
        path.push_back(
            PathStep{"cycle", report::cycleShapeCount(shape.count, shape.types), shape.cycle});
    return path;
}

void to_json(json& out, const FixEdit& edit) {
    out = json{
        {"file", edit.file},        {"start_line", edit.startLine}, {"start_column", edit.startColumn},
        {"end_line", edit.endLine}, {"end_column", edit.endColumn}, {"text", edit.text}};
}

void from_json(const json& in, FixEdit& edit) {
    in.at("file").get_to(edit.file);
    edit.startLine = wholeNumber<int>(in.at("start_line"));
    edit.startColumn = wholeNumber<int>(in.at("start_column"));
    edit.endLine = wholeNumber<int>(in.at("end_line"));
    edit.endColumn = wholeNumber<int>(in.at("end_column"));
    in.at("text").get_to(edit.text);
}

void to_json(json& out, const AllocationSite& site) {
    out = json{{"file", site.file}, {"line", site.line}, {"blocks_per_call", site.blocksPerCall}};
}

void from_json(const json& in, AllocationSite& site) {
    in.at("file").get_to(site.file);
    site.line = wholeNumber<int>(in.at("line"));
    in.at("blocks_per_call").get_to(site.blocksPerCall);
}

void to_json(json& out, const CycleShapeCount& shape) {
    out = json{{"count", shape.count}, {"types", shape.types}, {"cycle", shape.cycle}};
    if (shape.bytes) out["bytes"] = *shape.bytes;
    if (shape.atImport) out["at_import"] = shape.atImport;
}

void from_json(const json& in, CycleShapeCount& shape) {
    shape.count = wholeNumber<std::int64_t>(in.at("count"));
    in.at("types").get_to(shape.types);
    in.at("cycle").get_to(shape.cycle);
    if (in.contains("bytes") && !in.at("bytes").is_null())
        shape.bytes = wholeNumber<std::int64_t>(in.at("bytes"));
    if (in.contains("at_import")) shape.atImport = wholeNumber<std::int64_t>(in.at("at_import"));
}

void to_json(json& out, const Finding& finding) {
    // Schema leakgate/1 had no typed fields: allocation sites were written as frames, cycle
    // shapes and a lint column as path steps. They still are, beside the typed keys.
    json frames = framesAsWritten(finding);
    json path = pathAsWritten(finding);
    out = json{{"kind", finding.kind},     {"summary", finding.summary},
               {"frames", frames},         {"harness_frames", finding.harnessFrames},
               {"locals", finding.locals}, {"path", path},
               {"root", finding.root},     {"objects", finding.objects},
               {"bytes", finding.bytes},   {"fix", finding.fix}};
    if (finding.column) out["column"] = *finding.column;
    if (finding.fixSite) out["fix_site"] = *finding.fixSite;
    if (!finding.fixEdits.empty()) out["fix_edits"] = finding.fixEdits;
    if (!finding.payloadBytes.empty()) out["payload_bytes"] = finding.payloadBytes;
    if (!finding.payloadHolders.empty()) {
        json& holders = out["payload_holders"] = json::array();
        for (const PayloadHolder& holder : finding.payloadHolders)
            holders.push_back(
                {{"local", holder.local}, {"function", holder.function}, {"bytes", holder.bytes}});
    }
    if (!finding.allocationSites.empty()) out["allocation_sites"] = finding.allocationSites;
    if (!finding.cycleShapes.empty()) out["cycle_shapes"] = finding.cycleShapes;
    if (!finding.keptTypes.empty()) {
        json& kept = out["kept_types"] = json::array();
        for (const KeptType& type : finding.keptTypes)
            kept.push_back({{"type", type.type}, {"per_call", type.perCall}});
    }
    if (!finding.keptHolders.empty()) {
        json& holders = out["kept_holders"] = json::array();
        for (const KeptHolder& holder : finding.keptHolders)
            holders.push_back({{"type", holder.type}, {"route", holder.route}});
    }
}

void from_json(const json& in, Finding& finding) {
    in.at("kind").get_to(finding.kind);
    in.at("summary").get_to(finding.summary);
    in.at("frames").get_to(finding.frames);
    if (in.contains("harness_frames")) finding.harnessFrames = wholeNumber<int>(in.at("harness_frames"));
    in.at("locals").get_to(finding.locals);
    in.at("path").get_to(finding.path);
    in.at("root").get_to(finding.root);
    finding.objects = wholeNumber<std::int64_t>(in.at("objects"));
    finding.bytes = wholeNumber<std::int64_t>(in.at("bytes"));
    in.at("fix").get_to(finding.fix);
    if (auto site = in.find("fix_site"); site != in.end()) finding.fixSite = site->get<FrameInfo>();
    if (auto edits = in.find("fix_edits"); edits != in.end() && edits->is_array())
        edits->get_to(finding.fixEdits);
    if (auto payloads = in.find("payload_bytes"); payloads != in.end() && payloads->is_object()) {
        for (const auto& [kind, bytes] : payloads->items())
            finding.payloadBytes[kind] = wholeNumber<std::int64_t>(bytes);
    }
    if (auto holders = in.find("payload_holders"); holders != in.end() && holders->is_array()) {
        for (const json& entry : *holders) {
            PayloadHolder holder;
            entry.at("local").get_to(holder.local);
            entry.at("function").get_to(holder.function);
            for (const auto& [kind, bytes] : entry.at("bytes").items())
                holder.bytes[kind] = wholeNumber<std::int64_t>(bytes);
            finding.payloadHolders.push_back(std::move(holder));
        }
    }
    // The typed keys replace the steps and frames written for schema leakgate/1.
    if (in.contains("column")) {
        finding.column = wholeNumber<int>(in.at("column"));
        std::erase_if(finding.path, [](const PathStep& step) { return step.kind == "column"; });
    }
    if (in.contains("allocation_sites")) {
        in.at("allocation_sites").get_to(finding.allocationSites);
        finding.frames.resize(finding.frames.size() -
                              std::min(finding.frames.size(), finding.allocationSites.size()));
    }
    if (in.contains("cycle_shapes")) {
        in.at("cycle_shapes").get_to(finding.cycleShapes);
        std::erase_if(finding.path, [](const PathStep& step) { return step.kind == "cycle"; });
    }
    if (auto kept = in.find("kept_types"); kept != in.end() && kept->is_array()) {
        for (const json& entry : *kept) {
            KeptType type;
            entry.at("type").get_to(type.type);
            entry.at("per_call").get_to(type.perCall);
            finding.keptTypes.push_back(std::move(type));
        }
    }
    if (auto holders = in.find("kept_holders"); holders != in.end() && holders->is_array()) {
        for (const json& entry : *holders) {
            KeptHolder holder;
            entry.at("type").get_to(holder.type);
            entry.at("route").get_to(holder.route);
            finding.keptHolders.push_back(std::move(holder));
        }
    }
}

void to_json(json& out, const CheckResult& check) {
    out = json{{"name", check.name},
               {"status", toString(check.status)},
               {"reason", check.reason},
               {"amount", check.amount ? json(*check.amount) : json(nullptr)}};
}

void from_json(const json& in, CheckResult& check) {
    in.at("name").get_to(check.name);
    check.status = statusFromString(in.at("status").get<std::string>());
    in.at("reason").get_to(check.reason);
    if (in.contains("amount") && !in.at("amount").is_null())
        check.amount = wholeNumber<std::int64_t>(in.at("amount"));
}

void to_json(json& out, const SentinelVerdict& sentinel) {
    out = json{{"label", sentinel.label},
               {"kind", sentinel.kind},
               {"bytes", sentinel.bytes},
               {"verdict", sentinel.verdict}};
}

void from_json(const json& in, SentinelVerdict& sentinel) {
    in.at("label").get_to(sentinel.label);
    in.at("kind").get_to(sentinel.kind);
    sentinel.bytes = wholeNumber<std::int64_t>(in.at("bytes"));
    in.at("verdict").get_to(sentinel.verdict);
}

void to_json(json& out, const WorkloadError& error) {
    out = json{{"message", error.message},
               {"signal", error.signal ? json(*error.signal) : json(nullptr)},
               {"stderr_tail", error.stderrTail}};
    if (error.usage) out["usage"] = true;
}

void from_json(const json& in, WorkloadError& error) {
    in.at("message").get_to(error.message);
    if (in.contains("signal") && !in.at("signal").is_null())
        error.signal = wholeNumber<int>(in.at("signal"));
    if (in.contains("stderr_tail")) in.at("stderr_tail").get_to(error.stderrTail);
    error.usage = in.value("usage", false);
}

void to_json(json& out, const WorkloadResult& result) {
    out = json{{"workload", result.workload},
               {"subject", result.subject},
               {"role", toString(result.role)},
               {"status", result.ok() ? "ok" : "error"},
               {"error", result.error ? json(*result.error) : json(nullptr)},
               {"checks", result.checks},
               {"findings", result.findings},
               {"sentinels", result.sentinels},
               {"details", result.details},
               {"notes", result.notes},
               {"seconds", result.seconds}};
}

void from_json(const json& in, WorkloadResult& result) {
    in.at("workload").get_to(result.workload);
    in.at("subject").get_to(result.subject);
    if (!in.at("error").is_null()) result.error = in.at("error").get<WorkloadError>();
    in.at("checks").get_to(result.checks);
    in.at("findings").get_to(result.findings);
    if (in.contains("role")) {
        const std::string role = in.at("role").get<std::string>();
        if (role != "target" && role != "reference")
            throw json::type_error::create(302, fmt::format("unknown role `{}`", role), &in.at("role"));
        result.role = role == "reference" ? Role::kReference : Role::kTarget;
    }
    if (in.contains("sentinels")) in.at("sentinels").get_to(result.sentinels);
    if (in.contains("details")) result.details = in.at("details");
    if (in.contains("notes")) in.at("notes").get_to(result.notes);
    if (in.contains("seconds")) in.at("seconds").get_to(result.seconds);
}

} // namespace leakgate
