#include "lib/report/writers/sarif.h"

#include "leakgate/errors.h"
#include "lib/base/data_dir.h"
#include "lib/report/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

namespace leakgate::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kSourceRoot = "%SRCROOT%";
constexpr const char* kFingerprintKey = "leakgate/v1";

std::uint64_t fnv1a64(std::string_view data) {
    std::uint64_t hash = 14695981039346656037ull;
    for (unsigned char byte : data) {
        hash ^= byte;
        hash *= 1099511628211ull;
    }
    return hash;
}

// `0x7f3a...` becomes `0x?`: an address differs in every run.
std::string withoutAddresses(std::string_view text) {
    std::string out;
    for (size_t at = 0; at < text.size();) {
        if (text.substr(at, 2) == "0x" && at + 2 < text.size() &&
            std::isxdigit(static_cast<unsigned char>(text[at + 2]))) {
            out += "0x?";
            at += 2;
            while (at < text.size() && std::isxdigit(static_cast<unsigned char>(text[at])))
                ++at;
            continue;
        }
        out += text[at++];
    }
    return out;
}

std::string baseName(const std::string& file) {
    return fs::path(file).filename().string();
}

bool isLaunchKind(const std::string& kind) {
    return evidenceOf(kind) == Evidence::kLaunchLoop;
}

// `<string>`, `<stdin>`, `<frozen importlib._bootstrap>`: code with no file a service can show.
// (A real file may start with `<` too, which is why the name must end with `>` as well.)
bool isPseudoFile(const std::string& file) {
    return file.empty() || (file.front() == '<' && file.back() == '>');
}

// The frame a location points at: the culprit, or the first after it that lives in a real file.
// A launch finding's places are its allocation sites (framesAsWritten).
const FrameInfo* locatedFrame(const std::vector<FrameInfo>& frames) {
    for (const auto& frame : frames) {
        if (!isPseudoFile(frame.file)) return &frame;
    }
    return nullptr;
}

// RFC 3986: everything but the unreserved characters and `/` percent-encoded, so a file name with
// spaces, `<`, `#` or non-ASCII bytes is still one well-formed URI reference.
std::string percentEncode(std::string_view path) {
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            out += static_cast<char>(c);
        } else {
            out += fmt::format("%{:02X}", c);
        }
    }
    return out;
}

json artifactLocation(const std::string& file, const fs::path& sourceRoot) {
    fs::path path = fs::path(file).lexically_normal();
    if (!sourceRoot.empty()) {
        // A relative name is relative to the directory leakgate (and so its worker) ran in.
        fs::path root = sourceRoot.lexically_normal();
        if (path.is_relative()) path = (root / path).lexically_normal();
        fs::path relative = path.lexically_relative(root);
        if (!relative.empty() && *relative.begin() != "..") path = relative;
    }
    if (path.is_absolute()) return {{"uri", "file://" + percentEncode(path.string())}};
    return {{"uri", percentEncode(path.string())}, {"uriBaseId", kSourceRoot}};
}

// `column`: 1-based, 0 when there is none.
json physicalLocation(const std::string& file, int line, const fs::path& sourceRoot, int column = 0) {
    json location = {{"artifactLocation", artifactLocation(file, sourceRoot)}};
    if (line > 0) location["region"] = {{"startLine", line}};
    if (line > 0 && column > 0) location["region"]["startColumn"] = column;
    return location;
}

json resultLocation(const Finding& finding, const WorkloadResult& result, const fs::path& sourceRoot) {
    json location;
    if (finding.fixSite && !isPseudoFile(finding.fixSite->file)) {
        // The statement to change (the line that binds the frame), not the line it returned from.
        location["physicalLocation"] =
            physicalLocation(finding.fixSite->file, finding.fixSite->line, sourceRoot);
        location["logicalLocations"] =
            json::array({{{"fullyQualifiedName", finding.fixSite->function}, {"kind", "function"}}});
        return location;
    }
    const std::vector<FrameInfo> frames = framesAsWritten(finding);
    if (const FrameInfo* frame = locatedFrame(frames)) {
        // A lint finding's column is its first frame's.
        int column = frame == &frames.front() ? finding.column.value_or(0) : 0;
        location["physicalLocation"] = physicalLocation(frame->file, frame->line, sourceRoot, column);
        if (!isLaunchKind(finding.kind)) {
            // A launch finding's "function" is the allocation count at the site, not a name.
            location["logicalLocations"] =
                json::array({{{"fullyQualifiedName", frame->function}, {"kind", "function"}}});
        }
        return location;
    }
    // GitHub code scanning rejects a whole file when one result has no artifact URI, so a finding
    // with no file of its own points at what the workload ran on.
    const std::string& file = frames.empty() ? result.subject : frames.front().file;
    location["physicalLocation"] = physicalLocation(file.empty() ? "unknown" : file, 0, sourceRoot);
    return location;
}

