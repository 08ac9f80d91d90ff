// Frame cycles explained (the culprit frame, the local that closes the cycle, the frames and the
// payloads it pins, the fix) and cycles of any kind grouped by their shape.
#include "lib/scanner/explain.h"

#include "lib/python/compat.h"
#include "lib/python/text.h"
#include "lib/report/units.h"
#include "lib/scanner/finding_paths.h"
#include "lib/scanner/labels.h"
#include "lib/scanner/payloads.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace leakgate::scanner {
namespace {

using python::own;
using python::OwnedRef;

int frameDepth(PyObject* frame) {
    int depth = 0;
    for (OwnedRef back = python::frameBack(reinterpret_cast<PyFrameObject*>(frame)); back;
         back = python::frameBack(reinterpret_cast<PyFrameObject*>(back.get()))) {
        ++depth;
    }
    return depth;
}

// Every node `start` reaches in `graph`, each once, breadth first: visit(from, node) for each but
// `start` itself, `from` being the node whose edge reached it first.
template <typename Visit> void walkFrom(const ObjectGraph& graph, NodeId start, Visit&& visit) {
    std::vector<bool> seen(graph.size(), false);
    std::deque<NodeId> pending{start};
    seen[start] = true;
    while (!pending.empty()) {
        NodeId node = pending.front();
        pending.pop_front();
        for (NodeId next : graph.successors(node)) {
            if (seen[next]) continue;
            seen[next] = true;
            pending.push_back(next);
            visit(node, next);
        }
    }
}

// The frames a cycle pins: the culprit, its f_back chain, then every other frame in the garbage
// that the culprit's frame reaches (through a traceback's tb_frame, a generator, a local), each
// with the edge that reaches it first, breadth first. leakgate's own frames are counted, not
// listed.
void setPinnedFrames(Finding& finding, const ObjectGraph& garbage, NodeId culpritNode) {
    PyObject* culprit = garbage.object(culpritNode);
    std::unordered_set<PyObject*> listed = setPinnedChain(finding, culprit);
    for (size_t i = 1; i < finding.frames.size(); ++i)
        finding.frames[i].heldBy = "f_back";
    walkFrom(garbage, culpritNode, [&](NodeId node, NodeId next) {
        PyObject* object = garbage.object(next);
        if (!PyFrame_Check(object) || listed.contains(object) || isLauncherFrame(object)) return;
        listed.insert(object);
        if (isHarnessFrame(object)) {
            ++finding.harnessFrames;
            return;
        }
        PyObject* from = garbage.object(node);
        FrameInfo info = frameInfo(object);
        info.heldBy = fmt::format("{} of {}", labelEdge(from, object).label, describeObject(from));
        finding.frames.push_back(std::move(info));
    });
}

// Shortest path from `start` to `goal` inside one component, as nodes from `from` to `goal`.
std::vector<NodeId> pathWithin(const ObjectGraph& graph, const Components& components, NodeId from,
                               NodeId start, NodeId goal) {
    if (start == goal) return {from, goal}; // a reference to itself: no search
    ComponentId component = components.of(goal);
    std::unordered_map<NodeId, NodeId> parent{{start, start}};
    std::deque<NodeId> queue{start};
    while (!queue.empty()) {
        NodeId node = queue.front();
        queue.pop_front();
        if (node == goal) {
            std::vector<NodeId> path{goal};
            while (path.back() != start)
                path.push_back(parent.at(path.back()));
            path.push_back(from);
            std::reverse(path.begin(), path.end());
            return path;
        }
        for (NodeId next : graph.successors(node)) {
            if (components.of(next) != component || parent.count(next)) continue;
            parent.emplace(next, node);
            queue.push_back(next);
        }
    }
    return {};
}

struct Culprit {
    NodeId frame;
    std::vector<NodeId> cycle; // frame .. frame
    bool throughOwnLocals;
    std::optional<EdgeLabel> firstLabel; // the cycle's first edge, labelled on the way
    // When the culprit is outside the standard library and a standard-library frame's own local
    // closes the cycle: that frame and its local, the mechanism.
    std::optional<NodeId> mechanism;
    std::string mechanismLocal;
};

// The frame whose own locals or cells lead back to itself; failing that, the innermost frame.
std::optional<Culprit> findCulprit(const ObjectGraph& graph, const Components& components,
                                   ComponentId component) {
    std::vector<NodeId> frames, harness;
    for (NodeId node : components.members(component)) {
        if (graph.isFrame(node)) (isHarnessFrame(graph.object(node)) ? harness : frames).push_back(node);
    }
    // A cycle whose only frames are leakgate's own is still the code under test's doing (it kept
    // a frame of the workload, say the one that applied its decorator): that frame is the culprit.
    if (frames.empty()) frames = std::move(harness);
    if (frames.empty()) return std::nullopt;
    if (frames.size() > 1) {
        std::vector<std::pair<int, NodeId>> byDepth;
        for (NodeId frame : frames)
            byDepth.emplace_back(frameDepth(graph.object(frame)), frame);
        std::stable_sort(byDepth.begin(), byDepth.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        for (size_t i = 0; i < frames.size(); ++i)
            frames[i] = byDepth[i].second;
    }
    // Whether the code of `frame` names the attribute that the cycle reads first after the
    // closing local (`self` -> `.exception_history`; through the instance's `__dict__` on 3.10):
    // the code that puts something there, where several frames hold the same `self`.
    auto namesFirstAttribute = [&](NodeId frame, const std::vector<NodeId>& cycle) {
        size_t at = 1;
        bool throughDict = false;
        EdgeLabel second;
        for (; at + 1 < cycle.size(); ++at) {
            second = labelEdge(graph.object(cycle[at]), graph.object(cycle[at + 1]));
            if (second.kind != "__dict__") break;
            throughDict = true;
        }
        if (at + 1 >= cycle.size()) return false;
        std::string attribute;
        if (second.kind == "attribute" && second.label.starts_with("."))
            attribute = second.label.substr(1);
        if (throughDict && second.kind == "item") attribute = second.name; // the __dict__'s key
        if (attribute.empty()) return false;
        OwnedRef code = python::frameCode(reinterpret_cast<PyFrameObject*>(graph.object(frame)));
        PyObject* names = code ? reinterpret_cast<PyCodeObject*>(code.get())->co_names : nullptr;
        if (!names || !PyTuple_Check(names)) return false;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
            const char* name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i));
            if (name && attribute == name) return true;
            if (!name) PyErr_Clear();
        }
        return false;
    };
    // The innermost frame among `candidates` whose own local or cell closes the cycle; among
    // several, the innermost whose code names the attribute the cycle goes through first.
    auto closedByOwnLocal = [&](const std::vector<NodeId>& candidates) -> std::optional<Culprit> {
        constexpr size_t kMoreToLookAt = 16; // frames looked at after the innermost closing one
        std::optional<Culprit> innermost;
        size_t lookedAt = 0;
        for (NodeId frame : candidates) { // innermost first
            if (innermost && ++lookedAt > kMoreToLookAt) break;
            for (NodeId next : graph.successors(frame)) {
                if (components.of(next) != component) continue;
                EdgeLabel label = labelEdge(graph.object(frame), graph.object(next));
                if (label.kind != "local" && label.kind != "cell" && label.kind != "f_locals") continue;
                auto cycle = pathWithin(graph, components, frame, next, frame);
                if (cycle.empty()) continue;
                Culprit found{frame, std::move(cycle), true, std::move(label)};
                if (namesFirstAttribute(frame, found.cycle)) return found;
                if (!innermost) innermost = std::move(found);
                break;
            }
        }
        return innermost;
    };
    // A frame of code outside the standard library that takes part in the cycle is the culprit:
    // a standard-library frame that closes it (contextlib's __exit__ keeping an exception) is the
    // mechanism, not the place to fix.
    std::vector<NodeId> outside, standard;
    for (NodeId frame : frames)
        (isStandardLibraryFrame(graph.object(frame)) ? standard : outside).push_back(frame);
    if (!outside.empty() && !standard.empty()) {
        if (auto culprit = closedByOwnLocal(outside)) return culprit;
        auto mechanism = closedByOwnLocal(standard);
        NodeId frame = outside.front();
        for (NodeId next : graph.successors(frame)) {
            if (components.of(next) != component) continue;
            auto cycle = pathWithin(graph, components, frame, next, frame);
            if (cycle.empty()) continue;
            Culprit culprit{frame, std::move(cycle), false, std::nullopt};
            if (mechanism) {
                culprit.mechanism = mechanism->frame;
                culprit.mechanismLocal = mechanism->firstLabel ? mechanism->firstLabel->label : "";
            }
            return culprit;
        }
    }
    if (auto culprit = closedByOwnLocal(frames)) return culprit;
    NodeId innermost = frames.front();
    for (NodeId next : graph.successors(innermost)) {
        if (components.of(next) != component) continue;
        auto cycle = pathWithin(graph, components, innermost, next, innermost);
        if (!cycle.empty()) return Culprit{innermost, std::move(cycle), false, std::nullopt};
    }
    return std::nullopt;
}

