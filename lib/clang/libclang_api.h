// libclang loaded at run time, only when `leakgate lint` meets a C/C++ file: `dlopen` of the
// libclang this build was configured with, else PyPI's `libclang` in the run's environment, else
// the system's ($LEAKGATE_LIBCLANG overrides them all), and one table of typed
// function pointers built from the X-macro list below. Linking libclang and libLLVM into the
// `leakgate` binary instead made every process leakgate starts, each worker included, load them
// (about 25 ms each here). The headers are used at build time only.
#pragma once

#include <clang-c/CXCompilationDatabase.h>
#include <clang-c/Index.h>

#include <string>
#include <vector>

namespace leakgate::clang {

// Every libclang entry point the C/C++ lint calls: X(name).
#define LEAKGATE_LIBCLANG_FUNCTIONS(X)                                                                  \
    X(clang_CompilationDatabase_dispose)                                                                \
    X(clang_CompilationDatabase_fromDirectory)                                                          \
    X(clang_CompilationDatabase_getAllCompileCommands)                                                  \
    X(clang_CompilationDatabase_getCompileCommands)                                                     \
    X(clang_CompileCommand_getArg)                                                                      \
    X(clang_CompileCommand_getDirectory)                                                                \
    X(clang_CompileCommand_getFilename)                                                                 \
    X(clang_CompileCommand_getNumArgs)                                                                  \
    X(clang_CompileCommands_dispose)                                                                    \
    X(clang_CompileCommands_getCommand)                                                                 \
    X(clang_CompileCommands_getSize)                                                                    \
    X(clang_Cursor_Evaluate)                                                                            \
    X(clang_Cursor_getArgument)                                                                         \
    X(clang_Cursor_getNumArguments)                                                                     \
    X(clang_Cursor_getStorageClass)                                                                     \
    X(clang_Cursor_isNull)                                                                              \
    X(clang_EvalResult_dispose)                                                                         \
    X(clang_EvalResult_getAsLongLong)                                                                   \
    X(clang_EvalResult_getKind)                                                                         \
    X(clang_Location_isFromMainFile)                                                                    \
    X(clang_createIndex)                                                                                \
    X(clang_disposeDiagnostic)                                                                          \
    X(clang_disposeIndex)                                                                               \
    X(clang_disposeString)                                                                              \
    X(clang_disposeTokens)                                                                              \
    X(clang_disposeTranslationUnit)                                                                     \
    X(clang_getCString)                                                                                 \
    X(clang_getCursorExtent)                                                                            \
    X(clang_getCursorKind)                                                                              \
    X(clang_getCursorLocation)                                                                          \
    X(clang_getCursorReferenced)                                                                        \
    X(clang_getCursorSemanticParent)                                                                    \
    X(clang_getCursorSpelling)                                                                          \
    X(clang_getDiagnostic)                                                                              \
    X(clang_getDiagnosticLocation)                                                                      \
    X(clang_getDiagnosticSeverity)                                                                      \
    X(clang_getDiagnosticSpelling)                                                                      \
    X(clang_getExpansionLocation)                                                                       \
    X(clang_getFileContents)                                                                            \
    X(clang_getFileLocation)                                                                            \
    X(clang_getFileName)                                                                                \
    X(clang_getNumDiagnostics)                                                                          \
    X(clang_getRangeEnd)                                                                                \
    X(clang_getRangeStart)                                                                              \
    X(clang_getTokenSpelling)                                                                           \
    X(clang_getTranslationUnitCursor)                                                                   \
    X(clang_isCursorDefinition)                                                                         \
    X(clang_isExpression)                                                                               \
    X(clang_parseTranslationUnit2FullArgv)                                                              \
    X(clang_saveTranslationUnit)                                                                        \
    X(clang_tokenize)                                                                                   \
    X(clang_visitChildren)

struct LibclangApi {
#define LEAKGATE_LIBCLANG_POINTER(name) decltype(&::name) name = nullptr;
    LEAKGATE_LIBCLANG_FUNCTIONS(LEAKGATE_LIBCLANG_POINTER)
#undef LEAKGATE_LIBCLANG_POINTER
};

// The table, loaded on first use; null when libclang cannot be loaded (`unavailableReason()`
// says why, with every library tried). Never throws.
const LibclangApi* loadLibclang();
std::string libclangUnavailableReason();
// Before the first load: the environment's sys.path, where PyPI's `libclang` puts its library
// (clang/native/libclang.so); tried after the build's own and before the system's.
void searchLibclangIn(const std::vector<std::string>& dirs);
// The library loaded (empty where none), and the flags every parse gets: clang's own headers (GCC's
// where no LLVM tree holds them beside the library, as with PyPI's), and implicit function
// declarations and int conversions as warnings (errors from clang 15 and 16).
std::string libclangPath();
const std::vector<std::string>& libclangHeaderFlags();

// The loaded table; call only after loadLibclang() returned it.
const LibclangApi& api();

} // namespace leakgate::clang
