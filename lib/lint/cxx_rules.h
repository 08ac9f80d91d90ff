// The C/C++ rules of `leakgate lint`, applied to one translation unit (lib/lint/cxx.cpp parses it,
// in a child process of its own). Three rules, each intraprocedural:
// - frame-stored-static: a frame (PyEval_GetFrame, PyThreadState_GetFrame, PyFrame_GetBack, or
//   calling inspect.currentframe / sys._getframe through pybind11, nanobind or
//   PyObject_CallMethod) stored in a static or global variable;
// - frame-stored-member: the same, stored in a class or struct member;
// - frame-ref-leaked: a new reference to a frame held in a local that some return path neither
//   releases nor hands on. The walk follows the structured statements (if, loops, switch, goto to
//   a later label, return) over a set of "owned and not yet released" locals, with null checks
//   (`if (!f) return ...`) taken into account.
//
// The walk keeps its own stack for what nests as deep as the code does (expressions, `else if`
// chains), and stops in a function whose statements nest deeper than the stack allows (StackGuard)
// rather than overflow it.
#pragma once

#include "leakgate/report.h"
#include "lib/clang/libclang.h"

#include <string>
#include <vector>

namespace leakgate::lint::cxx {

// What the rules found in one translation unit, and the functions whose walk stopped short.
struct UnitAnalysis {
    std::vector<Finding> findings;
    struct CutShort {
        std::string function;
        unsigned line = 0; // the statement it stopped at
    };
    std::vector<CutShort> cutShort;
};

// The rules applied to every function defined in the main file of `unit`, and to the static
// variables declared at namespace scope. The walk may use this thread's stack down to near its
// end (the forked child's large one, lib/base/forked_child.h); a function nested deeper than that
// is analysed down to where it stopped and listed in `cutShort`.
UnitAnalysis analyseUnit(CXTranslationUnit unit);

} // namespace leakgate::lint::cxx
