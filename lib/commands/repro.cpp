#include "lib/commands/repro.h"

#include "leakgate/errors.h"
#include "lib/base/atomic_file.h"
#include "lib/base/data_dir.h"
#include "lib/base/subprocess.h"
#include "lib/commands/builtin_targets.h"
#include "lib/commands/gate.h"
#include "lib/commands/scan.h"
#include "lib/report/units.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include <unistd.h>

namespace leakgate::commands {

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
// Large enough to stand out in a process's memory, small enough for any CI machine.
constexpr std::int64_t kMinPayloadBytes = kMiB;
constexpr std::int64_t kMaxPayloadBytes = 256 * kMiB;
// The launch reproducer's loop, as the gate's launch workload runs it: a case leaks when every
// run leaves more than this many objects of cyclic garbage per call.
constexpr int kLaunchCalls = 2000;
constexpr int kLaunchRuns = 3;
constexpr int kLaunchWarmup = 200;
constexpr double kLaunchThresholdPerCall = 0.01;

std::string trim(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// A path as a maintainer reads it: from the package down, without the venv before site-packages.
std::string shortPath(const std::string& file) {
    const std::string marker = "site-packages/";
    const auto at = file.rfind(marker);
    return at == std::string::npos ? file : file.substr(at + marker.size());
}

std::string baseName(const std::string& file) {
    return fs::path(file).filename().string();
}

// A Python string literal for any text (double quotes; the escapes Python and C share).
std::string pyString(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                out += fmt::format("\\x{:02x}", c);
            else
                out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// A Python string literal of many lines, readable as they are: a triple-quoted string whose only
// escapes are backslashes and quotes that would end it.
std::string pyLongString(const std::string& text) {
    std::string out = "\"\"\"\\\n";
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '"' && (i + 1 == text.size() || text[i + 1] == '"')) {
            out += "\\\"";
        } else if (c == '\r') {
            out += "\\r";
        } else {
            out += c;
        }
    }
    return out + "\"\"\"";
}

// Text for the docstring: no sequence that would end it or escape out of it.
std::string docText(std::string text) {
    for (std::string::size_type at = 0; (at = text.find('\\', at)) != std::string::npos; at += 2)
        text.replace(at, 1, "\\\\");
    for (std::string::size_type at = 0; (at = text.find("\"\"\"", at)) != std::string::npos;)
        text.replace(at, 3, "\"\"\\\"");
    return text;
}

// `text` wrapped at `width` columns, each line after `indent`.
std::string wrap(const std::string& text, const std::string& indent, size_t width = 99) {
    std::istringstream words(text);
    std::string word, line, out;
    while (words >> word) {
        if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
            out += indent + line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) out += indent + line + "\n";
    return out;
}

// --- The target file --------------------------------------------------------------------------

// The names a top-level import line binds ("import a.b" binds a; "from x import y as z" binds z).
std::vector<std::string> boundNames(const std::string& line) {
    static const std::regex plain(R"(^import\s+([\w.]+)(?:\s+as\s+(\w+))?\s*$)");
    static const std::regex from(R"(^from\s+[\w.]+\s+import\s+([\w\s,]+?)\s*$)");
    std::smatch match;
    if (std::regex_match(line, match, plain)) {
        if (match[2].matched) return {match[2].str()};
        const std::string module = match[1].str();
        return {module.substr(0, module.find('.'))};
    }
    if (std::regex_match(line, match, from)) {
        std::vector<std::string> names;
        std::istringstream items(match[1].str());
        std::string item;
        while (std::getline(items, item, ',')) {
            std::istringstream parts(item);
            std::string first, as, alias;
            parts >> first >> as >> alias;
            if (!first.empty()) names.push_back(as == "as" ? alias : first);
        }
        return names;
    }
    return {};
}

std::string rootName(const std::string& expression) {
    return expression.substr(0, expression.find('.'));
}

// --- The finding ------------------------------------------------------------------------------

struct Located {
    const WorkloadResult* result = nullptr;
    const Finding* finding = nullptr;
    int index = 0;
};

std::vector<Located> targetFindings(const Report& report) {
    std::vector<Located> all;
    for (const WorkloadResult& result : report.results) {
        if (result.role != Role::kTarget) continue;
        for (const Finding& finding : result.findings)
            all.push_back({&result, &finding, static_cast<int>(all.size())});
    }
    return all;
}

// The check a finding failed: "decorate-frame-cycle" for the decorate workload's frame-cycle,
// the kind itself where it already names its workload (launch-cyclic-garbage) or for scan.
std::string checkOf(const WorkloadResult& result, const Finding& finding) {
    if (result.workload == "scan" || finding.kind.starts_with(result.workload + "-"))
        return finding.kind;
    return result.workload + "-" + finding.kind;
}

// `script`: the scanned script is known, so a scan's frame cycle or cyclic garbage is reproduced
// by re-running it (kScanScript).
std::optional<ReproShape> shapeOf(const WorkloadResult& result, const Finding& finding, bool script) {
    if (script && result.workload == "scan" &&
        ((finding.kind == "frame-cycle" && !finding.frames.empty()) ||
         (finding.kind == "cyclic-garbage" && !finding.cycleShapes.empty())))
        return ReproShape::kScanScript;
    if (finding.kind == "frame-cycle" && !finding.frames.empty() &&
        (result.workload == "decorate" || result.workload == "import" || result.workload == "scan"))
        return ReproShape::kDecoratorFrameCycle;
    if (finding.kind == "launch-cyclic-garbage" && result.workload == "launch")
        return ReproShape::kLaunchCyclicGarbage;
    return std::nullopt;
}

Located chooseFinding(const Report& report, std::optional<int> index, bool script) {
    const std::vector<Located> all = targetFindings(report);
    if (all.empty()) throw UsageError("repro: the report has no finding of the target to reproduce");
    if (index) {
        if (*index < 0 || *index >= static_cast<int>(all.size()))
            throw UsageError(fmt::format("repro: --finding {}: the report has {} finding{} (1 to {})",
                                         *index + 1, all.size(), all.size() == 1 ? "" : "s",
                                         all.size()));
        const Located& chosen = all[*index];
        if (!shapeOf(*chosen.result, *chosen.finding, script))
            throw UsageError(
                fmt::format("repro: finding {} is a {} finding ({}), a shape repro does not "
                            "write a reproducer for; it writes them for {}",
                            *index + 1, checkOf(*chosen.result, *chosen.finding),
                            chosen.finding->summary, supportedReproShapes()));
        return chosen;
    }
    for (const Located& located : all)
        if (shapeOf(*located.result, *located.finding, script)) return located;
    std::vector<std::string> checks;
    for (const Located& located : all)
        checks.push_back(checkOf(*located.result, *located.finding));
    throw UsageError(
        fmt::format("repro: none of the report's {} findings ({}) has a shape repro writes a "
                    "reproducer for; it writes them for {}",
                    all.size(), fmt::join(checks, ", "), supportedReproShapes()));
}

// "nvidia-cutlass-dsl 4.6.1", from any of the target's results that looked the package up.
std::pair<std::string, std::string> packageOf(const Report& report) {
    for (const WorkloadResult& result : report.results) {
        if (result.role != Role::kTarget) continue;
        const auto found = result.details.find("target_package");
        if (found == result.details.end() || !found->is_object()) continue;
        const std::string name = found->value("name", "");
        const auto version = found->find("version");
        if (!name.empty())
            return {name,
                    version != found->end() && version->is_string() ? version->get<std::string>() : ""};
    }
    return {};
}

// --- Writing ----------------------------------------------------------------------------------

// A dict literal as keyword arguments where it is a plain one ({"preprocess": False} gives
// `preprocess=False`), else `**{...}`.
std::string callArguments(const std::string& dict) {
    const std::string inner = trim(dict.substr(1, dict.size() - 2));
    if (inner.empty()) return "";
    static const std::regex item(R"(^\s*["'](\w+)["']\s*:\s*([\w.+-]+|"[^"\\,]*"|'[^'\\,]*')\s*$)");
    std::vector<std::string> arguments;
    std::istringstream items(inner);
    std::string text;
    while (std::getline(items, text, ',')) {
        if (trim(text).empty()) continue;
        std::smatch match;
        if (!std::regex_match(text, match, item)) return "**" + dict;
        arguments.push_back(match[1].str() + "=" + match[2].str());
    }
    return fmt::format("{}", fmt::join(arguments, ", "));
}

