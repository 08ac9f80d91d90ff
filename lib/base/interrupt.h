// What leakgate does when a signal ends it (SIGINT from Ctrl-C, SIGTERM, SIGHUP, SIGUSR1 and every
// other whose default action ends a process; SIGPIPE is ignored): it kills every worker process
// group it started (a worker sits in a group of its own, out of the terminal's reach), removes the
// report file it was writing and its scratch directory, and exits 128 + the signal (130, 143,
// 129). SIGKILL cannot be caught: each worker watches its parent and ends its group when the parent
// is gone (lib/worker/main.cpp). Everything
// here is async-signal-safe on the handler's side: fixed slots, atomics, kill, unlink, _exit.
#pragma once

#include "leakgate/api.h"

#include <sys/types.h>

namespace leakgate::base::interrupt {

// The parent installs the handlers once, before it starts anything.
LEAKGATE_API void installHandlers();

// The process groups alive now. Register right after fork, with the signals blocked (BlockedSignals).
void addProcessGroup(pid_t group);
void removeProcessGroup(pid_t group);
bool isProcessGroup(pid_t group);

// The parent of the process whose pid is `pidText` (decimal), from /proc/PID/stat, or -1 when it
// is gone or unreadable. System calls only (the signal handler uses it too).
pid_t parentOf(const char* pidText);

// The temporary file a report is being written to (at most one at a time); null clears it.
void setPartialFile(const char* path);

// The run's scratch directory (scratch_dir.h; at most one at a time): removed with all it holds
// when a signal ends the run. Null clears it.
void setScratchDirectory(const char* path);

// Blocks the three signals for a scope, so that a fork and the registration of its group happen
// as one step; the child unblocks them (with default handlers) before it execs.
class BlockedSignals {
  public:
    BlockedSignals();
    ~BlockedSignals();
    BlockedSignals(const BlockedSignals&) = delete;
    BlockedSignals& operator=(const BlockedSignals&) = delete;
    // In a forked child, before exec: default dispositions, then the mask the parent had.
    void restoreInChild() const;

  private:
    unsigned char previous_[128]; // a sigset_t, kept opaque here
};

} // namespace leakgate::base::interrupt
