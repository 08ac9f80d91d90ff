#include "lib/base/scratch_dir.h"

#include "lib/base/interrupt.h"
#include "lib/base/log.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace leakgate::base {

namespace fs = std::filesystem;

RunScratchDirectory::RunScratchDirectory() {
    if (const char* tmpdir = std::getenv("TMPDIR")) previousTmpdir_ = tmpdir;
    std::error_code error;
    fs::path parent = fs::temp_directory_path(error);
    if (error) parent = "/tmp";
    std::string pattern = (parent / "leakgate-run-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
        log::debug("no scratch directory under {}: {}; temporary files go there directly",
                   parent.string(), std::strerror(errno));
        return;
    }
    path_ = pattern;
    interrupt::setScratchDirectory(path_.c_str());
    ::setenv("TMPDIR", path_.c_str(), 1);
}

RunScratchDirectory::~RunScratchDirectory() {
    if (path_.empty()) return;
    if (previousTmpdir_)
        ::setenv("TMPDIR", previousTmpdir_->c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    std::error_code error;
    fs::remove_all(path_, error);
    if (error) log::debug("could not remove the scratch directory {}: {}", path_, error.message());
    interrupt::setScratchDirectory(nullptr);
}

} // namespace leakgate::base