std::string importSection(const ReproTarget& target) {
    if (!target.loadPath.empty()) {
        return fmt::format(
            "# The target defines its DSL itself: loaded from its file, as the gate loaded it.\n"
            "import importlib.util\n\n"
            "_spec = importlib.util.spec_from_file_location({}, {})\n"
            "dsl = importlib.util.module_from_spec(_spec)\n"
            "_spec.loader.exec_module(dsl)\n",
            pyString(target.name), pyString(target.loadPath));
    }
    std::string out;
    for (const std::string& line : target.imports)
        out += line + "\n";
    return out;
}

std::string versionLines(const ReproTarget& target) {
    std::string out = "    print(f\"python  : {sys.version.split()[0]} ({sys.executable})\")\n";
    if (!target.package.empty()) {
        out += fmt::format(
            "    try:\n"
            "        from importlib import metadata\n\n"
            "        version = metadata.version({})\n"
            "    except Exception:  # not installed as a distribution: the import is what counts\n"
            "        version = \"(version unknown)\"\n"
            "    print(f\"package : {} {{version}}\")\n",
            pyString(target.package), target.package);
    }
    return out;
}

struct Header {
    std::string title;
    std::vector<std::string> paragraphs;
};

std::string headerText(const Header& header, const Report& report, const Located& located,
                       const std::string& check, const ReproSettings& settings) {
    const Finding& finding = *located.finding;
    std::string title = wrap(docText(header.title), "");
    std::string out = "#!/usr/bin/env python3\n\"\"\"" + title + "\n";
    const auto [package, version] = packageOf(report);
    std::string source = fmt::format(
        "Written by `leakgate repro` (leakgate {}) from finding {} of a `leakgate {}` report{}, "
        "measured with Python {}{}:",
        LEAKGATE_VERSION, located.index + 1, report.command,
        settings.reportFile.empty() ? "" : " (" + baseName(settings.reportFile) + ")",
        report.pythonVersion,
        package.empty() ? "" : fmt::format(" on {} {}", package, version.empty() ? "" : version));
    out += wrap(docText(source), "");
    out += wrap(docText(check + ": " + finding.summary), "    ");
    out += "\n";
    if (!finding.frames.empty()) {
        const FrameInfo& culprit = finding.frames.front();
        std::string text =
            fmt::format("Culprit: {} ({}:{})", culprit.function, shortPath(culprit.file), culprit.line);
        if (!finding.locals.empty())
            text += fmt::format("; the cycle closes through local `{}`", finding.locals.front());
        if (finding.fixSite)
            text += fmt::format("; the line to change: {}:{}", shortPath(finding.fixSite->file),
                                finding.fixSite->line);
        out += wrap(docText(text + "."), "");
    }
    if (!finding.fix.empty()) out += wrap(docText("Suggested fix: " + finding.fix), "");
    if (!settings.releaseWindow.empty())
        out += wrap(docText("Release window: " + settings.releaseWindow + "."), "");
    for (const std::string& paragraph : header.paragraphs)
        out += "\n" + wrap(docText(paragraph), "");
    out += "\nPlain Python: the standard library and the package, no leakgate. Run: python repro.py\n"
           "Exit status: 1 while the retention reproduces, 0 when clean, 2 on an error.\n\"\"\"\n\n";
    return out;
}

constexpr const char* kGcDisable =
    "# The collector is off before anything else runs, as in the programs that meet this (CUDA-graph\n"
    "# training loops): a collection at any allocation would free the cycles and hide them.\n"
    "gc.disable()\n\n\n"
    "def _error_exit(kind, value, traceback):\n"
    "    \"\"\"An error is no verdict: exit 2, so that exit 1 means only that it reproduced.\"\"\"\n"
    "    sys.__excepthook__(kind, value, traceback)\n"
    "    sys.stdout.flush()\n"
    "    sys.stderr.flush()\n"
    "    os._exit(2)\n\n\n"
    "sys.excepthook = _error_exit\n\n";

struct Decoration {
    std::string decorator; // the expression: "cute.kernel"
    bool withOptions = false;
    std::string arguments; // for withOptions
    std::string functionName;

    std::string line() const {
        return withOptions ? fmt::format("@{}({})", decorator, arguments) : "@" + decorator;
    }
};

// The decorations that trigger a decorator frame cycle: the culprit's own decorator where its
// name says which (CuTeDSL.kernel: kernel), in the forms whose sentinels outlived their frames.
std::vector<Decoration> decorationsFor(const Located& located, const ReproTarget& target) {
    const bool byPath = !target.loadPath.empty();
    std::map<std::string, std::pair<std::string, std::string>> available; // name -> (expr, options)
    if (byPath || !target.kernel.empty())
        available["kernel"] = {
            byPath ? "dsl.kernel" : target.kernel,
            byPath ? "**getattr(dsl, \"kernel_options\", {})"
                   : callArguments(target.kernelOptions.empty() ? "{}" : target.kernelOptions)};
    if (byPath || !target.jit.empty())
        available["jit"] = {byPath ? "dsl.jit" : target.jit,
                            byPath
                                ? "**getattr(dsl, \"jit_options\", {})"
                                : callArguments(target.jitOptions.empty() ? "{}" : target.jitOptions)};
    if (available.empty())
        throw UsageError(fmt::format("repro: the target `{}` has no `kernel` or `jit` decorator to call",
                                     target.name));
    const std::string culprit = located.finding->frames.front().function;
    const std::string last = culprit.substr(culprit.rfind('.') + 1);
    std::vector<std::string> names;
    if (available.count(last))
        names.push_back(last);
    else
        for (const auto& [name, _] : available)
            names.push_back(name);

    std::vector<Decoration> decorations;
    for (const std::string& name : names) {
        // The forms whose sentinels the cycle kept ("kernel depth=2 frame=1", "kernel(options) ..."):
        // both when the report has no sentinel of this decorator (scan).
        bool anySentinel = false, bare = false, options = false;
        for (const SentinelVerdict& sentinel : located.result->sentinels) {
            const std::string label = sentinel.label.substr(0, sentinel.label.find(' '));
            if (label != name && label != name + "(options)") continue;
            anySentinel = true;
            if (sentinel.verdict == "freed-by-refcount") continue;
            (label == name ? bare : options) = true;
        }
        if (!anySentinel || (!bare && !options)) bare = options = true;
        const auto& [expression, arguments] = available[name];
        if (bare) decorations.push_back({expression, false, "", "repro_" + name});
        if (options)
            decorations.push_back({expression, true, arguments, "repro_" + name + "_with_options"});
    }
    return decorations;
}