// The locals of the frames a cycle pins that hold payloads (a tensor, or a list, tuple or dict of
// them): what the user's code keeps, by name. Each memory goes to one local (the one that holds
// the most not yet named; a function's own variable before an argument that only passes it on),
// at most three, most bytes first. Walks the frames reachable from `culprit` in the garbage.
std::vector<PayloadHolder> payloadHolders(const ObjectGraph& garbage, NodeId culprit,
                                          const Payloads& payloads) {
    struct Candidate {
        PayloadHolder holder;
        std::map<std::uintptr_t, const Payload*> memories; // by Payload::key
        bool argument = false; // an argument of its function: passed in, held by the caller too
        bool direct = false;   // the local is the payload's object itself, not a container of them
    };
    auto payloadIn = [&](PyObject* value, Candidate& candidate) {
        auto add = [&](PyObject* object) {
            auto found = payloads.find(object);
            if (found != payloads.end())
                candidate.memories.emplace(memoryOf(found->second, object), &found->second);
        };
        add(value);
        if (PyList_Check(value) || PyTuple_Check(value)) {
            OwnedRef items = own(PySequence_Fast(value, ""));
            if (!items) {
                PyErr_Clear();
                return;
            }
            for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items.get()); ++i)
                add(PySequence_Fast_ITEMS(items.get())[i]);
        } else if (PyDict_Check(value)) {
            PyObject* key = nullptr; // Borrowed references
            PyObject* item = nullptr;
            Py_ssize_t position = 0;
            while (PyDict_Next(value, &position, &key, &item))
                add(item);
        }
    };
    std::vector<Candidate> candidates;
    auto readFrame = [&](NodeId node) {
        PyObject* frame = garbage.object(node);
        if (!PyFrame_Check(frame) || isHarnessFrame(frame)) return;
        OwnedRef locals = python::frameLocals(frame);
        OwnedRef items = locals ? own(PyMapping_Items(locals.get())) : OwnedRef();
        if (!items || !PyList_Check(items.get())) {
            PyErr_Clear();
            return;
        }
        OwnedRef code = python::frameCode(reinterpret_cast<PyFrameObject*>(frame));
        const auto* raw = reinterpret_cast<PyCodeObject*>(code.get());
        const int arguments = raw->co_argcount + raw->co_kwonlyargcount +
                              ((raw->co_flags & CO_VARARGS) ? 1 : 0) +
                              ((raw->co_flags & CO_VARKEYWORDS) ? 1 : 0);
        OwnedRef names = own(PyObject_GetAttrString(code.get(), "co_varnames"));
        if (!names) PyErr_Clear();
        const std::string function = frameInfo(frame).function;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.get()); ++i) {
            PyObject* pair = PyList_GET_ITEM(items.get(), i); // Borrowed reference
            Candidate candidate;
            payloadIn(PyTuple_GET_ITEM(pair, 1), candidate);
            if (candidate.memories.empty()) continue;
            candidate.direct = payloads.count(PyTuple_GET_ITEM(pair, 1)) > 0;
            PyObject* name = PyTuple_GET_ITEM(pair, 0); // Borrowed reference
            candidate.holder.local = python::textOf(name);
            candidate.holder.function = function;
            if (names && PyTuple_Check(names.get())) {
                for (Py_ssize_t a = 0;
                     a < std::min<Py_ssize_t>(arguments, PyTuple_GET_SIZE(names.get())); ++a)
                    if (PyUnicode_Compare(PyTuple_GET_ITEM(names.get(), a), name) == 0)
                        candidate.argument = true;
                PyErr_Clear();
            }
            candidates.push_back(std::move(candidate));
        }
    };
    readFrame(culprit);
    walkFrom(garbage, culprit, [&](NodeId, NodeId next) { readFrame(next); });
    std::vector<PayloadHolder> holders;
    std::unordered_set<std::uintptr_t> named;
    while (holders.size() < 3) {
        Candidate* best = nullptr;
        std::int64_t bestBytes = 0;
        for (Candidate& candidate : candidates) {
            std::int64_t bytes = 0;
            for (const auto& [key, payload] : candidate.memories)
                if (!named.count(key)) bytes += payload->bytes;
            auto rank = [](const Candidate& c) { return std::make_pair(!c.argument, c.direct); };
            const bool better = bytes > bestBytes || (bytes == bestBytes && bytes > 0 && best &&
                                                      rank(candidate) > rank(*best));
            if (better) {
                best = &candidate;
                bestBytes = bytes;
            }
        }
        if (!best) break;
        for (const auto& [key, payload] : best->memories)
            if (named.insert(key).second) best->holder.bytes[payload->kind] += payload->bytes;
        holders.push_back(std::move(best->holder));
        best->memories.clear();
    }
    return holders;
}

