// Runs a child process in its own process group with captured output, an optional result pipe
// and a timeout. On timeout the whole group is killed, so a hung target cannot leave stragglers.
#pragma once

#include "leakgate/api.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::base {

// The child sees the result pipe's write end on this descriptor.
inline constexpr int kResultFd = 3;
// ... and ProcessSpec::input, from its start, on this one (a sealed memory file: no size limit
// such as argv's 128 KiB per argument, nothing on disk).
inline constexpr int kInputFd = 4;

struct ProcessSpec {
    std::vector<std::string> argv; // argv[0] is the path executed
    std::chrono::milliseconds timeout{600'000};
    bool resultPipe = false;          // give the child kResultFd
    std::optional<std::string> input; // give the child these bytes on kInputFd
    bool forwardOutput = false;       // echo the child's stdout and stderr to our stderr
    // How long the pipes may stay open once the child is done (see ProcessOutcome::lingered).
    std::chrono::milliseconds grace{5'000};
};

struct ProcessOutcome {
    std::optional<int> exitCode; // set when the child exited
    std::optional<int> signal;   // set when a signal killed it
    bool timedOut = false;
    // The child was done (exited, or closed its result pipe after writing a result) but its
    // output stayed open past the grace: a process it left behind holds it, or an exit hook hangs.
    bool lingered = false;
    // Processes it left in other sessions or groups (setsid, a daemon's double fork), found as
    // leakgate's orphans (it is their subreaper, see adoptOrphans) and killed once it was done.
    int orphansKilled = 0;
    std::string stdoutText; // captured stdout (bounded)
    std::string stderrTail; // the last few KiB of stderr
    std::string resultText; // what the child wrote to kResultFd
};

// Makes this process the subreaper of everything it starts (PR_SET_CHILD_SUBREAPER): a process
// a worker left in another session becomes our child when its parent dies, so that runProcess can
// kill it. The command line calls it once at start.
LEAKGATE_API void adoptOrphans();

// Throws EnvironmentError when the process cannot be started at all.
ProcessOutcome runProcess(const ProcessSpec& spec);

// "killed by signal 11 (Segmentation fault)"
std::string describeSignal(int signal);

} // namespace leakgate::base