std::int64_t payloadBytesFor(const Finding& finding, const ReproSettings& settings) {
    if (settings.payloadBytes > 0) return settings.payloadBytes;
    std::int64_t bytes = finding.bytes;
    for (const auto& [kind, amount] : finding.payloadBytes)
        bytes = std::max(bytes, amount);
    // Whole MiB, so that the figure the script prints reads at a glance.
    bytes = (bytes + kMiB - 1) / kMiB * kMiB;
    return std::clamp(bytes, kMinPayloadBytes, kMaxPayloadBytes);
}

std::string writeDecoratorScript(const Report& report, const Located& located, const ReproTarget& target,
                                 const ReproSettings& settings, const std::string& check,
                                 ReproScript& script) {
    const std::vector<Decoration> decorations = decorationsFor(located, target);
    const std::int64_t payload = payloadBytesFor(*located.finding, settings);
    std::vector<std::string> lines;
    for (const Decoration& decoration : decorations)
        lines.push_back(decoration.line());
    script.calls = fmt::format("{}", fmt::join(lines, " and "));

    Header header;
    header.title =
        fmt::format("Reproducer: decorating with {} inside a call keeps the caller's frames, and "
                    "every local on them, alive until gc.collect().",
                    script.calls);
    header.paragraphs.push_back(fmt::format(
        "What it does: caller() holds a payload of {} and, where torch has a CUDA device, a "
        "device tensor of the same size; one call below, decorate() decorates two trivial functions "
        "and drops them (nothing is compiled or launched). After caller() returns, the payload must "
        "be gone by reference counting alone; with the collector off, a decorator frame in a "
        "reference cycle pins the frames above it through f_back, and with them the payload.",
        report::humanBytes(payload)));

    std::string out = headerText(header, report, located, check, settings);
    out += "import gc\nimport os\nimport sys\nimport weakref\n\n";
    out += kGcDisable;
    out += importSection(target) + "\n";
    out += "# Optional: with torch and a CUDA device, the caller also holds a device tensor.\n"
           "try:\n"
           "    import torch\n\n"
           "    HAS_CUDA = torch.cuda.is_available()\n"
           "except Exception:  # no torch, or no CUDA: the host payload shows the same retention\n"
           "    torch = None\n"
           "    HAS_CUDA = False\n\n";
    out += fmt::format("PAYLOAD_BYTES = {}  # {}, sized from the finding\n\n\n", payload,
                       report::humanBytes(payload));
    out += "class Payload:\n"
           "    \"\"\"A caller's local: PAYLOAD_BYTES of host memory, weakly referenceable (a bytearray "
           "is not).\"\"\"\n\n"
           "    def __init__(self, nbytes):\n"
           "        self.data = bytearray(nbytes)\n\n\n";
    out += "def decorate():\n"
           "    \"\"\"Decoration only, through the package's public decorators; the functions are "
           "dropped.\"\"\"\n";
    for (const Decoration& decoration : decorations) {
        out += fmt::format("\n    {}\n    def {}():\n        pass\n", decoration.line(),
                           decoration.functionName);
    }
    out += "\n\n"
           "def caller():\n"
           "    \"\"\"Holds the payload (and a device tensor with CUDA) while decorate() runs one call "
           "below.\"\"\"\n"
           "    payload = Payload(PAYLOAD_BYTES)\n"
           "    tensor = torch.empty(PAYLOAD_BYTES, dtype=torch.uint8, device=\"cuda\") if HAS_CUDA "
           "else None  # noqa: F841\n"
           "    decorate()\n"
           "    return weakref.ref(payload)  # both die with this frame, unless a cycle pins it\n\n\n";
    out += "def main():\n";
    out += versionLines(target);
    out +=
        "    device_before = torch.cuda.memory_allocated() if HAS_CUDA else 0\n"
        "    payload = caller()\n"
        "    host_kept = payload() is not None\n"
        "    device_kept = torch.cuda.memory_allocated() - device_before if HAS_CUDA else 0\n"
        "    gc.collect()\n"
        "    freed_by_gc = host_kept and payload() is None\n"
        "    print(f\"payload : {PAYLOAD_BYTES} bytes, alive after its caller returned: {host_kept}\"\n"
        "          + (\" (freed by gc.collect())\" if freed_by_gc else \"\"))\n"
        "    if HAS_CUDA:\n"
        "        print(f\"device  : {device_kept} of {PAYLOAD_BYTES} bytes still allocated after the "
        "caller returned\")\n"
        "    else:\n"
        "        print(\"device  : no CUDA device (torch missing or without CUDA): host payload "
        "only\")\n"
        "    if host_kept or device_kept >= PAYLOAD_BYTES:\n";
    out +=
        fmt::format("        print({})\n",
                    pyString("REPRODUCED: the payload outlived its caller, pinned through a decorator "
                             "frame in a reference cycle (" +
                             script.calls + ")"));
    out += "        return 1\n";
    out += fmt::format("    print({})\n",
                       pyString("CLEAN: the payload was freed by reference counting when its "
                                "caller returned"));
    out += "    return 0\n\n\n"
           "if __name__ == \"__main__\":\n"
           "    sys.exit(main())\n";
    return out;
}

// The launch case a launch finding names: "Int8(0) T(v).__c_pointers__(): 3.00 objects ...".
struct LaunchCase {
    std::string type, value;
    bool freshEachCall = true; // T(v).__c_pointers__(); else t.__c_pointers__() on one object
};

LaunchCase launchCaseOf(const Finding& finding) {
    static const std::regex summary(R"(^(\w+)\((.*?)\) (T\(v\)|t)\.__c_pointers__\(\):)");
    std::smatch match;
    if (!std::regex_search(finding.summary, match, summary))
        throw UsageError(fmt::format("repro: the launch finding names no case (`Int32(7) "
                                     "T(v).__c_pointers__()`) in its summary: {}",
                                     finding.summary));
    LaunchCase launch{match[1].str(), match[2].str(), match[3].str() == "T(v)"};
    // A value Python reads back as written; NaN payloads and the like (shown by their bits) are
    // replaced by 1: every value of a type takes the same packing path.
    static const std::regex literal(R"(^-?(\d+(\.\d*)?([eE][-+]?\d+)?)$|^True$|^False$)");
    if (launch.value == "inf" || launch.value == "-inf")
        launch.value = "float(\"" + launch.value + "\")";
    else if (!std::regex_match(launch.value, literal))
        launch.value = "1";
    return launch;
}

