// The held-growth probe (check `held-growth`, scan): what the program's work left in containers a
// library holds. A cache that never evicts, a registry that keeps every object it saw, a list a
// module appends to on every call: nothing there is garbage, so no collection and no cycle shows
// it, and under gc.disable() or not it grows for as long as the program runs.
//
// A holder is a container reachable in one or two steps from a module other than __main__: a
// module-level dict, list, set or deque, a functools.lru_cache function (its entries), or such a
// container on a class the module defines or on an object it holds (Warp's `Module.failed_builds`,
// mashumaro's `CodeBuilder.get_field_default`). Its length is read at marks; what it gained while
// the program's own code ran counts, what it gained while a module was being imported does not
// (an import fills registries by design). A mark is taken when a module starts loading (the
// "import" audit event) and when the outermost import statement (builtins.__import__, or
// importlib.import_module) that loaded it returns. A load that no such statement started (a C
// extension's own import) closes the program's interval at its start and opens the next only at
// the next import statement: its content is never counted as work, at the cost of the work done
// until then.
#include "probes/probe.h"

#include "probes/import_watch.h"

#include "lib/python/collector.h"
#include "lib/python/compat.h"
#include "lib/python/text.h"
#include "lib/report/units.h"
#include "lib/scanner/explain.h"
#include "lib/scanner/payloads.h"

#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace leakgate::probes {
namespace {

namespace py = pybind11;
using nlohmann::json;
using python::own;
using python::OwnedRef;

// Holders that gained fewer entries than this are not listed (a typing cache, a warnings registry).
constexpr std::int64_t kListedEntries = 10;
constexpr size_t kListedHolders = 5;

// Modules whose containers are the interpreter's or leakgate's, not a library's.
bool ignoredModule(std::string_view name) {
    for (std::string_view exact : {"sys", "builtins", "__main__", "gc", "_imp", "zipimport",
                                   "tracemalloc", "atexit", "_leakgate", "leakgate", "__mp_main__"})
        if (name == exact) return true;
    for (std::string_view prefix : {"importlib", "_frozen_importlib", "leakgate.", "_leakgate."})
        if (name.starts_with(prefix)) return true;
    return false;
}

// A namespace's entries whose names are strings not starting with "__" (__dict__,
// __warningregistry__, __all__), as borrowed pairs read before any is visited.
std::vector<std::pair<PyObject*, PyObject*>> publicEntries(PyObject* dict) {
    std::vector<std::pair<PyObject*, PyObject*>> entries;
    PyObject *key, *value;
    Py_ssize_t position = 0;
    while (PyDict_Next(dict, &position, &key, &value)) {
        if (!PyUnicode_Check(key)) continue;
        if (PyUnicode_GET_LENGTH(key) >= 2 && PyUnicode_READ_CHAR(key, 0) == '_' &&
            PyUnicode_READ_CHAR(key, 1) == '_')
            continue;
        entries.emplace_back(key, value);
    }
    return entries;
}

struct Holder {
    std::int64_t length = 0; // entries at the mark
    bool cache = false;      // an lru_cache function: `length` is its currsize
    std::string
        name; // only when named: "mashumaro.core.meta.code.builder.CodeBuilder.get_field_default"
    size_t moduleLength = 0; // the length of the module part of `name` (the longest names it)
};
// By the container (or lru_cache function) object. Borrowed: a holder is compared by address, and
// no reference is kept that could keep a dropped container alive.
using Mark = std::unordered_map<PyObject*, Holder>;

// Reads every holder's length, and its name when asked (names are built only for the report: a
// mark is taken at every import that loads a module, and costs a walk of the modules' namespaces
// in C, with no attribute lookup that could run the program's code).
class Marker {
  public:
    Marker();

