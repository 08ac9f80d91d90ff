// The device-memory probe (check `device-memory`): the device bytes the workload's device
// sentinels still hold after it returned and after one real collection, from leakgate's own
// accounting of its cuMemAlloc buffers, cross-checked with cuMemGetInfo, and with
// torch.cuda.memory_allocated() as the witness of torch's own allocator where the workload made a
// torch tensor sentinel.
#include "probes/probe.h"

#include "lib/cuda/driver.h"
#include "lib/report/units.h"

#include <fmt/format.h>

#include <cstdlib>
#include <dlfcn.h>
#include <optional>

namespace leakgate::probes {
namespace {

namespace py = pybind11;

// cuMemGetInfo counts every process's use and rounds allocations up to pages: it agrees with the
// accounting when it is within this of it.
constexpr std::int64_t kMemInfoTolerance = 64ll << 20;

// What torch's caching allocator reports, when the workload's process has torch with CUDA up.
struct TorchReading {
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
};

std::optional<TorchReading> readTorch() {
    py::dict modules = py::module_::import("sys").attr("modules");
    if (!modules.contains("torch")) return std::nullopt;
    py::object cuda = modules["torch"].attr("cuda");
    if (!cuda.attr("is_initialized")().cast<bool>()) return std::nullopt;
    return TorchReading{cuda.attr("memory_allocated")().cast<std::int64_t>(),
                        cuda.attr("memory_reserved")().cast<std::int64_t>()};
}

// CuPy's default pool, when the program imported CuPy: the bytes its arrays use.
std::optional<std::int64_t> readCupy() {
    py::dict modules = py::module_::import("sys").attr("modules");
    if (!modules.contains("cupy")) return std::nullopt;
    try {
        return modules["cupy"]
            .attr("get_default_memory_pool")()
            .attr("used_bytes")()
            .cast<std::int64_t>();
    } catch (py::error_already_set&) {
        PyErr_Clear();
        return std::nullopt;
    }
}

// Warp's stream-ordered pools, when the program imported Warp and Warp started its runtime (its
// `init()`, which leakgate never calls): the bytes in use, summed over the CUDA devices whose pool
// is on. Arrays made outside a pool are cuMemAlloc's, which cuMemGetInfo sees.
std::optional<std::int64_t> readWarp() {
    py::dict modules = py::module_::import("sys").attr("modules");
    // warp._src.context from 1.10, warp.context before.
    const char* name = modules.contains("warp._src.context") ? "warp._src.context"
                       : modules.contains("warp.context")    ? "warp.context"
                                                             : nullptr;
    if (!name) return std::nullopt;
    try {
        py::object context = modules[name];
        py::object runtime = py::getattr(context, "runtime", py::none());
        if (runtime.is_none()) return std::nullopt;
        std::optional<std::int64_t> used;
        for (py::handle device : runtime.attr("cuda_devices")) {
            if (!py::getattr(device, "is_mempool_enabled", py::bool_(false)).cast<bool>()) continue;
            used = used.value_or(0) +
                   context.attr("get_mempool_used_mem_current")(device).cast<std::int64_t>();
        }
        return used;
    } catch (py::error_already_set&) {
        PyErr_Clear();
        return std::nullopt;
    }
}

// JAX's GPU allocator, when the program imported JAX and JAX made its GPU client (leakgate never
// asks for one: `jax.devices()` would start it, and with it XLA's preallocation): bytes in use,
// summed over the client's devices.
std::optional<std::int64_t> readJax() {
    py::dict modules = py::module_::import("sys").attr("modules");
    if (!modules.contains("jax._src.xla_bridge")) return std::nullopt;
    try {
        py::dict backends = py::getattr(modules["jax._src.xla_bridge"], "_backends", py::dict());
        std::optional<std::int64_t> used;
        for (const char* platform : {"cuda", "gpu"}) {
            if (!backends.contains(platform)) continue;
            for (py::handle device : backends[platform].attr("local_devices")()) {
                py::object stats = device.attr("memory_stats")();
                if (stats.is_none() || !py::dict(stats).contains("bytes_in_use")) continue;
                used = used.value_or(0) + stats["bytes_in_use"].cast<std::int64_t>();
            }
            break; // one client: "cuda" and "gpu" name the same one in some releases
        }
        return used;
    } catch (py::error_already_set&) {
        PyErr_Clear();
        return std::nullopt;
    }
}

// The program loaded the CUDA driver itself (torch, CuPy, a DSL): leakgate may then ask it, and
// starts nothing the program did not start.
bool programUsesCuda() {
    void* loaded = dlopen(cuda::driverLibraryPath().c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!loaded) return false;
    dlclose(loaded); // the reference RTLD_NOLOAD took
    return true;
}

// What a program that placed no sentinel holds on the device, by each witness it has: the
// driver's count of the whole device, torch's caching allocator, CuPy's pool, Warp's pools, JAX's
// allocator, and the CUDA graph memory pool (what graphs' allocation nodes hold: a graph kept by a
// cycle keeps it).
struct ProgramReading {
    std::optional<std::int64_t> used;   // cuMemGetInfo
    std::optional<std::int64_t> torch;  // torch.cuda.memory_allocated()
    std::optional<std::int64_t> cupy;   // cupy's default pool
    std::optional<std::int64_t> warp;   // Warp's mempools (get_mempool_used_mem_current)
    std::optional<std::int64_t> jax;    // JAX's GPU client (memory_stats()["bytes_in_use"])
    std::optional<std::int64_t> graphs; // cuDeviceGetGraphMemAttribute(USED_MEM_CURRENT)
};

ProgramReading readProgram() {
    ProgramReading reading;
    try {
        if (cuda::Driver::get().available()) reading.used = cuda::Driver::get().memInfo().usedBytes();
    } catch (std::exception&) {
        reading.used.reset(); // the torch and CuPy counts still witness
    }
    reading.graphs = cuda::Driver::get().graphMemoryUsed();
    try {
        if (auto torch = readTorch()) reading.torch = torch->allocated;
    } catch (py::error_already_set&) {
        PyErr_Clear();
    }
    reading.cupy = readCupy();
    reading.warp = readWarp();
    reading.jax = readJax();
    return reading;
}

// A witness's drop from read 1 to read 3 is memory only a collection freed: under gc.disable() the
// program keeps it. An allocator's own count is exact; cuMemGetInfo counts every process on the
// device, so it decides only above its tolerance.
constexpr std::int64_t kAllocatorThreshold = 1ll << 20;

// One read: own accounting, cuMemGetInfo, torch.
struct Reading {
    std::int64_t held = 0;
    std::int64_t used = 0;
    std::optional<TorchReading> torch;
};

// What the program's own collections freed, by witness, read as each starts and ends: the
// finalizers it runs, and what leakgate frees of its garbage after explaining it
// (probes/gc_guard_probe.cpp).
struct FreedByProgram {
    std::optional<std::int64_t> used, torch, cupy, warp, jax, graphs;
    void add(const ProgramReading& before, const ProgramReading& after) {
        auto drop = [](std::optional<std::int64_t>& into, const std::optional<std::int64_t>& at1,
                       const std::optional<std::int64_t>& at2) {
            if (at1 && at2) into = into.value_or(0) + (*at1 - *at2);
        };
        drop(used, before.used, after.used);
        drop(torch, before.torch, after.torch);
        drop(cupy, before.cupy, after.cupy);
        drop(warp, before.warp, after.warp);
        drop(jax, before.jax, after.jax);
        drop(graphs, before.graphs, after.graphs);
    }
};

class DeviceMemoryProbe final : public Probe, public ForeignCollectionListener {
  public:
    explicit DeviceMemoryProbe(bool lazy) : lazy_(lazy) {}
    ~DeviceMemoryProbe() override { stopListeningToForeignCollections(this); }
    std::string_view name() const override { return "device-memory"; }

