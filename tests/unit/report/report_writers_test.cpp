// The CI and human report writers: JUnit XML, SARIF 2.1.0 and HTML, over reports built by hand.
// Well-formedness is checked with the parsers of the test binary's interpreter (expat through
// xml.etree, html.parser), which are what a consumer of these files would use.
#include "lib/lint/cxx.h"
#include "lib/lint/python.h"
#include "lib/report/rules.h"
#include "lib/report/writers/html.h"
#include "lib/report/writers/junit.h"
#include "lib/report/writers/sarif.h"

#include <pybind11/embed.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <unistd.h>

namespace leakgate::report {
namespace {

namespace py = pybind11;
using nlohmann::json;

constexpr const char* kHostileFile = "/src/<script>alert(1)</script>.py";

Finding frameCycle(int culpritLine = 47, int pinnedLine = 90) {
    Finding finding;
    finding.kind = "frame-cycle";
    finding.summary =
        "local `cur_frame` of `ModelDSL.kernel` (frame_cycle_461.py:47) holds its own frame";
    finding.frames = {{"ModelDSL.kernel", "/work/fixtures/targets/frame_cycle_461.py", culpritLine},
                      {"define_kernels", "/work/app/train.py", pinnedLine},
                      {"<module>", "/work/app/train.py", pinnedLine + 10}};
    finding.harnessFrames = 3;
    finding.locals = {"cur_frame", "self"};
    finding.path = {
        {"local", "local `cur_frame`", "frame of `ModelDSL.kernel` (frame_cycle_461.py:47)"}};
    finding.objects = 15;
    finding.bytes = 8390440;
    finding.fix = "Capture the source location eagerly and keep no frame object.";
    return finding;
}

WorkloadResult result(std::string workload, std::string role, std::vector<CheckResult> checks) {
    WorkloadResult out;
    out.workload = std::move(workload);
    out.subject = role == "target" ? "frame_cycle_461" : "reference";
    out.role = role == "reference" ? Role::kReference : Role::kTarget;
    out.checks = std::move(checks);
    out.seconds = 1.5;
    return out;
}

// A gate run with every status, a reference baseline that fails too, and a worker that died.
Report gateReport() {
    Report report;
    report.command = "gate";
    report.pythonVersion = "3.11.7";
    report.pythonExecutable = "/usr/bin/python3";

    WorkloadResult decorate =
        result("decorate", "target",
               {{"decorate-sentinels", Status::kFail, "25 of 25 sentinels outlived their frames"},
                {"decorate-frame-cycle", Status::kFail, "2 frame cycles <in> \"garbage\" & more"},
                {"decorate-retained-frame", Status::kPass, "no frame outlived its call"}});
    decorate.findings.push_back(frameCycle());
    decorate.sentinels.push_back({"kernel depth=1 frame=1", "host", 8 << 20, "freed-by-gc-only"});
    report.results.push_back(decorate);

    WorkloadResult launch =
        result("launch", "target",
               {{"launch-allocations", Status::kSkip, "the target exposes no `scalar_types`"}});
    report.results.push_back(launch);

    WorkloadResult import =
        result("import", "target",
               {{"import-sentinels", Status::kError, "the worker was killed by SIGSEGV"},
                {"import-frame-cycle", Status::kError, "the worker was killed by SIGSEGV"}});
    // Raw stderr: a control character XML forbids, an invalid byte, markup.
    import.error = WorkloadError{"the worker was killed by SIGSEGV", 11,
                                 "Fatal Python error: <segfault> & \x01\x1b[31m\xff done\n"};
    report.results.push_back(import);

    WorkloadResult soak = result("soak", "target", {});
    soak.error = WorkloadError{"timed out after 30 s", std::nullopt, "tail"};
    report.results.push_back(soak);

    WorkloadResult reference =
        result("decorate", "reference",
               {{"decorate-sentinels", Status::kPass, "all freed"},
                {"decorate-frame-cycle", Status::kFail, "1 frame cycle (the interpreter's)"}});
    report.results.push_back(reference);
    return report;
}

py::object parseXml(const std::string& xml) {
    return py::module_::import("xml.etree.ElementTree").attr("fromstring")(py::bytes(xml));
}

int attribute(py::handle element, const char* name) {
    return std::stoi(element.attr("get")(name).cast<std::string>());
}

int countElements(py::handle element, const char* path) {
    return static_cast<int>(py::len(element.attr("findall")(path)));
}

TEST(JunitWriter, TheXmlParsesAndCountsWhatRan) {
    std::string xml = formatJunit(gateReport());
    py::object root;
    ASSERT_NO_THROW(root = parseXml(xml)) << xml;

    EXPECT_EQ(root.attr("tag").cast<std::string>(), "testsuites");
    EXPECT_EQ(attribute(root, "tests"), 9); // 8 checks and the soak worker that died before any
    EXPECT_EQ(attribute(root, "failures"), 2);
    EXPECT_EQ(attribute(root, "errors"), 3);
    // junit-10.xsd has no `skipped` on <testsuites>: the suites count their own.
    EXPECT_TRUE(root.attr("get")("skipped").is_none());
    EXPECT_EQ(countElements(root, ".//testcase"), attribute(root, "tests"));
    EXPECT_EQ(countElements(root, ".//failure"), attribute(root, "failures"));
    EXPECT_EQ(countElements(root, ".//error"), attribute(root, "errors"));
    EXPECT_EQ(countElements(root, ".//skipped"), 1);

    py::list suites = root.attr("findall")("testsuite");
    ASSERT_EQ(py::len(suites), 2u);
    EXPECT_EQ(suites[0].attr("get")("name").cast<std::string>(), "leakgate.gate.frame_cycle_461");
    EXPECT_EQ(suites[1].attr("get")("name").cast<std::string>(), "leakgate.gate.reference");
    for (py::handle suite : suites) {
        EXPECT_EQ(countElements(suite, "testcase"), attribute(suite, "tests"));
        EXPECT_EQ(countElements(suite, "testcase/failure"), attribute(suite, "failures"));
        EXPECT_EQ(countElements(suite, "testcase/error"), attribute(suite, "errors"));
        EXPECT_EQ(countElements(suite, "testcase/skipped"), attribute(suite, "skipped"));
    }
    // The reference's own cycle is the baseline: it does not fail the CI job.
    EXPECT_EQ(attribute(suites[1], "failures"), 0);
}

TEST(JunitWriter, AFailureCarriesTheReasonAndTheFindingAndAnErrorTheStderrTail) {
    py::object root = parseXml(formatJunit(gateReport()));
    py::object cycle = root.attr("find")(".//testcase[@name='decorate-frame-cycle']");
    ASSERT_FALSE(cycle.is_none());
    EXPECT_EQ(cycle.attr("get")("classname").cast<std::string>(),
              "leakgate.gate.frame_cycle_461.decorate");
    py::object failure = cycle.attr("find")("failure");
    EXPECT_EQ(failure.attr("get")("message").cast<std::string>(),
              "2 frame cycles <in> \"garbage\" & more");
    std::string body = failure.attr("text").cast<std::string>();
    EXPECT_NE(body.find("ModelDSL.kernel"), std::string::npos);
    EXPECT_NE(body.find("fix:"), std::string::npos);

    py::object error = root.attr("find")(".//testcase[@name='import-sentinels']/error");
    std::string tail = error.attr("text").cast<std::string>();
    // The tail in <system-err> too, where CI systems show a test's output.
    std::string systemErr = root.attr("find")(".//testcase[@name='import-sentinels']/system-err")
                                .attr("text")
                                .cast<std::string>();
    EXPECT_NE(systemErr.find("Fatal Python error: <segfault> &"), std::string::npos);
    EXPECT_NE(tail.find("Fatal Python error: <segfault> &"), std::string::npos);
    EXPECT_NE(tail.find("\\x01"), std::string::npos);
    EXPECT_NE(tail.find("\xEF\xBF\xBD"), std::string::npos); // the invalid byte, replaced

    py::object skipped = root.attr("find")(".//testcase[@name='launch-allocations']/skipped");
    EXPECT_EQ(skipped.attr("get")("message").cast<std::string>(),
              "the target exposes no `scalar_types`");
    py::object died = root.attr("find")(".//testcase[@name='soak']/error");
    EXPECT_EQ(died.attr("get")("message").cast<std::string>(), "timed out after 30 s");
}

TEST(JunitWriter, TheTargetsAndTheReferencesCasesHaveIdsOfTheirOwnAndTheFiguresAreProperties) {
    Report report = gateReport();
    for (auto& check : report.results.front().checks) {
        if (check.name == "decorate-frame-cycle") check.amount = 4096;
    }
    py::object root = parseXml(formatJunit(report));
    py::list cases = root.attr("findall")(".//testcase");
    std::set<std::string> ids;
    for (py::handle testcase : cases) {
        ids.insert(testcase.attr("get")("classname").cast<std::string>() +
                   "::" + testcase.attr("get")("name").cast<std::string>());
    }
    EXPECT_EQ(ids.size(), py::len(cases));
    py::object amount =
        root.attr("find")(".//testsuite/properties/property[@name='amount.decorate-frame-cycle']");
    ASSERT_FALSE(amount.is_none());
    EXPECT_EQ(amount.attr("get")("value").cast<std::string>(), "4096");
}

TEST(JunitWriter, EscapingCoversMarkupControlsAndBrokenUtf8) {
    EXPECT_EQ(escapeMarkup("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
    EXPECT_EQ(escapeMarkup("\x01\x08\x0b\x0c\x1f"), "\\x01\\x08\\x0b\\x0c\\x1f");
    EXPECT_EQ(escapeMarkup("tab\there\nline"), "tab\there\nline");
    EXPECT_EQ(escapeMarkup("tab\there\nline", MarkupContext::kAttribute), "tab&#9;here&#10;line");
    EXPECT_EQ(escapeMarkup("cr\r"), "cr&#13;");
    EXPECT_EQ(escapeMarkup("caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x90\x8D"),
              "caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x90\x8D");
    EXPECT_EQ(escapeMarkup("cut \xE2\x86"), "cut \xEF\xBF\xBD\xEF\xBF\xBD"); // a tail cut mid-character
    EXPECT_EQ(escapeMarkup("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");         // overlong '/'
    EXPECT_EQ(escapeMarkup("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); // a surrogate
    EXPECT_EQ(escapeMarkup("\xEF\xBF\xBE"), "\\ufffe");
    EXPECT_EQ(escapeMarkup(std::string("nul\0end", 7)), "nul\\x00end");
}

// ---- SARIF ----

Report scanReport(std::vector<Finding> findings) {
    Report report;
    report.command = "scan";
    report.pythonVersion = "3.11.7";
    WorkloadResult scan = result("scan", "target", {{"frame-cycle", Status::kFail, "cycles"}});
    scan.subject = "/work/app/train.py";
    scan.findings = std::move(findings);
    report.results.push_back(scan);
    WorkloadResult reference =
        result("decorate", "reference", {{"decorate-frame-cycle", Status::kFail, "x"}});
    reference.findings.push_back(frameCycle());
    report.results.push_back(reference);
    return report;
}

TEST(SarifWriter, HasTheRequiredFieldsAndARulePerFindingKind) {
    Finding launch;
    launch.kind = "launch-allocations";
    launch.summary = "Int32(5): 4.00 allocator calls per call (reference: 0.00)";
    launch.allocationSites = {{"/usr/lib/python3.11/ctypes/__init__.py", 101, 3.00}};
    json sarif = json::parse(formatSarif(scanReport({frameCycle(), launch}), "/work"));

    EXPECT_TRUE(sarif.contains("$schema"));
    EXPECT_EQ(sarif["version"], "2.1.0");
    ASSERT_EQ(sarif["runs"].size(), 1u);
    const json& run = sarif["runs"][0];
    EXPECT_EQ(run["tool"]["driver"]["name"], "leakgate");
    EXPECT_EQ(run["tool"]["driver"]["version"], LEAKGATE_VERSION);
    std::vector<std::string> ruleIds;
    for (const json& rule : run["tool"]["driver"]["rules"]) {
        ruleIds.push_back(rule["id"]);
        EXPECT_FALSE(rule["shortDescription"]["text"].get<std::string>().empty());
        EXPECT_FALSE(rule["help"]["text"].get<std::string>().empty());
    }
    for (const char* kind : {"frame-cycle", "retained-frame", "launch-allocations", "launch-net-blocks",
                             "launch-cyclic-garbage"}) {
        EXPECT_NE(std::find(ruleIds.begin(), ruleIds.end(), kind), ruleIds.end()) << kind;
    }

    ASSERT_EQ(run["results"].size(), 2u); // the reference's finding is the baseline, not an alert
    const json& cycle = run["results"][0];
    EXPECT_EQ(cycle["ruleId"], "frame-cycle");
    EXPECT_EQ(ruleIds.at(cycle["ruleIndex"].get<size_t>()), "frame-cycle");
    EXPECT_EQ(cycle["level"], "error");
    EXPECT_EQ(cycle["message"]["text"], frameCycle().summary);
    const json& location = cycle["locations"][0]["physicalLocation"];
    EXPECT_EQ(location["artifactLocation"]["uri"], "fixtures/targets/frame_cycle_461.py");
    EXPECT_EQ(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    EXPECT_EQ(location["region"]["startLine"], 47);
    EXPECT_EQ(cycle["partialFingerprints"].size(), 1u);

    const json& site = run["results"][1]["locations"][0]["physicalLocation"];
    EXPECT_EQ(site["artifactLocation"]["uri"], "file:///usr/lib/python3.11/ctypes/__init__.py");
    EXPECT_EQ(site["region"]["startLine"], 101);
}

TEST(SarifWriter, EveryLintRuleIsDescribedAndALintResultIsAWarningWithItsColumn) {
    std::vector<std::string> rules(std::begin(lint::kLintRules), std::end(lint::kLintRules));
    rules.insert(rules.end(), std::begin(lint::kCxxLintRules), std::end(lint::kCxxLintRules));
    for (const auto& rule : rules) {
        const Rule* row = findRule("lint:" + rule);
        ASSERT_NE(row, nullptr) << rule;
        EXPECT_EQ(row->evidence, Evidence::kSource) << rule;
        EXPECT_STREQ(row->level, "warning") << rule;
        EXPECT_STRNE(row->shortDescription, row->fullDescription) << rule;
    }
    Finding lint;
    lint.kind = "lint:own-frame-local";
    lint.summary = "local `cur_frame` holds this function's own frame";
    lint.frames = {{"DSL.kernel", "/work/fixtures/lint/own_frame_in_local.py", 12}};
    lint.column = 9;
    json sarif = json::parse(formatSarif(scanReport({lint}), "/work"));
    const json& result = sarif["runs"][0]["results"][0];
    EXPECT_EQ(result["level"], "warning");
    EXPECT_EQ(result["locations"][0]["physicalLocation"]["region"]["startLine"], 12);
    EXPECT_EQ(result["locations"][0]["physicalLocation"]["region"]["startColumn"], 9);
    const json& rule = sarif["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"].get<size_t>()];
    EXPECT_EQ(rule["id"], "lint:own-frame-local");
    EXPECT_NE(rule["help"]["markdown"].get<std::string>().find("docs/reference/checks.md"),
              std::string::npos);
}

TEST(SarifWriter, SkipsFramesWithoutAFileAndEncodesTheUri) {
    Finding finding = frameCycle();
    finding.frames.insert(finding.frames.begin(), FrameInfo{"<module>", "<string>", 1});
    finding.frames[1].file = "/work/my dir/<script>.py";
    json sarif = json::parse(formatSarif(scanReport({finding}), "/work"));
    const json& location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    EXPECT_EQ(location["artifactLocation"]["uri"], "my%20dir/%3Cscript%3E.py");
    EXPECT_EQ(location["region"]["startLine"], 47);
}

TEST(SarifWriter, RelativeNamesResolveAgainstTheSourceRoot) {
    auto uriOf = [](const std::string& file) {
        Finding finding = frameCycle();
        finding.frames[0].file = file;
        json sarif = json::parse(formatSarif(scanReport({finding}), "/work/repo"));
        return sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    };
    EXPECT_EQ(uriOf("pkg/../a.py")["uri"], "a.py");
    EXPECT_EQ(uriOf("pkg/../a.py")["uriBaseId"], "%SRCROOT%");
    EXPECT_EQ(uriOf("../elsewhere/b.py")["uri"], "file:///work/elsewhere/b.py");
    EXPECT_FALSE(uriOf("../elsewhere/b.py").contains("uriBaseId"));
    // A real file whose name starts with `<` is a file, not a pseudo-file like `<string>`.
    EXPECT_EQ(uriOf("<x.py")["uri"], "%3Cx.py");
}

TEST(SarifWriter, FingerprintsAreTheSameAcrossRunsThatFindTheSameLeak) {
    // GIVEN two runs that find the same cycle, with objects, pinned frames and counts differing
    Finding first = frameCycle(47, 90);
    Finding second = frameCycle(47, 120);
    std::reverse(second.locals.begin(), second.locals.end());
    std::reverse(second.frames.begin() + 1, second.frames.end());
    second.objects = 99;
    second.bytes = 12345;
    second.summary += " (3 instances)";
    Finding launchFirst;
    launchFirst.kind = "launch-allocations";
    launchFirst.allocationSites = {{"/usr/lib/python3.11/ctypes/__init__.py", 101, 3.00}};
    Finding launchSecond = launchFirst;
    launchSecond.allocationSites[0].blocksPerCall = 2.97;
    launchSecond.allocationSites.push_back({"/x/other.py", 7, 1.00});
    Finding garbageFirst;
    garbageFirst.kind = "launch-cyclic-garbage";
    garbageFirst.cycleShapes = {{12, "CField, tuple", " --x--> y"},
                                {3, "PyCPointerType", " --z--> w at 0x7f00aa"}};
    Finding garbageSecond = garbageFirst;
    garbageSecond.cycleShapes = {{2, "PyCPointerType", ""}, {11, "CField, tuple", ""}};

    // WHEN each is written
    json one = json::parse(formatSarif(scanReport({first, launchFirst, garbageFirst}), "/work"));
    json two = json::parse(formatSarif(scanReport({second, launchSecond, garbageSecond}), "/work"));

    // THEN each pair has one fingerprint, and the three leaks have three
    std::vector<std::string> fingerprints;
    for (size_t i = 0; i < 3; ++i) {
        const json& a = one["runs"][0]["results"][i]["partialFingerprints"];
        const json& b = two["runs"][0]["results"][i]["partialFingerprints"];
        EXPECT_EQ(a, b) << i;
        fingerprints.push_back(a.begin()->get<std::string>());
    }
    std::sort(fingerprints.begin(), fingerprints.end());
    EXPECT_EQ(std::unique(fingerprints.begin(), fingerprints.end()), fingerprints.end());
}

TEST(SarifWriter, FingerprintsTellDifferentCulpritsApart) {
    WorkloadResult scan = result("scan", "target", {});
    Finding kernel = frameCycle();
    Finding jit = frameCycle();
    jit.frames[0].function = "ModelDSL.jit";
    Finding otherLocal = frameCycle();
    otherLocal.locals = {"frame"};
    Finding retained = frameCycle();
    retained.kind = "retained-frame";
    std::vector<std::string> all = {findingFingerprint(kernel, scan), findingFingerprint(jit, scan),
                                    findingFingerprint(otherLocal, scan),
                                    findingFingerprint(retained, scan)};
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::unique(all.begin(), all.end()), all.end());
    EXPECT_EQ(all[0].size(), 16u);
}

TEST(SarifWriter, AFindingWithoutFramesStillHasAnArtifactLocation) {
    Finding netBlocks;
    netBlocks.kind = "launch-net-blocks";
    netBlocks.summary = "keeps blocks";
    json sarif = json::parse(formatSarif(scanReport({netBlocks}), "/work"));
    const json& location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    EXPECT_EQ(location["artifactLocation"]["uri"], "app/train.py");
    EXPECT_FALSE(location.contains("region"));
}

// ---- HTML ----

Report htmlReport() {
    Report report = gateReport();
    Finding hostile = frameCycle();
    hostile.frames[0] = {"<lambda>", kHostileFile, 3};
    hostile.summary = "local `x` of `<lambda>` (<script>alert(1)</script>.py:3) holds its own frame";
    hostile.path = {{"local", "local `<img src=x onerror=alert(2)>`", "`dict` object"},
                    {"item", "item 'k'", "frame of `<lambda>` (<script>alert(1)</script>.py:3)"}};
    report.results[0].findings.push_back(hostile);
    Finding retained;
    retained.kind = "retained-frame";
    retained.summary = "frame of `f` outlived its call";
    retained.root = "module `registry`";
    retained.path = {{"attribute", "attribute `frames`", "`list` object"},
                     {"item", "item 0", "frame of `f`"}};
    retained.frames = {{"f", "/work/a.py", 3}};
    report.results[0].findings.push_back(retained);

    for (const char* role : {"target", "reference"}) {
        WorkloadResult soak = result("soak", role, {{"soak-growth", Status::kPass, "RSS grows 1 KiB"}});
        json samples = json::array();
        for (int step = 0; step <= 1000; step += 100)
            samples.push_back({step, (200 << 20) + step * 4096});
        soak.details["soak"] = {{"steps", 1000},
                                {"samples", samples},
                                {"slope_bytes_per_1000_steps", 4096000.0},
                                {"growth_bytes", 3686400.0}};
        if (std::string(role) == "target") {
            soak.details["soak"]["budget_slope_bytes_per_1000_steps"] = 4096000.0 + 524288;
            soak.details["target_package"] = {{"name", "nvidia-cutlass-dsl"}, {"version", "4.6.1"}};
        }
        report.results.push_back(soak);
    }
    WorkloadResult launch = result("launch", "target", {{"launch-allocations", Status::kFail, "worse"}});
    json cases = json::array();
    for (const char* type : {"Int32", "Float16", "<b>Bool</b>"}) {
        // Two cases per type: the bar is the worse one's lowest run (9.0), not a mean.
        for (double base : {4.0, 9.0}) {
            cases.push_back({{"type", type},
                             {"value", base == 4.0 ? "1" : "-7"},
                             {"form", "T(v).__c_pointers__()"},
                             {"target",
                              {{"allocations_per_call", {base, base, base + 0.5}},
                               {"net_blocks_per_call", {1.0, 1.0, 1.0}},
                               {"cyclic_garbage_per_call", {3.0, 3.0, 3.0}}}},
                             {"reference",
                              {{"allocations_per_call", {0.0, 0.0, 0.0}},
                               {"net_blocks_per_call", {0.0, 0.0, 0.0}},
                               {"cyclic_garbage_per_call", {0.0, 0.0, 0.0}}}},
                             {"flagged", {"allocations"}}});
        }
    }
    launch.details["cases"] = cases;
    report.results.push_back(launch);
    return report;
}

// The start and end of the first `<tag` element after `from` whose opening has `marker`.
std::string elementWith(const std::string& html, const std::string& tag, const std::string& marker) {
    size_t at = html.find(marker);
    if (at == std::string::npos) return "";
    size_t start = html.rfind("<" + tag, at);
    size_t end = html.find("</" + tag + ">", at);
    return start == std::string::npos || end == std::string::npos ? "" : html.substr(start, end - start);
}

size_t occurrences(const std::string& text, const std::string& what) {
    size_t count = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++count;
    return count;
}

// The start tags a browser would build, and the text it would show, by Python's html.parser.
struct ParsedHtml {
    std::vector<std::string> tags;
    std::string text;
};

ParsedHtml parseHtml(const std::string& html) {
    py::dict scope;
    scope["__builtins__"] = py::module_::import("builtins");
    py::exec(R"(
from html.parser import HTMLParser
class Collect(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.tags.extend('attr:' + name for name, _ in attrs)
    def handle_data(self, data):
        self.text.append(data)
)",
             scope);
    py::object parser = scope["Collect"]();
    parser.attr("feed")(html);
    parser.attr("close")();
    ParsedHtml parsed;
    for (py::handle tag : parser.attr("tags"))
        parsed.tags.push_back(tag.cast<std::string>());
    parsed.text = py::str("").attr("join")(parser.attr("text")).cast<std::string>();
    return parsed;
}

TEST(HtmlWriter, AHostileFileNameRendersAsText) {
    std::string html = formatHtml(htmlReport());
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("<img"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;.py"), std::string::npos);

    ParsedHtml parsed = parseHtml(html);
    for (const char* forbidden :
         {"script", "img", "iframe", "link", "object", "attr:onerror", "attr:src"}) {
        EXPECT_EQ(std::count(parsed.tags.begin(), parsed.tags.end(), forbidden), 0) << forbidden;
    }
    EXPECT_NE(parsed.text.find(kHostileFile), std::string::npos);
    // (the name in bold, its backticks dropped: SVG text has no <code>)
    EXPECT_NE(parsed.text.find("local <img src=x onerror=alert(2)>"), std::string::npos);
}

TEST(HtmlWriter, DrawsPathsSoakCurvesAndLaunchBarsAsInlineSvg) {
    std::string html = formatHtml(htmlReport());
    EXPECT_NE(html.find("<svg class=\"path\""), std::string::npos);
    EXPECT_NE(html.find("<svg class=\"chart soak\""), std::string::npos);
    EXPECT_NE(html.find("<svg class=\"chart launch\""), std::string::npos);
    // target and reference on one plot: one SVG, a series and a fitted line each, and the budget
    EXPECT_EQ(occurrences(html, "chart soak"), 1u);
    std::string soak = elementWith(html, "svg", "chart soak");
    EXPECT_EQ(occurrences(soak, R"(<polyline class="series target")"), 1u);
    EXPECT_EQ(occurrences(soak, R"(<polyline class="series reference")"), 1u);
    EXPECT_EQ(occurrences(soak, R"(<line class="fit")"), 2u);
    EXPECT_EQ(occurrences(soak, R"(<line class="budget")"), 1u);
    EXPECT_NE(soak.find("3.9 MiB/1000 steps"), std::string::npos); // the worker's slope, labelled
    // the launch: allocations, net blocks and cyclic garbage, each bar the worst case
    EXPECT_EQ(occurrences(html, "chart launch"), 3u);
    for (const char* metric : {"allocations", "net-blocks", "cyclic-garbage"})
        EXPECT_NE(html.find(fmt::format(R"(data-metric="{}")", metric)), std::string::npos) << metric;
    std::string allocations = elementWith(html, "svg", R"(data-metric="allocations")");
    EXPECT_NE(allocations.find("worst case Int32(-7) T(v).__c_pointers__() at 9.00"), std::string::npos);
    EXPECT_NE(allocations.find("4.00 to 9.50"), std::string::npos); // the spread
    EXPECT_NE(allocations.find(">flagged<"), std::string::npos);
    // no legend entry for what the plot does not show: nothing of net blocks is flagged
    EXPECT_EQ(elementWith(html, "svg", R"(data-metric="net-blocks")").find(">flagged<"),
              std::string::npos);
    // inline code rendered, the header complete
    EXPECT_NE(html.find("frame of <code>f</code> outlived its call"), std::string::npos);
    EXPECT_NE(html.find(" UTC &middot; leakgate "), std::string::npos);
    EXPECT_NE(html.find("under test: <code>nvidia-cutlass-dsl 4.6.1</code>"), std::string::npos);
    // the stderr tail is shown, escaped
    EXPECT_NE(html.find("Fatal Python error: &lt;segfault&gt; &amp;"), std::string::npos);
    // self-contained: nothing is fetched
    for (const char* fetch : {"<link", "src=\"", "href=\"", "@import", "url(http"})
        EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
    EXPECT_NE(html.find("exit 1"), std::string::npos);
}

TEST(HtmlWriter, ALintFindingShowsItsSourceLinesNotACycle) {
    std::filesystem::path file =
        std::filesystem::temp_directory_path() / fmt::format("leakgate-html-lint-{}.py", ::getpid());
    {
        std::ofstream out(file);
        out << "import sys\n\ndef f():\n    frame = sys._getframe()\n    return frame.f_lineno\n";
    }
    Finding lint;
    lint.kind = "lint:frame-in-local";
    lint.summary = "local `frame` of `f` holds its own frame";
    lint.frames = {{"f", file.string(), 4}};
    lint.column = 5;
    lint.fix = "`del frame` in a `finally`";
    Report report = scanReport({lint});
    report.command = "lint";
    std::string html = formatHtml(report);
    std::filesystem::remove(file);
    EXPECT_EQ(html.find("<svg class=\"path\""), std::string::npos);
    EXPECT_NE(html.find(R"(<span class="hit">    4 |     frame = sys._getframe()</span>)"),
              std::string::npos);
    EXPECT_NE(html.find(R"(<span class="caret">      |     ^</span>)"), std::string::npos);
    EXPECT_NE(html.find(R"(<span class="ctx">    3 | def f():</span>)"), std::string::npos);
    EXPECT_NE(html.find("<code>del frame</code> in a <code>finally</code>"), std::string::npos);
    EXPECT_NE(html.find(":4:5</code>"), std::string::npos);
}

TEST(HtmlWriter, AFailedWorkloadsPythonStackIsFoldedUnderItsRow) {
    Report report = gateReport();
    report.results[2].error->stderrTail =
        "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\nValueError: <no>\n";
    std::string html = formatHtml(report);
    EXPECT_NE(html.find(R"(<details class="stack"><summary>Python stack</summary><pre>Traceback)"),
              std::string::npos);
    EXPECT_NE(html.find("ValueError: &lt;no&gt;"), std::string::npos);
    // a multi-line reason: its first line shown, the rest folded
    report.results[0].checks[0].reason = "first line\nsecond line";
    html = formatHtml(report);
    EXPECT_NE(html.find("first line<details><summary>the rest</summary><pre>second line</pre>"),
              std::string::npos);
}

TEST(HtmlWriter, BackticksBecomeCodeAndALoneOneStays) {
    Report report = scanReport({frameCycle()});
    report.results[0].checks[0].reason = "a `b` c ` d";
    std::string html = formatHtml(report);
    EXPECT_NE(html.find("a <code>b</code> c ` d"), std::string::npos);
}

TEST(HtmlWriter, AReportWithoutPlotsHasNoCharts) {
    Report report = scanReport({frameCycle()});
    std::string html = formatHtml(report);
    EXPECT_EQ(html.find("chart soak"), std::string::npos);
    EXPECT_EQ(html.find("chart launch"), std::string::npos);
    EXPECT_NE(html.find("ModelDSL.kernel"), std::string::npos);
}

} // namespace
} // namespace leakgate::report