std::string writeLaunchScript(const Report& report, const Located& located, const ReproTarget& target,
                              const ReproSettings& settings, const std::string& check,
                              ReproScript& script) {
    const LaunchCase launch = launchCaseOf(*located.finding);
    std::string type;
    if (!target.loadPath.empty())
        type = fmt::format("dsl.scalar_types[{}]", pyString(launch.type));
    else if (!target.scalarModule.empty())
        type = target.scalarModule + "." + launch.type;
    else
        throw UsageError(
            fmt::format("repro: cannot tell from the target `{}` where its scalar type {} "
                        "comes from (no `scalar_types = {{name: getattr(module, name) ...}}`)",
                        target.name, launch.type));
    const std::string call = launch.freshEachCall
                                 ? fmt::format("{}({}).__c_pointers__()", type, launch.value)
                                 : "ARGUMENT.__c_pointers__()";
    script.calls =
        launch.freshEachCall ? call : fmt::format("{}({}) packed on every call", type, launch.value);

    Header header;
    header.title =
        fmt::format("Reproducer: packing a {} launch argument ({}) leaves objects in reference "
                    "cycles on every call, freed only by gc.collect().",
                    launch.type, script.calls);
    header.paragraphs.push_back(fmt::format(
        "What it does: launch_once() is what the package's launch path does for one scalar argument "
        "of every kernel launch. After a warm-up it runs {} times in each of {} runs; gc.collect() "
        "then says how many objects the calls left in reference cycles. With the collector off "
        "(the program's own choice) they are never freed, so memory grows with every launch. It "
        "reproduces when every run leaves more than {} per call; it also prints what those objects "
        "hold (tracemalloc) and the blocks they keep (sys.getallocatedblocks).",
        kLaunchCalls, kLaunchRuns, kLaunchThresholdPerCall));

    std::string out = headerText(header, report, located, check, settings);
    out += "import gc\nimport os\nimport sys\nimport tracemalloc\n\n";
    out += kGcDisable;
    out += importSection(target) + "\n";
    out += fmt::format(
        "CALLS = {}  # per run\nRUNS = {}\nWARMUP = {}\nTHRESHOLD = {}  # objects per call\n",
        kLaunchCalls, kLaunchRuns, kLaunchWarmup, kLaunchThresholdPerCall);
    if (!launch.freshEachCall) out += fmt::format("ARGUMENT = {}({})\n", type, launch.value);
    out += "\n\n"
           "def launch_once():\n"
           "    \"\"\"What a launch does for one scalar argument: pack it for the kernel's "
           "parameters.\"\"\"\n";
    out += fmt::format("    {}\n\n\n", call);
    out += "def main():\n";
    out += versionLines(target);
    out += "    for _ in range(WARMUP):  # first-call caches and imports are not what is measured\n"
           "        launch_once()\n"
           "    gc.collect()\n"
           "    garbage, blocks = [], []\n"
           "    for _ in range(RUNS):\n"
           "        before = sys.getallocatedblocks()\n"
           "        for _ in range(CALLS):\n"
           "            launch_once()\n"
           "        blocks.append((sys.getallocatedblocks() - before) / CALLS)\n"
           "        garbage.append(gc.collect() / CALLS)\n"
           "    tracemalloc.start()\n"
           "    before = tracemalloc.get_traced_memory()[0]\n"
           "    for _ in range(CALLS):\n"
           "        launch_once()\n"
           "    held = (tracemalloc.get_traced_memory()[0] - before) / CALLS\n"
           "    gc.collect()\n"
           "    tracemalloc.stop()\n"
           "    print(\"cyclic garbage per call : \" + \", \".join(f\"{g:.2f}\" for g in garbage)"
           " + f\" objects (runs of {CALLS} calls)\")\n"
           "    print(\"blocks kept per call    : \" + \", \".join(f\"{b:.2f}\" for b in blocks)"
           " + \" until gc.collect()\")\n"
           "    print(f\"bytes held per call     : {held:.0f} until gc.collect()\")\n"
           "    if min(garbage) > THRESHOLD:\n";
    out += fmt::format(
        "        print(f{})\n",
        pyString("REPRODUCED: each call leaves {min(garbage):.2f} objects ({held:.0f} bytes) in "
                 "reference cycles, in every one of {RUNS} runs: " +
                 script.calls));
    out += "        return 1\n";
    out += fmt::format(
        "    print({})\n",
        pyString("CLEAN: the calls leave no reference cycles (freed by reference counting)"));
    out += "    return 0\n\n\n"
           "if __name__ == \"__main__\":\n"
           "    sys.exit(main())\n";
    return out;
}