    // A collection the program starts: what it frees (the finalizers it runs, then leakgate's
    // freeing of the garbage it saved) is freed between these two.
    const base::PointerSet* collectionStarts(int) override {
        if (programUsesCuda()) freeing_ = readProgram();
        return nullptr;
    }
    void collectionEnds() override {
        if (freeing_) byProgram_.add(*freeing_, readProgram());
        freeing_.reset();
    }

    void before() override {
        listenToForeignCollections(this);
        allocatedBefore_ = cuda::DeviceBuffer::buffersAllocated();
        if (lazy_) {
            // The driver is not started for a workload that may never use it; the baseline is
            // leakgate's own accounting only.
            baseline_ = {cuda::DeviceBuffer::bytesHeld(), 0, std::nullopt};
            return;
        }
        cuda::Driver& driver = cuda::Driver::get();
        if (!driver.available()) return;
        baseline_ = read();
    }

    void afterReturn(WorkloadResult&) override {
        // No sentinel placed: the program's own memory, where it uses CUDA (a region or a test of
        // the plugin as much as a scanned script).
        // Where leakgate started CUDA itself (not lazy), only an allocator the program uses (torch's,
        // CuPy's, Warp's, JAX's) says the program holds device memory; cuMemGetInfo is then read beside
        // it.
        const bool noSentinel = cuda::DeviceBuffer::buffersAllocated() == allocatedBefore_;
        if (noSentinel && (!lazy_ || programUsesCuda())) {
            ProgramReading reading = readProgram();
            if (lazy_ || reading.torch || reading.cupy || reading.warp || reading.jax)
                programAfterReturn_ = std::move(reading);
        }
        if (lazy_ && noSentinel) return;
        if (cuda::Driver::get().available()) afterReturn_ = read();
    }

