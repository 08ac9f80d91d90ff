#include "lib/base/interrupt.h"

#include "lib/base/check.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace leakgate::interrupt {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr size_t kSlots = 64; // workers alive at once: one per command, plus pip during bisect

std::atomic<pid_t> g_groups[kSlots];
char g_partialFile[4096];
std::atomic<bool> g_hasPartialFile{false};

void onSignal(int signal) {
    for (auto& slot : g_groups) {
        pid_t group = slot.load();
        if (group > 0) ::kill(-group, SIGKILL);
    }
    if (g_hasPartialFile.load()) ::unlink(g_partialFile);
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

void installHandlers() {
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

} // namespace leakgate::interrupt
