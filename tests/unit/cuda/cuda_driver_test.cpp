// The CUDA driver loader, its accounting and the device sentinel, against the tests' fake driver
// (tests/fake_cuda) and against libraries that are no driver at all.
#include "lib/cuda/driver.h"
#include "lib/workloads/echo_kernels.h"
#include "probes/leakgate_module.h"
#include "probes/sentinel_probe.h"

#include <pybind11/embed.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

#ifdef LEAKGATE_FAKE_LIBCUDA

namespace leakgate::cuda {
namespace {

namespace py = pybind11;

// Sets an environment variable for one test.
class ScopedEnv {
  public:
    ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
    ~ScopedEnv() { ::unsetenv(name_); }

  private:
    const char* name_;
};

TEST(CudaDriver, AMissingLibraryIsAReasonNotACrash) {
    Driver driver("/nonexistent/libcuda.so.1");
    EXPECT_FALSE(driver.available());
    EXPECT_NE(driver.unavailableReason().find("no CUDA driver: cannot load /nonexistent/libcuda.so.1"),
              std::string::npos)
        << driver.unavailableReason();
    EXPECT_THROW(driver.memInfo(), CudaError);
}

TEST(CudaDriver, ALibraryWithoutTheDriverApiIsNamedWithTheFirstMissingSymbol) {
    Driver driver("libm.so.6");
    EXPECT_FALSE(driver.available());
    EXPECT_NE(driver.unavailableReason().find("libm.so.6 has no cuInit"), std::string::npos)
        << driver.unavailableReason();
}

TEST(CudaDriver, AFailingCuInitIsReportedWithTheErrorsNameAndMessage) {
    ScopedEnv init("LEAKGATE_FAKE_CUDA_INIT", "100");
    Driver driver(LEAKGATE_FAKE_LIBCUDA);
    EXPECT_FALSE(driver.available());
    EXPECT_EQ(driver.unavailableReason(),
              "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
}

TEST(CudaDriver, ADriverWithNoDeviceIsUnavailable) {
    ScopedEnv devices("LEAKGATE_FAKE_CUDA_DEVICES", "0");
    Driver driver(LEAKGATE_FAKE_LIBCUDA);
    EXPECT_FALSE(driver.available());
    EXPECT_NE(driver.unavailableReason().find("0 devices"), std::string::npos);
}

TEST(CudaDriver, TheLoaderResolvesTheVersionedSymbolsCudaHNames) {
    // GIVEN a driver that exports only the current ABI's names, as cuda.h spells them
    void* fake = ::dlopen(LEAKGATE_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(fake, nullptr);
    EXPECT_EQ(::dlsym(fake, "cuMemAlloc"), nullptr);
    EXPECT_NE(::dlsym(fake, "cuMemAlloc_v2"), nullptr);
    ::dlclose(fake);
    // WHEN the loader loads it THEN every entry resolved and the device is up
    Driver driver(LEAKGATE_FAKE_LIBCUDA);
    ASSERT_TRUE(driver.available()) << driver.unavailableReason();
    EXPECT_EQ(driver.device().name, "leakgate fake device");
    EXPECT_EQ(driver.device().driverVersion, 13000);
    EXPECT_EQ(driver.memInfo().totalBytes, std::int64_t{80} << 30);
}

TEST(CudaDriver, DeviceBuffersAreCountedWhileTheyLiveAndCuMemGetInfoAgrees) {
    Driver& driver = Driver::get();
    ASSERT_TRUE(driver.available()) << driver.unavailableReason();
    const std::int64_t heldBefore = DeviceBuffer::bytesHeld();
    const std::int64_t usedBefore = driver.memInfo().usedBytes();
    {
        DeviceBuffer buffer(3 << 20);
        EXPECT_NE(buffer.pointer(), 0u);
        EXPECT_EQ(DeviceBuffer::bytesHeld() - heldBefore, 3 << 20);
        EXPECT_EQ(driver.memInfo().usedBytes() - usedBefore, 3 << 20);
        DeviceBuffer moved(std::move(buffer));
        EXPECT_EQ(DeviceBuffer::bytesHeld() - heldBefore, 3 << 20);
    }
    EXPECT_EQ(DeviceBuffer::bytesHeld(), heldBefore);
    EXPECT_EQ(driver.memInfo().usedBytes(), usedBefore);
}

TEST(CudaDriver, AnEchoKernelReturnsTheScalarItsParameterPointsAt) {
    const std::string image = workloads::echoKernelImage();
    if (image.empty()) GTEST_SKIP() << "this build has no echo kernel image (no nvcc)";
    workloads::EchoKernels kernels(image);
    ASSERT_TRUE(kernels.has("Int32"));
    ASSERT_TRUE(kernels.has("Float64"));
    DeviceBuffer out(64);
    const std::int32_t value = -2;
    auto received = kernels.echo("Int32", &value, out.pointer(), 4);
    EXPECT_EQ(received, (std::vector<std::uint8_t>{0xfe, 0xff, 0xff, 0xff}));
}

TEST(CudaDriver, ADeviceSentinelHoldsDeviceMemoryUntilItIsFreed) {
    probes::registerLeakgateModule(); // keeps the module's registration in this binary's link
    probes::Session session;          // owns the sentinel's weakref, as a worker's does
    py::module_ leakgate = py::module_::import("_leakgate");
    ASSERT_TRUE(leakgate.attr("cuda_status")()["available"].cast<bool>());
    const auto heldBefore = leakgate.attr("device_memory")()["held_bytes"].cast<std::int64_t>();
    py::object sentinel = leakgate.attr("device_sentinel")("test", 1 << 20);
    EXPECT_EQ(sentinel.attr("nbytes").cast<std::int64_t>(), 1 << 20);
    EXPECT_EQ(leakgate.attr("device_memory")()["held_bytes"].cast<std::int64_t>() - heldBefore, 1 << 20);
    py::object weak = py::module_::import("weakref").attr("ref")(sentinel);
    sentinel = py::none();
    EXPECT_TRUE(weak().is_none());
    EXPECT_EQ(leakgate.attr("device_memory")()["held_bytes"].cast<std::int64_t>(), heldBefore);
    // The session releases its weakrefs when it ends, before the interpreter does.
    ASSERT_FALSE(probes::sentinelRegistry().empty());
    EXPECT_EQ(probes::sentinelRegistry().back().kind, "device");
}

} // namespace
} // namespace leakgate::cuda

#endif