    Mark take(bool named = false) const {
        Mark mark;
        PyObject* modules = PyImport_GetModuleDict(); // Borrowed reference
        OwnedRef items = own(PyDict_Items(modules));  // a copy: the walk may not change the dict
        if (!items) throw py::error_already_set();
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.get()); ++i) {
            PyObject* item = PyList_GET_ITEM(items.get(), i);
            PyObject* moduleName = PyTuple_GET_ITEM(item, 0);
            PyObject* module = PyTuple_GET_ITEM(item, 1);
            if (!PyModule_Check(module) || !PyUnicode_Check(moduleName)) continue;
            const char* name = PyUnicode_AsUTF8(moduleName);
            if (!name) {
                PyErr_Clear();
                continue;
            }
            if (ignoredModule(name)) continue;
            Walk walk{mark, named, moduleName, named ? std::string(name) : std::string(),
                      std::strlen(name)};
            walk.namespaceOf(PyModule_GetDict(module), walk.module, 0);
        }
        return mark;
    }

  private:
    struct Walk {
        Mark& mark;
        bool named;
        PyObject* moduleName; // Borrowed: sys.modules' key
        std::string module;   // when named
        size_t moduleLength;

        void namespaceOf(PyObject* dict, const std::string& prefix, int depth) {
            for (auto [attribute, member] : publicEntries(dict))
                visitMember(prefix, attribute, member, depth);
        }
        // `member`, named `prefix.attribute` when names are asked for.
        void visitMember(const std::string& prefix, PyObject* attribute, PyObject* member, int depth) {
            std::string name;
            if (named) {
                const char* text = PyUnicode_AsUTF8(attribute);
                if (!text) {
                    PyErr_Clear();
                    return;
                }
                name = prefix + "." + text;
            }
            visit(member, name, depth);
        }

        void visit(PyObject* value, const std::string& name, int depth);
        void record(PyObject* container, const std::string& name, Py_ssize_t length, bool cache) {
            if (length < 0) {
                PyErr_Clear();
                return;
            }
            auto [found, added] = mark.try_emplace(container, Holder{length, cache, name, moduleLength});
            // One container reached from several modules (a package re-exports it): named by the
            // one that defines it, the longest module name.
            if (!added && named && moduleLength > found->second.moduleLength)
                found->second = {length, cache, name, moduleLength};
        }
    };

    static std::int64_t cacheSize(PyObject* function) {
        OwnedRef info = own(PyObject_CallMethod(function, "cache_info", nullptr));
        if (!info) {
            PyErr_Clear();
            return 0;
        }
        OwnedRef size = own(PyObject_GetAttrString(info.get(), "currsize"));
        if (!size) {
            PyErr_Clear();
            return 0;
        }
        return PyLong_AsLongLong(size.get());
    }
};

PyTypeObject* g_dequeType = nullptr; // Borrowed: collections keeps it
PyTypeObject* g_lruType = nullptr;   // Borrowed: functools keeps it

Marker::Marker() {
    g_dequeType =
        reinterpret_cast<PyTypeObject*>(py::module_::import("collections").attr("deque").ptr());
    py::object cached =
        py::module_::import("functools").attr("lru_cache")(py::none())(py::cpp_function([] {}));
    g_lruType = Py_TYPE(cached.ptr());
}

void Marker::Walk::visit(PyObject* value, const std::string& name, int depth) {
    if (PyModule_Check(value)) return;
    if (PyDict_Check(value) || PyList_Check(value) || PySet_Check(value) ||
        (g_dequeType && PyObject_TypeCheck(value, g_dequeType))) {
        record(value, name, PyObject_Size(value), false);
        return;
    }
    if (Py_TYPE(value) == g_lruType) {
        record(value, name, cacheSize(value), true);
        return;
    }
    if (depth > 0) return;
    if (PyType_Check(value)) {
        // A class the module defines (its own `__module__`, read from its dict: a metaclass's
        // __getattr__ is not called): its attributes (a class-level registry, an lru_cache
        // method, a classmethod or staticmethod around one).
        PyObject* classDict = reinterpret_cast<PyTypeObject*>(value)->tp_dict; // Borrowed reference
        if (!classDict || !(reinterpret_cast<PyTypeObject*>(value)->tp_flags & Py_TPFLAGS_HEAPTYPE))
            return;
        PyObject* owner = PyDict_GetItemString(classDict, "__module__"); // Borrowed reference
        if (!owner || !PyUnicode_Check(owner) || PyUnicode_Compare(owner, moduleName) != 0) {
            PyErr_Clear();
            return;
        }
        for (auto [key, attribute] : publicEntries(classDict)) {
            PyObject* inner = attribute;
            if (Py_IS_TYPE(attribute, &PyClassMethod_Type) ||
                Py_IS_TYPE(attribute, &PyStaticMethod_Type)) {
                OwnedRef function = own(PyObject_GetAttrString(attribute, "__func__"));
                if (!function) {
                    PyErr_Clear();
                    continue;
                }
                inner = function.get(); // the classmethod keeps it alive
            }
            visitMember(name, key, inner, depth + 1);
        }
        return;
    }
    // An object the module holds (a runtime, a registry object) whose class is written in Python
    // and looks attributes up the default way: the containers in its instance dictionary.
    PyTypeObject* type = Py_TYPE(value);
    if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) || type->tp_getattro != PyObject_GenericGetAttr) return;
    if (PyCallable_Check(value) || PyType_Check(value)) return;
    if (type->tp_dictoffset == 0) return; // no instance dictionary (__slots__)
    OwnedRef instanceDict = own(PyObject_GenericGetDict(value, nullptr));
    if (!instanceDict) {
        PyErr_Clear();
        return;
    }
    if (PyDict_Check(instanceDict.get())) namespaceOf(instanceDict.get(), name, depth + 1);
}

