#include "lib/base/atomic_file.h"

#include "lib/base/errors.h"
#include "lib/base/interrupt.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace leakgate {
namespace {

void writeAll(int fd, std::string_view content, const std::string& what) {
    while (!content.empty()) {
        ssize_t written = ::write(fd, content.data(), content.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            throw EnvironmentError(fmt::format("cannot write {}: {}", what, std::strerror(errno)));
        }
        content.remove_prefix(static_cast<size_t>(written));
    }
}

} // namespace

void writeOutputFile(const std::string& path, std::string_view content) {
    if (path == "-") {
        std::fflush(stdout);
        writeAll(STDOUT_FILENO, content, "stdout");
        return;
    }
    std::filesystem::path target(path);
    std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
    std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
        throw EnvironmentError(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
    }
    // A signal now removes the partial file (lib/base/interrupt.h); the rename makes it whole.
    interrupt::setPartialFile(tmpl.c_str());
    struct Forget {
        ~Forget() { interrupt::setPartialFile(nullptr); }
    } forget;
    try {
        writeAll(fd, content, path);
        if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) {
            throw EnvironmentError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
        }
    } catch (...) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw;
    }
    ::close(fd);
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        int saved = errno;
        ::unlink(tmpl.c_str());
        throw EnvironmentError(fmt::format("cannot write {}: {}", path, std::strerror(saved)));
    }
}

} // namespace leakgate
