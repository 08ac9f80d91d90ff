// libclang's C API (clang-c/Index.h) for C++: a guard for every paired call, copy and move
// deleted, and the few cursor helpers the C/C++ lint needs. Only the C/C++ lint (lib/lint/cxx.cpp
// and the cxx_*.h and .cpp files it is split into) includes this, and only in builds with libclang
// (LEAKGATE_WITH_LIBCLANG); every call goes through the table that lib/clang/libclang_api.h loads
// at run time.
#pragma once

#include "leakgate/errors.h"

#include "lib/clang/libclang_api.h"

#include <string>
#include <vector>

namespace leakgate::clang {

// Takes a CXString and disposes of it.
inline std::string takeString(CXString text) {
    const char* chars = api().clang_getCString(text);
    std::string out = chars ? chars : "";
    api().clang_disposeString(text);
    return out;
}

// clang_createIndex / clang_disposeIndex. Diagnostics are not printed: they are read back and
// reported per file.
class IndexGuard {
  public:
    // `excludeDeclarationsFromPch`: a translation unit's cursor does not list what a precompiled
    // header declares (none of it is the main file's; listing it reads the whole header back).
    explicit IndexGuard(bool excludeDeclarationsFromPch = false)
        : index_(api().clang_createIndex(excludeDeclarationsFromPch ? 1 : 0, /*displayDiagnostics=*/0)) {
        if (!index_) throw EnvironmentError("libclang: clang_createIndex failed");
    }
    ~IndexGuard() { api().clang_disposeIndex(index_); }
    IndexGuard(const IndexGuard&) = delete;
    IndexGuard& operator=(const IndexGuard&) = delete;
    IndexGuard(IndexGuard&&) = delete;
    IndexGuard& operator=(IndexGuard&&) = delete;

    CXIndex get() const { return index_; }

  private:
    CXIndex index_;
};

// A parsed translation unit; null when parsing failed outright (the error code says why).
class TranslationUnitGuard {
  public:
    explicit TranslationUnitGuard(CXTranslationUnit unit) : unit_(unit) {}
    ~TranslationUnitGuard() {
        if (unit_) api().clang_disposeTranslationUnit(unit_);
    }
    TranslationUnitGuard(const TranslationUnitGuard&) = delete;
    TranslationUnitGuard& operator=(const TranslationUnitGuard&) = delete;
    TranslationUnitGuard(TranslationUnitGuard&&) = delete;
    TranslationUnitGuard& operator=(TranslationUnitGuard&&) = delete;

    CXTranslationUnit get() const { return unit_; }

  private:
    CXTranslationUnit unit_;
};

// clang_CompilationDatabase_fromDirectory / clang_CompilationDatabase_dispose.
class CompilationDatabaseGuard {
  public:
    explicit CompilationDatabaseGuard(const std::string& directory) {
        CXCompilationDatabase_Error error = CXCompilationDatabase_NoError;
        database_ = api().clang_CompilationDatabase_fromDirectory(directory.c_str(), &error);
        if (error != CXCompilationDatabase_NoError || !database_) {
            throw UsageError("cannot load " + directory + "/compile_commands.json");
        }
    }
    ~CompilationDatabaseGuard() { api().clang_CompilationDatabase_dispose(database_); }
    CompilationDatabaseGuard(const CompilationDatabaseGuard&) = delete;
    CompilationDatabaseGuard& operator=(const CompilationDatabaseGuard&) = delete;
    CompilationDatabaseGuard(CompilationDatabaseGuard&&) = delete;
    CompilationDatabaseGuard& operator=(CompilationDatabaseGuard&&) = delete;

    CXCompilationDatabase get() const { return database_; }

  private:
    CXCompilationDatabase database_ = nullptr;
};

// A CXCompileCommands list, from clang_CompilationDatabase_getCompileCommands or ...AllCompileCommands.
class CompileCommandsGuard {
  public:
    explicit CompileCommandsGuard(CXCompileCommands commands) : commands_(commands) {}
    ~CompileCommandsGuard() {
        if (commands_) api().clang_CompileCommands_dispose(commands_);
    }
    CompileCommandsGuard(const CompileCommandsGuard&) = delete;
    CompileCommandsGuard& operator=(const CompileCommandsGuard&) = delete;
    CompileCommandsGuard(CompileCommandsGuard&&) = delete;
    CompileCommandsGuard& operator=(CompileCommandsGuard&&) = delete;

    unsigned size() const { return commands_ ? api().clang_CompileCommands_getSize(commands_) : 0; }
    CXCompileCommand at(unsigned index) const {
        return api().clang_CompileCommands_getCommand(commands_, index);
    }

  private:
    CXCompileCommands commands_;
};

// clang_tokenize / clang_disposeTokens, read out as spellings.
inline std::vector<std::string> tokenSpellings(CXTranslationUnit unit, CXSourceRange range) {
    CXToken* tokens = nullptr;
    unsigned count = 0;
    api().clang_tokenize(unit, range, &tokens, &count);
    std::vector<std::string> out;
    out.reserve(count);
    for (unsigned i = 0; i < count; ++i)
        out.push_back(takeString(api().clang_getTokenSpelling(unit, tokens[i])));
    if (tokens) api().clang_disposeTokens(unit, tokens, count);
    return out;
}

// A cursor's direct children, in source order.
inline std::vector<CXCursor> children(CXCursor cursor) {
    std::vector<CXCursor> out;
    api().clang_visitChildren(
        cursor,
        [](CXCursor child, CXCursor, CXClientData data) {
            static_cast<std::vector<CXCursor>*>(data)->push_back(child);
            return CXChildVisit_Continue;
        },
        &out);
    return out;
}

// Where a cursor is, as a person reads it: the expansion location, so code a macro produced is
// placed at the macro's use.
struct Location {
    std::string file;
    unsigned line = 0;
    unsigned column = 0;
};

inline Location location(CXCursor cursor) {
    CXFile file = nullptr;
    Location out;
    api().clang_getExpansionLocation(api().clang_getCursorLocation(cursor), &file, &out.line,
                                     &out.column, nullptr);
    if (file) out.file = takeString(api().clang_getFileName(file));
    return out;
}

} // namespace leakgate::clang
