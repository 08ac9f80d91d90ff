// Release environments: one venv per (package, extras, version, Python major.minor), made with pip in
// leakgate's cache so that a machine downloads each release once. The venvs use the Python this
// build embeds, so `--python <venv>/bin/python` always matches it.
#pragma once

#include "lib/python/environment.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace leakgate {

// The file in a venv that says it was made whole; its time is the venv's last use.
inline constexpr const char* kReadyMarker = ".leakgate-ready";

// $LEAKGATE_CACHE_DIR, else $XDG_CACHE_HOME/leakgate, else ~/.cache/leakgate.
std::filesystem::path cacheDir();

// The environment of the interpreter `executable` (lib/python/environment.h), from the cache's
// environments/ when its fingerprint is unchanged since it was last asked, else asked (and the
// answer kept). Asking starts that interpreter: as long as the rest of a small scan. Not kept
// when LEAKGATE_NO_ENVIRONMENT_CACHE is set; a cache that cannot be read or written is skipped.
python::Environment pythonEnvironment(const std::string& executable);

// One release to install: package[extra,...]==version.
struct Release {
    std::string package;
    std::vector<std::string> extras;
    std::string version;
};

// "nvidia-cutlass-dsl[cu13]==4.6.1"
std::string requirementOf(const Release& release);

// The interpreter of a venv holding the release, made if missing (its venv's name carries the
// extras: nvidia-cutlass-dsl-4.6.1+cu13-py3.11). Throws EnvironmentError (with the tail of pip's
// output) when it cannot be made.
std::string ensureReleaseEnvironment(const Release& release, std::chrono::seconds timeout);

// Every release of `package` on the index, as pip lists them (pip index versions; with `pre`,
// pre- and dev-releases too). lib/commands/versions.h orders them.
std::vector<std::string> listReleases(const std::string& package, bool pre);

} // namespace leakgate
