#include "lib/scanner/finding_paths.h"

#include "lib/python/compat.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace leakgate::scanner {
namespace {

using python::own;
using python::OwnedRef;

// A path longer than a person reads (a frame at the end of a linked list 300,000 nodes long) keeps
// its first and last steps, with one step of kind "folded" between that says how many were left
// out: every report that carries it stays small.
constexpr size_t kPathStepsKept = 32;

} // namespace

std::string baseName(const std::string& file) {
    return std::filesystem::path(file).filename().string();
}

// The culprit first, then every frame it pins through f_back; leakgate's own frames are only
// counted, except the culprit itself: a frame of leakgate's that the code under test keeps is
// named, so that the finding never reads as "no frame".
// The culprit and its f_back chain (leakgate's own frames counted, not listed); the frames seen.
std::unordered_set<PyObject*> setPinnedChain(Finding& finding, PyObject* culprit) {
    std::unordered_set<PyObject*> seen;
    OwnedRef frame = own(Py_NewRef(culprit));
    while (frame) {
        seen.insert(frame.get());
        if (isLauncherFrame(frame.get())) break;
        if (isHarnessFrame(frame.get()) && frame.get() != culprit) {
            ++finding.harnessFrames;
        } else {
            finding.frames.push_back(frameInfo(frame.get()));
        }
        frame = python::frameBack(reinterpret_cast<PyFrameObject*>(frame.get()));
    }
    return seen;
}

std::vector<PathStep> foldPath(std::vector<PathStep> steps) {
    if (steps.size() <= 2 * kPathStepsKept + 1) return steps;
    const size_t left = steps.size() - 2 * kPathStepsKept;
    std::vector<PathStep> folded(steps.begin(), steps.begin() + kPathStepsKept);
    folded.push_back(PathStep{"folded", fmt::format("... {} more steps ...", left), ""});
    folded.insert(folded.end(), steps.end() - kPathStepsKept, steps.end());
    return folded;
}

std::vector<PathStep> labelPath(const ObjectGraph& graph, const std::vector<NodeId>& nodes,
                                std::optional<EdgeLabel> first) {
    std::vector<PathStep> steps;
    for (size_t i = 0; i + 1 < nodes.size(); ++i) {
        PyObject* from = graph.object(nodes[i]);
        PyObject* to = graph.object(nodes[i + 1]);
        EdgeLabel label = i == 0 && first ? std::move(*first) : labelEdge(from, to);
        if (label.kind == "__closure__" && i + 2 < nodes.size()) {
            EdgeLabel index = labelEdge(to, graph.object(nodes[i + 2]));
            if (index.kind == "index") {
                Py_ssize_t slot = std::stol(index.label.substr(1));
                std::string name = freeVariableName(from, slot);
                steps.push_back({"cell", fmt::format("closure cell `{}`", name),
                                 describeObject(graph.object(nodes[i + 2]))});
                ++i;
                continue;
            }
        }
        if (label.kind == "__dict__" && i + 2 < nodes.size()) {
            EdgeLabel item = labelEdge(to, graph.object(nodes[i + 2]));
            if (item.kind == "item" && !item.name.empty()) {
                steps.push_back(
                    {"attribute", "." + item.name, describeObject(graph.object(nodes[i + 2]))});
                ++i;
                continue;
            }
        }
        steps.push_back({label.kind, label.label, describeObject(to)});
    }
    return steps;
}

std::vector<std::string> namesOnPath(const std::vector<PathStep>& steps) {
    std::vector<std::string> names;
    for (const auto& step : steps) {
        if (step.kind != "local" && step.kind != "cell") continue;
        auto open = step.label.find('`');
        auto close = step.label.find('`', open + 1);
        if (open == std::string::npos || close == std::string::npos) continue;
        std::string name = step.label.substr(open + 1, close - open - 1);
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
}

} // namespace leakgate::scanner