// "; it pins 3.0 GiB of device memory, the most in `weights` of `train_step` (2.0 GiB) and
// `activations` of `forward` (1.0 GiB)".
std::string describeHolders(const Finding& finding) {
    if (finding.payloadBytes.empty()) return "";
    std::vector<std::string> kinds;
    for (const auto& [kind, bytes] : finding.payloadBytes)
        kinds.push_back(fmt::format("{} of {} memory", report::humanBytes(bytes), kind));
    std::vector<std::string> names;
    for (const PayloadHolder& holder : finding.payloadHolders) {
        std::int64_t sum = 0;
        for (const auto& [kind, bytes] : holder.bytes)
            sum += bytes;
        names.push_back(
            fmt::format("`{}` of `{}` ({})", holder.local, holder.function, report::humanBytes(sum)));
    }
    return fmt::format("; it pins {}{}", fmt::join(kinds, " and "),
                       names.empty() ? "" : fmt::format(", the most in {}", fmt::join(names, ", ")));
}

std::string describeCycle(const Finding& finding, bool throughOwnLocals) {
    const FrameInfo& culprit = finding.frames.front();
    if (isHarnessFile(culprit.file)) {
        std::string through;
        for (const PathStep& step : finding.path)
            through += (through.empty() ? "" : " -> ") + step.label;
        return fmt::format("the code under test keeps a frame of leakgate's workload (`{}`) in a "
                           "reference cycle{}{}",
                           culprit.function, through.empty() ? "" : " through ", through);
    }
    std::string where =
        fmt::format("`{}` ({}:{})", culprit.function, baseName(culprit.file), culprit.line);
    if (!throughOwnLocals || finding.path.empty()) {
        return fmt::format("frame of {} sits in a reference cycle", where);
    }
    if (finding.path.size() == 1)
        return fmt::format("{} of {} holds its own frame", finding.path[0].label, where);
    std::vector<std::string> rest;
    for (size_t i = 1; i < finding.path.size(); ++i)
        rest.push_back(finding.path[i].label);
    return fmt::format("{} of {} reaches its own frame through {}", finding.path[0].label, where,
                       fmt::join(rest, " -> "));
}

} // namespace