json relatedLocations(const Finding& finding, const fs::path& sourceRoot) {
    json related = json::array();
    const std::vector<FrameInfo> frames = framesAsWritten(finding);
    // With a fix site as the primary location, the culprit frame is a related one too.
    const FrameInfo* located =
        finding.fixSite && !isPseudoFile(finding.fixSite->file) ? nullptr : locatedFrame(frames);
    int id = 1;
    for (const auto& frame : frames) {
        if (&frame == located || isPseudoFile(frame.file)) continue;
        std::string text = isLaunchKind(finding.kind)
                               ? fmt::format("allocation site: {}", frame.function)
                           : &frame == &frames.front() && !located
                               ? fmt::format("culprit frame of `{}`, where it returned", frame.function)
                               : fmt::format("pinned frame of `{}`", frame.function);
        related.push_back({{"id", id++},
                           {"physicalLocation", physicalLocation(frame.file, frame.line, sourceRoot)},
                           {"message", {{"text", text}}}});
    }
    return related;
}

// SARIF's `fixes` (2.1.0, 3.55) of a finding with edits: one fix, a change per file, each edit a
// replacement of a region by new text (the edits `leakgate lint --fix` makes, the same each once).
json fixesJson(const Finding& finding, const fs::path& sourceRoot) {
    std::vector<std::string> files;
    std::map<std::string, std::vector<const FixEdit*>> byFile;
    for (const FixEdit& edit : finding.fixEdits) {
        auto& edits = byFile[edit.file];
        if (edits.empty()) files.push_back(edit.file);
        bool again = std::any_of(edits.begin(), edits.end(),
                                 [&](const FixEdit* other) { return *other == edit; });
        if (!again) edits.push_back(&edit);
    }
    json changes = json::array();
    for (const auto& file : files) {
        json replacements = json::array();
        for (const FixEdit* edit : byFile[file]) {
            replacements.push_back({{"deletedRegion",
                                     {{"startLine", edit->startLine},
                                      {"startColumn", edit->startColumn},
                                      {"endLine", edit->endLine},
                                      {"endColumn", edit->endColumn}}},
                                    {"insertedContent", {{"text", edit->text}}}});
        }
        changes.push_back({{"artifactLocation", artifactLocation(file, sourceRoot)},
                           {"replacements", std::move(replacements)}});
    }
    std::string names;
    for (const auto& local : finding.locals)
        names += (names.empty() ? "`" : ", `") + local + "`";
    json fix = {{"description",
                 {{"text", fmt::format("Set {} to None in a `finally:` around the rest of the "
                                       "function's body, which every way out runs (leakgate lint --fix)",
                                       names.empty() ? std::string("the local") : names)}}},
                {"artifactChanges", std::move(changes)}};
    return json::array({std::move(fix)});
}

// A Markdown heading's anchor as GitHub and most Markdown renderers make it: lower case, spaces to
// hyphens, other punctuation dropped ("frame-cycle" -> "frame-cycle", "lint:frame-stored" ->
// "lintframe-stored").
std::string headingAnchor(std::string_view heading) {
    std::string anchor;
    for (unsigned char c : heading) {
        if (std::isalnum(c) || c == '-' || c == '_')
            anchor += static_cast<char>(std::tolower(c));
        else if (c == ' ')
            anchor += '-';
        else if (c >= 0x80)
            anchor += static_cast<char>(c); // UTF-8 letters are kept
    }
    return anchor;
}