    void afterCollection(WorkloadResult& result) override {
        if (lazy_ && cuda::DeviceBuffer::buffersAllocated() == allocatedBefore_) {
            if (programAfterReturn_) {
                judgeProgram(result);
                return;
            }
            result.checks.push_back({"device-memory", Status::kSkip,
                                     "the program did not use CUDA and placed no device sentinel",
                                     std::nullopt});
            return;
        }
        if (programAfterReturn_ && cuda::DeviceBuffer::buffersAllocated() == allocatedBefore_) {
            judgeProgram(result);
            return;
        }
        cuda::Driver& driver = cuda::Driver::get();
        if (!driver.available()) {
            result.checks.push_back(
                {"device-memory", Status::kSkip, driver.unavailableReason(), std::nullopt});
            return;
        }
        Reading afterCollection = read();
        const std::int64_t placed = cuda::DeviceBuffer::buffersAllocated() - allocatedBefore_;
        const std::int64_t heldAfterReturn = afterReturn_.held - baseline_.held;
        const std::int64_t heldAfterCollection = afterCollection.held - baseline_.held;
        const std::int64_t usedAfterReturn = afterReturn_.used - baseline_.used;
        const std::int64_t usedAfterCollection = afterCollection.used - baseline_.used;

        nlohmann::json details = {{"device", driver.device().name},
                                  {"device_buffers_placed", placed},
                                  {"held_after_return", heldAfterReturn},
                                  {"held_after_collection", heldAfterCollection},
                                  {"meminfo_used_after_return", usedAfterReturn},
                                  {"meminfo_used_after_collection", usedAfterCollection}};
        // torch's freed blocks go back to its cache, not to the driver: cuMemGetInfo sees what
        // torch reserved, so that is part of what it should agree with.
        std::int64_t torchReservedAfterReturn = 0, torchReservedAfterCollection = 0;
        std::string torchText;
        if (afterReturn_.torch && afterCollection.torch) {
            const TorchReading before = baseline_.torch.value_or(TorchReading{});
            const std::int64_t allocatedAfterReturn = afterReturn_.torch->allocated - before.allocated;
            const std::int64_t allocatedAfterCollection =
                afterCollection.torch->allocated - before.allocated;
            torchReservedAfterReturn = afterReturn_.torch->reserved - before.reserved;
            torchReservedAfterCollection = afterCollection.torch->reserved - before.reserved;
            details["torch_allocated_after_return"] = allocatedAfterReturn;
            details["torch_allocated_after_collection"] = allocatedAfterCollection;
            details["torch_reserved_after_return"] = torchReservedAfterReturn;
            details["torch_reserved_after_collection"] = torchReservedAfterCollection;
            torchText = fmt::format(
                "; torch.cuda.memory_allocated(): {} after return, {} after collection",
                report::humanBytes(allocatedAfterReturn), report::humanBytes(allocatedAfterCollection));
        }
        const bool agrees =
            std::llabs(usedAfterReturn - (heldAfterReturn + torchReservedAfterReturn)) <=
                kMemInfoTolerance &&
            std::llabs(usedAfterCollection - (heldAfterCollection + torchReservedAfterCollection)) <=
                kMemInfoTolerance;
        if (lazy_) {
            // No cuMemGetInfo before the workload started CUDA: only what one collection freed.
            details.erase("meminfo_used_after_return");
            details.erase("meminfo_used_after_collection");
            details["meminfo_freed_by_collection"] = afterReturn_.used - afterCollection.used;
        } else {
            details["meminfo_agrees"] = agrees;
        }
        result.details["device_memory"] = details;
        const std::string torchCache =
            torchReservedAfterCollection > 0
                ? fmt::format(", of which torch's caching allocator keeps {} reserved",
                              report::humanBytes(torchReservedAfterCollection))
                : "";
        const std::string crossCheck =
            lazy_ ? fmt::format("cuMemGetInfo: {} freed by the collection (CUDA was started by the "
                                "workload, so there is no reading from before it){}{}",
                                report::humanBytes(afterReturn_.used - afterCollection.used), torchCache,
                                torchText)
                  : fmt::format("cuMemGetInfo: {} more in use after return, {} after collection{}{}{}",
                                report::humanBytes(usedAfterReturn),
                                report::humanBytes(usedAfterCollection), torchCache,
                                agrees ? ""
                                       : " (disagrees with the accounting: another process, such as "
                                         "this gate's other workers when -j is above 1, or memory "
                                         "outside leakgate's sentinels)",
                                torchText);

        if (placed == 0) {
            result.checks.push_back({"device-memory", Status::kSkip,
                                     "the workload placed no device sentinel", std::nullopt});
            return;
        }
        if (heldAfterReturn <= 0) {
            result.checks.push_back({"device-memory", Status::kPass,
                                     fmt::format("{} device sentinel{} freed by reference counting ({})",
                                                 placed, placed == 1 ? "" : "s", crossCheck),
                                     0});
            return;
        }
        result.checks.push_back(
            {"device-memory", Status::kFail,
             fmt::format("{} of device memory pinned until {} ({} still held after one collection; {})",
                         report::humanBytes(heldAfterReturn),
                         heldAfterCollection > 0 ? "the process ends" : "gc.collect()",
                         report::humanBytes(heldAfterCollection), crossCheck),
             heldAfterReturn});
    }

