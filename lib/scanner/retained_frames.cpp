// Frames that outlived a full collection: for each, the shortest path from a root that holds it,
// as a person reads it (`keeps_locals._SCOPES[3]['payload']`), and what goes when those frames go.
#include "lib/scanner/explain.h"

#include "lib/python/compat.h"
#include "lib/scanner/finding_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>

namespace leakgate::scanner {
namespace {

using python::OwnedRef;

constexpr size_t kMaxRetainedGroups = 20;

std::string renderRetention(const std::string& root, const std::vector<PathStep>& steps) {
    std::string text = root;
    size_t first = 0;
    // "module `m` globals" then ['name'] reads better as m.name.
    if (root.starts_with("module `") && root.ends_with("` globals") && !steps.empty() &&
        steps[0].kind == "item" && steps[0].label.starts_with("['")) {
        text = root.substr(8, root.size() - 8 - 9) + "." +
               steps[0].label.substr(2, steps[0].label.size() - 4);
        first = 1;
    }
    for (size_t i = first; i < steps.size(); ++i) {
        const PathStep& step = steps[i];
        bool joins = step.kind == "attribute" || step.kind == "item" || step.kind == "index";
        if (joins) {
            text += step.label;
            continue;
        }
        // A run of one edge (an f_back chain 49 frames deep) is said once, with its count.
        size_t run = 1;
        while (i + run < steps.size() && steps[i + run].kind == step.kind &&
               steps[i + run].label == step.label)
            ++run;
        if (run > 2) {
            text += fmt::format(" -> {} (x{})", step.label, run);
            i += run - 1;
        } else {
            text += " -> " + step.label;
        }
    }
    return text;
}

} // namespace

std::vector<NodeId> pathFromRoot(const ObjectGraph::Reverse& reverse,
                                 std::span<const std::int64_t> external, NodeId target) {
    // Breadth first back from the target: the first node with references from outside is the root.
    std::unordered_map<NodeId, NodeId> child{{target, target}};
    std::deque<NodeId> queue{target};
    std::optional<NodeId> root;
    while (!queue.empty() && !root) {
        NodeId node = queue.front();
        queue.pop_front();
        if (external[node] > 0) {
            root = node;
            break;
        }
        for (NodeId previous : reverse.predecessors(node)) {
            if (child.count(previous)) continue;
            child.emplace(previous, node);
            queue.push_back(previous);
        }
    }
    std::vector<NodeId> path;
    if (root) {
        for (NodeId node = *root;; node = child.at(node)) {
            path.push_back(node);
            if (node == target) break;
        }
    }
    return path;
}

std::string retentionRoute(const ObjectGraph& heap, const std::vector<NodeId>& path,
                           const std::function<std::string(PyObject*)>& nameRoot) {
    if (path.empty()) return "an unknown holder";
    return renderRetention(nameRoot(heap.object(path.front())), labelPath(heap, path));
}

std::vector<Finding> explainRetainedFrames(const RetainedFrames& input) {
    const ObjectGraph& heap = input.heap;
    const ObjectGraph::Reverse reverse = heap.reverse();
    std::vector<bool> isRetained(heap.size(), false);
    for (NodeId node : input.retained)
        isRetained[node] = true;

    struct Group {
        Finding finding;
        std::vector<NodeId> frames;
    };
    std::map<std::pair<PyObject*, std::string>, Group> groups; // (frame code, retention path)
    for (NodeId frame : input.retained) {
        // A path through another retained frame means this one is pinned by that frame (its
        // f_back chain) and is reported with it.
        const std::vector<NodeId> path = pathFromRoot(reverse, input.external, frame);
        bool pinnedByAnother =
            std::any_of(path.begin(), path.end() - (path.empty() ? 0 : 1),
                        [&](NodeId node) { return isRetained[node] && node != frame; });
        if (pinnedByAnother) continue;

        Finding finding;
        finding.kind = "retained-frame";
        PyObject* object = heap.object(frame);
        setPinnedChain(finding, object);
        finding.root = path.empty() ? "an unknown holder" : input.nameRoot(heap.object(path.front()));
        finding.path = foldPath(labelPath(heap, path));
        finding.locals = namesOnPath(finding.path);
        OwnedRef code = python::frameCode(reinterpret_cast<PyFrameObject*>(object));
        std::string route = renderRetention(finding.root, finding.path);
        // leakgate's own frames are one story however many of them there are.
        Group& group = groups[{finding.frames.empty() ? nullptr : code.get(), finding.root}];
        if (group.frames.empty()) {
            group.finding = std::move(finding);
            if (group.finding.frames.empty()) {
                group.finding.summary = fmt::format("a frame of leakgate's own workload (a caller of "
                                                    "the target, holding sentinels) outlives its "
                                                    "call: {} holds it",
                                                    route);
            } else {
                group.finding.summary = fmt::format(
                    "frame of `{}` ({}:{}) outlives its call: {} holds it",
                    group.finding.frames.front().function, baseName(group.finding.frames.front().file),
                    group.finding.frames.front().line, route);
            }
        }
        group.frames.push_back(frame);
    }

    std::vector<Finding> findings;
    for (auto& [key, group] : groups) {
        if (findings.size() == kMaxRetainedGroups) break;
        // What goes when these frames go: reachable from them, not reachable from any root
        // without passing through them.
        std::vector<bool> blocked(heap.size(), false);
        for (NodeId frame : group.frames)
            blocked[frame] = true;
        std::vector<NodeId> roots;
        for (NodeId node = 0; node < heap.size(); ++node) {
            if (input.external[node] > 0 && !blocked[node]) roots.push_back(node);
        }
        std::vector<bool> aliveAnyway(heap.size(), false);
        std::vector<NodeId> stack(roots);
        for (NodeId node : roots)
            aliveAnyway[node] = true;
        while (!stack.empty()) {
            NodeId node = stack.back();
            stack.pop_back();
            for (NodeId next : heap.successors(node)) {
                if (aliveAnyway[next] || blocked[next]) continue;
                aliveAnyway[next] = true;
                stack.push_back(next);
            }
        }
        Footprint pinned = footprint(heap, group.frames, &aliveAnyway);
        group.finding.objects = pinned.objects;
        group.finding.bytes = pinned.bytes;
        if (group.frames.size() > 1)
            group.finding.summary += fmt::format(" ({} frames)", group.frames.size());
        group.finding.fix = fixFor(group.finding);
        findings.push_back(std::move(group.finding));
    }
    std::stable_sort(findings.begin(), findings.end(),
                     [](const Finding& a, const Finding& b) { return a.bytes > b.bytes; });
    return findings;
}

} // namespace leakgate::scanner
