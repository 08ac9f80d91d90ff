#include "lib/commands/cache.h"

#include "leakgate/errors.h"
#include "lib/commands/environments.h"
#include "lib/report/units.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include <sys/stat.h>

namespace leakgate::commands {

namespace fs = std::filesystem;

namespace {

// The regular files under `path` (links not followed, errors skipped: a file removed meanwhile
// counts as nothing): their bytes, those of them with another hard link (uv installs a venv as
// links into its cache), and, counted once across every call with the same `seen`, their disk.
struct DiskUse {
    std::uintmax_t bytes = 0, linked = 0, unique = 0;
};
using SeenFiles = std::set<std::pair<dev_t, ino_t>>;

void addFile(const fs::path& file, DiskUse& use, SeenFiles& seen) {
    struct stat info {};
    if (::lstat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return;
    const auto bytes = static_cast<std::uintmax_t>(info.st_size);
    use.bytes += bytes;
    if (info.st_nlink > 1) use.linked += bytes;
    if (info.st_nlink == 1 || seen.emplace(info.st_dev, info.st_ino).second) use.unique += bytes;
}

DiskUse diskUse(const fs::path& path, SeenFiles& seen) {
    DiskUse use;
    std::error_code error;
    if (fs::is_regular_file(fs::symlink_status(path, error))) {
        addFile(path, use, seen);
        return use;
    }
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied,
                                                    error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
        std::error_code ignored;
        if (it->is_regular_file(ignored) && !it->is_symlink(ignored)) addFile(it->path(), use, seen);
    }
    return use;
}

// What removing `path` now frees: its files that nothing else links.
std::uintmax_t freedByRemoving(const fs::path& path) {
    SeenFiles seen;
    const DiskUse use = diskUse(path, seen);
    return use.bytes - use.linked;
}

// The newest write under `path` and its folders one level down (uv's cache: its buckets' entries).
fs::file_time_type newestWrite(const fs::path& path) {
    std::error_code ignored;
    fs::file_time_type newest = fs::last_write_time(path, ignored);
    for (const auto& entry : fs::directory_iterator(path, ignored)) {
        newest = std::max(newest, fs::last_write_time(entry.path(), ignored));
        if (!entry.is_directory(ignored)) continue;
        for (const auto& inner : fs::directory_iterator(entry.path(), ignored))
            newest = std::max(newest, fs::last_write_time(inner.path(), ignored));
    }
    return newest;
}

bool unusedFor(fs::file_time_type time, std::optional<double> days) {
    if (!days) return true;
    return fs::file_time_type::clock::now() - time >
           std::chrono::duration_cast<fs::file_time_type::duration>(
               std::chrono::duration<double>(*days * 86400));
}

} // namespace

CacheContents readCache() {
    CacheContents contents;
    contents.dir = cacheDir();
    std::error_code error;
    SeenFiles seen;
    auto measured = [&](const fs::path& path) {
        const DiskUse use = diskUse(path, seen);
        contents.uniqueBytes += use.unique;
        return use;
    };
    for (const auto& entry : fs::directory_iterator(contents.dir / "venvs", error)) {
        CachedVenv venv;
        venv.name = entry.path().filename().string();
        const DiskUse use = measured(entry.path());
        venv.bytes = use.bytes;
        venv.linkedBytes = use.linked;
        venv.ready = fs::exists(entry.path() / kReadyMarker);
        std::error_code ignored;
        venv.lastUsed =
            fs::last_write_time(venv.ready ? entry.path() / kReadyMarker : entry.path(), ignored);
        contents.venvs.push_back(std::move(venv));
    }
    std::sort(contents.venvs.begin(), contents.venvs.end(),
              [](const CachedVenv& a, const CachedVenv& b) { return a.name < b.name; });
    for (const auto& entry : fs::directory_iterator(contents.dir / "wheels", error)) {
        contents.wheelBytes += measured(entry.path()).bytes;
        ++contents.wheelFiles;
    }
    for (const auto& entry : fs::directory_iterator(contents.dir / "environments", error)) {
        contents.environmentBytes += measured(entry.path()).bytes;
        ++contents.environmentFiles;
    }
    if (fs::is_directory(contents.dir / "uv", error))
        contents.uvBytes = measured(contents.dir / "uv").bytes;
    for (const auto& entry : fs::directory_iterator(contents.dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name != "venvs" && name != "wheels" && name != "environments" && name != "uv")
            contents.otherBytes += measured(entry.path()).bytes;
    }
    return contents;
}

PruneOutcome pruneCache(const PruneOptions& options) {
    PruneOutcome outcome;
    const CacheContents contents = readCache();
    for (const auto& venv : contents.venvs) {
        if (!unusedFor(venv.lastUsed, options.olderThanDays)) continue;
        std::error_code error;
        const std::uintmax_t freed = freedByRemoving(contents.dir / "venvs" / venv.name);
        fs::remove_all(contents.dir / "venvs" / venv.name, error);
        if (error)
            throw EnvironmentError(fmt::format("cannot remove {}: {}", venv.name, error.message()));
        outcome.removed.push_back("venvs/" + venv.name);
        outcome.freedBytes += freed;
    }
    // Files of `folder` last written longer ago than the option (all without it).
    auto pruneFolder = [&](const std::string& folder) {
        std::error_code error;
        for (const auto& entry : fs::directory_iterator(contents.dir / folder, error)) {
            std::error_code ignored;
            if (!unusedFor(fs::last_write_time(entry.path(), ignored), options.olderThanDays)) continue;
            const std::uintmax_t bytes = freedByRemoving(entry.path());
            std::error_code removeError;
            fs::remove_all(entry.path(), removeError);
            if (removeError)
                throw EnvironmentError(
                    fmt::format("cannot remove {}: {}", entry.path().string(), removeError.message()));
            outcome.removed.push_back(folder + "/" + entry.path().filename().string());
            outcome.freedBytes += bytes;
        }
    };
    // The interpreters' environments are asked again when their file is gone: cheap to lose.
    pruneFolder("environments");
    if (options.keepWheels) return outcome;
    pruneFolder("wheels");
    // uv's cache as a whole (its buckets refer to each other): what the venvs still link stays on
    // disk with them.
    const fs::path uv = contents.dir / "uv";
    std::error_code error;
    if (fs::is_directory(uv, error) && unusedFor(newestWrite(uv), options.olderThanDays)) {
        const std::uintmax_t freed = freedByRemoving(uv);
        fs::remove_all(uv, error);
        if (error)
            throw EnvironmentError(fmt::format("cannot remove {}: {}", uv.string(), error.message()));
        outcome.removed.push_back("uv");
        outcome.freedBytes += freed;
    }
    return outcome;
}

namespace {

// "21.3 MiB": humanBytes without its exact count, for columns.
std::string bytesText(std::uintmax_t bytes) {
    const std::string text = report::humanBytes(static_cast<std::int64_t>(bytes));
    return text.substr(0, text.find(" ("));
}

// "3 days ago", from a file time.
std::string ageOf(fs::file_time_type time) {
    const auto age =
        std::chrono::duration_cast<std::chrono::hours>(fs::file_time_type::clock::now() - time);
    if (age.count() < 1) return "within the hour";
    if (age.count() < 48) return fmt::format("{} hours ago", age.count());
    return fmt::format("{} days ago", age.count() / 24);
}

} // namespace

std::string formatCacheList(const CacheContents& contents) {
    std::string out = fmt::format("leakgate cache: {}\n\n", contents.dir.string());
    size_t width = 4;
    for (const auto& venv : contents.venvs)
        width = std::max(width, venv.name.size());
    // `linked`: of its size, the files that have another hard link (uv's cache, another venv made
    // from it); removing the venv frees the rest.
    out += fmt::format("{:<{}}  {:>10}  {:>10}  {}\n", "venv", width, "size", "linked", "last used");
    for (const auto& venv : contents.venvs) {
        out += fmt::format("{:<{}}  {:>10}  {:>10}  {}\n", venv.name, width, bytesText(venv.bytes),
                           bytesText(venv.linkedBytes),
                           venv.ready ? ageOf(venv.lastUsed) : "half-made (an interrupted run)");
    }
    if (contents.venvs.empty()) out += "(no venvs)\n";
    out +=
        fmt::format("\nwheelhouse: {} files, {}\n", contents.wheelFiles, bytesText(contents.wheelBytes));
    if (contents.uvBytes) out += fmt::format("uv's cache: {}\n", bytesText(contents.uvBytes));
    if (contents.environmentFiles)
        out += fmt::format("interpreter environments: {} files, {}\n", contents.environmentFiles,
                           bytesText(contents.environmentBytes));
    if (contents.otherBytes) out += fmt::format("other files: {}\n", bytesText(contents.otherBytes));
    out += fmt::format("total: {} on disk (a file of several links counted once)\n",
                       bytesText(contents.totalBytes()));
    return out;
}

std::string formatPruneOutcome(const PruneOutcome& outcome, const CacheContents& after) {
    std::string out;
    for (const auto& name : outcome.removed)
        out += fmt::format("removed {}\n", name);
    out += fmt::format("freed {}; the cache now holds {} in {}\n", bytesText(outcome.freedBytes),
                       bytesText(after.totalBytes()), after.dir.string());
    return out;
}

std::string cacheSummaryLine(const CacheContents& contents) {
    std::uintmax_t venvBytes = 0, linkedBytes = 0;
    for (const auto& venv : contents.venvs) {
        venvBytes += venv.bytes;
        linkedBytes += venv.linkedBytes;
    }
    return fmt::format(
        "cache: {} on disk in {} ({} venvs, {}, {} of it hard links; wheelhouse {}; uv's cache {}); "
        "`leakgate cache prune` removes them",
        bytesText(contents.totalBytes()), contents.dir.string(), contents.venvs.size(),
        bytesText(venvBytes), bytesText(linkedBytes), bytesText(contents.wheelBytes),
        bytesText(contents.uvBytes));
}

} // namespace leakgate::commands
