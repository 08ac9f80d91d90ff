// `leakgate repro --reduce`: a scanned script cut down, statement by statement, to what its
// finding needs. The script's statements (at every depth) come from Python's own parser, run in
// the interpreter the reproducer runs in; each is dropped in turn, last first, and the drop is
// kept only where the reproducer of the cut-down script still gives the same verdicts (it
// reproduces where it must, and stays clean where it must). A compound statement that must stay
// is cut down inside. Where a block loses every statement it keeps a `pass`.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace leakgate::commands {

struct Reduction {
    std::string source;        // the script, cut down (the original where nothing could be dropped)
    size_t statements = 0;     // statements in the original, at every depth
    size_t dropped = 0;        // of them, dropped (with what they contain)
    size_t runs = 0;           // candidates tried
    bool stoppedEarly = false; // the time budget ran out before every statement was tried
    double seconds = 0;
};

// Cuts the script at `path` down while `holds(candidate source)` is true (the caller runs the
// reproducer of the candidate in its interpreters). `python` parses the script (its own grammar:
// the interpreter the script runs in). Stops trying after `budget`, keeping what it has.
// Throws UsageError where the script does not parse or `holds` is false for the original.
Reduction reduceScript(const std::string& python, const std::string& path,
                       const std::function<bool(const std::string& source)>& holds,
                       std::chrono::seconds budget);

} // namespace leakgate::commands
