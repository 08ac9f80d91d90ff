#include "lib/base/atomic_file.h"

#include "leakgate/errors.h"
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

namespace leakgate::base {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
    throw EnvironmentError(fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
}

void writeAll(int fd, std::string_view content, const std::string& what) {
    while (!content.empty()) {
        ssize_t written = ::write(fd, content.data(), content.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            fail("write", what, errno);
        }
        content.remove_prefix(static_cast<size_t>(written));
    }
}

// The file a path finally names: symlinks followed (a dangling one names the file it would
// create). Loops end with ELOOP like the kernel's.
std::string followLinks(const std::string& path) {
    std::string current = path;
    for (int hops = 0; hops < 40; ++hops) {
        struct stat info {};
        if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return current;
        std::error_code error;
        fs::path link = fs::read_symlink(current, error);
        if (error) fail("read the link", current, error.value());
        current = link.is_absolute() ? link.string() : (fs::path(current).parent_path() / link).string();
    }
    fail("follow", path, ELOOP);
}

mode_t defaultMode() {
    mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

// In place: an open of what is there, truncated only when it is a regular file.
void writeInPlace(const std::string& path, std::string_view content, bool regular) {
    int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | (regular ? 0 : O_NONBLOCK);
    int fd = ::open(path.c_str(), flags);
    if (fd < 0) {
        if (errno == ENXIO)
            throw EnvironmentError(fmt::format("cannot write {}: a FIFO with no reader", path));
        fail("open", path, errno);
    }
    if (!regular) {
        // Back to blocking writes now that a reader is known to be there.
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    try {
        writeAll(fd, content, path);
        if (regular && (::ftruncate(fd, static_cast<off_t>(content.size())) != 0 || ::fsync(fd) != 0))
            fail("write", path, errno);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
}

void replaceAtomically(const std::string& path, std::string_view content, const struct stat* old) {
    fs::path target(path);
    fs::path dir = target.has_parent_path() ? target.parent_path() : ".";
    std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) fail("create", path, errno);
    // A signal now removes the partial file (lib/base/interrupt.h); the rename makes it whole.
    interrupt::setPartialFile(tmpl.c_str());
    struct Forget {
        ~Forget() { interrupt::setPartialFile(nullptr); }
    } forget;
    try {
        writeAll(fd, content, path);
        mode_t mode = old ? (old->st_mode & 07777) : defaultMode();
        if (old && (old->st_uid != ::geteuid() || old->st_gid != ::getegid())) {
            // Root keeps the owner; anyone else cannot give a file away, and keeps the group if allowed.
            if (::fchown(fd, old->st_uid, old->st_gid) != 0 && ::fchown(fd, -1, old->st_gid) != 0) {
                // The file becomes the writer's own, as any editor's save would make it.
            }
        }
        if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) fail("write", path, errno);
    } catch (...) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw;
    }
    ::close(fd);
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        int saved = errno;
        ::unlink(tmpl.c_str());
        fail("write", path, saved);
    }
}

} // namespace

void writeOutputFile(const std::string& path, std::string_view content) {
    if (path == "-") {
        std::fflush(stdout);
        writeAll(STDOUT_FILENO, content, "stdout");
        return;
    }
    const std::string destination = followLinks(path);
    struct stat info {};
    if (::stat(destination.c_str(), &info) != 0) {
        if (errno != ENOENT) fail("write", path, errno);
        replaceAtomically(destination, content, nullptr);
        return;
    }
    if (S_ISREG(info.st_mode)) {
        if (info.st_nlink > 1) {
            writeInPlace(destination, content, true);
        } else {
            replaceAtomically(destination, content, &info);
        }
    } else if (S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode)) {
        writeInPlace(destination, content, false);
    } else {
        const char* kind = S_ISDIR(info.st_mode)   ? "a directory"
                           : S_ISBLK(info.st_mode) ? "a block device"
                                                   : "a socket";
        throw EnvironmentError(fmt::format("will not write {}: it is {}", path, kind));
    }
}

bool sameFile(const std::string& a, const std::string& b) {
    struct stat first {
    }, second{};
    bool firstExists = ::stat(a.c_str(), &first) == 0;
    bool secondExists = ::stat(b.c_str(), &second) == 0;
    if (firstExists && secondExists)
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino;
    if (firstExists != secondExists) return false;
    std::error_code error;
    fs::path left = fs::weakly_canonical(fs::absolute(followLinks(a)), error);
    if (error) return false;
    fs::path right = fs::weakly_canonical(fs::absolute(followLinks(b)), error);
    return !error && left == right;
}

} // namespace leakgate::base
