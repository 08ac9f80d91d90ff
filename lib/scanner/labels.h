// Labels for reference edges and names for objects, as a person reads them: "local `cur_frame`",
// "f_back", ".registry", "[3]". Labels are computed only after a graph is built and only for the
// edges a finding shows: on 3.10 to 3.12 reading a frame's locals materialises f_locals, which
// adds references the graph must not see.
#pragma once

#include "leakgate/report.h"

#include <Python.h>

#include <string>
#include <string_view>

namespace leakgate::scanner {

struct EdgeLabel {
    std::string kind;  // local, cell, attribute, item, key, index, element, f_back, ... or "ref"
    std::string label; // "local `cur_frame`"
    std::string name;  // the variable, attribute or key name, where there is one
};

// How `from` refers to `to` (both borrowed). Never raises; an edge it cannot name is "ref".
EdgeLabel labelEdge(PyObject* from, PyObject* to);

// "frame of `DSL.kernel` (dsl.py:12)", "function `f`", "list", "module `m`", ...
std::string describeObject(PyObject* object);

// The frame's qualified name, file and current line. `frame` must be a frame object.
FrameInfo frameInfo(PyObject* frame);

// Frames of leakgate's own Python code: file names starting "<leakgate", and the files a workload
// wrote for the code under test to read (addHarnessFile). A finding counts them; it names one only
// when the code under test keeps it (lib/scanner/explain.h).
bool isHarnessFrame(PyObject* frame);
bool isHarnessFile(std::string_view file);
// importlib's own code, which runs every import (_find_and_load, exec_module, ...).
bool isImportMachineryFrame(PyObject* frame);
// Whether a code file is the standard library's (sysconfig's stdlib directories, not
// site-packages): such a frame is named as the mechanism of a cycle, not as its fix site.
bool isStandardLibraryFile(std::string_view file);
bool isStandardLibraryFrame(PyObject* frame);
void addHarnessFile(const std::string& file);
// The file of the frame a worker started from where an interpreter runs it (lib/worker/boot.py):
// the bottom of every stack of that worker, running while the reads run, so never pinned by what
// the code under test keeps. A finding neither lists nor counts it.
void setLauncherFile(const std::string& file);
bool isLauncherFrame(PyObject* frame);

// The free variable names of a function's code (for "closure cell `x`").
std::string freeVariableName(PyObject* function, Py_ssize_t index);

} // namespace leakgate::scanner
