#include "lib/commands/cache.h"

#include "leakgate/errors.h"
#include "lib/commands/environments.h"
#include "lib/report/units.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace leakgate {

namespace fs = std::filesystem;

namespace {

// Bytes of the regular files under `path` (links not followed, errors skipped: a file removed
// meanwhile counts as nothing).
std::uintmax_t sizeOf(const fs::path& path) {
    std::error_code error;
    if (fs::is_regular_file(fs::symlink_status(path, error))) return fs::file_size(path, error);
    std::uintmax_t bytes = 0;
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
        std::error_code ignored;
        if (it->is_regular_file(ignored) && !it->is_symlink(ignored)) bytes += it->file_size(ignored);
    }
    return bytes;
}

bool unusedFor(fs::file_time_type time, std::optional<double> days) {
    if (!days) return true;
    return fs::file_time_type::clock::now() - time >
           std::chrono::duration_cast<fs::file_time_type::duration>(std::chrono::duration<double>(*days * 86400));
}

} // namespace

std::uintmax_t CacheContents::totalBytes() const {
    std::uintmax_t bytes = wheelBytes + environmentBytes + otherBytes;
    for (const auto& venv : venvs)
        bytes += venv.bytes;
    return bytes;
}

CacheContents readCache() {
    CacheContents contents;
    contents.dir = cacheDir();
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(contents.dir / "venvs", error)) {
        CachedVenv venv;
        venv.name = entry.path().filename().string();
        venv.bytes = sizeOf(entry.path());
        venv.ready = fs::exists(entry.path() / kReadyMarker);
        std::error_code ignored;
        venv.lastUsed = fs::last_write_time(venv.ready ? entry.path() / kReadyMarker : entry.path(), ignored);
        contents.venvs.push_back(std::move(venv));
    }
    std::sort(contents.venvs.begin(), contents.venvs.end(),
              [](const CachedVenv& a, const CachedVenv& b) { return a.name < b.name; });
    for (const auto& entry : fs::directory_iterator(contents.dir / "wheels", error)) {
        contents.wheelBytes += sizeOf(entry.path());
        ++contents.wheelFiles;
    }
    for (const auto& entry : fs::directory_iterator(contents.dir / "environments", error)) {
        contents.environmentBytes += sizeOf(entry.path());
        ++contents.environmentFiles;
    }
    for (const auto& entry : fs::directory_iterator(contents.dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name != "venvs" && name != "wheels" && name != "environments")
            contents.otherBytes += sizeOf(entry.path());
    }
    return contents;
}

PruneOutcome pruneCache(const PruneOptions& options) {
    PruneOutcome outcome;
    const CacheContents contents = readCache();
    for (const auto& venv : contents.venvs) {
        if (!unusedFor(venv.lastUsed, options.olderThanDays)) continue;
        std::error_code error;
        fs::remove_all(contents.dir / "venvs" / venv.name, error);
        if (error) throw EnvironmentError(fmt::format("cannot remove {}: {}", venv.name, error.message()));
        outcome.removed.push_back("venvs/" + venv.name);
        outcome.freedBytes += venv.bytes;
    }
    // Files of `folder` last written longer ago than the option (all without it).
    auto pruneFolder = [&](const std::string& folder) {
        std::error_code error;
        for (const auto& entry : fs::directory_iterator(contents.dir / folder, error)) {
            std::error_code ignored;
            if (!unusedFor(fs::last_write_time(entry.path(), ignored), options.olderThanDays)) continue;
            const std::uintmax_t bytes = sizeOf(entry.path());
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
    if (!options.keepWheels) pruneFolder("wheels");
    return outcome;
}

namespace {

// "21.3 MiB": humanBytes without its exact count, for columns.
std::string bytesText(std::uintmax_t bytes) {
    const std::string text = humanBytes(static_cast<std::int64_t>(bytes));
    return text.substr(0, text.find(" ("));
}

// "3 days ago", from a file time.
std::string ageOf(fs::file_time_type time) {
    const auto age = std::chrono::duration_cast<std::chrono::hours>(fs::file_time_type::clock::now() - time);
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
    out += fmt::format("{:<{}}  {:>10}  {}\n", "venv", width, "size", "last used");
    for (const auto& venv : contents.venvs) {
        out += fmt::format("{:<{}}  {:>10}  {}\n", venv.name, width, bytesText(venv.bytes),
                           venv.ready ? ageOf(venv.lastUsed) : "half-made (an interrupted run)");
    }
    if (contents.venvs.empty()) out += "(no venvs)\n";
    out += fmt::format("\nwheelhouse: {} files, {}\n", contents.wheelFiles, bytesText(contents.wheelBytes));
    if (contents.environmentFiles)
        out += fmt::format("interpreter environments: {} files, {}\n", contents.environmentFiles,
                           bytesText(contents.environmentBytes));
    if (contents.otherBytes) out += fmt::format("other files: {}\n", bytesText(contents.otherBytes));
    out += fmt::format("total: {}\n", bytesText(contents.totalBytes()));
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
    std::uintmax_t venvBytes = 0;
    for (const auto& venv : contents.venvs)
        venvBytes += venv.bytes;
    return fmt::format("cache: {} in {} ({} venvs, {}; wheelhouse {}); `leakgate cache prune` removes them",
                       bytesText(contents.totalBytes()), contents.dir.string(), contents.venvs.size(),
                       bytesText(venvBytes), bytesText(contents.wheelBytes));
}

} // namespace leakgate
