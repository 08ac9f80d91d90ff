#include "lib/base/interrupt.h"

#include "lib/base/check.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace leakgate::base::interrupt {
namespace {

// Every signal whose default action ends the process without a core (and SIGQUIT, which dumps
// one): leakgate ending on any of them still kills its workers and removes its files. SIGPIPE is
// ignored instead (installHandlers): a reader that stops early (`leakgate scan ... | head -2`)
// does not stop the run, whose JSON report may still be wanted.
constexpr int kSignals[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                            SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ};
constexpr size_t kSlots = 64; // workers alive at once: one per command, plus pip during bisect

std::atomic<pid_t> g_groups[kSlots];
char g_partialFile[4096];
std::atomic<bool> g_hasPartialFile{false};
char g_scratchDirectory[4096];
std::atomic<bool> g_hasScratchDirectory{false};

// Calls visit(name) for each entry of the open directory `dir` that getdents64 returns from its
// current offset, "." and ".." left out. System calls only: safe in the signal handler.
template <typename Visit> void forEachEntry(int dir, Visit&& visit) {
    alignas(8) char buffer[4096];
    for (long got; (got = ::syscall(SYS_getdents64, dir, buffer, sizeof(buffer))) > 0;) {
        for (long offset = 0; offset < got;) {
            // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name
            unsigned short recordLength;
            std::memcpy(&recordLength, buffer + offset + 16, sizeof(recordLength));
            const char* name = buffer + offset + 19;
            offset += recordLength;
            if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
            visit(name);
        }
    }
}

// What the killed workers left in other sessions (setsid): once a worker is reaped, those are
// reparented to us, their subreaper (lib/base/subprocess.h, adoptOrphans), and killed here.
// System calls only (open, getdents64, read, kill, waitpid).
void killAdoptedOrphans() {
    int subreaper = 0;
    if (::prctl(PR_GET_CHILD_SUBREAPER, &subreaper) != 0 || !subreaper) return;
    const pid_t self = ::getpid();
    for (int round = 0; round < 20; ++round) {
        int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0) return;
        bool found = false;
        forEachEntry(dir, [&](const char* name) {
            if (name[0] < '0' || name[0] > '9' || parentOf(name) != self) return;
            pid_t orphan = 0;
            for (const char* digit = name; *digit; ++digit)
                orphan = orphan * 10 + (*digit - '0');
            ::kill(-orphan, SIGKILL);
            ::kill(orphan, SIGKILL);
            ::waitpid(orphan, nullptr, 0);
            found = true;
        });
        ::close(dir);
        if (!found) return;
    }
}

// Removes `name` (in the directory `parent`, a descriptor or AT_FDCWD) and, for a directory, all it
// holds, down to kMaxDepth levels (one descriptor each); returns whether `name` is gone. A round
// that removes nothing ends the directory's rounds, so an entry that cannot go (too deep, no
// permission) costs one visit, not a retry per level above it: the time is linear in the tree.
// System calls only (openat, getdents64, lseek, unlinkat).
constexpr int kMaxDepth = 256;

bool removeTree(int parent, const char* name, int depth) {
    if (::unlinkat(parent, name, 0) == 0) return true;
    if (depth > kMaxDepth) return false;
    int dir = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir >= 0) {
        // Entries are removed as they are read: read again from the start while that removes some.
        for (;;) {
            bool removed = false;
            ::lseek(dir, 0, SEEK_SET);
            forEachEntry(dir, [&](const char* entry) {
                if (removeTree(dir, entry, depth + 1)) removed = true;
            });
            if (!removed) break;
        }
        ::close(dir);
    }
    return ::unlinkat(parent, name, AT_REMOVEDIR) == 0;
}

void onSignal(int signal) {
    for (auto& slot : g_groups) {
        pid_t group = slot.load();
        if (group > 0) ::kill(-group, SIGKILL);
    }
    for (auto& slot : g_groups) {
        pid_t group = slot.load();
        if (group > 0) ::waitpid(group, nullptr, 0); // reaped: its orphans are ours now
    }
    killAdoptedOrphans();
    if (g_hasPartialFile.load()) ::unlink(g_partialFile);
    if (g_hasScratchDirectory.load()) removeTree(AT_FDCWD, g_scratchDirectory, 0);
    ::_exit(128 + signal);
}

sigset_t signalSet() {
    sigset_t set;
    sigemptyset(&set);
    for (int signal : kSignals)
        sigaddset(&set, signal);
    return set;
}

} // namespace

// The parent of `pid`, from /proc/PID/stat (the field after the command name in parentheses),
// or -1. System calls only: this runs in the signal handler.
pid_t parentOf(const char* pidText) {
    char path[64] = "/proc/";
    size_t length = std::strlen(pidText);
    if (length > 20) return -1;
    std::memcpy(path + 6, pidText, length);
    std::memcpy(path + 6 + length, "/stat", 6);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char stat[1024];
    ssize_t got = ::read(fd, stat, sizeof(stat) - 1);
    ::close(fd);
    if (got <= 0) return -1;
    stat[got] = '\0';
    char* close = std::strrchr(stat, ')');
    if (!close || close[1] != ' ' || !close[2] || close[3] != ' ') return -1;
    pid_t parent = 0;
    for (const char* digit = close + 4; *digit >= '0' && *digit <= '9'; ++digit)
        parent = parent * 10 + (*digit - '0');
    return parent;
}

void installHandlers() {
    ::signal(SIGPIPE, SIG_IGN); // a write to a closed reader fails with EPIPE instead
    struct sigaction action {};
    action.sa_handler = onSignal;
    action.sa_mask = signalSet(); // one cleanup at a time
    for (int signal : kSignals)
        ::sigaction(signal, &action, nullptr);
}

void addProcessGroup(pid_t group) {
    for (auto& slot : g_groups) {
        pid_t empty = 0;
        if (slot.compare_exchange_strong(empty, group)) return;
    }
    LEAKGATE_CHECK(!"more live worker groups than interrupt slots");
}

void removeProcessGroup(pid_t group) {
    for (auto& slot : g_groups) {
        pid_t expected = group;
        if (slot.compare_exchange_strong(expected, 0)) return;
    }
}

bool isProcessGroup(pid_t group) {
    for (auto& slot : g_groups) {
        if (slot.load() == group) return true;
    }
    return false;
}

void setPartialFile(const char* path) {
    g_hasPartialFile.store(false);
    if (!path) return;
    size_t length = std::strlen(path);
    if (length >= sizeof(g_partialFile)) return; // too long to remember: the rename is still atomic
    std::memcpy(g_partialFile, path, length + 1);
    g_hasPartialFile.store(true);
}

void setScratchDirectory(const char* path) {
    g_hasScratchDirectory.store(false);
    if (!path) return;
    size_t length = std::strlen(path);
    if (length >= sizeof(g_scratchDirectory)) return;
    std::memcpy(g_scratchDirectory, path, length + 1);
    g_hasScratchDirectory.store(true);
}

BlockedSignals::BlockedSignals() {
    static_assert(sizeof(sigset_t) <= sizeof(previous_));
    sigset_t set = signalSet();
    ::sigprocmask(SIG_BLOCK, &set, reinterpret_cast<sigset_t*>(previous_));
}

BlockedSignals::~BlockedSignals() {
    ::sigprocmask(SIG_SETMASK, reinterpret_cast<const sigset_t*>(previous_), nullptr);
}

void BlockedSignals::restoreInChild() const {
    for (int signal : kSignals)
        ::signal(signal, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, reinterpret_cast<const sigset_t*>(previous_), nullptr);
}

} // namespace leakgate::base::interrupt