std::vector<CycleShape> describeCycles(const ObjectGraph& garbage, const Components& components,
                                       size_t limit) {
    std::vector<ComponentId> cyclic;
    for (ComponentId component = 0; component < components.count(); ++component)
        if (components.isCyclic(garbage, component)) cyclic.push_back(component);
    return describeCyclesOf(garbage, components, cyclic, limit);
}

namespace {

// The cyclic components `only`, grouped into shapes (their bytes not yet known), each with its
// example and its footprint's sources.
struct ShapeGroups {
    std::map<std::string, CycleShape> shapes;
    std::map<std::string, ComponentId> examples;
    // The footprint's sources: one member of each component, as every member of a component
    // reaches all the others (a copy of every member took 4 bytes per node at a scan's peak).
    std::map<std::string, std::vector<NodeId>> sources;
};

// Whether every member of `component` is among `made` (the objects an import made).
bool madeBy(const ObjectGraph& garbage, const Components& components, ComponentId component,
            const base::PointerSet* made) {
    if (!made) return false;
    for (NodeId node : components.members(component))
        if (!made->contains(garbage.object(node))) return false;
    return true;
}

ShapeGroups groupShapes(const ObjectGraph& garbage, const Components& components,
                        std::span<const ComponentId> only,
                        const base::PointerSet* madeAtImport = nullptr) {
    // Grouped by the set of type objects first (no string per member: garbage of a million
    // objects is mostly cycles no frame closes), then by the names the report shows. A component
    // with functions in it is told apart by their qualified names too: two nested functions'
    // closure cycles are the same types ([cell, function, tuple]) but two fixes, and the one made
    // per call must not be shown by the example of one made once. Names, not code objects: code
    // that a DSL generates anew per call has one name.
    using Key = std::pair<std::vector<PyTypeObject*>, std::vector<PyObject*>>; // types, names
    std::map<Key, std::vector<ComponentId>> byTypes;
    std::vector<PyTypeObject*> types;
    std::vector<PyObject*> functions; // Borrowed: the functions' __qualname__ strings
    for (ComponentId component : only) {
        types.clear();
        functions.clear();
        for (NodeId node : components.members(component)) {
            PyObject* object = garbage.object(node);
            types.push_back(Py_TYPE(object));
            if (PyFunction_Check(object))
                functions.push_back(reinterpret_cast<PyFunctionObject*>(object)->func_qualname);
        }
        std::sort(types.begin(), types.end());
        types.erase(std::unique(types.begin(), types.end()), types.end());
        std::sort(functions.begin(), functions.end());
        functions.erase(std::unique(functions.begin(), functions.end()), functions.end());
        byTypes[{types, functions}].push_back(component);
    }
    ShapeGroups grouped;
    for (const auto& [typeSet, group] : byTypes) { // group: its components, the first the example
        std::vector<std::string> names;
        for (PyTypeObject* type : typeSet.first)
            names.push_back(type->tp_name);
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        std::string key = fmt::format("{}", fmt::join(names, ", "));
        const std::string types = key;
        std::vector<std::string> qualnames;
        for (PyObject* name : typeSet.second)
            qualnames.push_back(PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : "?");
        std::sort(qualnames.begin(), qualnames.end());
        if (!qualnames.empty()) key += fmt::format(" ({})", fmt::join(qualnames, ", "));
        CycleShape& shape = grouped.shapes[key];
        shape.types = types;
        shape.count += static_cast<std::int64_t>(group.size());
        grouped.examples.emplace(key, group.front());
        std::vector<NodeId>& nodes = grouped.sources[key];
        for (ComponentId component : group) {
            auto of = components.members(component);
            nodes.push_back(of.front());
            shape.objects += static_cast<std::int64_t>(of.size());
            if (madeBy(garbage, components, component, madeAtImport)) ++shape.atImport;
        }
    }
    return grouped;
}

// The shapes with their bytes (`bytes`, in the order of `grouped.shapes`), most first, cut to
// `limit`, each with the labelled cycle of its example.
std::vector<CycleShape> finishShapes(const ObjectGraph& garbage, const Components& components,
                                     const ShapeGroups& grouped, std::span<const std::int64_t> bytes,
                                     size_t limit, std::int64_t* shapeCount, std::int64_t* objectCount) {
    std::vector<CycleShape> ordered;
    std::vector<ComponentId> examples; // beside `ordered`
    size_t next = 0;
    for (const auto& [key, shape] : grouped.shapes) {
        ordered.push_back(shape);
        examples.push_back(grouped.examples.at(key));
        // What the shape's cycles would free with them, as for a frame cycle's finding.
        ordered.back().bytes = bytes[next++];
    }
    std::vector<size_t> order(ordered.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return ordered[a].bytes != ordered[b].bytes ? ordered[a].bytes > ordered[b].bytes
                                                    : ordered[a].count > ordered[b].count;
    });
    if (shapeCount) *shapeCount = static_cast<std::int64_t>(ordered.size());
    if (objectCount) {
        *objectCount = 0;
        for (const CycleShape& shape : ordered)
            *objectCount += shape.objects;
    }
    if (order.size() > limit) order.resize(limit);
    std::vector<CycleShape> kept;
    for (size_t index : order) {
        CycleShape& shape = kept.emplace_back(std::move(ordered[index]));
        const ComponentId component = examples[index];
        NodeId first = components.members(component)[0];
        shape.example = garbage.object(first);
        for (NodeId next : garbage.successors(first)) {
            if (components.of(next) != component) continue;
            auto cycle = pathWithin(garbage, components, first, next, first);
            if (cycle.empty()) continue;
            shape.cycle = labelPath(garbage, cycle);
            break;
        }
    }
    return kept;
}

} // namespace