// The entries of an lru_cache function: the dict its C implementation keeps (the first dict among
// its referents, found by its traverse, as the collector finds it).
PyObject* cacheDict(PyObject* function) {
    PyObject* found = nullptr;
    traverseproc traverse = Py_TYPE(function)->tp_traverse;
    if (!traverse) return nullptr;
    traverse(
        function,
        [](PyObject* referent, void* out) -> int {
            auto* slot = static_cast<PyObject**>(out);
            if (!*slot && PyDict_CheckExact(referent)) *slot = referent;
            return 0;
        },
        &found);
    return found;
}

struct Growth {
    PyObject* container; // Borrowed: alive at the read that uses it (a module holds it)
    Holder holder;
    std::int64_t entries = 0; // gained while the program's own code ran
    std::int64_t bytes = 0;
    std::map<std::string, std::int64_t> payloadBytes;
};

class HeldGrowthProbe final : public Probe, ImportListener {
  public:
    explicit HeldGrowthProbe(HeldLimits limits) : limits_(limits) {}
    ~HeldGrowthProbe() override { unwatchImports(this); }
    std::string_view name() const override { return "held-growth"; }

    void before() override {
        marker_.emplace();
        baseline_ = marker_->take();
        gained_.clear();
        lost_.clear();
        watchImports(this);
    }

    void afterReturn(WorkloadResult& result) override {
        const bool inImport = importing();
        unwatchImports(this);
        if (!marker_) return;
        if (!inImport) close(marker_->take());
        (void)result;
    }

    void afterCollection(WorkloadResult& result) override {
        if (!marker_) return;
        if (!lost_.empty()) {
            // A mark that could not be taken leaves an interval unread: no verdict on it.
            result.checks.push_back(
                {"held-growth", Status::kError,
                 fmt::format("a mark around an import could not be taken ({}): what the "
                             "program's work added to library-held containers is not known",
                             lost_),
                 std::nullopt});
            marker_.reset();
            gained_.clear();
            return;
        }
        std::vector<Growth> grown;
        Mark now = marker_->take(true);
        for (auto& [container, entries] : gained_) {
            auto found = now.find(container);
            if (found == now.end() || entries < kListedEntries) continue; // gone since, or small
            grown.push_back({container, found->second, entries, 0, {}});
        }
        std::sort(grown.begin(), grown.end(),
                  [](const Growth& a, const Growth& b) { return a.entries > b.entries; });
        if (grown.size() > kListedHolders) grown.resize(kListedHolders);
        if (!grown.empty()) measureBytes(grown);
        judge(grown, result);
        marker_.reset();
        gained_.clear();
    }

    // A module starts loading: the program's interval ends (a load no statement started ends it
    // too, and the next begins only when an import statement returns).
    void importStarts(bool) override {
        try {
            close(marker_->take());
        } catch (py::error_already_set& error) {
            lost_ = error.what(); // the check says so: what the work added is not known
        }
    }
    void importEnds() override {
        try {
            baseline_ = marker_->take();
        } catch (py::error_already_set& error) {
            lost_ = error.what();
        }
    }