// A scan finding, reproduced by re-running the scanned script: what the finding names is looked
// for in the garbage of one collection after the script returns.
std::string writeScanScript(const Report& report, const Located& located, const ReproSettings& settings,
                            const std::string& check, ReproScript& script) {
    const Finding& finding = *located.finding;
    const bool frameCycle = finding.kind == "frame-cycle";
    std::string culpritName, culpritFile;
    std::vector<std::string> types;
    std::int64_t atLeast = 1;
    if (frameCycle) {
        const FrameInfo& culprit = finding.frames.front();
        // The code object's name: the last part of a qualified name ("ModelDSL.kernel": kernel).
        culpritName = culprit.function.substr(culprit.function.rfind('.') + 1);
        culpritFile = baseName(culprit.file);
        script.calls = fmt::format("{}, then a frame of `{}` ({}) looked for in its cyclic garbage",
                                   baseName(settings.script), culprit.function, culpritFile);
    } else {
        const CycleShapeCount& shape = finding.cycleShapes.front();
        std::stringstream names(shape.types);
        // By the type's own name, as type(o).__name__ says it ("_ctypes.CThunkObject": CThunkObject).
        for (std::string name; std::getline(names, name, ',');) {
            name = trim(name);
            if (!name.empty()) types.push_back(name.substr(name.rfind('.') + 1));
        }
        atLeast = std::max<std::int64_t>(1, std::min<std::int64_t>(shape.count, 100));
        script.calls = fmt::format("{}, then the objects of [{}] counted in its cyclic garbage",
                                   baseName(settings.script), shape.types);
    }
    Header header;
    header.title =
        frameCycle ? fmt::format("Reproducer: running {} leaves a frame of `{}` in a reference cycle, "
                                 "alive until gc.collect().",
                                 baseName(settings.script), finding.frames.front().function)
                   : fmt::format("Reproducer: running {} leaves cycles of [{}] that only gc.collect() "
                                 "frees.",
                                 baseName(settings.script), finding.cycleShapes.front().types);
    header.paragraphs.push_back(
        "What it does: runs the script as it was scanned (its file, its arguments, the collector off "
        "from the start) with every collection saving what it finds (gc.DEBUG_SAVEALL) instead of "
        "freeing it, the script's own included, then collects once more. " +
        std::string(frameCycle
                        ? "It reproduces when that garbage holds a frame of the culprit."
                        : fmt::format("It reproduces when that garbage holds at least {} objects of "
                                      "each of the shape's types (the finding counted {} cycles).",
                                      atLeast, finding.cycleShapes.front().count)) +
        (settings.scriptSource.empty()
             ? std::string(" The script is run, not reduced: cut it down to the calls that matter for "
                           "an upstream report (`leakgate repro --reduce`), and check that this still "
                           "exits 1.")
             : fmt::format(" The script below is {} cut down by `leakgate repro --reduce` to the "
                           "statements the finding needs; it runs as that file would (its name, its "
                           "folder on sys.path, its arguments).",
                           baseName(settings.script))));
    std::string out = headerText(header, report, located, check, settings);
    out += "import gc\nimport os\nimport runpy\nimport sys\nimport types\n\n";
    out += kGcDisable;
    out += fmt::format("SCRIPT = {}\n", pyString(settings.script));
    std::vector<std::string> arguments;
    for (const std::string& argument : settings.scriptArgs)
        arguments.push_back(pyString(argument));
    out += fmt::format("ARGUMENTS = [{}]\n", fmt::join(arguments, ", "));
    if (!settings.scriptSource.empty())
        out += fmt::format("SOURCE = {}  # the script, reduced\n", pyLongString(settings.scriptSource));
    if (frameCycle) {
        out += fmt::format("CULPRIT = ({}, {})  # the frame's function and file\n",
                           pyString(culpritName), pyString(culpritFile));
    } else {
        std::vector<std::string> quoted;
        for (const std::string& type : types)
            quoted.push_back(pyString(type));
        out +=
            fmt::format("CYCLE_TYPES = [{}]  # the types of the cycle shape\n", fmt::join(quoted, ", "));
        out += fmt::format("AT_LEAST = {}\n", atLeast);
    }
    out += "\n\n"
           "def run_the_script():\n"
           "    \"\"\"The script as `python SCRIPT ARGUMENTS` runs it: a clean exit is no error.\"\"\"\n"
           "    sys.argv = [SCRIPT, *ARGUMENTS]\n"
           "    sys.path.insert(0, os.path.dirname(SCRIPT))\n"
           "    try:\n";
    out += settings.scriptSource.empty()
               ? "        runpy.run_path(SCRIPT, run_name=\"__main__\")\n"
               : "        exec(compile(SOURCE, SCRIPT, \"exec\"), {\"__name__\": \"__main__\", "
                 "\"__file__\": SCRIPT,\n"
                 "                                            \"__builtins__\": __builtins__})\n";
    out +=
        "    except SystemExit as stop:\n"
        "        if stop.code not in (None, 0):\n"
        "            raise\n\n\n"
        "def held_bytes(garbage):\n"
        "    \"\"\"What the garbage holds: its objects, and the untracked objects they reach through\n"
        "    untracked ones (buffers, arrays, strings, and the dicts and tuples of only such, which "
        "the\n"
        "    collector does not track).\"\"\"\n"
        "    seen, total, todo = set(), 0, list(garbage)\n"
        "    while todo:\n"
        "        held = todo.pop()\n"
        "        if id(held) in seen:\n"
        "            continue\n"
        "        seen.add(id(held))\n"
        "        total += sys.getsizeof(held, 0)\n"
        "        todo.extend(r for r in gc.get_referents(held) if not gc.is_tracked(r))\n"
        "    return total\n\n\n"
        "def main():\n"
        "    # Every collection saves what it finds, so that one the script starts loses nothing.\n"
        "    del gc.garbage[:]\n"
        "    gc.set_debug(gc.DEBUG_SAVEALL)\n"
        "    run_the_script()\n"
        "    gc.set_debug(gc.DEBUG_SAVEALL)\n"
        "    gc.collect()\n"
        "    gc.set_debug(0)\n"
        "    garbage = list(gc.garbage)\n"
        "    del gc.garbage[:]\n"
        "    held = held_bytes(garbage)\n";
    if (frameCycle) {
        out += "    frames = [o for o in garbage if isinstance(o, types.FrameType)\n"
               "              and o.f_code.co_name == CULPRIT[0]\n"
               "              and os.path.basename(o.f_code.co_filename) == CULPRIT[1]]\n"
               "    if frames:\n"
               "        print(f\"REPRODUCED: {len(frames)} frame(s) of {CULPRIT[0]} ({CULPRIT[1]}) in "
               "reference \"\n"
               "              f\"cycles after the script returned; with the collector off they stay, "
               "with \"\n"
               "              f\"everything their locals and f_back chain hold (about {held} bytes)\")\n"
               "        return 1\n"
               "    print(f\"CLEAN: no frame of {CULPRIT[0]} ({CULPRIT[1]}) in cyclic garbage \"\n"
               "          f\"({len(garbage)} objects collected)\")\n"
               "    return 0\n\n\n";
    } else {
        out +=
            "    counts = {name: 0 for name in CYCLE_TYPES}\n"
            "    for o in garbage:\n"
            "        name = type(o).__name__\n"
            "        if name in counts:\n"
            "            counts[name] += 1\n"
            "    found = min(counts.values())\n"
            "    shown = \", \".join(f\"{count} {name}\" for name, count in counts.items())\n"
            "    if found >= AT_LEAST:\n"
            "        print(f\"REPRODUCED: the script left {shown} in cyclic garbage (at least "
            "{AT_LEAST} \"\n"
            "              f\"of each: the finding's cycles); with the collector off they stay \"\n"
            "              f\"(about {held} bytes)\")\n"
            "        return 1\n"
            "    print(f\"CLEAN: the script left {shown} in cyclic garbage (fewer than {AT_LEAST})\")\n"
            "    return 0\n\n\n";
    }
    out += "if __name__ == \"__main__\":\n"
           "    sys.exit(main())\n";
    return out;
}

// --- Reading the report and the target ----------------------------------------------------------

nlohmann::json readJson(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw UsageError(fmt::format("repro: cannot read {}", file));
    nlohmann::json document = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) throw UsageError(fmt::format("repro: {} is not JSON", file));
    return document;
}

