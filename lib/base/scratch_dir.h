// The run's scratch directory. A command makes one under $TMPDIR (or /tmp) when it starts and
// sets TMPDIR to it, so every process the run starts (workers, the DSL's own temporary files, pip
// and uv in bisect) writes its temporary files there; it is removed with all it holds when the
// command ends, however it ends: a normal return, an exception, or a signal (interrupt.h). A
// worker killed at its timeout leaves nothing behind in the machine's /tmp.
#pragma once

#include "leakgate/api.h"

#include <optional>
#include <string>

namespace leakgate::base {

class LEAKGATE_API RunScratchDirectory {
  public:
    // Without a directory to make one in, the run goes on with TMPDIR as it was (logged).
    RunScratchDirectory();
    ~RunScratchDirectory();
    RunScratchDirectory(const RunScratchDirectory&) = delete;
    RunScratchDirectory& operator=(const RunScratchDirectory&) = delete;

    // Empty when none could be made.
    const std::string& path() const { return path_; }

  private:
    std::string path_;
    std::optional<std::string> previousTmpdir_;
};

} // namespace leakgate::base
