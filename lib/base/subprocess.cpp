#include "lib/base/subprocess.h"

#include "leakgate/errors.h"
#include "lib/base/interrupt.h"
#include "lib/base/log.h"
#include "lib/base/pipe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <optional>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace leakgate::base {
namespace {

constexpr size_t kStderrTailBytes = 8 * 1024;
constexpr size_t kStdoutLimitBytes = 16 * 1024 * 1024;

void keepTail(std::string& text, size_t limit) {
    if (text.size() > limit) text.erase(0, text.size() - limit);
}

// `argv` is built before the fork: the child may not allocate.
[[noreturn]] void execChild(char* const* argv, Pipe& out, Pipe& err, Pipe* result, int input,
                            const interrupt::BlockedSignals& blocked) {
    // Only async-signal-safe calls from here on: we are a fork of a possibly threaded parent.
    ::setpgid(0, 0);
    ::dup2(out.writeEnd(), STDOUT_FILENO);
    ::dup2(err.writeEnd(), STDERR_FILENO);
    if (result) ::dup2(result->writeEnd(), kResultFd);
    if (input >= 0) ::dup2(input, kInputFd);
    blocked.restoreInChild();
    ::execv(argv[0], argv);
    const char message[] = "leakgate: cannot execute the worker\n";
    [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, message, sizeof(message) - 1);
    ::_exit(127);
}

// A memory file holding `content`, sealed, at offset 0; close-on-exec (the child's dup2 of it is not).
int memoryFile(const std::string& content) {
    int fd = ::memfd_create("leakgate-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        throw EnvironmentError(fmt::format("cannot create a memory file: {}", std::strerror(errno)));
    std::string_view left = content;
    while (!left.empty()) {
        ssize_t written = ::write(fd, left.data(), left.size());
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            int saved = errno;
            ::close(fd);
            throw EnvironmentError(fmt::format("cannot fill a memory file: {}", std::strerror(saved)));
        }
        left.remove_prefix(static_cast<size_t>(written));
    }
    ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    ::lseek(fd, 0, SEEK_SET);
    return fd;
}

// The pids whose parent is this process.
std::vector<pid_t> ownChildren() {
    std::vector<pid_t> children;
    const pid_t self = ::getpid();
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        // Read with system calls: a process that exits meanwhile is simply not a child.
        if (interrupt::parentOf(name.c_str()) == self) children.push_back(std::stoi(name));
    }
    return children;
}

// Held from a fork until its group is registered, and while orphans are looked for: a child
// forked by another thread (bisect -j) is never taken for an orphan before it is registered.
std::mutex g_spawning;

// Kills and reaps the orphans adopted from finished workers: children of ours that lead no
// group we started. Killing one can orphan its own children, so it goes round until none is left.
int killOrphans() {
    std::lock_guard<std::mutex> spawning(g_spawning);
    int subreaper = 0;
    if (::prctl(PR_GET_CHILD_SUBREAPER, &subreaper) != 0 || !subreaper) return 0;
    int killed = 0;
    for (int round = 0; round < 50; ++round) {
        std::vector<pid_t> orphans;
        for (pid_t child : ownChildren())
            if (!interrupt::isProcessGroup(child)) orphans.push_back(child);
        if (orphans.empty()) break;
        for (pid_t orphan : orphans) {
            ::kill(-orphan, SIGKILL); // the group it leads, if any (setsid made one)
            ::kill(orphan, SIGKILL);
            while (::waitpid(orphan, nullptr, 0) < 0 && errno == EINTR) {
            }
            ++killed;
        }
    }
    return killed;
}

} // namespace

