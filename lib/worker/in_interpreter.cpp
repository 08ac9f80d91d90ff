// The worker started by the environment's own interpreter (the wheel's CLI): `python boot.py
// MODULE FD TOKEN` (lib/worker/boot.py) loads the Python package's extension module from MODULE
// and calls its `_worker_main(FD, TOKEN)`, which lands here. The interpreter has started already; this
// makes it look to the code under test as the embedded one does (lib/python/interpreter.cpp): the spec's
// sys.argv, no script folder on sys.path, an empty __main__, and `_leakgate` importable.
#include "lib/worker/main.h"

#include "leakgate/errors.h"
#include "lib/python/text.h"
#include "lib/scanner/labels.h"
#include "lib/workloads/spec.h"

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace leakgate::worker {

namespace py = pybind11;

int workerMainInInterpreter(const std::string& specFd, const std::string& token) {
    return runWorker(specFd, token, [](const workloads::WorkerSpec& spec) {
        py::module_ sys = py::module_::import("sys");
        // The interpreter must be the one the spec names: its paths were queried from it.
        const std::string executable = python::textOf(sys.attr("executable").ptr());
        const std::string prefix = python::textOf(sys.attr("prefix").ptr());
        if (prefix != spec.environment.prefix)
            throw EnvironmentError(fmt::format("the worker runs in {} (sys.prefix {}), not in the "
                                               "environment of its spec ({})",
                                               executable, prefix, spec.environment.prefix));
        // boot.py's frame stays at the bottom of the stack, running: no finding names or counts it.
        scanner::setLauncherFile(python::textOf(py::list(sys.attr("argv"))[0].ptr()));
        py::list argv;
        for (const std::string& arg : spec.argv)
            argv.append(python::fsText(arg));
        sys.attr("argv") = argv;
        // A script's run put boot.py's folder first on sys.path; the embedded worker's path is the
        // environment's alone.
        py::list path;
        for (const std::string& entry : spec.environment.path)
            path.append(python::fsText(entry));
        sys.attr("path") = path;
        // boot.py's own names (and __file__) leave __main__, which then holds what a fresh interpreter's
        // does.
        static constexpr std::string_view kKept[] = {"__name__",    "__doc__",  "__package__",
                                                     "__loader__",  "__spec__", "__annotations__",
                                                     "__builtins__"};
        py::dict main = py::module_::import("__main__").attr("__dict__");
        py::list keys = main.attr("keys")();
        for (py::handle key : keys) {
            if (std::find(std::begin(kKept), std::end(kKept), python::textOf(key.ptr())) ==
                std::end(kKept))
                main.attr("pop")(key);
        }
        return std::shared_ptr<void>();
    });
}

} // namespace leakgate::worker
