// Output files are written whole or not at all, and only what the path names is changed:
// - a regular file (or a new one): a temporary file in the same directory, given the old file's
//   mode and owner (a new file: 0666 less the umask), fsync'd, then renamed over it;
// - a symlink: written through, to the file it names (the link stays);
// - a regular file with other hard links: rewritten in place, so that every link sees it;
// - a character device or a FIFO (/dev/null, /dev/stdout, a pipe to a reader): written in place;
//   a FIFO with no reader is an error rather than a wait;
// - a directory, a socket or a block device: refused.
// "-" means stdout.
#pragma once

#include <string>
#include <string_view>

namespace leakgate::base {

void writeOutputFile(const std::string& path, std::string_view content);

// Whether two paths name the same file: one inode when both exist (through symlinks and hard
// links), else the same absolute path once the symlinks of its existing part are resolved.
bool sameFile(const std::string& a, const std::string& b);

} // namespace leakgate::base
