#include "lib/lint/cxx_command_lines.h"

#include "leakgate/errors.h"
#include "lib/lint/cxx_ast.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace leakgate::lint::cxx {

namespace fs = std::filesystem;
using clang::takeString;

namespace {

// The argument of a database's command that names `file` (an absolute path), relative ones read
// from the command's directory.
std::optional<size_t> argumentNaming(const std::vector<std::string>& args, const std::string& file,
                                     const std::string& directory) {
    const fs::path wanted = fs::path(file).lexically_normal();
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i].empty() || args[i].front() == '-') continue;
        if ((fs::path(directory) / args[i]).lexically_normal() == wanted) return i;
    }
    return std::nullopt;
}

} // namespace

bool isCxxLanguage(const std::string& path) {
    std::string extension = fs::path(path).extension().string();
    return isOneOf(extension, {".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"});
}

CommandLines::CommandLines(const CxxLintOptions& options) : options_(options) {
    if (!options.compileCommands) return;
    fs::path path = *options.compileCommands;
    if (fs::is_regular_file(path)) path = path.parent_path();
    if (!fs::is_regular_file(path / "compile_commands.json"))
        throw UsageError(fmt::format("no compile_commands.json in {}", path.string()));
    databasePath_ = (path / "compile_commands.json").string();
    database_.emplace(path.string());
    clang::CompileCommandsGuard all(
        clang::api().clang_CompilationDatabase_getAllCompileCommands(database_->get()));
    for (unsigned i = 0; i < all.size(); ++i) {
        std::vector<std::string> args = arguments(all.at(i));
        std::string file = takeString(clang::api().clang_CompileCommand_getFilename(all.at(i)));
        fs::path absolute = fs::path(directory(all.at(i))) / file;
        neighbours_.emplace(absolute.lexically_normal().parent_path().string(),
                            std::make_pair(args, file));
        if (!fallback_) fallback_ = std::make_pair(args, file);
    }
}

CommandLine CommandLines::forFile(const std::string& file) const {
    if (database_) {
        clang::CompileCommandsGuard commands(
            clang::api().clang_CompilationDatabase_getCompileCommands(database_->get(), file.c_str()));
        if (commands.size() > 0) {
            std::vector<std::string> args = arguments(commands.at(0));
            std::optional<size_t> at = argumentNaming(args, file, directory(commands.at(0)));
            return {std::move(args), at};
        }
        // Not listed (a header): the command of a file beside it, or any, with this file instead.
        auto neighbour = neighbours_.find(fs::path(file).parent_path().string());
        const auto* borrowed =
            neighbour != neighbours_.end() ? &neighbour->second : (fallback_ ? &*fallback_ : nullptr);
        if (borrowed) {
            std::vector<std::string> args = borrowed->first;
            std::replace(args.begin(), args.end(), borrowed->second, file);
            auto at = std::find(args.begin(), args.end(), file);
            return {std::move(args),
                    at == args.end() ? std::nullopt : std::optional<size_t>(at - args.begin())};
        }
    }
    std::vector<std::string> args = {isCxxLanguage(file) ? "clang++" : "clang"};
    const std::vector<std::string>& headers = clang::libclangHeaderFlags();
    args.insert(args.end(), headers.begin(), headers.end());
    args.insert(args.end(), options_.flags.begin(), options_.flags.end());
    bool hasStandard = std::any_of(options_.flags.begin(), options_.flags.end(),
                                   [](const std::string& flag) { return flag.starts_with("-std="); });
    if (isCxxLanguage(file) && !hasStandard) args.push_back("-std=c++17");
    for (const auto& dir : options_.includeDirs)
        args.push_back("-I" + dir);
    args.push_back("-I" + embeddedPythonIncludeDir());
    args.push_back(file);
    return {args, args.size() - 1};
}

std::string CommandLines::directory(CXCompileCommand command) {
    return takeString(clang::api().clang_CompileCommand_getDirectory(command));
}

std::vector<std::string> CommandLines::arguments(CXCompileCommand command) {
    std::vector<std::string> args;
    unsigned count = clang::api().clang_CompileCommand_getNumArgs(command);
    for (unsigned i = 0; i < count; ++i)
        args.push_back(takeString(clang::api().clang_CompileCommand_getArg(command, i)));
    if (!args.empty()) {
        args.insert(args.begin() + 1, "-working-directory=" + directory(command));
        const std::vector<std::string>& headers = clang::libclangHeaderFlags();
        args.insert(args.begin() + 2, headers.begin(), headers.end());
    }
    return args;
}

} // namespace leakgate::lint::cxx