// The checks reference the rules' help points into (docs/reference/checks.md, a heading per rule id,
// so the anchors stay put): LEAKGATE_DOCS_URL where the build names where it is published, else the
// copy in the data directory (installed beside the CLI, or the source tree of a build). None when
// neither is known.
std::optional<std::string> checksReferenceUri() {
    if (std::string_view(LEAKGATE_DOCS_URL).size() > 0) return std::string(LEAKGATE_DOCS_URL);
    try {
        fs::path reference = base::dataDir() / "docs" / "reference" / "checks.md";
        if (!fs::exists(reference)) return std::nullopt;
        return "file://" + percentEncode(fs::absolute(reference).lexically_normal().string());
    } catch (const Error&) {
        return std::nullopt;
    }
}

json ruleJson(const Rule& rule, const std::optional<std::string>& reference) {
    std::string markdown = fmt::format(
        "{}\n\n**Fix:** {}\n\nSee *{}* in leakgate's checks reference (docs/reference/checks.md).",
        rule.fullDescription, rule.help, rule.readmeSection);
    json tags = json::array({"memory", "leak"});
    tags.push_back(rule.evidence == Evidence::kSource ? "static-analysis" : "measured");
    json out = {{"id", rule.kind},
                {"name", rule.name},
                {"shortDescription", {{"text", rule.shortDescription}}},
                {"fullDescription", {{"text", rule.fullDescription}}},
                {"help", {{"text", rule.help}, {"markdown", markdown}}},
                {"defaultConfiguration", {{"level", rule.level}}},
                {"properties", {{"tags", std::move(tags)}, {"readmeSection", rule.readmeSection}}}};
    if (reference) out["helpUri"] = *reference + "#" + headingAnchor(rule.readmeSection);
    return out;
}

} // namespace

std::string findingFingerprint(const Finding& finding, const WorkloadResult& result) {
    std::vector<std::string> parts{finding.kind};
    if (!finding.allocationSites.empty()) {
        // The top allocation site's file and line name it; its count varies with the run.
        const AllocationSite& top = finding.allocationSites.front();
        parts.push_back(baseName(top.file));
        parts.push_back(std::to_string(top.line));
    } else if (!finding.frames.empty()) {
        const FrameInfo& culprit = finding.frames.front();
        parts.push_back(baseName(culprit.file));
        parts.push_back(culprit.function);
    } else {
        // Nothing located it: the same kind of leak in the same workload on the same target is the
        // same alert.
        parts.push_back(result.workload);
        parts.push_back(fs::path(result.subject).filename().string());
    }
    std::set<std::string> locals(finding.locals.begin(), finding.locals.end());
    parts.insert(parts.end(), locals.begin(), locals.end());
    // The shapes of the cycles identify a launch's garbage; their counts vary with the run.
    std::set<std::string> shapes;
    for (const auto& shape : finding.cycleShapes)
        shapes.insert("[" + shape.types + "]");
    parts.insert(parts.end(), shapes.begin(), shapes.end());
    std::string key;
    for (const auto& part : parts)
        key += withoutAddresses(part) + '\x1f';
    return fmt::format("{:016x}", fnv1a64(key));
}

namespace {

// A word of a command line as a POSIX shell reads it back: bare when it is plain, else single-quoted.
std::string shellQuoted(const std::string& word) {
    bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    });
    if (plain) return word;
    std::string out = "'";
    for (char c : word)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

} // namespace

std::string formatSarif(const Report& report) {
    std::error_code error;
    fs::path root = fs::current_path(error);
    return formatSarif(report, error ? fs::path() : root);
}