std::string readText(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw UsageError(fmt::format("repro: cannot read the target file {}", file));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

struct TargetFile {
    std::string name, path;
    bool builtin = false;
};

TargetFile builtinFile(const BuiltinTarget& builtin) {
    if (!builtin.file)
        throw UsageError(fmt::format("repro: `{}` is leakgate's own runtime, not a DSL to reproduce on",
                                     builtin.name));
    return {builtin.name, (base::dataDir() / builtin.file).string(), true};
}

// The target file the finding was measured on: --target, else the report's subject (a built-in
// name, the stem of a target file that the finding's frames or the default gate target name), else
// for scan the built-in DSL whose package holds the culprit.
TargetFile findTarget(const std::string& given, const Report& report, const Located& located) {
    if (!given.empty()) {
        if (const BuiltinTarget* builtin = findBuiltinTarget(given)) return builtinFile(*builtin);
        if (!fs::is_regular_file(given))
            throw UsageError(
                fmt::format("repro: --target {}: not a file, and not a built-in target ({})", given,
                            builtinTargetNames()));
        return {fs::path(given).stem().string(), fs::absolute(given).string(), false};
    }
    if (report.command == "gate") {
        const std::string& subject = located.result->subject;
        if (const BuiltinTarget* builtin = findBuiltinTarget(subject)) return builtinFile(*builtin);
        std::vector<std::string> candidates;
        for (const FrameInfo& frame : located.finding->frames)
            candidates.push_back(frame.file);
        candidates.push_back(defaultGateTarget());
        for (const std::string& file : candidates) {
            if (fs::path(file).stem() == subject && fs::is_regular_file(file))
                return {subject, fs::absolute(file).string(), false};
        }
        throw UsageError(fmt::format("repro: the report names the target `{}` but not its file: give it "
                                     "with --target FILE",
                                     subject));
    }
    if (!located.finding->frames.empty()) {
        const std::string& culprit = located.finding->frames.front().file;
        for (const BuiltinTarget& builtin : builtinTargets()) {
            if (builtin.packageDir &&
                culprit.find("/" + std::string(builtin.packageDir) + "/") != std::string::npos)
                return builtinFile(builtin);
        }
    }
    throw UsageError(
        "repro: the culprit is in no DSL leakgate knows: name the DSL's target with --target "
        "(a built-in target or a target file)");
}

// The bisect row to reproduce: --release, else the newest release whose gate failed.
const BisectRow& chooseRow(const BisectReport& bisect, const std::string& release) {
    for (auto row = bisect.rows.rbegin(); row != bisect.rows.rend(); ++row) {
        const bool failed = std::any_of(row->cells.begin(), row->cells.end(), [](const auto& cell) {
            return cell.second.status == Status::kFail;
        });
        if (!row->report) {
            if (row->version == release)
                throw UsageError(
                    fmt::format("repro: release {} has no gate report in the bisect report ({})",
                                release, row->error.value_or("not gated")));
            continue;
        }
        if (release.empty() ? failed : row->version == release) return *row;
    }
    if (!release.empty())
        throw UsageError(fmt::format("repro: the bisect report has no release {}", release));
    throw UsageError("repro: no release of the bisect report failed: nothing to reproduce");
}

// Where `check` started and stopped failing around `release`, from the bisect's transitions.
std::string releaseWindow(const BisectReport& bisect, const std::string& check,
                          const std::string& release) {
    std::map<std::string, size_t> order;
    for (size_t i = 0; i < bisect.rows.size(); ++i)
        order[bisect.rows[i].version] = i;
    if (!order.count(release)) return "";
    const size_t at = order[release];
    std::string regressed, lastGood, fixed;
    for (const BisectTransition& transition : bisect.transitions) {
        for (const CheckChange& change : transition.changes) {
            if (change.check != check) continue;
            const std::string kind = changeKind(change);
            if (kind == "regressed" && order[transition.to] <= at) {
                regressed = transition.to;
                lastGood = transition.from;
            }
            if (kind == "fixed" && order[transition.from] >= at && fixed.empty()) fixed = transition.to;
        }
    }
    std::vector<std::string> parts;
    if (!regressed.empty())
        parts.push_back(fmt::format("fails from {} ({} passes)", regressed, lastGood));
    else
        parts.push_back(
            fmt::format("fails from the oldest release gated, {}", bisect.rows.front().version));
    if (!fixed.empty())
        parts.push_back(fmt::format("fixed in {}", fixed));
    else
        parts.push_back(
            fmt::format("not fixed in any release gated (to {})", bisect.rows.back().version));
    return fmt::format("{}; {} (`leakgate bisect` of {}, {} releases)", parts[0], parts[1],
                       bisect.package, bisect.rows.size());
}

// --- Running it -------------------------------------------------------------------------------

std::string resolvePython(const std::string& python) {
    std::string path = python;
    if (python.find('/') == std::string::npos) {
        const char* search = std::getenv("PATH");
        std::istringstream dirs(search ? search : "");
        std::string dir;
        path.clear();
        while (std::getline(dirs, dir, ':')) {
            const fs::path candidate = fs::path(dir.empty() ? "." : dir) / python;
            if (::access(candidate.c_str(), X_OK) == 0) {
                path = candidate.string();
                break;
            }
        }
    }
    if (path.empty() || ::access(path.c_str(), X_OK) != 0 || fs::is_directory(path))
        throw UsageError(fmt::format("repro: {}: no such interpreter (an executable python)", python));
    return fs::absolute(path).string();
}

// The bytes a scan reproducer's verdict line says the garbage holds ("(about 4194432 bytes)").
std::optional<std::int64_t> heldBytesOf(const std::string& line) {
    static const std::regex about(R"(\(about (\d+) bytes\))");
    std::smatch match;
    if (!std::regex_search(line, match, about)) return std::nullopt;
    return std::stoll(match[1].str());
}

std::string lastLine(const std::string& text) {
    std::istringstream lines(text);
    std::string line, last;
    while (std::getline(lines, line))
        if (!trim(line).empty()) last = trim(line);
    return last;
}

ReproRun runOnce(const std::string& script, const std::string& python,
                 std::optional<ReproVerdict> expected, std::chrono::seconds timeout) {
    ReproRun run{python, expected};
    // A directory of its own: the script and whatever the package writes beside it go with it.
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / "leakgate-repro-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
        throw std::system_error(errno, std::generic_category(),
                                "repro: cannot make a scratch directory");
    const fs::path dir = pattern;
    struct Remove {
        fs::path dir;
        ~Remove() {
            std::error_code ignored;
            fs::remove_all(dir, ignored);
        }
    } remove{dir};
    base::writeOutputFile((dir / "repro.py").string(), script);

    base::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c",      "cd \"$1\" && shift && exec \"$@\"", "sh", dir.string(),
                 python,    "repro.py"};
    spec.timeout = timeout;
    const base::ProcessOutcome outcome = base::runProcess(spec);
    run.exitCode = outcome.exitCode;
    if (outcome.timedOut) {
        run.detail = fmt::format("timed out after {} s", timeout.count());
    } else if (outcome.signal) {
        run.detail = base::describeSignal(*outcome.signal);
    } else if (outcome.exitCode == 0 || outcome.exitCode == 1) {
        // A verdict needs the script's verdict line: an interpreter that cannot even compile the
        // script (a SyntaxError) also exits 1.
        run.detail = lastLine(outcome.stdoutText);
        const char* expected = *outcome.exitCode == 1 ? "REPRODUCED:" : "CLEAN:";
        if (run.detail.starts_with(expected)) {
            run.verdict = *outcome.exitCode == 1 ? ReproVerdict::kReproduces : ReproVerdict::kClean;
        } else {
            const std::string why = lastLine(outcome.stderrTail);
            run.detail = fmt::format("no verdict line ({}): {}", expected,
                                     why.empty() ? "no output on stderr" : why);
        }
    } else {
        const std::string why = lastLine(outcome.stderrTail);
        run.detail = why.empty() ? "no output on stderr" : why;
    }
    return run;
}

} // namespace

const char* toString(ReproShape shape) {
    switch (shape) {
    case ReproShape::kDecoratorFrameCycle:
        return "decorator frame cycle";
    case ReproShape::kLaunchCyclicGarbage:
        return "per-launch cyclic garbage";
    case ReproShape::kScanScript:
        return "scanned script re-run";
    }
    return "?";
}

