// Runs a piece of work in a forked child process, so that what goes wrong in it (a crash, a stack
// overflow, a hang) ends that child and never the caller. The C/C++ lint parses every translation
// unit this way (lib/lint/cxx.cpp): libclang's parser recurses as deep as the code nests, and a
// 10,000-branch `else if` chain overflowed the stack of the leakgate process itself, which died
// with the Python findings of the same run.
//
// The sibling of lib/base/subprocess.h's runProcess, without the exec: the child is a copy of the
// caller and runs a function of it, so nothing has to be encoded on a command line or found on
// disk. That is safe because the caller is single-threaded (leakgate starts no threads): no lock
// another thread held is copied into the child locked, so the child may allocate and call
// libclang freely. The rest is runProcess's: the child leads a process group of its own,
// registered with lib/base/interrupt.h (Ctrl-C kills it), and a timeout kills that group.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace leakgate::base {

struct ForkedChildSpec {
    std::chrono::milliseconds timeout{300'000};
    // The work runs on a thread of the child with a stack this large: reserved, and touched only as
    // deep as the work goes, so many times a main thread's 8 MiB costs nothing until it is used.
    // 0: on the child's main thread (the caller's stack limit).
    size_t stackBytes = size_t{256} << 20;
};

struct ForkedChildOutcome {
    std::string sent;            // what the work sent, in order, up to where the child ended
    std::optional<int> exitCode; // 0: the work returned; 3: it threw (the message is on stderr)
    std::optional<int> signal;   // the signal that ended the child (not set when it timed out)
    bool timedOut = false;
    std::string stderrTail; // the last few KiB of the child's stdout and stderr
};

// The child's end of the channel back to the caller: what is sent arrives in order, and what was
// sent before a crash still arrives (a progress mark, say).
class ChildChannel {
  public:
    explicit ChildChannel(int fd) : fd_(fd) {}
    void send(std::string_view bytes) const;

  private:
    int fd_;
};

// Forks, runs `work` in the child and waits for it to end or for the timeout. Throws
// EnvironmentError when no child can be started.
ForkedChildOutcome runInForkedChild(const std::function<void(const ChildChannel&)>& work,
                                    const ForkedChildSpec& spec);

// "SIGSEGV", "SIGABRT"; "signal N" for one without a name.
std::string signalName(int signal);

} // namespace leakgate::base
