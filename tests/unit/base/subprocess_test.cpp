#include "lib/base/subprocess.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <thread>

namespace leakgate::base {
namespace {

ProcessSpec shell(const std::string& script,
                  std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.timeout = timeout;
    return spec;
}

TEST(Process, CapturesStdoutStderrAndTheExitCode) {
    ProcessOutcome outcome = runProcess(shell("echo out; echo err >&2; exit 4"));
    EXPECT_EQ(outcome.exitCode, 4);
    EXPECT_EQ(outcome.stdoutText, "out\n");
    EXPECT_EQ(outcome.stderrTail, "err\n");
    EXPECT_FALSE(outcome.timedOut);
}

TEST(Process, ReadsTheResultPipe) {
    ProcessSpec spec = shell("printf result >&3");
    spec.resultPipe = true;
    EXPECT_EQ(runProcess(spec).resultText, "result");
}

TEST(Process, ReportsTheSignalThatKilledTheChild) {
    ProcessOutcome outcome = runProcess(shell("kill -SEGV $$"));
    EXPECT_EQ(outcome.signal, SIGSEGV);
    EXPECT_FALSE(outcome.exitCode.has_value());
    EXPECT_EQ(describeSignal(SIGSEGV), "killed by signal 11 (Segmentation fault)");
}

// A killed process whose parent died may stay a zombie when nothing reaps orphans (PID 1 in a
// container): dead all the same.
bool isDead(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pidText, name, state;
    if (!(stat >> pidText >> name >> state)) return true;
    return state == "Z" || state == "X";
}

TEST(Process, ATimeoutKillsTheWholeProcessGroup) {
    // The grandchild prints its pid and would outlive a kill of the child alone.
    ProcessOutcome outcome =
        runProcess(shell("sleep 60 & echo $!; wait", std::chrono::milliseconds(500)));
    EXPECT_TRUE(outcome.timedOut);
    pid_t grandchild = std::stoi(outcome.stdoutText);
    bool gone = false;
    for (int attempt = 0; attempt < 50 && !gone; ++attempt) {
        gone = isDead(grandchild);
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(gone);
}

TEST(Process, StragglersThatHoldThePipesDoNotBlockTheParent) {
    ProcessOutcome outcome = runProcess(shell("sleep 60 & exit 0", std::chrono::seconds(20)));
    EXPECT_EQ(outcome.exitCode, 0);
    EXPECT_FALSE(outcome.timedOut);
}

} // namespace
} // namespace leakgate::base
