// A pipe whose ends close themselves (close-on-exec until a child dup2()s an end onto a number of
// its own). Shared by the two ways leakgate starts a child: runProcess (lib/base/subprocess.h)
// and runInForkedChild (lib/base/forked_child.h).
#pragma once

#include "leakgate/errors.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace leakgate::base {

class Pipe {
  public:
    Pipe() {
        if (::pipe2(fds_, O_CLOEXEC) != 0)
            throw EnvironmentError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
    }
    ~Pipe() {
        closeRead();
        closeWrite();
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    Pipe(Pipe&&) = delete;
    Pipe& operator=(Pipe&&) = delete;

    int readEnd() const { return fds_[0]; }
    int writeEnd() const { return fds_[1]; }
    void closeRead() { closeFd(fds_[0]); }
    void closeWrite() { closeFd(fds_[1]); }

  private:
    static void closeFd(int& fd) {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
    int fds_[2] = {-1, -1};
};

} // namespace leakgate::base
