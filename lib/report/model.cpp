#include "lib/report/model.h"

#include <algorithm>

namespace leakgate {

using nlohmann::json;

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

Status statusFromString(const std::string& text) {
    if (text == "pass") return Status::kPass;
    if (text == "fail") return Status::kFail;
    if (text == "skip") return Status::kSkip;
    return Status::kError;
}

ExitCode Report::exitCode() const {
    bool failed = false;
    bool errored = false;
    for (const auto& result : results) {
        errored |= !result.ok();
        for (const auto& check : result.checks) {
            failed |= check.status == Status::kFail && result.role == "target";
            errored |= check.status == Status::kError;
        }
    }
    if (failed) return ExitCode::kFindings;
    if (errored) return ExitCode::kErrored;
    return ExitCode::kClean;
}

std::vector<const Finding*> Report::findings() const {
    std::vector<const Finding*> all;
    for (const auto& result : results) {
        if (result.role != "target") continue;
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
            errored |= code == ExitCode::kErrored;
        }
    }
    if (failed) return ExitCode::kFindings;
    if (errored) return ExitCode::kErrored;
    return ExitCode::kClean;
}

void to_json(json& out, const FrameInfo& frame) {
    out = json{{"function", frame.function}, {"file", frame.file}, {"line", frame.line}};
}

void from_json(const json& in, FrameInfo& frame) {
    in.at("function").get_to(frame.function);
    in.at("file").get_to(frame.file);
    in.at("line").get_to(frame.line);
}

void to_json(json& out, const PathStep& step) {
    out = json{{"kind", step.kind}, {"label", step.label}, {"to", step.to}};
}

void from_json(const json& in, PathStep& step) {
    in.at("kind").get_to(step.kind);
    in.at("label").get_to(step.label);
    in.at("to").get_to(step.to);
}

void to_json(json& out, const Finding& finding) {
    out = json{{"kind", finding.kind},     {"summary", finding.summary},
               {"frames", finding.frames}, {"harness_frames", finding.harnessFrames},
               {"locals", finding.locals}, {"path", finding.path},
               {"root", finding.root},     {"objects", finding.objects},
               {"bytes", finding.bytes},   {"fix", finding.fix}};
}

void from_json(const json& in, Finding& finding) {
    in.at("kind").get_to(finding.kind);
    in.at("summary").get_to(finding.summary);
    in.at("frames").get_to(finding.frames);
    if (in.contains("harness_frames")) in.at("harness_frames").get_to(finding.harnessFrames);
    in.at("locals").get_to(finding.locals);
    in.at("path").get_to(finding.path);
    in.at("root").get_to(finding.root);
    in.at("objects").get_to(finding.objects);
    in.at("bytes").get_to(finding.bytes);
    in.at("fix").get_to(finding.fix);
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
        check.amount = in.at("amount").get<std::int64_t>();
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
    in.at("bytes").get_to(sentinel.bytes);
    in.at("verdict").get_to(sentinel.verdict);
}

void to_json(json& out, const WorkloadError& error) {
    out = json{{"message", error.message},
               {"signal", error.signal ? json(*error.signal) : json(nullptr)},
               {"stderr_tail", error.stderrTail}};
}

void from_json(const json& in, WorkloadError& error) {
    in.at("message").get_to(error.message);
    if (in.contains("signal") && !in.at("signal").is_null()) error.signal = in.at("signal").get<int>();
    if (in.contains("stderr_tail")) in.at("stderr_tail").get_to(error.stderrTail);
}

void to_json(json& out, const WorkloadResult& result) {
    out = json{{"workload", result.workload},
               {"subject", result.subject},
               {"role", result.role},
               {"status", result.ok() ? "ok" : "error"},
               {"error", result.error ? json(*result.error) : json(nullptr)},
               {"checks", result.checks},
               {"findings", result.findings},
               {"sentinels", result.sentinels},
               {"details", result.details},
               {"seconds", result.seconds}};
}

void from_json(const json& in, WorkloadResult& result) {
    in.at("workload").get_to(result.workload);
    in.at("subject").get_to(result.subject);
    if (!in.at("error").is_null()) result.error = in.at("error").get<WorkloadError>();
    in.at("checks").get_to(result.checks);
    in.at("findings").get_to(result.findings);
    if (in.contains("role")) in.at("role").get_to(result.role);
    if (in.contains("sentinels")) in.at("sentinels").get_to(result.sentinels);
    if (in.contains("details")) result.details = in.at("details");
    if (in.contains("seconds")) in.at("seconds").get_to(result.seconds);
}

} // namespace leakgate
