// The embedded interpreter of a worker process: exactly one per process, configured to look like
// the queried Environment (its sys.prefix, sys.path and site-packages).
#pragma once

#include "lib/python/environment.h"

#include <pybind11/embed.h>

#include <memory>
#include <string>
#include <vector>

namespace leakgate::python {

class Interpreter {
  public:
    Interpreter(const Environment& env, const std::vector<std::string>& argv);
    ~Interpreter();
    Interpreter(const Interpreter&) = delete;
    Interpreter& operator=(const Interpreter&) = delete;

  private:
    std::unique_ptr<pybind11::scoped_interpreter> interpreter_;
};

// The message of the Python exception in flight (type: message), converted while the
// interpreter lives.
std::string describe(const pybind11::error_already_set& error);

} // namespace leakgate::python
