// `leakgate cache`: what bisect keeps in leakgate's cache (lib/commands/environments.h), its
// sizes, and removing it.
#pragma once

#include "leakgate/api.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::commands {

// What the cache holds (`leakgate cache list`).
struct CachedVenv {
    std::string name; // nvidia-cutlass-dsl-4.6.1-py3.11
    std::uintmax_t bytes = 0;
    std::uintmax_t linkedBytes = 0; // of its files with another hard link (uv's cache, another venv)
    bool ready = false;             // false: a half-made venv of an interrupted run
    std::filesystem::file_time_type lastUsed; // the last bisect that used it (or its making)
};
struct CacheContents {
    std::filesystem::path dir;
    std::vector<CachedVenv> venvs; // by name
    std::uintmax_t wheelBytes = 0;
    std::size_t wheelFiles = 0;
    std::size_t environmentFiles = 0; // interpreters' environments (pythonEnvironment)
    std::uintmax_t environmentBytes = 0;
    std::uintmax_t uvBytes = 0;     // uv's cache (uv/), where the venvs' hard links point
    std::uintmax_t otherBytes = 0;  // the tests' tools and anything else under dir
    std::uintmax_t uniqueBytes = 0; // the disk all of it takes: a file of several links once
    std::uintmax_t totalBytes() const { return uniqueBytes; }
};
LEAKGATE_API CacheContents readCache();

// `leakgate cache prune`: removes venvs, the interpreters' kept environments, and the
// wheelhouse's files and uv's cache (unless keepWheels), only those unused (venvs) or unwritten
// (files; uv's cache by its newest entry) for `olderThanDays` when it is set. Returns the names
// removed and the bytes freed (a file still linked from what stays is not freed).
struct PruneOptions {
    bool keepWheels = false;
    std::optional<double> olderThanDays;
};
struct PruneOutcome {
    std::vector<std::string> removed;
    std::uintmax_t freedBytes = 0;
};
LEAKGATE_API PruneOutcome pruneCache(const PruneOptions& options);

// The text `cache list` and `cache prune` print.
LEAKGATE_API std::string formatCacheList(const CacheContents& contents);
LEAKGATE_API std::string formatPruneOutcome(const PruneOutcome& outcome, const CacheContents& after);
// One line for the end of a bisect: "cache: 4.6 GiB in ~/.cache/leakgate (...)".
std::string cacheSummaryLine(const CacheContents& contents);

} // namespace leakgate::commands
