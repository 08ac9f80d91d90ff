#include "lib/base/forked_child.h"

#include "leakgate/errors.h"
#include "lib/base/interrupt.h"
#include "lib/base/pipe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace leakgate::base {
namespace {

constexpr size_t kStderrTailBytes = 8 * 1024;
// A stack overflow must fault, not step over a one-page guard into the next mapping: a frame of
// libclang's parser can be larger than a page.
constexpr size_t kStackGuardBytes = size_t{1} << 20;
constexpr int kWorkThrew = 3; // leakgate's "errored" exit code

using Work = std::function<void(const ChildChannel&)>;

int runWork(const Work& work, const ChildChannel& channel) {
    try {
        work(channel);
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "leakgate: %s\n", error.what());
        return kWorkThrew;
    }
}

struct ThreadArguments {
    const Work* work;
    const ChildChannel* channel;
    int status = 0;
};

void* threadMain(void* data) {
    auto* arguments = static_cast<ThreadArguments*>(data);
    arguments->status = runWork(*arguments->work, *arguments->channel);
    return nullptr;
}

// Runs the work on a thread with a stack of `stackBytes`; on the calling thread when that thread
// cannot be made (a tight RLIMIT_AS, say), which still parses all but the deepest code.
int runOnLargeStack(const Work& work, const ChildChannel& channel, size_t stackBytes) {
    if (stackBytes > 0) {
        pthread_attr_t attributes;
        if (::pthread_attr_init(&attributes) == 0) {
            ThreadArguments arguments{&work, &channel};
            pthread_t thread;
            bool started = ::pthread_attr_setstacksize(&attributes, stackBytes) == 0 &&
                           ::pthread_attr_setguardsize(&attributes, kStackGuardBytes) == 0 &&
                           ::pthread_create(&thread, &attributes, threadMain, &arguments) == 0;
            ::pthread_attr_destroy(&attributes);
            if (started) {
                ::pthread_join(thread, nullptr);
                return arguments.status;
            }
        }
    }
    return runWork(work, channel);
}

// The child: its own process group, default signal handling, stdout and stderr to the caller's
// pipe (a report may be going to the caller's stdout), then the work, then _exit: none of the
// caller's exit handlers or buffered output is run or flushed twice.
[[noreturn]] void childMain(const Work& work, const ForkedChildSpec& spec, Pipe& result, Pipe& err,
                            const interrupt::BlockedSignals& blocked) {
    ::setpgid(0, 0);
    ::dup2(err.writeEnd(), STDOUT_FILENO);
    ::dup2(err.writeEnd(), STDERR_FILENO);
    err.closeRead();
    err.closeWrite();
    result.closeRead();
    blocked.restoreInChild();
    ChildChannel channel(result.writeEnd());
    ::_exit(runOnLargeStack(work, channel, spec.stackBytes));
}

void keepTail(std::string& text, size_t limit) {
    if (text.size() > limit) text.erase(0, text.size() - limit);
}

} // namespace

void ChildChannel::send(std::string_view bytes) const {
    while (!bytes.empty()) {
        ssize_t written = ::write(fd_, bytes.data(), bytes.size());
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return; // the caller is gone: nobody to tell
        bytes.remove_prefix(static_cast<size_t>(written));
    }
}

std::string signalName(int signal) {
    const char* name = ::sigabbrev_np(signal);
    return name ? fmt::format("SIG{}", name) : fmt::format("signal {}", signal);
}

ForkedChildOutcome runInForkedChild(const Work& work, const ForkedChildSpec& spec) {
    Pipe result, err;
    pid_t pid;
    {
        // A signal between the fork and the registration would orphan the group.
        interrupt::BlockedSignals blocked;
        pid = ::fork();
        if (pid < 0) throw EnvironmentError(fmt::format("cannot fork: {}", std::strerror(errno)));
        if (pid == 0) childMain(work, spec, result, err, blocked);
        // Also from this side, so that a kill right after the fork cannot miss the group.
        ::setpgid(pid, pid);
        interrupt::addProcessGroup(pid);
    }
    // However this ends (a failed poll included), the child is reaped, killed with its group
    // first unless it exited by itself. Once reaped, its id may be another process's: no kill.
    struct GroupGuard {
        pid_t pid;
        int status = 0;
        bool reaped = false;
        void finish() {
            if (reaped) return;
            ::kill(-pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            reaped = true;
        }
        ~GroupGuard() {
            finish();
            interrupt::removeProcessGroup(pid);
        }
    } group{pid};
    result.closeWrite();
    err.closeWrite();

    ForkedChildOutcome outcome;
    struct Stream {
        int fd;
        std::string* sink;
        size_t limit;
    };
    std::vector<Stream> streams = {{result.readEnd(), &outcome.sent, SIZE_MAX},
                                   {err.readEnd(), &outcome.stderrTail, kStderrTailBytes}};
    const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
    std::vector<char> buffer(64 * 1024);
    // Both pipes reach their end when the child exits (it gives them to no one).
    while (!streams.empty()) {
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            outcome.timedOut = true;
            break;
        }
        std::vector<pollfd> fds;
        for (const auto& stream : streams)
            fds.push_back({stream.fd, POLLIN, 0});
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        int ready =
            ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(left, 1, 200)));
        if (ready < 0 && errno != EINTR)
            throw EnvironmentError(fmt::format("poll failed: {}", std::strerror(errno)));
        for (size_t i = fds.size(); i-- > 0;) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t got = ::read(fds[i].fd, buffer.data(), buffer.size());
            if (got > 0) {
                streams[i].sink->append(buffer.data(), static_cast<size_t>(got));
                keepTail(*streams[i].sink, streams[i].limit);
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                streams.erase(streams.begin() + static_cast<long>(i));
            }
        }
    }
    // The pipes are closed: the child is on its way out. Give it until the deadline to get there.
    while (!outcome.timedOut && !group.reaped) {
        pid_t done = ::waitpid(pid, &group.status, WNOHANG);
        if (done == pid) {
            group.reaped = true;
        } else if (std::chrono::steady_clock::now() >= deadline) {
            outcome.timedOut = true;
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    group.finish();
    if (WIFEXITED(group.status)) outcome.exitCode = WEXITSTATUS(group.status);
    if (WIFSIGNALED(group.status) && !outcome.timedOut) outcome.signal = WTERMSIG(group.status);
    return outcome;
}

} // namespace leakgate::base
