// Plug-ins that do each thing wrong once, for tests/integration/test_probes.py. Built three
// ways (tests/CMakeLists.txt):
//   LEAKGATE_TEST_WRONG_ABI   defines leakgate_plugin with an ABI version no leakgate has
//   LEAKGATE_TEST_NO_SYMBOL   defines no leakgate_plugin at all
//   (neither)                 a working plug-in that throws where LEAKGATE_TEST_THROW_IN says:
//                             register, workload, before, afterReturn, inGarbage or
//                             afterCollection (unset: it throws nowhere and passes)
#if defined(LEAKGATE_TEST_WRONG_ABI)
#include <cstdint>

struct leakgate_plugin_abi_only {
    std::uint32_t abi_version;
};
extern "C" __attribute__((visibility("default"))) const leakgate_plugin_abi_only leakgate_plugin = {999};

#elif defined(LEAKGATE_TEST_NO_SYMBOL)
extern "C" {
__attribute__((visibility("default"))) int not_a_leakgate_plugin = 1;
}

#else
#include <leakgate/plugin.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

void throwIfIn(const char* phase) {
    const char* where = std::getenv("LEAKGATE_TEST_THROW_IN");
    if (where && std::string(where) == phase)
        throw std::runtime_error(std::string("thrown in ") + phase);
}

class ThrowingProbe final : public leakgate::probes::Probe {
  public:
    std::string_view name() const override { return "throwing-probe"; }
    void before() override { throwIfIn("before"); }
    void afterReturn(leakgate::WorkloadResult&) override { throwIfIn("afterReturn"); }
    void inGarbage(std::span<PyObject* const>, leakgate::WorkloadResult&) override {
        throwIfIn("inGarbage");
    }
    void afterCollection(leakgate::WorkloadResult& result) override {
        throwIfIn("afterCollection");
        result.checks.push_back({"throwing-probe", leakgate::Status::kPass, "threw nowhere", 0});
    }
};

// A second probe of the same plug-in, which never throws: its check must survive its sibling's.
class QuietProbe final : public leakgate::probes::Probe {
  public:
    std::string_view name() const override { return "quiet-probe"; }
    void afterCollection(leakgate::WorkloadResult& result) override {
        result.checks.push_back({"quiet-probe", leakgate::Status::kPass, "never throws", 0});
    }
};

void registerProbes(leakgate::plugin::Registration* registration) {
    throwIfIn("register");
    registration->probes.push_back(std::make_unique<ThrowingProbe>());
    registration->probes.push_back(std::make_unique<QuietProbe>());
    registration->workload = [](pybind11::handle) { throwIfIn("workload"); };
}

} // namespace

LEAKGATE_PLUGIN("throws on request", registerProbes);
#endif