namespace {

json toolJson(json rules) {
    return {{"driver",
             {{"name", "leakgate"},
              {"version", LEAKGATE_VERSION},
              {"semanticVersion", LEAKGATE_VERSION},
              {"rules", std::move(rules)}}}};
}

json rulesJson() {
    json rules = json::array();
    const std::optional<std::string> reference = checksReferenceUri();
    for (const Rule& rule : findingRules())
        rules.push_back(ruleJson(rule, reference));
    return rules;
}

void addSourceRoot(json& run, const fs::path& sourceRoot) {
    if (sourceRoot.empty()) return;
    std::string rootUri = "file://" + percentEncode(sourceRoot.lexically_normal().string());
    if (!rootUri.ends_with('/')) rootUri += '/';
    run["originalUriBaseIds"] = {{kSourceRoot, {{"uri", rootUri}}}};
}

std::string sarifDocument(json runs) {
    json sarif = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                  {"version", "2.1.0"},
                  {"runs", std::move(runs)}};
    // The target's names and summaries are not guaranteed UTF-8; a report must not fail on them.
    return sarif.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// One SARIF run of a report: its rules, a result per finding of the target, the workloads that
// could not measure as the tool's notifications.
json sarifRun(const Report& report, const fs::path& sourceRoot) {
    json rules = rulesJson();
    std::vector<std::string> ruleIds;
    for (const Rule& rule : findingRules())
        ruleIds.push_back(rule.kind);
    json results = json::array();
    for (const auto& result : report.results) {
        if (result.role != Role::kTarget) continue; // the reference is the baseline, not an alert
        auto resultOf = [&](const Finding& finding) {
            auto known = std::find(ruleIds.begin(), ruleIds.end(), finding.kind);
            if (known == ruleIds.end()) {
                // A kind this writer does not know yet still gets a rule: a result must name one.
                rules.push_back(
                    {{"id", finding.kind},
                     {"shortDescription", {{"text", finding.kind}}},
                     {"fullDescription", {{"text", finding.summary}}},
                     {"help", {{"text", finding.fix.empty() ? finding.summary : finding.fix}}},
                     {"defaultConfiguration", {{"level", "error"}}}});
                ruleIds.push_back(finding.kind);
                known = ruleIds.end() - 1;
            }
            json properties = {{"workload", result.workload},
                               {"subject", result.subject},
                               {"objects", finding.objects},
                               {"bytes", finding.bytes},
                               {"fix", finding.fix}};
            if (!finding.locals.empty()) properties["locals"] = finding.locals;
            if (!finding.root.empty()) properties["root"] = finding.root;
            if (finding.harnessFrames > 0) properties["harnessFrames"] = finding.harnessFrames;
            const Rule* rule = findRule(finding.kind);
            json entry = {
                {"ruleId", finding.kind},
                {"ruleIndex", known - ruleIds.begin()},
                {"level", rule ? rule->level : "error"},
                {"message", {{"text", finding.summary}}},
                {"locations", json::array({resultLocation(finding, result, sourceRoot)})},
                {"partialFingerprints", {{kFingerprintKey, findingFingerprint(finding, result)}}},
                {"properties", std::move(properties)}};
            json related = relatedLocations(finding, sourceRoot);
            if (!related.empty()) entry["relatedLocations"] = std::move(related);
            if (!finding.fixEdits.empty()) entry["fixes"] = fixesJson(finding, sourceRoot);
            return entry;
        };
        for (const auto& finding : result.findings)
            results.push_back(resultOf(finding));
        // The lint's findings a `leakgate: ignore` comment accepted: results marked suppressed in
        // source, so a code-scanning service shows them as accepted (and keeps their history).
        auto suppressed = result.details.find("suppressed");
        if (suppressed == result.details.end() || !suppressed->is_array()) continue;
        for (const json& accepted : *suppressed) {
            if (!accepted.is_object() || !accepted.contains("finding")) continue;
            Finding finding;
            try {
                finding = accepted["finding"].get<Finding>();
            } catch (const json::exception&) {
                continue; // not a finding this writer can read: the JSON report still has it
            }
            if (finding.frames.empty()) continue;
            json entry = resultOf(finding);
            const char* comment = accepted.value("comment", "") == "file" ? "ignore-file" : "ignore";
            json suppression = {
                {"kind", "inSource"},
                {"justification", fmt::format("accepted by a `leakgate: {}` comment", comment)}};
            entry["suppressions"] = json::array({suppression});
            results.push_back(std::move(entry));
        }
    }
    const int exitCode = static_cast<int>(report.exitCode());
    json invocation = {{"executionSuccessful", exitCode <= 1}, {"exitCode", exitCode}};
    if (!report.arguments.empty()) {
        std::string commandLine;
        for (const auto& argument : report.arguments)
            commandLine += (commandLine.empty() ? "" : " ") + shellQuoted(argument);
        invocation["commandLine"] = commandLine;
        invocation["arguments"] =
            json(std::vector<std::string>(report.arguments.begin() + 1, report.arguments.end()));
    }
    // A workload that could not measure (it crashed, hung, raised, or its target did) is the tool's
    // notification: nothing of it is a result, and a reader must see why.
    json notifications = json::array();
    for (const auto& result : report.results) {
        if (!result.error) continue;
        notifications.push_back(
            {{"level", "error"},
             {"descriptor", {{"id", "workload-error"}}},
             {"message",
              {{"text",
                fmt::format("{} on {}{}: {}", result.workload, result.subject,
                            result.role == Role::kTarget ? ""
                                                         : fmt::format(" ({})", toString(result.role)),
                            result.error->message)}}},
             {"properties",
              {{"workload", result.workload},
               {"subject", result.subject},
               {"role", toString(result.role)}}}});
    }
    if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
    json run = {{"tool", toolJson(std::move(rules))},
                {"invocations", json::array({std::move(invocation)})},
                {"results", std::move(results)},
                {"properties", {{"command", report.command}, {"python", report.pythonVersion}}}};
    addSourceRoot(run, sourceRoot);
    return run;
}

// "nvidia-cutlass-dsl[cu13]"
std::string packageWithExtras(const BisectReport& report) {
    std::string out = report.package;
    if (report.extras.empty()) return out;
    out += "[";
    for (size_t i = 0; i < report.extras.size(); ++i)
        out += (i ? "," : "") + report.extras[i];
    return out + "]";
}

} // namespace