std::vector<CycleShape> describeCyclesOf(const ObjectGraph& garbage, const Components& components,
                                         std::span<const ComponentId> only, size_t limit,
                                         std::int64_t* shapeCount, std::int64_t* objectCount) {
    const ShapeGroups grouped = groupShapes(garbage, components, only);
    std::vector<std::vector<NodeId>> sourceSets;
    for (const auto& [key, nodes] : grouped.sources)
        sourceSets.push_back(nodes);
    std::vector<std::int64_t> bytes;
    for (const Footprint& pinned : footprints(garbage, components, sourceSets))
        bytes.push_back(pinned.bytes);
    return finishShapes(garbage, components, grouped, bytes, limit, shapeCount, objectCount);
}

// The fix follows the edge that closes the cycle (or, for a retained frame, the edge that holds
// it): what to change is what that edge stands for.
std::string fixFor(const Finding& finding) {
    auto has = [&](std::initializer_list<std::string_view> kinds) {
        return std::any_of(finding.path.begin(), finding.path.end(), [&](const PathStep& step) {
            return std::find(kinds.begin(), kinds.end(), step.kind) != kinds.end();
        });
    };
    // The closing local holds a task or future whose exception's traceback holds the frame.
    const bool keepsTask = !finding.path.empty() &&
                           (finding.path[0].kind == "local" || finding.path[0].kind == "cell") &&
                           (finding.path[0].to.find("Task` object") != std::string::npos ||
                            finding.path[0].to.find("Future` object") != std::string::npos);
    if (keepsTask && has({"__traceback__", "tb_frame", "tb_next"})) {
        return "A task or future kept in a local of a frame that its own exception's traceback holds: "
               "once it is done, drop the reference (`del` it, or set it to None, in a `finally`), or "
               "keep its result, or a weak reference, instead of the task.";
    }
    if (has({"__traceback__", "tb_frame", "tb_next"})) {
        return "Do not keep an exception or traceback past its handler: keep "
               "traceback.TracebackException or formatted text instead, or `del` the variable in a "
               "`finally`.";
    }
    if (has({"f_locals"})) {
        return "Do not keep a frame's f_locals: a dict of every local of that frame. Copy the values "
               "you need out of it (`{name: f_locals[name] for name in needed}`) and drop the dict.";
    }
    if (has({"gi_frame", "cr_frame", "ag_frame"})) {
        return "A suspended generator or coroutine keeps its frame: close it (`.close()`) or run it to "
               "its end once it is no longer needed, and keep no reference to it from its own locals.";
    }
    if (finding.kind == "retained-frame") {
        return "Do not store frame objects on long-lived objects: capture the source location "
               "(file, line, function) eagerly and store that instead.";
    }
    if (has({"cell"})) {
        return "Do not capture the frame in a closure: read what the nested function needs (file, "
               "line, names) before defining it and capture those values, or `del` the variable once "
               "the nested function no longer needs it.";
    }
    return "Capture the source location (file, line, function) eagerly and keep no frame object: read "
           "the fields of sys._getframe(1) in one expression, or `del` the frame variable in a "
           "`finally`.";
}

