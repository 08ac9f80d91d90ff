// One interpreter for the whole test binary, created here and alive until every test ran
// (pybind11's test_with_catch does the same).
#include "lib/python/environment.h"
#include "lib/python/interpreter.h"

#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
#ifdef LEAKGATE_FAKE_LIBCUDA
    // The process's CUDA driver is the tests' fake (tests/fake_cuda), unless told otherwise.
    ::setenv("LEAKGATE_LIBCUDA", LEAKGATE_FAKE_LIBCUDA, 0);
#endif
    auto env = leakgate::python::queryEnvironment(leakgate::python::buildPythonExecutable());
    leakgate::python::Interpreter interpreter(env, {"leakgate_unit_tests"});
    return RUN_ALL_TESTS();
}