  private:
    // The program's interval ends at `now`: what each holder gained since the interval began.
    void close(const Mark& now) {
        for (const auto& [container, holder] : now) {
            auto before = baseline_.find(container);
            // A container first seen in the interval was made by the program's code (an import
            // would have closed the interval): all of it is new.
            std::int64_t was = before != baseline_.end() ? before->second.length : 0;
            if (holder.length > was) gained_[container] += holder.length - was;
        }
        baseline_ = now;
    }

    // The bytes only the gained entries keep: their footprint in the heap, leaving out whatever the
    // rest of the heap reaches without passing through the holder.
    void measureBytes(std::vector<Growth>& grown) {
        py::list objects = python::collector::objects();
        HeapGraph heap = heapGraph(objects);
        const scanner::ObjectGraph& graph = heap.graph;
        scanner::Payloads payloads = scanner::findPayloads(graph, nullptr);
        for (Growth& growth : grown) {
            PyObject* container = growth.holder.cache ? cacheDict(growth.container) : growth.container;
            if (!container) continue;
            std::vector<PyObject*> entries = newestEntries(container, growth.entries);
            std::vector<scanner::NodeId> sources;
            for (PyObject* entry : entries) {
                if (auto node = graph.find(entry)) {
                    sources.push_back(*node);
                } else {
                    // Untracked (a string, a number, a NumPy array): its own size and what it owns.
                    growth.bytes += scanner::getsizeof(entry);
                    if (auto payload = scanner::ownedMemory(entry)) {
                        growth.payloadBytes[payload->kind] += payload->bytes;
                        if (payload->inSizeof) growth.bytes -= payload->bytes;
                    }
                }
            }
            std::vector<bool> rest = reachedAvoiding(heap, {container, growth.container});
            for (scanner::NodeId source : sources)
                rest[source] = false;
            scanner::Footprint print = scanner::footprint(graph, sources, &rest, &payloads);
            growth.bytes += print.bytes;
            for (const auto& [kind, bytes] : print.payloadBytes)
                growth.payloadBytes[kind] += bytes;
        }
    }

    // The last `count` entries of an ordered container (keys and values), or all of a set's.
    static std::vector<PyObject*> newestEntries(PyObject* container, std::int64_t count) {
        std::vector<PyObject*> entries; // Borrowed: the container keeps them
        const Py_ssize_t length = PyObject_Size(container);
        if (length < 0) {
            PyErr_Clear();
            return entries;
        }
        const Py_ssize_t skip = std::max<Py_ssize_t>(0, length - static_cast<Py_ssize_t>(count));
        if (PyDict_Check(container)) {
            PyObject *key, *value;
            Py_ssize_t position = 0, index = 0;
            while (PyDict_Next(container, &position, &key, &value)) {
                if (index++ < skip) continue;
                entries.push_back(key);
                entries.push_back(value);
            }
        } else if (PyList_Check(container)) {
            for (Py_ssize_t i = skip; i < PyList_GET_SIZE(container); ++i)
                entries.push_back(PyList_GET_ITEM(container, i));
        } else if (PyAnySet_Check(container)) {
            // Through its iterator (C: no code of the program runs); the set keeps its elements.
            OwnedRef iterator = own(PyObject_GetIter(container));
            while (iterator) {
                OwnedRef element = own(PyIter_Next(iterator.get()));
                if (!element) break;
                entries.push_back(element.get());
            }
            PyErr_Clear();
        } else {
            // A deque: its items through its iterator (no program code runs for a deque).
            OwnedRef items = own(PySequence_List(container));
            if (!items) {
                PyErr_Clear();
                return entries;
            }
            for (Py_ssize_t i = skip; i < PyList_GET_SIZE(items.get()); ++i)
                entries.push_back(PyList_GET_ITEM(items.get(), i)); // the deque keeps them too
        }
        return entries;
    }

    // Every node the heap's roots reach without entering `avoided` (the holder).
    static std::vector<bool> reachedAvoiding(const HeapGraph& heap,
                                             std::initializer_list<PyObject*> avoided) {
        const scanner::ObjectGraph& graph = heap.graph;
        std::vector<bool> reached(graph.size(), false);
        for (PyObject* object : avoided)
            if (auto node = graph.find(object)) reached[*node] = true; // marked: never entered
        std::vector<scanner::NodeId> stack;
        for (scanner::NodeId node = 0; node < graph.size(); ++node) {
            if (heap.external[node] > 0 && !reached[node]) {
                reached[node] = true;
                stack.push_back(node);
            }
        }
        while (!stack.empty()) {
            scanner::NodeId node = stack.back();
            stack.pop_back();
            for (scanner::NodeId next : graph.successors(node)) {
                if (reached[next]) continue;
                reached[next] = true;
                stack.push_back(next);
            }
        }
        for (PyObject* object : avoided)
            if (auto node = graph.find(object)) reached[*node] = true;
        return reached;
    }

