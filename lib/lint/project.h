// What a project asks of `leakgate lint` beyond the paths it names: the rules it selects or
// ignores, the files it excludes, whether the C/C++ headers a package ships in site-packages are
// read, and the comments in its sources that accept a finding. Given on the command line and in
// the `[tool.leakgate.lint]` table of its pyproject.toml (read with toml++, in this process).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leakgate::lint {

// One `exclude` glob and the directory its anchored form is relative to (the pyproject.toml's
// directory, or the current directory for --exclude). A glob without `/` matches any one
// component of a path (a file or directory name: `tests`, `*_pb2.py`); a glob with `/` matches the
// whole path relative to `base` (`vendor/*`, `src/gen/*.py`; `*` matches `/` too).
struct ExcludeGlob {
    std::string glob;
    std::filesystem::path base;
};

struct ProjectSettings {
    std::optional<std::vector<std::string>> select; // unset: every rule
    std::vector<std::string> ignore;
    std::vector<ExcludeGlob> exclude;
    bool sitePackagesHeaders = false;
    std::optional<std::string> configFile; // the pyproject.toml that was read, if any
};

// The rules there are (Python's, then C/C++'s where libclang is available), in report order.
std::vector<std::string> knownRules();

// Splits "rule,rule" (each item of `lists` may hold several) and checks each name against
// knownRules(); UsageError naming `what` (`--select`, `pyproject.toml: select`) and the closest rule.
std::vector<std::string> ruleNames(const std::vector<std::string>& lists, std::string_view what);

// The nearest pyproject.toml at or above `start` (a directory), or none.
std::optional<std::filesystem::path> findProjectFile(const std::filesystem::path& start);

// Reads the `[tool.leakgate.lint]` table of `file` into `settings` (nothing when the file has no
// such table). UsageError with the file, line and column for TOML that does not parse, and for an
// unknown key or a value of the wrong type.
void readProjectFile(const std::filesystem::path& file, ProjectSettings& settings);

// Whether `path` (absolute) is excluded by one of `globs`.
bool isExcluded(const std::filesystem::path& path, const std::vector<ExcludeGlob>& globs);

// Whether `path` lies under a site-packages or dist-packages directory.
bool underSitePackages(const std::filesystem::path& path);

// The `leakgate: ignore` comments of sources, read once per file. In a `#`, `//` or `/*` comment:
//   leakgate: ignore              every finding on this line
//   leakgate: ignore[rule,rule]   those rules' findings on this line
//   leakgate: ignore-file         every finding in the file (on any line); ignore-file[rule] too
class SuppressionComments {
  public:
    // "line" or "file" when a comment accepts a finding of `rule` at `file`:`line`, else empty.
    std::string suppresses(const std::string& file, int line, const std::string& rule);
    // "FILE:LINE: ... names no rule `x`" for each rule a comment names that does not exist.
    const std::vector<std::string>& unknownRules() const { return unknownRules_; }

  private:
    struct Marker {
        bool wholeFile = false;
        std::vector<std::string> rules; // empty: every rule
    };
    struct File {
        std::map<int, std::vector<Marker>> byLine;
        std::vector<Marker> wholeFile;
    };
    const File& read(const std::string& file);

    std::map<std::string, File> files_;
    std::vector<std::string> unknownRules_;
};

} // namespace leakgate::lint
