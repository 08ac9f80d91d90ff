#include "lib/lint/project.h"

#include "leakgate/errors.h"
#include "lib/base/spelling.h"
#include "lib/lint/cxx.h"
#include "lib/lint/python.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fnmatch.h>
#include <fstream>
#include <sstream>

namespace leakgate::lint {
namespace fs = std::filesystem;

std::vector<std::string> knownRules() {
    std::vector<std::string> rules(std::begin(kLintRules), std::end(kLintRules));
    rules.insert(rules.end(), std::begin(kCxxLintRules), std::end(kCxxLintRules));
    return rules;
}

namespace {

std::string trimmed(std::string_view text) {
    size_t begin = text.find_first_not_of(" \t");
    if (begin == std::string_view::npos) return "";
    size_t end = text.find_last_not_of(" \t");
    return std::string(text.substr(begin, end - begin + 1));
}

// "a, b" into its names, empty items dropped.
std::vector<std::string> splitNames(std::string_view list) {
    std::vector<std::string> names;
    std::stringstream items{std::string(list)};
    for (std::string item; std::getline(items, item, ',');) {
        std::string name = trimmed(item);
        if (!name.empty()) names.push_back(name);
    }
    return names;
}

bool globMatches(const std::string& glob, const std::string& text) {
    return ::fnmatch(glob.c_str(), text.c_str(), 0) == 0;
}

// --- pyproject.toml --------------------------------------------------------------------------

const std::vector<std::string> kTableKeys = {"select", "ignore", "exclude", "site-packages-headers"};

[[noreturn]] void badValue(const fs::path& file, const toml::node& node, std::string_view key,
                           std::string_view expected) {
    const toml::source_region& where = node.source();
    throw UsageError(fmt::format("{}:{}:{}: [tool.leakgate.lint] {}: expected {}", file.string(),
                                 where.begin.line, where.begin.column, key, expected));
}

std::vector<std::string> stringsOf(const fs::path& file, const toml::node& node, std::string_view key) {
    const toml::array* array = node.as_array();
    if (!array) badValue(file, node, key, "an array of strings");
    std::vector<std::string> values;
    for (const toml::node& item : *array) {
        std::optional<std::string> text = item.value<std::string>();
        if (!text) badValue(file, item, key, "an array of strings");
        values.push_back(*text);
    }
    return values;
}

// --- suppression comments -------------------------------------------------------------------

// Whether `at` opens a comment's text: `#`, `//` or `/*` before it on the line, with only blanks
// between (`# leakgate: ignore`, `x = 1  # noqa  # leakgate: ignore`, `/* leakgate: ignore */`).
bool inComment(std::string_view line, size_t at) {
    size_t before = line.find_last_not_of(" \t", at == 0 ? std::string_view::npos : at - 1);
    if (at == 0 || before == std::string_view::npos) return false;
    if (line[before] == '#') return true;
    if (before >= 1 && line[before - 1] == '/' && (line[before] == '/' || line[before] == '*'))
        return true;
    return false;
}

} // namespace

std::vector<std::string> ruleNames(const std::vector<std::string>& lists, std::string_view what) {
    std::vector<std::string> known = knownRules();
    std::vector<std::string> names;
    for (const auto& list : lists) {
        for (auto& name : splitNames(list)) {
            if (std::find(known.begin(), known.end(), name) == known.end()) {
                throw UsageError(fmt::format("{}: no rule `{}`{}; the rules are {}", what, name,
                                             base::didYouMean(name, known), fmt::join(known, ", ")));
            }
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
    }
    return names;
}

std::optional<fs::path> findProjectFile(const fs::path& start) {
    std::error_code error;
    for (fs::path dir = fs::absolute(start, error).lexically_normal();; dir = dir.parent_path()) {
        fs::path candidate = dir / "pyproject.toml";
        if (fs::is_regular_file(candidate, error)) return candidate;
        if (dir == dir.parent_path() || dir.empty()) return std::nullopt;
    }
}

void readProjectFile(const fs::path& file, ProjectSettings& settings) {
    toml::table document;
    try {
        document = toml::parse_file(file.string());
    } catch (const toml::parse_error& error) {
        throw UsageError(fmt::format("{}:{}:{}: not TOML: {}", file.string(), error.source().begin.line,
                                     error.source().begin.column, error.description()));
    }
    const toml::node_view<toml::node> lintTable = document["tool"]["leakgate"]["lint"];
    if (!lintTable) return;
    const toml::table* table = lintTable.as_table();
    if (!table) badValue(file, *lintTable.node(), "", "a table");
    settings.configFile = file.string();
    for (const auto& [key, node] : *table) {
        std::string name(key.str());
        if (name == "select" || name == "ignore") {
            std::vector<std::string> rules =
                ruleNames(stringsOf(file, node, name),
                          fmt::format("{}: [tool.leakgate.lint] {}", file.string(), name));
            if (name == "select") {
                settings.select = rules;
            } else {
                settings.ignore.insert(settings.ignore.end(), rules.begin(), rules.end());
            }
        } else if (name == "exclude") {
            for (auto& glob : stringsOf(file, node, name))
                settings.exclude.push_back({glob, file.parent_path()});
        } else if (name == "site-packages-headers") {
            std::optional<bool> value = node.value<bool>();
            if (!value || !node.is_boolean()) badValue(file, node, name, "true or false");
            settings.sitePackagesHeaders = *value;
        } else {
            const toml::source_region& where = key.source();
            throw UsageError(
                fmt::format("{}:{}:{}: [tool.leakgate.lint] has no key `{}`{}; the keys are {}",
                            file.string(), where.begin.line, where.begin.column, name,
                            base::didYouMean(name, kTableKeys), fmt::join(kTableKeys, ", ")));
        }
    }
}

bool isExcluded(const fs::path& path, const std::vector<ExcludeGlob>& globs) {
    for (const auto& exclude : globs) {
        if (exclude.glob.find('/') == std::string::npos) {
            for (const auto& part : path) {
                if (globMatches(exclude.glob, part.string())) return true;
            }
            continue;
        }
        fs::path relative = path.lexically_relative(exclude.base);
        if (relative.empty() || *relative.begin() == "..") continue;
        std::string glob = exclude.glob.starts_with("./") ? exclude.glob.substr(2) : exclude.glob;
        while (glob.size() > 1 && glob.ends_with("/"))
            glob.pop_back();
        // A directory's glob excludes what lies under it too.
        for (fs::path prefix; const auto& part : relative) {
            prefix /= part;
            if (globMatches(glob, prefix.string())) return true;
        }
    }
    return false;
}

bool underSitePackages(const fs::path& path) {
    return std::any_of(path.begin(), path.end(), [](const fs::path& part) {
        return part == "site-packages" || part == "dist-packages";
    });
}

const SuppressionComments::File& SuppressionComments::read(const std::string& file) {
    auto found = files_.find(file);
    if (found != files_.end()) return found->second;
    File& parsed = files_[file];
    std::vector<std::string> known = knownRules();
    std::ifstream in(file, std::ios::binary);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        for (size_t at = line.find("leakgate:"); at != std::string::npos;
             at = line.find("leakgate:", at + 1)) {
            if (!inComment(line, at)) continue;
            size_t next = line.find_first_not_of(" \t", at + std::string_view("leakgate:").size());
            if (next == std::string::npos || line.compare(next, 6, "ignore") != 0) continue;
            next += 6;
            Marker marker;
            if (line.compare(next, 5, "-file") == 0) {
                marker.wholeFile = true;
                next += 5;
            }
            if (next < line.size() && line[next] == '[') {
                size_t close = line.find(']', next);
                if (close == std::string::npos) continue;
                for (auto& rule :
                     splitNames(std::string_view(line).substr(next + 1, close - next - 1))) {
                    if (std::find(known.begin(), known.end(), rule) == known.end()) {
                        unknownRules_.push_back(
                            fmt::format("{}:{}: `leakgate: ignore` names no rule `{}`{}", file, number,
                                        rule, base::didYouMean(rule, known)));
                    }
                    marker.rules.push_back(rule);
                }
                if (marker.rules.empty()) continue; // `ignore[]` accepts nothing
            } else if (next < line.size() && (std::isalnum(static_cast<unsigned char>(line[next])) ||
                                              line[next] == '_' || line[next] == '-')) {
                continue; // `ignored`, `ignore-all`: not ours
            }
            (marker.wholeFile ? parsed.wholeFile : parsed.byLine[number]).push_back(std::move(marker));
        }
    }
    return parsed;
}

std::string SuppressionComments::suppresses(const std::string& file, int line, const std::string& rule) {
    const File& parsed = read(file);
    auto accepts = [&rule](const std::vector<Marker>& markers) {
        return std::any_of(markers.begin(), markers.end(), [&rule](const Marker& marker) {
            return marker.rules.empty() ||
                   std::find(marker.rules.begin(), marker.rules.end(), rule) != marker.rules.end();
        });
    };
    auto onLine = parsed.byLine.find(line);
    if (onLine != parsed.byLine.end() && accepts(onLine->second)) return "line";
    if (accepts(parsed.wholeFile)) return "file";
    return "";
}

} // namespace leakgate::lint