  private:
    // The program's own device memory, no sentinel placed: what one collection freed, by witness.
    void judgeProgram(WorkloadResult& result) {
        const ProgramReading after = readProgram();
        const ProgramReading& before = *programAfterReturn_;
        nlohmann::json details = {{"sentinels", 0}};
        std::vector<std::string> witnesses;
        std::int64_t freed = 0;
        bool over = false;
        bool programCollected = false; // a witness saw the program's own collections free memory
        // A witness's drop: from read 1 to read 3, and what the program's own collections freed
        // before (the garbage they found, which leakgate freed after explaining it).
        auto witness = [&](const char* name, const char* key, const std::optional<std::int64_t>& at1,
                           const std::optional<std::int64_t>& at3,
                           const std::optional<std::int64_t>& byProgram, std::int64_t threshold) {
            if (!at1 || !at3) return;
            const std::int64_t drop = *at1 - *at3 + byProgram.value_or(0);
            details[std::string(key) + "_after_return"] = *at1;
            details[std::string(key) + "_after_collection"] = *at3;
            std::string said = fmt::format("{}: {} after return, {} after collection", name,
                                           report::humanBytes(*at1), report::humanBytes(*at3));
            if (byProgram && *byProgram != 0) {
                programCollected = true;
                details[std::string(key) + "_freed_by_program_collections"] = *byProgram;
                said += fmt::format(", {} freed by the program's own collections",
                                    report::humanBytes(*byProgram));
            }
            witnesses.push_back(std::move(said));
            if (drop >= threshold) over = true;
            freed = std::max(freed, drop);
        };
        witness("torch.cuda.memory_allocated()", "torch_allocated", before.torch, after.torch,
                byProgram_.torch, kAllocatorThreshold);
        witness("CuPy's pool", "cupy_used", before.cupy, after.cupy, byProgram_.cupy,
                kAllocatorThreshold);
        witness("Warp's memory pools", "warp_pool_used", before.warp, after.warp, byProgram_.warp,
                kAllocatorThreshold);
        witness("JAX's GPU allocator", "jax_bytes_in_use", before.jax, after.jax, byProgram_.jax,
                kAllocatorThreshold);
        // The pool's count is the driver's own, exact for this process's graphs: said where a
        // graph held any memory at either read.
        if (before.graphs.value_or(0) > 0 || after.graphs.value_or(0) > 0 ||
            byProgram_.graphs.value_or(0) > 0)
            witness("the CUDA graph memory pool", "graph_pool_used", before.graphs, after.graphs,
                    byProgram_.graphs, kAllocatorThreshold);
        witness("cuMemGetInfo (the whole device)", "meminfo_used", before.used, after.used,
                byProgram_.used, kMemInfoTolerance);
        details["freed_by_collection"] = freed;
        if (cuda::Driver::get().available()) details["device"] = cuda::Driver::get().device().name;
        result.details["device_memory"] = details;
        if (witnesses.empty()) {
            result.checks.push_back(
                {"device-memory", Status::kSkip,
                 fmt::format("the program loaded CUDA, but no witness of its memory could be "
                             "read ({})",
                             cuda::Driver::get().available()
                                 ? "no torch, CuPy, Warp or JAX allocator in use"
                                 : cuda::Driver::get().unavailableReason()),
                 std::nullopt});
            return;
        }
        const std::string read = fmt::format("{}", fmt::join(witnesses, "; "));
        if (!over) {
            result.checks.push_back(
                {"device-memory", Status::kPass,
                 fmt::format(
                     "a collection freed {} of the program's device memory, under the limits (1.0 MiB "
                     "for an allocator's count, {} for cuMemGetInfo); {}",
                     report::humanBytes(std::max<std::int64_t>(freed, 0)),
                     report::humanBytes(kMemInfoTolerance), read),
                 0});
            return;
        }
        result.checks.push_back(
            {"device-memory", Status::kFail,
             fmt::format("{} of the program's device memory was freed only by {}: "
                         "under gc.disable() it stays; {}",
                         report::humanBytes(freed),
                         programCollected ? "a collection (the program's own, or leakgate's)"
                                          : "gc.collect()",
                         read),
             freed});
    }

    static Reading read() {
        return {cuda::DeviceBuffer::bytesHeld(), cuda::Driver::get().memInfo().usedBytes(), readTorch()};
    }

    bool lazy_;
    std::int64_t allocatedBefore_ = 0;
    Reading baseline_;
    Reading afterReturn_;
    std::optional<ProgramReading> programAfterReturn_; // no sentinel: the program's own memory
    std::optional<ProgramReading> freeing_;            // read as a program's collection starts
    FreedByProgram byProgram_;
};

} // namespace

std::unique_ptr<Probe> makeDeviceMemoryProbe(bool lazy) {
    return std::make_unique<DeviceMemoryProbe>(lazy);
}

} // namespace leakgate::probes