namespace {

// What finds the lines that bind a local: dis, on every Python from 3.10 (3.11 and later give each
// instruction its own position; 3.13 combines two stores, or a store and a load, in one).
constexpr const char* kBindingLines = R"(
def binding_lines(code, name):
    import dis
    parameters = code.co_argcount + code.co_kwonlyargcount
    parameters += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    if name in code.co_varnames[:parameters]:
        return []  # bound by the call, not by a statement
    starts = dict(dis.findlinestarts(code))
    lines, line = set(), None
    for instruction in dis.get_instructions(code):
        if starts.get(instruction.offset) is not None:
            line = starts[instruction.offset]
        op, value = instruction.opname, instruction.argval
        if op in ("STORE_FAST", "STORE_DEREF"):
            names = (value,)
        elif op == "STORE_FAST_STORE_FAST":
            names = value if isinstance(value, tuple) else (value,)
        elif op == "STORE_FAST_LOAD_FAST":
            names = value[:1] if isinstance(value, tuple) else (value,)
        else:
            continue
        if name in names:
            positions = getattr(instruction, "positions", None)
            at = positions.lineno if positions is not None and positions.lineno else line
            if at:
                lines.add(at)
    return sorted(lines)


def cell_owner(globals_, code, name):
    """The code object that binds the free variable `name` of the nested `code`: the function whose
    co_consts holds `code` and whose co_cellvars names `name`, found from the module's functions and
    classes (read statically: no attribute code runs). None when not found."""
    import types
    if name not in code.co_freevars:
        return None
    roots, seen = [], set()
    for value in list(globals_.values()):
        candidates = [value]
        if isinstance(value, type):
            candidates = list(vars(value).values())
        for candidate in candidates:
            if isinstance(candidate, (staticmethod, classmethod)):
                candidate = candidate.__func__
            elif isinstance(candidate, property):
                candidates += [f for f in (candidate.fget, candidate.fset, candidate.fdel) if f]
                continue
            for _ in range(8):  # through decorators' __wrapped__ (functools.wraps)
                if type(candidate) is not types.FunctionType:
                    break
                roots.append(candidate.__code__)
                candidate = candidate.__dict__.get("__wrapped__")
    while roots:
        outer = roots.pop()
        if id(outer) in seen:
            continue
        seen.add(id(outer))
        for const in outer.co_consts:
            if const is code:
                return outer if name in outer.co_cellvars else None
            if type(const) is type(code):
                roots.append(const)
    return None
)";

// The one line of `code` whose statement binds the local `name`; nothing when no statement does
// (a parameter), when several do (which one bound the value kept is not known here), or when
// dis could not say. Leaves no Python error set.
// The helpers above, in a namespace of their own: call `function` with `args`, then break the
// cycle between the helpers and their globals (gc is off in the workers).
OwnedRef callHelper(const char* function, PyObject* args) {
    OwnedRef globals = own(PyDict_New());
    if (!globals || !args) return {};
    PyDict_SetItemString(globals.get(), "__builtins__", PyEval_GetBuiltins());
    OwnedRef ran = own(PyRun_String(kBindingLines, Py_file_input, globals.get(), globals.get()));
    PyObject* helper = ran ? PyDict_GetItemString(globals.get(), function) : nullptr;
    OwnedRef out = helper ? own(PyObject_CallObject(helper, args)) : OwnedRef{};
    PyDict_Clear(globals.get());
    return out;
}

std::optional<int> bindingLine(PyObject* code, const std::string& name) {
    OwnedRef args = own(Py_BuildValue("(Os)", code, name.c_str()));
    OwnedRef lines = callHelper("binding_lines", args.get());
    std::optional<int> line;
    if (lines && PyList_Check(lines.get()) && PyList_GET_SIZE(lines.get()) == 1)
        line = static_cast<int>(PyLong_AsLong(PyList_GET_ITEM(lines.get(), 0)));
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return std::nullopt;
    }
    return line;
}

// Where the closure cell `name` of `frame` (a free variable of its code) is bound: in the enclosing
// function, which owns the variable. Its name, file and the one line that binds it; nothing when
// the enclosing code is not found from the frame's globals or several statements bind it.
std::optional<FrameInfo> cellOwnerBinding(PyObject* frame, PyObject* code, const std::string& name) {
    OwnedRef globals = own(PyObject_GetAttrString(frame, "f_globals"));
    OwnedRef args =
        globals ? own(Py_BuildValue("(OOs)", globals.get(), code, name.c_str())) : OwnedRef{};
    OwnedRef outer = callHelper("cell_owner", args.get());
    std::optional<FrameInfo> where;
    if (outer && PyCode_Check(outer.get())) {
        if (std::optional<int> line = bindingLine(outer.get(), name)) {
            auto* owner = reinterpret_cast<PyCodeObject*>(outer.get());
            const char* function = PyUnicode_AsUTF8(python::codeQualifiedNameField(owner));
            const char* file = PyUnicode_AsUTF8(python::codeFilename(owner));
            if (function && file) where = FrameInfo{function, file, *line};
        }
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return where;
}

} // namespace

FrameCycles explainGarbage(std::span<PyObject* const> garbage, const Payloads* payloads) {
    ObjectGraph graph = ObjectGraph::buildOver(garbage);
    Components components = Components::find(graph);
    return explainFrameCycles(graph, components, payloads);
}

bool onlyImportFrames(PyObject* frame) {
    // Top (the frame) to bottom (the outermost), then judged from the bottom up.
    struct Kind {
        bool machinery, function;
    };
    std::vector<Kind> chain;
    OwnedRef at = own(Py_NewRef(frame));
    while (at && PyFrame_Check(at.get()) && chain.size() < 100000) {
        PyObject* current = at.get();
        OwnedRef code = python::frameCode(reinterpret_cast<PyFrameObject*>(current));
        const bool machinery = isImportMachineryFrame(current);
        const bool optimized =
            (reinterpret_cast<PyCodeObject*>(code.get())->co_flags & CO_OPTIMIZED) != 0;
        chain.push_back({machinery, optimized && !machinery && !isHarnessFrame(current)});
        at = python::frameBack(reinterpret_cast<PyFrameObject*>(current));
    }
    bool importBelow = false;
    for (auto kind = chain.rbegin(); kind != chain.rend(); ++kind) {
        if (kind->function && !importBelow) return false;
        importBelow = importBelow || kind->machinery;
    }
    return true;
}

