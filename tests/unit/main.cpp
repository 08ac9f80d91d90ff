// One interpreter for the whole test binary, created here and alive until every test ran
// (pybind11's test_with_catch does the same).
#include "lib/python/environment.h"
#include "lib/python/interpreter.h"

#include <gtest/gtest.h>

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    auto env = leakgate::python::queryEnvironment(leakgate::python::buildPythonExecutable());
    leakgate::python::Interpreter interpreter(env, {"leakgate_unit_tests"});
    return RUN_ALL_TESTS();
}