std::string supportedReproShapes() {
    return "a frame-cycle whose culprit is a decorator of the target (gate's decorate-frame-cycle and "
           "import-frame-cycle, scan's frame-cycle in a built-in DSL), per-launch cyclic garbage "
           "(gate's launch-cyclic-garbage), and any scan's frame-cycle or cyclic-garbage with its "
           "script (--from-scan, or a scan report and `-- SCRIPT [ARGS...]`)";
}

const char* toString(ReproVerdict verdict) {
    switch (verdict) {
    case ReproVerdict::kReproduces:
        return "reproduces";
    case ReproVerdict::kClean:
        return "clean";
    case ReproVerdict::kError:
        return "error";
    }
    return "?";
}

ReproTarget readReproTarget(const std::string& name, const std::string& source, const std::string& file,
                            bool builtin) {
    ReproTarget target;
    target.name = name;
    std::set<std::string> bound;
    std::map<std::string, std::string> assigned;
    static const std::regex assignment(R"(^(\w+)\s*=\s*(.+?)\s*$)");
    std::istringstream lines(source);
    std::string line;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.starts_with("import ") || line.starts_with("from ")) {
            const std::vector<std::string> names = boundNames(line);
            if (names.empty() || line.find('(') != std::string::npos) continue; // a multi-line import
            target.imports.push_back(line);
            bound.insert(names.begin(), names.end());
            continue;
        }
        std::smatch match;
        if (std::regex_match(line, match, assignment)) assigned[match[1].str()] = match[2].str();
    }
    static const std::regex dotted(R"(^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$)");
    for (const char* decorator : {"kernel", "jit"}) {
        const auto found = assigned.find(decorator);
        if (found == assigned.end() || !std::regex_match(found->second, dotted) ||
            !bound.count(rootName(found->second)))
            continue;
        (std::string(decorator) == "kernel" ? target.kernel : target.jit) = found->second;
    }
    for (const char* options : {"kernel_options", "jit_options"}) {
        const auto found = assigned.find(options);
        if (found == assigned.end() || !found->second.starts_with("{") || !found->second.ends_with("}"))
            continue;
        (std::string(options) == "kernel_options" ? target.kernelOptions : target.jitOptions) =
            found->second;
    }
    static const std::regex package(R"re(^["']([\w.-]+)["']$)re");
    if (const auto found = assigned.find("TARGET_PACKAGE"); found != assigned.end()) {
        std::smatch match;
        if (std::regex_match(found->second, match, package)) target.package = match[1].str();
    }
    static const std::regex scalars(R"(scalar_types\s*=\s*\{[^}]*?getattr\(\s*(\w+)\s*,)");
    std::smatch match;
    if (std::regex_search(source, match, scalars) && bound.count(match[1].str()))
        target.scalarModule = match[1].str();

    if (target.kernel.empty() && target.jit.empty()) {
        if (builtin)
            throw UsageError(fmt::format("repro: the built-in target `{}` declares its decorators in a "
                                         "table (`decorators`), which "
                                         "repro does not read yet; it reads targets that bind `kernel` "
                                         "and `jit` to the package's "
                                         "decorators (cute, triton)",
                                         name));
        target.loadPath = file;
        target.imports.clear();
        target.scalarModule.clear();
    }
    return target;
}

ReproScript writeReproducer(const Report& report, std::optional<int> index, const ReproTarget& target,
                            const ReproSettings& settings) {
    const bool withScript = !settings.script.empty();
    const Located located = chooseFinding(report, index, withScript);
    ReproScript script;
    script.shape = *shapeOf(*located.result, *located.finding, withScript);
    script.findingIndex = located.index;
    script.check = checkOf(*located.result, *located.finding);
    script.summary = located.finding->summary;
    switch (script.shape) {
    case ReproShape::kDecoratorFrameCycle:
        script.text = writeDecoratorScript(report, located, target, settings, script.check, script);
        break;
    case ReproShape::kLaunchCyclicGarbage:
        script.text = writeLaunchScript(report, located, target, settings, script.check, script);
        break;
    case ReproShape::kScanScript:
        script.text = writeScanScript(report, located, settings, script.check, script);
        break;
    }
    return script;
}

ExitCode ReproResult::exitCode() const {
    if (std::any_of(runs.begin(), runs.end(), [](const ReproRun& run) { return run.contradicted(); }))
        return ExitCode::kFindings;
    if (std::any_of(runs.begin(), runs.end(),
                    [](const ReproRun& run) { return run.verdict == ReproVerdict::kError; }))
        return ExitCode::kErrored;
    return ExitCode::kClean;
}