std::string formatSarif(const Report& report, const fs::path& sourceRoot) {
    return sarifDocument(json::array({sarifRun(report, sourceRoot)}));
}

std::string formatBisectSarif(const BisectReport& report) {
    std::error_code error;
    fs::path root = fs::current_path(error);
    return formatBisectSarif(report, error ? fs::path() : root);
}

std::string formatBisectSarif(const BisectReport& report, const fs::path& sourceRoot) {
    const std::string package = packageWithExtras(report);
    json runs = json::array();
    for (const auto& row : report.rows) {
        json run;
        if (row.report) {
            run = sarifRun(*row.report, sourceRoot);
            for (json& result : run["results"])
                result["properties"]["release"] = row.version;
        } else {
            // The release could not be installed: a run that measured nothing, and says why.
            json invocation = {
                {"executionSuccessful", false},
                {"exitCode", static_cast<int>(ExitCode::kErrored)},
                {"toolExecutionNotifications",
                 json::array({{{"level", "error"},
                               {"descriptor", {{"id", "release-error"}}},
                               {"message",
                                {{"text", fmt::format("{}=={} was not gated: {}", package, row.version,
                                                      row.error.value_or("no result"))}}}}})}};
            run = {{"tool", toolJson(rulesJson())},
                   {"invocations", json::array({std::move(invocation)})},
                   {"results", json::array()},
                   {"properties", {{"command", "gate"}, {"python", report.pythonVersion}}}};
            addSourceRoot(run, sourceRoot);
        }
        // Each release its own category, so that a code-scanning service keeps one alert history
        // per release instead of one release's results closing another's.
        run["automationDetails"] = {{"id", fmt::format("leakgate/bisect/{}/{}/", package, row.version)}};
        run["properties"]["package"] = package;
        run["properties"]["release"] = row.version;
        run["properties"]["target"] = report.target;
        json transitions = json::array();
        for (const auto& transition : report.transitions) {
            if (transition.to != row.version) continue;
            for (const auto& change : transition.changes) {
                transitions.push_back({{"check", change.check},
                                       {"kind", changeKind(change)},
                                       {"from", transition.from},
                                       {"before", toString(change.before.status)},
                                       {"after", toString(change.after.status)},
                                       {"culpritBefore", change.before.culprit},
                                       {"culpritAfter", change.after.culprit}});
            }
        }
        if (!transitions.empty()) run["properties"]["transitions"] = std::move(transitions);
        runs.push_back(std::move(run));
    }
    return sarifDocument(std::move(runs));
}

} // namespace leakgate::report
