// Runs a child process in its own process group with captured output, an optional result pipe
// and a timeout. On timeout the whole group is killed, so a hung target cannot leave stragglers.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::worker {

// The child sees the result pipe's write end on this descriptor.
inline constexpr int kResultFd = 3;

struct ProcessSpec {
    std::vector<std::string> argv; // argv[0] is the path executed
    std::chrono::milliseconds timeout{600'000};
    bool resultPipe = false;    // give the child kResultFd
    bool forwardOutput = false; // echo the child's stdout and stderr to our stderr
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
    std::string stdoutText; // captured stdout (bounded)
    std::string stderrTail; // the last few KiB of stderr
    std::string resultText; // what the child wrote to kResultFd
};

// Throws EnvironmentError when the process cannot be started at all.
ProcessOutcome runProcess(const ProcessSpec& spec);

// "killed by signal 11 (Segmentation fault)"
std::string describeSignal(int signal);

} // namespace leakgate::worker