FrameCycles explainFrameCycles(const ObjectGraph& garbage, const Components& components,
                               const Payloads* payloads, const base::PointerSet* madeAtImport) {
    struct Group {
        Finding finding;
        bool throughOwnLocals = false;
        // A standard-library frame that closes the cycle of a culprit outside it:
        // "`ExitStack.__exit__` (standard library, contextlib.py:604)", and its closing local.
        std::string mechanism;
        std::string mechanismLocal;
        // The culprit is a @contextmanager generator closed by contextlib's __exit__: it yields
        // while it handles an exception (3.12 and later keep its frame in the traceback).
        bool contextManagerGenerator = false;
        // The statement that binds the closing local, when one alone does: the fix site. For a
        // closure cell, it is the enclosing function's (`cellOwner`), which owns the variable.
        std::optional<FrameInfo> binding;
        bool cellOwner = false;
        // One member of each of its components: the footprint's sources (each reaches the rest
        // of its component).
        std::vector<NodeId> members;
        int occurrences = 0;
        NodeId shown = 0; // the culprit frame of the instance the report shows
        // The first instances, (a member, the culprit frame) each: the one that pins the most is
        // the one shown (compared among the first kComparedInstances only: one walk of the
        // garbage for every 8).
        std::vector<std::pair<NodeId, NodeId>> instances;
        // Every instance was made while a module was imported and pins only its frames.
        bool atImport = true;
    };
    constexpr size_t kComparedInstances = 32;
    std::map<std::pair<PyObject*, std::string>, Group> groups; // (culprit code, closing locals)
    std::vector<ComponentId> others;                           // cycles no frame closes
    for (ComponentId component = 0; component < components.count(); ++component) {
        if (!components.isCyclic(garbage, component)) continue;
        auto culprit = findCulprit(garbage, components, component);
        if (!culprit) {
            others.push_back(component);
            continue;
        }
        PyObject* frame = garbage.object(culprit->frame);
        Finding finding;
        finding.kind = "frame-cycle";
        finding.path = foldPath(labelPath(garbage, culprit->cycle, std::move(culprit->firstLabel)));
        finding.locals = namesOnPath(finding.path);
        OwnedRef code = python::frameCode(reinterpret_cast<PyFrameObject*>(frame));
        auto key = std::make_pair(code.get(), fmt::format("{}", fmt::join(finding.locals, ",")));
        Group& group = groups[key];
        if (group.occurrences++ == 0) {
            // The first cycle of a group is the one the report shows: only it needs its chain.
            group.shown = culprit->frame;
            setPinnedFrames(finding, garbage, culprit->frame);
            if (!finding.path.empty() && finding.path.front().kind == "local" &&
                !finding.locals.empty()) {
                if (std::optional<int> line = bindingLine(code.get(), finding.locals.front())) {
                    FrameInfo where = frameInfo(frame);
                    where.line = *line;
                    group.binding = where;
                }
            } else if (!finding.path.empty() && finding.path.front().kind == "cell" &&
                       !finding.locals.empty()) {
                group.binding = cellOwnerBinding(frame, code.get(), finding.locals.front());
                group.cellOwner = group.binding.has_value();
            }
            group.finding = std::move(finding);
            group.throughOwnLocals = culprit->throughOwnLocals;
            if (culprit->mechanism) {
                FrameInfo where = frameInfo(garbage.object(*culprit->mechanism));
                group.mechanism = fmt::format("`{}` (standard library, {}:{})", where.function,
                                              baseName(where.file), where.line);
                group.mechanismLocal = culprit->mechanismLocal;
                const int flags = reinterpret_cast<PyCodeObject*>(code.get())->co_flags;
                group.contextManagerGenerator =
                    (flags & (CO_GENERATOR | CO_ASYNC_GENERATOR)) != 0 &&
                    (where.function == "_GeneratorContextManager.__exit__" ||
                     where.function == "_AsyncGeneratorContextManager.__aexit__" ||
                     where.function == "__exit__" || where.function == "__aexit__") &&
                    baseName(where.file) == "contextlib.py";
            }
        }
        group.atImport = group.atImport && madeBy(garbage, components, component, madeAtImport) &&
                         onlyImportFrames(frame);
        group.members.push_back(components.members(component).front());
        if (group.instances.size() < kComparedInstances)
            group.instances.emplace_back(components.members(component).front(), culprit->frame);
    }
    FrameCycles result;
    // Every footprint of the explanation in one walk (their objects overlap: the frames reach
    // what their locals hold, cycles of other shapes among it): all the frame cycles, each
    // group's (one group pins exactly what all of them pin), each shape's of the other cycles.
    std::vector<std::vector<NodeId>> sourceSets(1);
    for (auto& [key, group] : groups) {
        sourceSets.front().insert(sourceSets.front().end(), group.members.begin(), group.members.end());
        if (groups.size() > 1) sourceSets.push_back(std::move(group.members));
    }
    const ShapeGroups shapes = groupShapes(garbage, components, others, madeAtImport);
    const size_t firstShape = sourceSets.size();
    for (const auto& [key, nodes] : shapes.sources)
        sourceSets.push_back(nodes);
    // What the objects own beyond sys.getsizeof (tensors' storages, arrays' buffers), beside the
    // sentinels' payloads the caller gave.
    const Payloads owned = findPayloads(garbage, payloads);
    std::vector<Footprint> pinnedBy =
        footprints(garbage, components, sourceSets, owned.empty() ? nullptr : &owned);
    result.total = pinnedBy.front();
    // Where a group has several instances, the one shown is the one that pins the most (a training
    // step's frames hold 3 GiB where an import's hold a few KiB): its chain and its payload holders.
    std::vector<std::vector<NodeId>> instanceSets;
    for (auto& [key, group] : groups)
        if (group.instances.size() > 1)
            for (const auto& [member, frame] : group.instances)
                instanceSets.push_back({member});
    if (!instanceSets.empty()) {
        std::vector<Footprint> each =
            footprints(garbage, components, instanceSets, owned.empty() ? nullptr : &owned);
        size_t next = 0;
        for (auto& [key, group] : groups) {
            if (group.instances.size() <= 1) continue;
            size_t best = 0;
            for (size_t i = 1; i < group.instances.size(); ++i)
                if (pinnedInAll(each[next + i]) > pinnedInAll(each[next + best])) best = i;
            next += group.instances.size();
            if (best == 0) continue;
            group.shown = group.instances[best].second;
            group.finding.frames.clear();
            group.finding.harnessFrames = 0;
            setPinnedFrames(group.finding, garbage, group.shown);
        }
    }
    std::vector<Finding>& findings = result.findings;
    size_t nextGroup = 1;
    for (auto& [key, group] : groups) {
        Finding& finding = group.finding;
        const Footprint& pinned = groups.size() == 1 ? result.total : pinnedBy[nextGroup++];
        finding.objects = pinned.objects;
        finding.bytes = pinned.bytes;
        finding.payloadBytes = pinned.payloadBytes;
        finding.summary = describeCycle(finding, group.throughOwnLocals);
        if (!owned.empty()) finding.payloadHolders = payloadHolders(garbage, group.shown, owned);
        if (!group.mechanism.empty()) {
            finding.summary +=
                fmt::format(", closed by {}{}", group.mechanism,
                            group.mechanismLocal.empty() ? "" : " with its " + group.mechanismLocal);
        }
        if (group.occurrences > 1) finding.summary += fmt::format(" ({} instances)", group.occurrences);
        finding.summary += describeHolders(finding); // what it pins that sys.getsizeof does not see
        if (!group.atImport) result.instances += group.occurrences;
        finding.fix = fixFor(finding);
        if (group.contextManagerGenerator) {
            finding.fix = fmt::format(
                "{} is the mechanism, not the fix site: `{}` is a context-manager generator that "
                "yields while it handles an exception, so what the `with` body raises is thrown in "
                "with that exception as its context, and the traceback keeps the generator's frame. "
                "Yield after the `except` clause (note the case in a variable), not inside it.",
                group.mechanism, finding.frames.front().function);
        } else if (!group.mechanism.empty()) {
            finding.fix =
                fmt::format("{} is the mechanism, not the fix site: change what `{}` does with "
                            "it. {}",
                            group.mechanism, finding.frames.front().function, finding.fix);
        }
        if (group.binding && group.cellOwner) {
            // The variable is the enclosing function's: its binding is what to change.
            finding.fixSite = group.binding;
            finding.fix =
                fmt::format("`{}` belongs to `{}`, which binds it at line {} ({}): fix it there, not in "
                            "`{}`, whose frame the cell's contents keep. {}",
                            finding.locals.front(), group.binding->function, group.binding->line,
                            baseName(group.binding->file), finding.frames.front().function, finding.fix);
        } else if (group.binding) {
            // The statement to change is the one that binds the local, not the `return`.
            finding.fixSite = group.binding;
            finding.fix =
                fmt::format("Line {} binds `{}` ({}). {}", group.binding->line, finding.locals.front(),
                            baseName(group.binding->file), finding.fix);
        }
        (group.atImport ? result.atImport : findings).push_back(std::move(finding));
    }
    // Most memory first, what sys.getsizeof sees and the payloads it does not (device, torch).
    std::stable_sort(findings.begin(), findings.end(),
                     [](const Finding& a, const Finding& b) { return pinnedInAll(a) > pinnedInAll(b); });
    if (!others.empty()) {
        std::vector<std::int64_t> bytes;
        for (size_t set = firstShape; set < pinnedBy.size(); ++set) {
            // What its cycles pin in all: their objects and what those own (a NumPy array's data).
            bytes.push_back(pinnedInAll(pinnedBy[set]));
        }
        for (const CycleShape& shape : finishShapes(garbage, components, shapes, bytes, 20,
                                                    &result.otherShapes, &result.otherObjects)) {
            std::string cycle;
            for (const PathStep& step : shape.cycle)
                cycle += fmt::format(" --{}--> {}", step.label, step.to);
            result.otherCycles.push_back({shape.count, shape.types, cycle, shape.bytes, shape.atImport});
            result.otherExamples.push_back(shape.example);
        }
    }
    return result;
}

} // namespace leakgate::scanner
