#include "probes/sentinel_probe.h"

#include "leakgate/errors.h"
#include "lib/base/check.h"
#include "lib/report/units.h"
#include "probes/probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>

namespace leakgate::probes {
namespace {

bool isAlive(const TrackedSentinel& sentinel) {
    return python::weakrefIsAlive(sentinel.weakref.get());
}

// What holds the never-freed sentinels, one entry per route shape, most bytes first.
struct Holder {
    std::string route;
    int sentinels = 0;
    std::int64_t bytes = 0;
};
std::vector<Holder> holdersOfNeverFreed(const std::vector<const TrackedSentinel*>& neverFreed) {
    std::vector<PyObject*> objects;
    for (const TrackedSentinel* sentinel : neverFreed)
        objects.push_back(sentinel->identity); // alive: its weakref is
    const std::vector<std::string> routes = holdersOf(objects);
    std::map<std::string, Holder> byShape;
    for (size_t i = 0; i < routes.size(); ++i) {
        const std::string shape = routeShape(routes[i]);
        Holder& holder = byShape[shape];
        holder.route = shape;
        ++holder.sentinels;
        holder.bytes += neverFreed[i]->bytes;
    }
    std::vector<Holder> holders;
    for (auto& [shape, holder] : byShape)
        holders.push_back(std::move(holder));
    std::stable_sort(holders.begin(), holders.end(),
                     [](const Holder& a, const Holder& b) { return a.bytes > b.bytes; });
    return holders;
}

class SentinelProbe final : public Probe {
  public:
    explicit SentinelProbe(std::int64_t planned) : planned_(planned) {}
    std::string_view name() const override { return "sentinels"; }

    void before() override { sentinelRegistry().clear(); }

    void afterReturn(WorkloadResult&) override {
        for (auto& sentinel : sentinelRegistry())
            sentinel.aliveAfterReturn = isAlive(sentinel);
    }

    void inGarbage(std::span<PyObject* const> garbage, WorkloadResult&) override {
        // The collector cleared the weakrefs of what it found unreachable before saving it, so
        // find the sentinels in gc.garbage by identity.
        std::unordered_set<PyObject*> saved(garbage.begin(), garbage.end());
        for (auto& sentinel : sentinelRegistry()) {
            sentinel.inSavedGarbage = sentinel.aliveAfterReturn && saved.count(sentinel.identity) > 0;
        }
    }