    void judge(const std::vector<Growth>& grown, WorkloadResult& result) const {
        json listed = json::array();
        for (const Growth& growth : grown) {
            listed.push_back({{"holder", growth.holder.name},
                              {"kind", growth.holder.cache ? "lru_cache" : "container"},
                              {"entries", growth.entries},
                              {"length", growth.holder.length},
                              {"bytes", growth.bytes},
                              {"payload_bytes", growth.payloadBytes}});
        }
        const std::string limits = fmt::format("limits: {} entries or {} gained by one holder",
                                               limits_.entries, report::humanBytes(limits_.bytes));
        result.details["held_growth"] = {
            {"holders", listed}, {"entry_limit", limits_.entries}, {"byte_limit", limits_.bytes}};
        std::vector<const Growth*> over;
        for (const Growth& growth : grown) {
            std::int64_t total = growth.bytes;
            for (const auto& [kind, bytes] : growth.payloadBytes)
                total += bytes;
            if (growth.entries >= limits_.entries || total >= limits_.bytes) over.push_back(&growth);
        }
        if (over.empty()) {
            result.checks.push_back(
                {"held-growth", Status::kPass,
                 grown.empty()
                     ? "no library-held container gained entries while the program's code ran"
                     : fmt::format("{} library-held container{} gained entries while the program's code "
                                   "ran, none over the {}; the most: {}",
                                   grown.size(), grown.size() == 1 ? "" : "s", limits,
                                   describe(grown.front())),
                 0});
            return;
        }
        std::int64_t held = 0;
        for (const Growth* growth : over) {
            Finding finding;
            finding.kind = "held-growth";
            finding.objects = growth->entries;
            finding.bytes = growth->bytes;
            finding.payloadBytes = growth->payloadBytes;
            finding.root = growth->holder.name;
            finding.summary = describe(*growth);
            finding.fix =
                growth->holder.cache
                    ? "An lru_cache keeps every argument and result it saw (a method's cache keeps "
                      "`self`): bound it (maxsize), key it by something that does not own the "
                      "objects, or keep the cache on the instance so that it goes with it."
                    : "A container a module keeps grows with the program's work: bound it (an LRU "
                      "of fixed size), hold its entries weakly (weakref.WeakValueDictionary, "
                      "WeakSet), or remove an entry when its object is done with.";
            held += growth->bytes;
            for (const auto& [kind, bytes] : growth->payloadBytes)
                held += bytes;
            result.findings.push_back(std::move(finding));
        }
        result.checks.push_back(
            {"held-growth", Status::kFail,
             fmt::format("{} library-held container{} over the {}: {}", over.size(),
                         over.size() == 1 ? "" : "s", limits, describe(*over.front())),
             held});
    }

    static std::string describe(const Growth& growth) {
        std::int64_t payload = 0;
        for (const auto& [kind, bytes] : growth.payloadBytes)
            payload += bytes;
        return fmt::format(
            "{} ({}) gained {} entr{} ({} now), which alone keep {}{}", growth.holder.name,
            growth.holder.cache ? "lru_cache" : "container", growth.entries,
            growth.entries == 1 ? "y" : "ies", growth.holder.length, report::humanBytes(growth.bytes),
            payload ? fmt::format(" and {} of payloads", report::humanBytes(payload)) : "");
    }

    HeldLimits limits_;
    std::optional<Marker> marker_;
    Mark baseline_;
    std::unordered_map<PyObject*, std::int64_t> gained_;
    std::string lost_; // why a mark could not be taken: the check is then `error`
};

} // namespace

std::unique_ptr<Probe> makeHeldGrowthProbe(HeldLimits limits) {
    return std::make_unique<HeldGrowthProbe>(limits);
}

} // namespace leakgate::probes