void adoptOrphans() {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

std::string describeSignal(int signal) {
    const char* name = ::strsignal(signal);
    return fmt::format("killed by signal {} ({})", signal, name ? name : "unknown");
}

ProcessOutcome runProcess(const ProcessSpec& spec) {
    Pipe out, err;
    std::optional<Pipe> result;
    if (spec.resultPipe) result.emplace();
    struct Input {
        int fd = -1;
        ~Input() {
            if (fd >= 0) ::close(fd);
        }
    } input;
    if (spec.input) input.fd = memoryFile(*spec.input);

    std::vector<char*> argv;
    for (const auto& arg : spec.argv)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);

    pid_t pid;
    {
        // A signal between the fork and the registration would orphan the group.
        std::lock_guard<std::mutex> spawning(g_spawning);
        interrupt::BlockedSignals blocked;
        pid = ::fork();
        if (pid < 0) throw EnvironmentError(fmt::format("cannot fork: {}", std::strerror(errno)));
        if (pid == 0) execChild(argv.data(), out, err, result ? &*result : nullptr, input.fd, blocked);
        // Also set the group from the parent side, so a kill right after fork cannot miss it.
        ::setpgid(pid, pid);
        interrupt::addProcessGroup(pid);
    }
    // However this function ends (a failed poll included), the group is killed and reaped.
    struct GroupGuard {
        pid_t pid;
        bool reaped = false;
        int status = 0;
        // Kills the whole group (a timeout, or stragglers after exit) and reaps the worker.
        void finish() {
            ::kill(-pid, SIGKILL);
            if (!reaped) {
                while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
                }
                reaped = true;
            }
        }
        ~GroupGuard() {
            finish();
            interrupt::removeProcessGroup(pid);
        }
    } group{pid};
    out.closeWrite();
    err.closeWrite();
    if (result) result->closeWrite();

    ProcessOutcome outcome;
    struct Stream {
        int fd;
        std::string* sink;
        size_t limit;
        bool forward;
    };
    std::vector<Stream> streams = {
        {out.readEnd(), &outcome.stdoutText, kStdoutLimitBytes, spec.forwardOutput},
        {err.readEnd(), &outcome.stderrTail, kStderrTailBytes, spec.forwardOutput},
    };
    if (result) streams.push_back({result->readEnd(), &outcome.resultText, SIZE_MAX, false});

    const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
    int& status = group.status;
    bool& reaped = group.reaped;
    std::vector<char> buffer(64 * 1024);
    std::optional<std::chrono::steady_clock::time_point> doneAt; // exited, or its result is whole
    auto resultOpen = [&] {
        return std::any_of(streams.begin(), streams.end(),
                           [&](const Stream& stream) { return stream.sink == &outcome.resultText; });
    };
    // One poll of the open streams, waiting at most `waitMs`; returns whether anything was read or
    // closed.
    auto pump = [&](long long waitMs) {
        std::vector<pollfd> fds;
        for (const auto& stream : streams)
            fds.push_back({stream.fd, POLLIN, 0});
        int ready = ::poll(fds.data(), fds.size(), static_cast<int>(waitMs));
        if (ready < 0 && errno != EINTR) {
            throw EnvironmentError(fmt::format("poll failed: {}", std::strerror(errno)));
        }
        bool moved = false;
        for (size_t i = fds.size(); i-- > 0;) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            moved = true;
            ssize_t got = ::read(fds[i].fd, buffer.data(), buffer.size());
            if (got > 0) {
                Stream& stream = streams[i];
                if (stream.forward) {
                    [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, buffer.data(), got);
                }
                stream.sink->append(buffer.data(), static_cast<size_t>(got));
                keepTail(*stream.sink, stream.limit);
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                streams.erase(streams.begin() + static_cast<long>(i));
            }
        }
        return moved;
    };
    while (!streams.empty()) {
        auto now = std::chrono::steady_clock::now();
        if (!doneAt && (reaped || (result && !resultOpen() && !outcome.resultText.empty())))
            doneAt = now;
        if (doneAt && now - *doneAt >= spec.grace) {
            outcome.lingered = true;
            break;
        }
        if (now >= deadline) {
            // What already arrived is read first: leakgate itself may have been stopped (Ctrl-Z,
            // SIGSTOP) past the deadline while a whole result waited in the pipe.
            for (int round = 0; round < 1024 && !streams.empty() && pump(0); ++round) {
            }
            if (!(result && !resultOpen() && !outcome.resultText.empty())) outcome.timedOut = true;
            break;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        pump(std::min<long long>(left, 200));
        // A grandchild may hold the pipes open after the worker exits: once the worker is gone,
        // its group goes too.
        if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            ::kill(-pid, SIGKILL);
        }
    }
    group.finish();
    // What it left in other sessions was reparented to us when its parent died.
    outcome.orphansKilled = killOrphans();
    if (outcome.orphansKilled > 0) outcome.lingered = true;
    if (outcome.timedOut) {
        log::debug("worker {} timed out after {} ms", pid, spec.timeout.count());
    }
    if (WIFEXITED(status)) outcome.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status) && !outcome.timedOut) outcome.signal = WTERMSIG(status);
    return outcome;
}

} // namespace leakgate::base