    void afterCollection(WorkloadResult& result) override {
        std::map<std::string, int> counts;
        std::map<std::string, std::int64_t> pinned;                           // per payload kind
        std::map<std::string, std::map<std::string, std::int64_t>> byVerdict; // verdict -> kind -> bytes
        std::int64_t pinnedTotal = 0;
        std::vector<const TrackedSentinel*> neverFreedSentinels;
        int collectedByProgram = 0;
        std::string firstCollection;
        for (auto& sentinel : sentinelRegistry()) {
            sentinel.aliveAfterCollection = isAlive(sentinel);
            // One a collection of the program's found was pinned until a collection, as one the
            // collection of read 3 frees is.
            if (!sentinel.collectedBy.empty()) {
                ++collectedByProgram;
                if (firstCollection.empty()) firstCollection = sentinel.collectedBy;
            }
            std::string verdict = !sentinel.collectedBy.empty()   ? "freed-by-gc-only"
                                  : !sentinel.aliveAfterReturn    ? "freed-by-refcount"
                                  : sentinel.aliveAfterCollection ? "never-freed"
                                                                  : "freed-by-gc-only";
            if (verdict == "never-freed") neverFreedSentinels.push_back(&sentinel);
            ++counts[verdict];
            if (verdict != "freed-by-refcount") {
                pinned[sentinel.kind] += sentinel.bytes;
                byVerdict[verdict][sentinel.kind] += sentinel.bytes;
                pinnedTotal += sentinel.bytes;
            }
            result.sentinels.push_back({sentinel.label, sentinel.kind, sentinel.bytes, verdict});
        }
        for (const auto& [kind, bytes] : pinned)
            result.details["pinned_sentinel_bytes"][kind] = bytes;
        for (const auto& [verdict, kinds] : byVerdict) {
            for (const auto& [kind, bytes] : kinds)
                result.details["pinned_sentinel_bytes_by_verdict"][verdict][kind] = bytes;
        }
        // What holds the ones a collection does not free, read before the registry lets go.
        std::vector<Holder> holders;
        if (!neverFreedSentinels.empty()) holders = holdersOfNeverFreed(neverFreedSentinels);
        for (const Holder& holder : holders) {
            result.details["never_freed_held_by"].push_back(
                {{"route", holder.route}, {"sentinels", holder.sentinels}, {"bytes", holder.bytes}});
        }
        size_t total = sentinelRegistry().size();
        sentinelRegistry().clear();
        if (static_cast<std::int64_t>(total) < planned_) {
            // leakgate's own code places these before any of the target's runs: fewer means that
            // code was changed under it (a harness function or _leakgate.sentinel replaced).
            result.checks.push_back(
                {"sentinels", Status::kError,
                 fmt::format(
                     "the workload places at least {} sentinels before the target's code runs and {} "
                     "were "
                     "placed: leakgate's harness was changed under it (a replaced harness function or "
                     "_leakgate.sentinel), so nothing it placed is trusted",
                     planned_, total),
                 std::nullopt});
            return;
        }
        if (total == 0) {
            result.checks.push_back(
                {"sentinels", Status::kSkip, "the workload placed no sentinel", std::nullopt});
            return;
        }
        int freedByRefcount = counts["freed-by-refcount"];
        if (freedByRefcount == static_cast<int>(total)) {
            result.checks.push_back(
                {"sentinels", Status::kPass,
                 fmt::format("{} sentinel{} freed by reference counting",
                             total == 1 ? "the" : fmt::format("all {}", total), total == 1 ? "" : "s"),
                 0});
            return;
        }
        // Bytes of one verdict, split by payload kind when there is more than one.
        auto bytesOf = [&](const std::string& verdict) {
            const auto& kinds = byVerdict[verdict];
            std::int64_t sum = 0;
            std::vector<std::string> each;
            for (const auto& [kind, bytes] : kinds) {
                sum += bytes;
                each.push_back(fmt::format("{} {}", kind, report::humanBytes(bytes)));
            }
            return kinds.size() > 1
                       ? fmt::format("{} ({})", report::humanBytes(sum), fmt::join(each, ", "))
                       : report::humanBytes(sum);
        };
        const int neverFreed = counts["never-freed"], gcOnly = counts["freed-by-gc-only"];
        std::string reason;
        if (neverFreed && gcOnly) {
            // Mixed verdicts: each with its own bytes, never one figure under the worse verdict.
            reason = fmt::format(
                "{} of {} sentinels outlived their frames: {} never-freed, {} pinned until the "
                "process ends; {} freed-by-gc-only, {} pinned until gc.collect()",
                total - freedByRefcount, total, neverFreed, bytesOf("never-freed"), gcOnly,
                bytesOf("freed-by-gc-only"));
        } else {
            const char* verdict = neverFreed ? "never-freed" : "freed-by-gc-only";
            reason =
                fmt::format("{} of {} sentinels outlived their frames ({} {}): {} pinned until {}",
                            total - freedByRefcount, total, neverFreed ? neverFreed : gcOnly, verdict,
                            bytesOf(verdict), neverFreed ? "the process ends" : "gc.collect()");
        }
        if (collectedByProgram > 0) {
            reason +=
                fmt::format("; {} of them freed by a collection the program started (the first: {})",
                            collectedByProgram, firstCollection);
        }
        if (!holders.empty()) {
            // The path from a root, as retained-frame gives it for frames: where to look first.
            reason += fmt::format(
                "; the never-freed held by {} ({} sentinel{}){}", holders.front().route,
                holders.front().sentinels, holders.front().sentinels == 1 ? "" : "s",
                holders.size() > 1 ? fmt::format(" and {} more holders", holders.size() - 1) : "");
        }
        result.checks.push_back({"sentinels", Status::kFail, reason, pinnedTotal});
    }

  private:
    std::int64_t planned_; // the fewest sentinels the workload places (0: it may place none)
};

} // namespace

namespace {
Session* g_session = nullptr; // the one in progress
} // namespace

Session::Session() {
    LEAKGATE_CHECK(g_session == nullptr);
    g_session = this;
}

Session::~Session() {
    sentinels_.clear();    // releases the weak references while the interpreter lives
    setIntegrityCheck({}); // and the harness's seal (probes/probe.h)
    g_session = nullptr;
}

std::vector<TrackedSentinel>& sentinelRegistry() {
    LEAKGATE_CHECK(g_session != nullptr);
    return g_session->sentinels();
}

bool sessionActive() {
    return g_session != nullptr;
}

void trackSentinel(PyObject* sentinel, std::string label, std::string kind, std::int64_t bytes) {
    if (!g_session) {
        throw UsageError("no measurement is in progress, so nothing would judge this sentinel: make "
                         "sentinels inside a measured region");
    }
    TrackedSentinel tracked;
    tracked.label = std::move(label);
    tracked.kind = std::move(kind);
    tracked.bytes = bytes;
    tracked.weakref = python::own(PyWeakref_NewRef(sentinel, nullptr));
    if (!tracked.weakref) throw PythonError("a sentinel must support weak references");
    tracked.identity = sentinel;
    sentinelRegistry().push_back(std::move(tracked));
}

std::unique_ptr<Probe> makeSentinelProbe(std::int64_t planned) {
    return std::make_unique<SentinelProbe>(planned);
}

} // namespace leakgate::probes
