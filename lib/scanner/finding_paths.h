// The parts of a finding that the explanations of frame cycles (explain.cpp) and of retained frames
// (retained_frames.cpp) both write: the frames a culprit pins through f_back, and a path of
// references labelled as a person reads it, folded when long, with the names of the locals on it.
#pragma once

#include "leakgate/report.h"
#include "lib/scanner/labels.h"
#include "lib/scanner/object_graph.h"

#include <Python.h>

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace leakgate::scanner {

// The file name without its folders: "train.py" for "/home/me/train.py".
std::string baseName(const std::string& file);

// The culprit first, then every frame it pins through f_back, into `finding.frames`; returns the
// frames seen. Call with the GIL held.
std::unordered_set<PyObject*> setPinnedChain(Finding& finding, PyObject* culprit);

// A path longer than a person reads, its first and last steps kept with one "folded" step between.
std::vector<PathStep> foldPath(std::vector<PathStep> steps);

// Labels the node path [n0 .. nk], merging the steps a person reads as one: a closure cell
// reached through `__closure__`, an attribute reached through `__dict__`.
// `first`, when given, is the label of the first edge, already computed by the caller.
std::vector<PathStep> labelPath(const ObjectGraph& graph, const std::vector<NodeId>& nodes,
                                std::optional<EdgeLabel> first = std::nullopt);

// The names of the locals and closure cells on a path, each once, in order.
std::vector<std::string> namesOnPath(const std::vector<PathStep>& steps);

} // namespace leakgate::scanner