ReproResult runRepro(const ReproOptions& options) {
    if (int(options.fromScan) + int(options.fromGate) + int(!options.from.empty()) != 1)
        throw UsageError("repro: give the JSON report with --from FILE, or --from-scan -- SCRIPT "
                         "[ARGS...], or --from-gate [--target T]");
    if (options.fromGate && !options.script.empty())
        throw UsageError("repro: --from-gate reproduces a gate finding; a script goes with a scan");
    if (options.fromScan && options.script.empty())
        throw UsageError("repro: --from-scan needs the script: --from-scan -- SCRIPT [ARGS...]");
    if (!options.out.empty() && options.out != "-" && !options.from.empty() &&
        base::sameFile(options.out, options.from))
        throw UsageError(fmt::format("repro: --out {} is the report it reads", options.out));
    std::string script;
    if (!options.script.empty()) {
        std::error_code error;
        script = std::filesystem::absolute(options.script, error).lexically_normal().string();
        if (error || !std::filesystem::is_regular_file(script, error))
            throw UsageError(fmt::format("repro: no such script: {}", options.script));
        if (!options.out.empty() && options.out != "-" && base::sameFile(options.out, script))
            throw UsageError(fmt::format("repro: --out {} is the script it re-runs", options.out));
    }
    // Every interpreter is checked before anything is written: a typo is a usage error, not a run.
    std::vector<std::pair<std::string, std::optional<ReproVerdict>>> pythons;
    for (const std::string& python : options.verifyWith)
        pythons.emplace_back(resolvePython(python), std::nullopt);
    for (const std::string& python : options.expectLeak)
        pythons.emplace_back(resolvePython(python), ReproVerdict::kReproduces);
    for (const std::string& python : options.expectClean)
        pythons.emplace_back(resolvePython(python), ReproVerdict::kClean);

    ReproResult result;
    std::optional<BisectReport> bisect;
    Report report;
    const bool run = options.fromScan || options.fromGate;
    const nlohmann::json document = run ? nlohmann::json::object() : readJson(options.from);
    const std::string command = options.fromScan   ? "scan"
                                : options.fromGate ? "gate"
                                                   : document.value("command", "");
    if (options.fromGate) {
        if (!options.release.empty()) throw UsageError("repro: --release needs a bisect report");
        // The checks whose findings repro writes reproducers for, and nothing slower.
        GateOptions gate;
        gate.target = options.target;
        gate.python = options.python;
        gate.timeout = options.timeout;
        gate.checks = {"decorate", "import", "launch"};
        gate.forwardOutput = false;
        report = runGate(gate);
    } else if (options.fromScan) {
        if (!options.release.empty()) throw UsageError("repro: --release needs a bisect report");
        ScanOptions scan;
        scan.script = script;
        scan.args = options.scriptArgs;
        scan.python = options.python;
        scan.timeout = options.timeout;
        scan.forwardOutput = false;
        report = runScan(scan);
    } else if (command == "bisect") {
        bisect = bisectReportFromJson(document);
        if (!bisect)
            throw UsageError(
                fmt::format("repro: {} is a bisect report that does not decode", options.from));
        const BisectRow& row = chooseRow(*bisect, options.release);
        report = *row.report;
        result.release = row.version;
    } else if (command == "gate" || command == "scan") {
        if (!options.release.empty()) throw UsageError("repro: --release needs a bisect report");
        std::optional<Report> decoded = reportFromJson(document);
        if (!decoded)
            throw UsageError(fmt::format("repro: {} is a report that does not decode", options.from));
        report = std::move(*decoded);
    } else {
        throw UsageError(fmt::format("repro: {} is not a JSON report of gate, scan or bisect{}",
                                     options.from,
                                     command.empty() ? "" : fmt::format(" (it is {}'s)", command)));
    }
    if (!script.empty() && command != "scan")
        throw UsageError(fmt::format("repro: a script (-- SCRIPT) goes with a scan report; {} is {}'s",
                                     options.from, command));
    std::optional<int> index;
    if (options.finding) index = *options.finding - 1;
    const Located located = chooseFinding(report, index, !script.empty());
    ReproTarget target; // a scanned script reaches the package through its own imports
    if (*shapeOf(*located.result, *located.finding, !script.empty()) != ReproShape::kScanScript) {
        const TargetFile file = findTarget(options.target, report, located);
        target = readReproTarget(located.result->subject.empty() ? file.name : located.result->subject,
                                 readText(file.path), file.path, file.builtin);
    }
    ReproSettings settings;
    settings.payloadBytes = options.payloadBytes;
    settings.reportFile = options.from;
    settings.script = script;
    settings.scriptArgs = options.scriptArgs;
    if (bisect)
        settings.releaseWindow =
            releaseWindow(*bisect, checkOf(*located.result, *located.finding), result.release);
    result.script = writeReproducer(report, located.index, target, settings);
    if (options.reduce) {
        if (result.script.shape != ReproShape::kScanScript)
            throw UsageError(fmt::format("repro: --reduce cuts down a scanned script; this finding's "
                                         "reproducer is a {}",
                                         toString(result.script.shape)));
        std::vector<std::pair<std::string, ReproVerdict>> judges;
        for (const auto& [python, expected] : pythons)
            if (expected) judges.emplace_back(python, *expected);
        if (std::none_of(judges.begin(), judges.end(),
                         [](const auto& judge) { return judge.second == ReproVerdict::kReproduces; })) {
            if (!options.fromScan || !options.python)
                throw UsageError("repro: --reduce needs an interpreter where the finding reproduces: "
                                 "--expect-leak PYTHON (or --from-scan's --python)");
            judges.emplace_back(resolvePython(*options.python), ReproVerdict::kReproduces);
        }
        const std::string& parser = std::find_if(judges.begin(), judges.end(), [](const auto& judge) {
                                        return judge.second == ReproVerdict::kReproduces;
                                    })->first;
        // A cut holds where every verdict stays, and where it reproduces the garbage still holds at
        // least half the bytes of the uncut script's (the payload that shows them stays).
        std::vector<std::optional<std::int64_t>> uncutBytes;
        auto holds = [&](const std::string& source) {
            ReproSettings cut = settings;
            cut.scriptSource = source;
            const std::string text = writeReproducer(report, located.index, target, cut).text;
            const bool first = uncutBytes.empty();
            for (size_t i = 0; i < judges.size(); ++i) {
                const ReproRun run = runOnce(text, judges[i].first, judges[i].second, options.timeout);
                if (run.verdict != judges[i].second) return false;
                const std::optional<std::int64_t> bytes = heldBytesOf(run.detail);
                if (first) {
                    uncutBytes.push_back(bytes);
                } else if (uncutBytes[i] && (!bytes || *bytes * 2 < *uncutBytes[i])) {
                    return false;
                }
            }
            return true;
        };
        result.reduction = reduceScript(parser, script, holds, options.reduceBudget);
        settings.scriptSource = result.reduction->source;
        result.script = writeReproducer(report, located.index, target, settings);
    }
    if (!options.out.empty() && options.out != "-")
        base::writeOutputFile(options.out, result.script.text);
    for (const auto& [python, expected] : pythons)
        result.runs.push_back(runOnce(result.script.text, python, expected, options.timeout));
    return result;
}

std::string describeRepro(const ReproResult& result, const ReproOptions& options) {
    const ReproScript& script = result.script;
    std::string out = fmt::format(
        "leakgate repro: finding {} of {}{}: {}: {}\n", script.findingIndex + 1,
        options.fromScan   ? "the scan of " + options.script
        : options.fromGate ? "the gate of " + (options.target.empty() ? std::string("the default target")
                                                                      : options.target)
                           : options.from,
        result.release.empty() ? "" : " (release " + result.release + ")", script.check, script.summary);
    out +=
        fmt::format("  wrote {}: {}, {}\n",
                    options.out.empty() || options.out == "-" ? "the reproducer to stdout" : options.out,
                    toString(script.shape), script.calls);
    if (const auto& cut = result.reduction) {
        out += fmt::format("  reduced {}: {} of {} statements dropped, {} runs in {:.1f} s{}\n",
                           options.script, cut->dropped, cut->statements, cut->runs, cut->seconds,
                           cut->stoppedEarly ? " (stopped at the --reduce-seconds budget)" : "");
    }
    for (const ReproRun& run : result.runs) {
        const std::string status =
            run.verdict == ReproVerdict::kError
                ? (run.exitCode ? fmt::format("exit {}: error", *run.exitCode) : "error")
                : fmt::format("exit {}: {}", *run.exitCode, toString(run.verdict));
        std::string expectation;
        if (run.expected)
            expectation = run.contradicted()
                              ? fmt::format("  NOT AS EXPECTED (expected: {})", toString(*run.expected))
                          : run.verdict == ReproVerdict::kError
                              ? fmt::format("  (expected: {})", toString(*run.expected))
                              : "  (as expected)";
        out += fmt::format("  {:<18} {}{}\n", status, run.python, expectation);
        if (!run.detail.empty()) out += fmt::format("      {}\n", run.detail);
    }
    const ExitCode code = result.exitCode();
    if (!result.runs.empty()) {
        const bool anyExpected =
            std::any_of(result.runs.begin(), result.runs.end(),
                        [](const ReproRun& run) { return run.expected.has_value(); });
        const char* verdict = code == ExitCode::kFindings  ? "an expectation did not hold"
                              : code == ExitCode::kErrored ? "a run errored"
                              : anyExpected                ? "every expectation held"
                                                           : "verified";
        out += fmt::format("{}; exit {}\n", verdict, static_cast<int>(code));
    }
    return out;
}

} // namespace leakgate::commands
