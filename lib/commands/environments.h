// Release environments: one venv per (package, version, Python major.minor), made with pip in
// leakgate's cache so that a machine downloads each release once. The venvs use the Python this
// build embeds, so `--python <venv>/bin/python` always matches it.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace leakgate {

// $LEAKGATE_CACHE_DIR, else $XDG_CACHE_HOME/leakgate, else ~/.cache/leakgate.
std::filesystem::path cacheDir();

// The interpreter of a venv holding `package==version`, made if missing. Throws
// EnvironmentError (with the tail of pip's output) when it cannot be made.
std::string ensureReleaseEnvironment(const std::string& package, const std::string& version,
                                     std::chrono::seconds timeout);

// Every release of `package` on the index, oldest first (pip index versions).
std::vector<std::string> listReleases(const std::string& package);

// Numeric comparison of dotted versions ("4.10.0" > "4.9.2"); non-numeric parts compare as text.
int compareVersions(const std::string& a, const std::string& b);

} // namespace leakgate
