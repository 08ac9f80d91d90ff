// The C/C++ rules of `leakgate lint`, on libclang's AST (built with LEAKGATE_WITH_LIBCLANG; see
// lint_cxx_unavailable.cpp for the build without it).
//
// Three rules, each intraprocedural:
// - frame-stored-static: a frame (PyEval_GetFrame, PyThreadState_GetFrame, PyFrame_GetBack, or
//   calling inspect.currentframe / sys._getframe through pybind11, nanobind or
//   PyObject_CallMethod) stored in a static or global variable;
// - frame-stored-member: the same, stored in a class or struct member;
// - frame-ref-leaked: a new reference to a frame held in a local that some return path neither
//   releases nor hands on. The walk follows the structured statements (if, loops, switch, goto to
//   a later label, return) over a set of "owned and not yet released" locals, with null checks
//   (`if (!f) return ...`) taken into account.
//
// Each translation unit is parsed and walked in a child process of its own (lintInChild, over
// lib/base/forked_child.h): libclang crashing or hanging on one file makes that file an `unparsed`
// entry that says so, and the run goes on with the others. The walk keeps its own stack for what
// nests as deep as the code does (expressions, `else if` chains), and stops in a function whose
// statements nest deeper than the stack allows (StackGuard) rather than overflow it.
#include "lib/lint/cxx.h"

#include "leakgate/errors.h"
#include "lib/base/forked_child.h"
#include "lib/base/log.h"
#include "lib/clang/libclang.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <pthread.h>
#include <set>
#include <string_view>
#include <utility>

namespace leakgate::lint {
namespace {

namespace fs = std::filesystem;
using clang::children;
using clang::takeString;

// --- What returns a frame --------------------------------------------------------------------

// How a frame value is held: a borrowed pointer, a new reference the code must release, or an
// owning C++ object (py::object, nb::object) that releases itself.
enum class Ownership { kBorrowed, kNewReference, kOwningObject };

struct FrameValue {
    std::string what; // how a person reads the source: "PyFrame_GetBack()"
    Ownership ownership = Ownership::kBorrowed;
    std::string local; // set when the value is a local that holds a frame
};

bool isOneOf(const std::string& name, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const char* candidate) { return name == candidate; });
}

bool isFrameAttribute(const std::string& literal) {
    return isOneOf(literal, {"\"currentframe\"", "\"_getframe\""});
}

CXCursorKind kindOf(CXCursor cursor) {
    return clang::api().clang_getCursorKind(cursor);
}
std::string spelling(CXCursor cursor) {
    return takeString(clang::api().clang_getCursorSpelling(cursor));
}

// Through parentheses, casts and the implicit nodes libclang does not expose, to the expression
// that gives the value.
CXCursor strip(CXCursor cursor) {
    for (;;) {
        CXCursorKind kind = kindOf(cursor);
        bool wrapper = kind == CXCursor_UnexposedExpr || kind == CXCursor_ParenExpr ||
                       kind == CXCursor_CStyleCastExpr || kind == CXCursor_CXXStaticCastExpr ||
                       kind == CXCursor_CXXReinterpretCastExpr || kind == CXCursor_CXXConstCastExpr ||
                       kind == CXCursor_CXXFunctionalCastExpr;
        if (kind == CXCursor_CallExpr) {
            // A copy or move of an owning object (py::object's constructors) gives the same value.
            CXCursor callee = clang::api().clang_getCursorReferenced(cursor);
            wrapper = kindOf(callee) == CXCursor_Constructor &&
                      clang::api().clang_Cursor_getNumArguments(cursor) == 1;
        }
        if (!wrapper) return cursor;
        std::vector<CXCursor> inner = children(cursor);
        auto expression = std::find_if(inner.rbegin(), inner.rend(), [](CXCursor child) {
            return clang::api().clang_isExpression(kindOf(child));
        });
        if (expression == inner.rend()) return cursor;
        cursor = *expression;
    }
}

// Every cursor under `root` (root included) that `match` accepts, in source order. With a stack
// of its own: expressions nest as deep as the code does (a 30,000-term sum is 30,000 levels).
template <typename Match> void collect(CXCursor root, Match match, std::vector<CXCursor>& out) {
    std::vector<CXCursor> pending = {root};
    while (!pending.empty()) {
        CXCursor cursor = pending.back();
        pending.pop_back();
        if (match(cursor)) out.push_back(cursor);
        std::vector<CXCursor> inner = children(cursor);
        pending.insert(pending.end(), inner.rbegin(), inner.rend());
    }
}

bool containsFrameAttributeLiteral(CXCursor root) {
    std::vector<CXCursor> literals;
    collect(
        root,
        [](CXCursor c) { return kindOf(c) == CXCursor_StringLiteral && isFrameAttribute(spelling(c)); },
        literals);
    return !literals.empty();
}

std::string qualifiedName(CXCursor cursor);

// How a DSL author writes the call that `attr` (an `attr` call) and `call` (its operator()) make:
// `py::module_::import("inspect").attr("currentframe")()` for pybind11,
// `nb::module_::import_("sys").attr("_getframe")(...)` for nanobind, whatever the object was
// spelled as in the source (a module_ kept in a variable, say).
std::string bindingSpelling(CXCursor attr, CXCursor call, const std::string& literal) {
    std::string module = literal == "\"currentframe\"" ? "inspect" : "sys";
    std::string arguments = clang::api().clang_Cursor_getNumArguments(call) > 1 ? "(...)" : "()";
    std::string library = qualifiedName(clang::api().clang_getCursorReferenced(attr));
    if (library.rfind("pybind11::", 0) == 0 || library.rfind("py::", 0) == 0)
        return fmt::format("py::module_::import(\"{}\").attr({}){}", module, literal, arguments);
    if (library.rfind("nanobind::", 0) == 0 || library.rfind("nb::", 0) == 0)
        return fmt::format("nb::module_::import_(\"{}\").attr({}){}", module, literal, arguments);
    return fmt::format("{}.{}{} (called through .attr({}))", module,
                       literal.substr(1, literal.size() - 2), arguments, literal);
}

// `X.attr("currentframe")(...)`: pybind11's and nanobind's spelling of calling
// inspect.currentframe or sys._getframe. The object of the call (its argument 0) must itself be
// an `attr` call with the name as a literal.
std::optional<std::string> pythonFrameCall(CXCursor call) {
    if (spelling(call) != "operator()" || clang::api().clang_Cursor_getNumArguments(call) < 1)
        return std::nullopt;
    CXCursor object = strip(clang::api().clang_Cursor_getArgument(call, 0));
    std::vector<CXCursor> attrCalls;
    collect(
        object, [](CXCursor c) { return kindOf(c) == CXCursor_CallExpr && spelling(c) == "attr"; },
        attrCalls);
    if (attrCalls.empty()) return std::nullopt;
    CXCursor attr = attrCalls.front();
    for (int i = 0; i < clang::api().clang_Cursor_getNumArguments(attr); ++i) {
        std::vector<CXCursor> literals;
        collect(
            clang::api().clang_Cursor_getArgument(attr, i),
            [](CXCursor c) { return kindOf(c) == CXCursor_StringLiteral; }, literals);
        for (CXCursor literal : literals) {
            std::string text = spelling(literal);
            if (isFrameAttribute(text)) return bindingSpelling(attr, call, text);
        }
    }
    return std::nullopt;
}

// The frame a call returns, if it returns one.
std::optional<FrameValue> frameCall(CXCursor call) {
    std::string name = spelling(call);
    if (name == "PyEval_GetFrame") return FrameValue{"PyEval_GetFrame()", Ownership::kBorrowed, {}};
    if (isOneOf(name, {"PyThreadState_GetFrame", "PyFrame_GetBack"}))
        return FrameValue{name + "()", Ownership::kNewReference, {}};
    if (isOneOf(name, {"PyObject_CallMethod", "_PyObject_CallMethod_SizeT"}) &&
        clang::api().clang_Cursor_getNumArguments(call) >= 2 &&
        containsFrameAttributeLiteral(clang::api().clang_Cursor_getArgument(call, 1))) {
        return FrameValue{"PyObject_CallMethod(..., " +
                              spelling(strip(clang::api().clang_Cursor_getArgument(call, 1))) + ")",
                          Ownership::kNewReference,
                          {}};
    }
    if (auto python = pythonFrameCall(call)) return FrameValue{*python, Ownership::kOwningObject, {}};
    return std::nullopt;
}

// --- Variables -------------------------------------------------------------------------------

bool isFunctionKind(CXCursorKind kind) {
    return kind == CXCursor_FunctionDecl || kind == CXCursor_CXXMethod || kind == CXCursor_Constructor ||
           kind == CXCursor_Destructor || kind == CXCursor_FunctionTemplate ||
           kind == CXCursor_ConversionFunction || kind == CXCursor_LambdaExpr;
}

// A variable that lives past any one call: a global, a namespace or class static, a static local.
bool hasStaticStorage(CXCursor variable) {
    if (kindOf(variable) != CXCursor_VarDecl) return false;
    CX_StorageClass storage = clang::api().clang_Cursor_getStorageClass(variable);
    if (storage == CX_SC_Static || storage == CX_SC_Extern) return true;
    return !isFunctionKind(kindOf(clang::api().clang_getCursorSemanticParent(variable)));
}

// "ns::Class::method", "function": the semantic parents up to the translation unit.
std::string qualifiedName(CXCursor cursor) {
    std::vector<std::string> parts;
    for (CXCursor at = cursor;
         !clang::api().clang_Cursor_isNull(at) && kindOf(at) != CXCursor_TranslationUnit;
         at = clang::api().clang_getCursorSemanticParent(at)) {
        std::string name = spelling(at);
        parts.push_back(name.empty() ? "(anonymous)" : name);
    }
    std::reverse(parts.begin(), parts.end());
    return fmt::format("{}", fmt::join(parts, "::"));
}

// --- The analysis of one function ------------------------------------------------------------

// A new reference held in a local: where it was taken, and the locals that alias it (one group).
struct Held {
    std::string name;
    std::string source;
    unsigned line = 0;
    unsigned column = 0;
    int group = 0;
};

// The locals that may hold an unreleased new reference at a point of the function.
struct FlowState {
    bool reachable = true;
    std::map<std::string, Held> owned; // by local name

    static FlowState unreachable() { return FlowState{false, {}}; }
    void mergeFrom(const FlowState& other) {
        if (!other.reachable) return;
        if (!reachable) {
            *this = other;
            return;
        }
        for (const auto& [name, held] : other.owned)
            owned.emplace(name, held);
    }
    // Releasing one name releases every alias of the same reference.
    void release(const std::string& name) {
        auto found = owned.find(name);
        if (found == owned.end()) return;
        int group = found->second.group;
        std::erase_if(owned, [&](const auto& entry) { return entry.second.group == group; });
    }
};

const char* kStoreFix =
    "Keep no frame: read what you need while the call runs (PyFrame_GetCode, "
    "PyFrame_GetLineNumber, or the file, line and function name as plain values) and store those. "
    "If a frame must be held, hold it only for the call and release it before returning "
    "(Py_DECREF, or a py::object that goes out of scope).";
const char* kLeakFix =
    "Release it on every path before the function returns: Py_DECREF (Py_XDECREF / Py_CLEAR where "
    "it may be NULL), typically once at a single `done:` or `error:` label that every path reaches; "
    "or hand it to an owner (return it, py::reinterpret_steal, a stealing call such as "
    "PyTuple_SET_ITEM).";

// Whether the walk is near the end of this thread's stack: the child that runs it has a large one
// (lib/base/forked_child.h), but a statement nested a million levels deep would still exhaust it.
// What is kept back is for the libclang calls made from the deepest level.
class StackGuard {
  public:
    StackGuard() {
        pthread_attr_t attributes;
        if (::pthread_getattr_np(::pthread_self(), &attributes) != 0) return;
        void* low = nullptr;
        size_t size = 0;
        if (::pthread_attr_getstack(&attributes, &low, &size) == 0 && low) {
            // The stack grows down, from low + size to low.
            floor_ = reinterpret_cast<std::uintptr_t>(low) + std::min(kReserveBytes, size / 4);
        }
        ::pthread_attr_destroy(&attributes);
    }

    bool nearlyExhausted() const {
        return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) < floor_;
    }

  private:
    static constexpr size_t kReserveBytes = size_t{2} << 20;
    std::uintptr_t floor_ = 0; // 0: unknown, never exhausted
};

// Thrown by the walk of a function whose statements nest deeper than the stack allows.
struct TooDeep {
    unsigned line; // where the statement it stopped at is
};

class FunctionAnalysis {
  public:
    FunctionAnalysis(CXTranslationUnit unit, CXCursor function, const StackGuard& stack,
                     std::vector<Finding>& findings)
        : unit_(unit), function_(function), name_(qualifiedName(function)), stack_(stack),
          findings_(findings) {}

    const std::string& name() const { return name_; }

    void run() {
        std::vector<CXCursor> parts = children(function_);
        FlowState state;
        // Constructor initializers: a MemberRef followed by its initializer expression.
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
            if (kindOf(parts[i]) != CXCursor_MemberRef) continue;
            if (auto value = frameValue(parts[i + 1])) {
                storeFinding("frame-stored-member", parts[i], spelling(parts[i]), *value, "member");
            }
        }
        for (CXCursor part : parts) {
            if (kindOf(part) == CXCursor_CompoundStmt) {
                statement(part, state);
                if (state.reachable)
                    leakFindings(state, location(part, /*end=*/true), "falls off its end");
            }
        }
    }

  private:
    CXTranslationUnit unit_;
    CXCursor function_;
    std::string name_;
    const StackGuard& stack_;
    std::vector<Finding>& findings_;
    std::map<std::string, FrameValue> frameLocals_; // locals ever bound to a frame (flow-insensitive)
    std::set<std::pair<std::string, unsigned>> reportedLeaks_;
    int nextGroup_ = 1;
    // Where break and continue go, and the states that reach a label by goto.
    std::vector<FlowState*> breakTargets_;
    std::vector<FlowState*> continueTargets_;
    std::map<std::string, FlowState> gotoStates_;

    clang::Location location(CXCursor cursor, bool end = false) const {
        if (!end) return clang::location(cursor);
        CXFile file = nullptr;
        clang::Location out;
        clang::api().clang_getExpansionLocation(
            clang::api().clang_getRangeEnd(clang::api().clang_getCursorExtent(cursor)), &file, &out.line,
            &out.column, nullptr);
        if (file) out.file = takeString(clang::api().clang_getFileName(file));
        return out;
    }

    std::vector<std::string> tokens(CXCursor cursor) const {
        return clang::tokenSpellings(unit_, clang::api().clang_getCursorExtent(cursor));
    }

    // The binary operator's token: what the file holds between its two operands, read there
    // alone (tokenizing the whole expression at every level of it made a 30,000-term sum
    // quadratic). Empty for an operator that a macro body wrote: its operands do not sit on
    // either side of it in the file.
    std::string binaryOperator(CXCursor cursor) const {
        std::vector<CXCursor> operands = children(cursor);
        if (operands.size() != 2) return {};
        // File locations: a macro argument where it is written, anything else a macro wrote
        // where the macro is used.
        auto place = [](CXSourceLocation location) {
            CXFile file = nullptr;
            unsigned offset = 0;
            clang::api().clang_getFileLocation(location, &file, nullptr, nullptr, &offset);
            return std::make_pair(file, offset);
        };
        auto [file, from] =
            place(clang::api().clang_getRangeEnd(clang::api().clang_getCursorExtent(operands[0])));
        auto [rightFile, to] =
            place(clang::api().clang_getRangeStart(clang::api().clang_getCursorExtent(operands[1])));
        if (!file || file != rightFile || to <= from) return {};
        size_t size = 0;
        const char* text = clang::api().clang_getFileContents(unit_, file, &size);
        if (!text || to > size) return {};
        std::string written = withoutSpaceOrComments(std::string_view(text + from, to - from));
        if (!isOneOf(written, {"=", "==", "!=", "<",  ">",  "<=", ">=", "+", "-",  "*",   "/",  "%",
                               "&", "|",  "^",  "&&", "||", "<<", ">>", ",", ".*", "->*", "<=>"}))
            return {};
        return written;
    }

    // The text with its white space, line continuations and comments taken out.
    static std::string withoutSpaceOrComments(std::string_view text) {
        std::string out;
        for (size_t at = 0; at < text.size();) {
            if (text.substr(at, 2) == "/*") {
                size_t end = text.find("*/", at + 2);
                at = end == std::string_view::npos ? text.size() : end + 2;
            } else if (text.substr(at, 2) == "//") {
                size_t end = text.find('\n', at);
                at = end == std::string_view::npos ? text.size() : end + 1;
            } else if (std::isspace(static_cast<unsigned char>(text[at])) || text[at] == '\\') {
                ++at;
            } else {
                out += text[at++];
            }
        }
        return out;
    }

    // The frame an expression gives: a call that returns one, or a local known to hold one.
    std::optional<FrameValue> frameValue(CXCursor expression) const {
        CXCursor value = strip(expression);
        if (kindOf(value) == CXCursor_CallExpr) {
            std::string name = spelling(value);
            if (isOneOf(name, {"Py_NewRef", "_Py_NewRef", "Py_XNewRef", "_Py_XNewRef"}) &&
                clang::api().clang_Cursor_getNumArguments(value) == 1) {
                auto inner = frameValue(clang::api().clang_Cursor_getArgument(value, 0));
                if (inner) inner->ownership = Ownership::kNewReference;
                if (inner) inner->local.clear();
                return inner;
            }
            return frameCall(value);
        }
        if (kindOf(value) == CXCursor_DeclRefExpr) {
            auto found = frameLocals_.find(spelling(value));
            if (found != frameLocals_.end()) {
                FrameValue alias = found->second;
                alias.local = found->first;
                return alias;
            }
        }
        return std::nullopt;
    }

    // --- findings ---

    void addFinding(const std::string& rule, CXCursor at, const std::string& name, std::string summary,
                    const char* fix) {
        clang::Location where = location(at);
        Finding finding;
        finding.kind = "lint:" + rule;
        finding.summary = std::move(summary);
        finding.frames.push_back({name_, where.file, static_cast<int>(where.line)});
        finding.locals.push_back(name);
        finding.column = static_cast<int>(where.column);
        finding.fix = fix;
        findings_.push_back(std::move(finding));
    }

    void storeFinding(const std::string& rule, CXCursor at, const std::string& target,
                      const FrameValue& value, const char* where) {
        std::string source = value.local.empty()
                                 ? fmt::format("`{}`", value.what)
                                 : fmt::format("`{}` (from `{}`)", value.local, value.what);
        std::string lifetime = std::string(where) == "member" ? "as long as the object lives"
                                                              : "for the rest of the process";
        std::string summary =
            value.ownership == Ownership::kBorrowed
                ? fmt::format(
                      "{} is a borrowed frame, stored in the {} `{}`: the pointer dangles once that "
                      "frame returns, and with a Py_INCREF it keeps the frame, its locals and every "
                      "caller's frame (through f_back) alive {}",
                      source, where, target, lifetime)
                : fmt::format(
                      "{} is a frame, stored in the {} `{}`: it keeps that frame, its locals and "
                      "every caller's frame (through f_back) alive {}",
                      source, where, target, lifetime);
        addFinding(rule, at, target, std::move(summary), kStoreFix);
    }

    void leakFindings(const FlowState& state, const clang::Location& exit, const std::string& how) {
        for (const auto& [name, held] : state.owned) {
            if (!reportedLeaks_.insert({name, held.line}).second) continue;
            Finding finding;
            finding.kind = "lint:frame-ref-leaked";
            finding.summary = fmt::format(
                "new reference `{}` = `{}` (line {}) is not released on the path where `{}` {} at line "
                "{}: "
                "the frame, its locals and every caller's frame (through f_back) are never freed",
                name, held.source, held.line, name_, how, exit.line);
            finding.frames.push_back({name_, exit.file, static_cast<int>(held.line)});
            finding.locals.push_back(name);
            finding.column = static_cast<int>(held.column);
            finding.fix = kLeakFix;
            findings_.push_back(std::move(finding));
        }
    }

    // --- statements ---

    void statements(const std::vector<CXCursor>& list, FlowState& state) {
        for (CXCursor item : list)
            statement(item, state);
    }

    void statement(CXCursor cursor, FlowState& state) {
        // Statements in statements (blocks, loops, cases, an `if` without braces inside another)
        // recurse here. Rather than run out of stack, the walk stops short of its end.
        if (stack_.nearlyExhausted()) throw TooDeep{clang::location(cursor).line};
        CXCursorKind kind = kindOf(cursor);
        if (kind == CXCursor_LabelStmt) {
            auto pending = gotoStates_.find(spelling(cursor));
            if (pending != gotoStates_.end()) state.mergeFrom(pending->second);
            statements(children(cursor), state);
            return;
        }
        if (!state.reachable && kind != CXCursor_CompoundStmt && kind != CXCursor_CaseStmt &&
            kind != CXCursor_DefaultStmt) {
            return;
        }
        if (isSimpleStatement(kind) && macroStatement(cursor, state)) return;
        switch (kind) {
        case CXCursor_CompoundStmt:
            for (CXCursor item : children(cursor))
                statement(item, state);
            return;
        case CXCursor_IfStmt:
            ifStatement(cursor, state);
            return;
        case CXCursor_WhileStmt:
        case CXCursor_ForStmt:
        case CXCursor_DoStmt:
        case CXCursor_CXXForRangeStmt:
            loop(cursor, state);
            return;
        case CXCursor_SwitchStmt:
            switchStatement(cursor, state);
            return;
        case CXCursor_CaseStmt:
        case CXCursor_DefaultStmt:
            // Reached from the switch's entry, or by falling through from the case above. Labels
            // stacked on one statement (`case 'a': case 'b': ...`, thousands in generated code)
            // nest one in the other, and are walked in a loop.
            for (CXCursor label = cursor;;) {
                if (!switchEntries_.empty()) state.mergeFrom(switchEntries_.back());
                std::vector<CXCursor> parts = children(label);
                if (parts.empty()) return;
                CXCursorKind inner = kindOf(parts.back());
                if (inner != CXCursor_CaseStmt && inner != CXCursor_DefaultStmt) {
                    statement(parts.back(), state);
                    return;
                }
                label = parts.back();
            }
        case CXCursor_BreakStmt:
            if (!breakTargets_.empty()) breakTargets_.back()->mergeFrom(state);
            state = FlowState::unreachable();
            return;
        case CXCursor_ContinueStmt:
            if (!continueTargets_.empty()) continueTargets_.back()->mergeFrom(state);
            state = FlowState::unreachable();
            return;
        case CXCursor_GotoStmt: {
            CXCursor label = clang::api().clang_getCursorReferenced(cursor);
            gotoStates_[spelling(label)].mergeFrom(state);
            if (!gotoStates_[spelling(label)].reachable) gotoStates_[spelling(label)] = state;
            state = FlowState::unreachable();
            return;
        }
        case CXCursor_ReturnStmt:
            returnStatement(cursor, state);
            return;
        case CXCursor_CXXTryStmt: {
            std::vector<CXCursor> parts = children(cursor);
            FlowState before = state;
            if (!parts.empty()) statement(parts.front(), state);
            FlowState after = state;
            for (size_t i = 1; i < parts.size(); ++i) {
                FlowState handler = before;
                handler.mergeFrom(after);
                statement(parts[i], handler);
                after.mergeFrom(handler);
            }
            state = after;
            return;
        }
        case CXCursor_CXXCatchStmt: {
            std::vector<CXCursor> parts = children(cursor);
            if (!parts.empty()) statement(parts.back(), state);
            return;
        }
        default:
            expression(cursor, state);
        }
    }

    std::vector<FlowState> switchEntries_;

    // Statements that may be one macro call (Py_CLEAR expands to a `do ... while (0)`); the
    // others are not tokenized again for it.
    static bool isSimpleStatement(CXCursorKind kind) {
        return kind != CXCursor_CompoundStmt && kind != CXCursor_IfStmt && kind != CXCursor_SwitchStmt &&
               kind != CXCursor_WhileStmt && kind != CXCursor_ForStmt && kind != CXCursor_CaseStmt &&
               kind != CXCursor_DefaultStmt && kind != CXCursor_ReturnStmt &&
               kind != CXCursor_CXXTryStmt;
    }

    // The call a statement starts with, read from the file at the statement's expansion location:
    // its name and the text of each argument. libclang has no tokens for code a macro wrote, so
    // `Py_DECREF(f);` is read here as it is written, whatever the Python version expands it to.
    std::optional<std::pair<std::string, std::vector<std::string>>> writtenCall(CXCursor cursor) const {
        CXFile file = nullptr;
        unsigned offset = 0;
        clang::api().clang_getExpansionLocation(clang::api().clang_getCursorLocation(cursor), &file,
                                                nullptr, nullptr, &offset);
        size_t size = 0;
        const char* text = file ? clang::api().clang_getFileContents(unit_, file, &size) : nullptr;
        if (!text || offset >= size) return std::nullopt;
        std::string_view source(text, size);
        auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        size_t at = offset;
        while (at < size && isWord(source[at]))
            ++at;
        std::string name(source.substr(offset, at - offset));
        while (at < size && std::isspace(static_cast<unsigned char>(source[at])))
            ++at;
        if (name.empty() || at >= size || source[at] != '(') return std::nullopt;
        std::vector<std::string> arguments;
        std::string current;
        int depth = 0;
        for (; at < size; ++at) {
            char c = source[at];
            if (c == '(' && depth++ == 0) continue;
            if (c == ')' && --depth == 0) {
                arguments.push_back(current);
                return std::make_pair(name, arguments);
            }
            if (c == ',' && depth == 1) {
                arguments.push_back(std::exchange(current, {}));
                continue;
            }
            current += c;
        }
        return std::nullopt;
    }

    static std::vector<std::string> identifiers(const std::string& text) {
        std::vector<std::string> out;
        std::string current;
        for (char c : text + " ") {
            if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
                current += c;
            } else if (!current.empty()) {
                if (!std::isdigit(static_cast<unsigned char>(current[0]))) out.push_back(current);
                current.clear();
            }
        }
        return out;
    }

    // A statement that is one call the rules know by name: Py_DECREF(f), Py_CLEAR(f), Py_INCREF(f)
    // and the stealing calls, whose expansions differ across Python versions (Py_CLEAR assigns
    // NULL to a temporary; PyTuple_SET_ITEM writes into a struct member). Returns true when
    // handled.
    bool macroStatement(CXCursor cursor, FlowState& state) {
        auto call = writtenCall(cursor);
        if (!call) return false;
        const auto& [macro, arguments] = *call;
        bool releases =
            isOneOf(macro, {"Py_DECREF", "Py_XDECREF", "Py_CLEAR", "Py_DecRef", "Py_XDecRef"});
        bool steals = isOneOf(macro, {"PyTuple_SET_ITEM", "PyList_SET_ITEM", "PyStructSequence_SET_ITEM",
                                      "PyTuple_SetItem", "PyList_SetItem", "PyModule_AddObject"});
        bool increfs = isOneOf(macro, {"Py_INCREF", "Py_XINCREF"});
        if ((!releases && !steals && !increfs) || arguments.empty()) return false;
        // Releases and increfs take one argument; the stealing calls hand on their last.
        for (const auto& name : identifiers(steals ? arguments.back() : arguments.front())) {
            if (!increfs) {
                state.release(name);
                continue;
            }
            auto found = frameLocals_.find(name);
            if (found != frameLocals_.end() && found->second.ownership == Ownership::kBorrowed &&
                !state.owned.count(name)) {
                clang::Location where = location(cursor);
                state.owned[name] = {name, macro + "(" + name + ") of " + found->second.what, where.line,
                                     where.column, nextGroup_++};
            }
        }
        return true;
    }

    // Null checks narrow a branch: in `if (!f)` or `if (f == NULL)` the then-branch holds no
    // reference in f; in `if (f)` or `if (f != NULL)` the else-branch holds none.
    struct NullCheck {
        std::string name;
        bool nullInThen = false;
    };

    std::optional<std::string> localName(CXCursor expression) const {
        CXCursor value = strip(expression);
        if (kindOf(value) == CXCursor_BinaryOperator && binaryOperator(value) == "=") {
            value = strip(children(value).front());
        }
        if (kindOf(value) == CXCursor_DeclRefExpr) return spelling(value);
        return std::nullopt;
    }

    // NULL, nullptr, 0: read from the AST, since NULL is a macro and has no tokens of its own.
    static bool isNullConstant(CXCursor expression) {
        CXCursor value = strip(expression);
        if (kindOf(value) == CXCursor_CXXNullPtrLiteralExpr) return true;
        if (kindOf(value) != CXCursor_IntegerLiteral && kindOf(value) != CXCursor_UnexposedExpr)
            return false;
        CXEvalResult result = clang::api().clang_Cursor_Evaluate(value);
        if (!result) return false;
        bool zero = clang::api().clang_EvalResult_getKind(result) == CXEval_Int &&
                    clang::api().clang_EvalResult_getAsLongLong(result) == 0;
        clang::api().clang_EvalResult_dispose(result);
        return zero;
    }

    std::optional<NullCheck> nullCheck(CXCursor condition) const {
        CXCursor value = strip(condition);
        if (auto name = localName(value)) return NullCheck{*name, false};
        if (kindOf(value) == CXCursor_UnaryOperator) {
            std::vector<std::string> words = tokens(value);
            std::vector<CXCursor> operand = children(value);
            if (!words.empty() && words[0] == "!" && operand.size() == 1) {
                if (auto name = localName(operand[0])) return NullCheck{*name, true};
            }
        }
        if (kindOf(value) == CXCursor_BinaryOperator) {
            std::string op = binaryOperator(value);
            std::vector<CXCursor> sides = children(value);
            if ((op == "==" || op == "!=") && sides.size() == 2) {
                for (int i = 0; i < 2; ++i) {
                    auto name = localName(sides[i]);
                    if (name && isNullConstant(sides[1 - i])) return NullCheck{*name, op == "=="};
                }
            }
        }
        return std::nullopt;
    }

    // An `if` and the `else if`s chained to it, in one loop: a chain of 10,000 branches is as
    // deep in the AST (each `else if` is the else-branch of the one before), and is walked
    // without being as deep on the stack. What leaves the statement is every branch's state,
    // merged in source order.
    void ifStatement(CXCursor cursor, FlowState& state) {
        FlowState leaving = FlowState::unreachable();
        for (;;) {
            std::vector<CXCursor> parts = children(cursor);
            // init? condition then else?: libclang leaves out the parts a statement does not have.
            size_t at = 0;
            if (parts.size() == 4 || (parts.size() == 3 && kindOf(parts[0]) == CXCursor_DeclStmt)) {
                statement(parts[at++], state);
            }
            if (at + 2 > parts.size()) break;
            CXCursor condition = parts[at];
            expression(condition, state);
            FlowState thenState = state;
            assume(condition, true, thenState);
            assume(condition, false, state);
            statement(parts[at + 1], thenState);
            leaving.mergeFrom(thenState);
            if (at + 2 == parts.size()) break; // no else: the condition's false side leaves
            CXCursor elseBranch = parts[at + 2];
            if (kindOf(elseBranch) == CXCursor_IfStmt && state.reachable) {
                cursor = elseBranch;
                continue;
            }
            statement(elseBranch, state);
            break;
        }
        leaving.mergeFrom(state);
        state = std::move(leaving);
    }

    // On a branch where `condition` is `outcome`: a local the condition proves NULL holds nothing.
    void assume(CXCursor condition, bool outcome, FlowState& state) const {
        auto check = nullCheck(condition);
        if (check && check->nullInThen == outcome) state.release(check->name);
    }

    void loop(CXCursor cursor, FlowState& state) {
        std::vector<CXCursor> parts = children(cursor);
        if (parts.empty()) return;
        CXCursorKind kind = kindOf(cursor);
        bool bodyFirst = kind == CXCursor_DoStmt;
        CXCursor body = bodyFirst ? parts.front() : parts.back();
        // The condition, where libclang's list of parts says which it is (a `for` may lack any).
        std::optional<CXCursor> condition;
        if ((kind == CXCursor_WhileStmt || kind == CXCursor_DoStmt) && parts.size() == 2)
            condition = bodyFirst ? parts[1] : parts[0];
        if (kind == CXCursor_ForStmt && parts.size() == 4) condition = parts[1];
        bool endless = (kind == CXCursor_ForStmt && parts.size() == 1) ||
                       (condition && isOneOf(fmt::format("{}", fmt::join(tokens(*condition), "")),
                                             {"1", "true", "(1)"}));
        // Init, condition and increment: expressions evaluated around the body.
        for (size_t i = bodyFirst ? 1 : 0; i < (bodyFirst ? parts.size() : parts.size() - 1); ++i) {
            if (kindOf(parts[i]) == CXCursor_DeclStmt ||
                clang::api().clang_isExpression(kindOf(parts[i])))
                statement(parts[i], state);
        }
        // Leaving through the condition: the body may run no time, or leave after any turn.
        auto leaving = [&](FlowState through) {
            if (endless) return FlowState::unreachable();
            if (condition) assume(*condition, false, through);
            return through;
        };
        FlowState exits = bodyFirst ? FlowState::unreachable() : leaving(state);
        FlowState continues = FlowState::unreachable();
        breakTargets_.push_back(&exits);
        continueTargets_.push_back(&continues);
        FlowState inside = state;
        if (condition && !bodyFirst) assume(*condition, true, inside);
        statement(body, inside);
        breakTargets_.pop_back();
        continueTargets_.pop_back();
        // One pass over the body: what it leaves owned reaches the loop's exit (and its next turn).
        inside.mergeFrom(continues);
        exits.mergeFrom(leaving(inside));
        state = exits;
    }

    void switchStatement(CXCursor cursor, FlowState& state) {
        std::vector<CXCursor> parts = children(cursor);
        if (parts.size() < 2) return;
        expression(parts.front(), state);
        FlowState exits = FlowState::unreachable();
        breakTargets_.push_back(&exits);
        switchEntries_.push_back(state);
        FlowState inside = FlowState::unreachable();
        statement(parts.back(), inside);
        switchEntries_.pop_back();
        breakTargets_.pop_back();
        exits.mergeFrom(inside);
        std::vector<CXCursor> defaults;
        collect(
            parts.back(), [](CXCursor c) { return kindOf(c) == CXCursor_DefaultStmt; }, defaults);
        if (defaults.empty()) exits.mergeFrom(state);
        state = exits;
    }

    void returnStatement(CXCursor cursor, FlowState& state) {
        std::vector<CXCursor> parts = children(cursor);
        if (!parts.empty()) {
            expression(parts.front(), state);
            // Returned: the caller owns it now.
            CXCursor value = strip(parts.front());
            if (kindOf(value) == CXCursor_DeclRefExpr) state.release(spelling(value));
        }
        leakFindings(state, location(cursor), "returns");
        state = FlowState::unreachable();
    }

    // --- expressions ---

    // An expression, its operands before it (in source order; an assignment's right side before
    // its left), with a stack of its own: a 30,000-term sum is 30,000 levels deep.
    void expression(CXCursor root, FlowState& state) {
        enum class Step { kEnter, kAfterVariable, kAfterAssignment, kAfterCall };
        struct Visit {
            CXCursor cursor;
            Step step;
            CXCursor initializer; // kAfterVariable: the expression the variable is bound to
        };
        std::vector<Visit> pending = {{root, Step::kEnter, root}};
        while (!pending.empty()) {
            Visit visit = pending.back();
            pending.pop_back();
            CXCursor cursor = visit.cursor;
            switch (visit.step) {
            case Step::kAfterVariable:
                bindVariable(cursor, visit.initializer, state);
                continue;
            case Step::kAfterAssignment: {
                std::vector<CXCursor> sides = children(cursor);
                assignment(sides[0], sides[1], state);
                continue;
            }
            case Step::kAfterCall:
                callExpression(cursor, state);
                continue;
            case Step::kEnter:
                break;
            }
            CXCursorKind kind = kindOf(cursor);
            if (kind == CXCursor_LambdaExpr) continue; // its body is another function
            if (kind == CXCursor_VarDecl) {
                if (auto init = initializer(cursor)) {
                    pending.push_back({cursor, Step::kAfterVariable, *init});
                    pending.push_back({*init, Step::kEnter, *init});
                }
                continue;
            }
            std::vector<CXCursor> parts = children(cursor);
            if (kind == CXCursor_BinaryOperator && binaryOperator(cursor) == "=") {
                pending.push_back({cursor, Step::kAfterAssignment, cursor});
                pending.push_back({parts[0], Step::kEnter, parts[0]});
                pending.push_back({parts[1], Step::kEnter, parts[1]});
                continue;
            }
            if (kind == CXCursor_CallExpr) pending.push_back({cursor, Step::kAfterCall, cursor});
            for (auto child = parts.rbegin(); child != parts.rend(); ++child)
                pending.push_back({*child, Step::kEnter, *child});
        }
    }

    // A call, once its arguments were walked: an assignment operator, a release, a stealing call.
    void callExpression(CXCursor cursor, FlowState& state) {
        std::string name = spelling(cursor);
        int arguments = clang::api().clang_Cursor_getNumArguments(cursor);
        if (name == "operator=" && arguments == 2) {
            assignment(clang::api().clang_Cursor_getArgument(cursor, 0),
                       clang::api().clang_Cursor_getArgument(cursor, 1), state);
            return;
        }
        bool releases = isOneOf(
            name, {"Py_DECREF", "_Py_DECREF", "Py_XDECREF", "_Py_XDECREF", "Py_DecRef", "Py_XDecRef"});
        bool steals =
            isOneOf(name, {"PyList_SetItem", "PyTuple_SetItem", "PyModule_AddObject", "PyTuple_SET_ITEM",
                           "PyList_SET_ITEM", "PyStructSequence_SET_ITEM", "PyModule_Add",
                           "PyStructSequence_SetItem", "PyErr_Restore", "PyException_SetCause",
                           "PyException_SetContext", "reinterpret_steal", "steal"});
        if (!releases && !steals) return;
        for (int i = 0; i < arguments; ++i) {
            CXCursor argument = strip(clang::api().clang_Cursor_getArgument(cursor, i));
            if (kindOf(argument) == CXCursor_DeclRefExpr) state.release(spelling(argument));
        }
    }

    // A variable's initializer: its last child that is an expression.
    static std::optional<CXCursor> initializer(CXCursor variable) {
        std::vector<CXCursor> parts = children(variable);
        auto init = std::find_if(parts.rbegin(), parts.rend(), [](CXCursor child) {
            return clang::api().clang_isExpression(kindOf(child));
        });
        if (init == parts.rend()) return std::nullopt;
        return *init;
    }

    // A variable, once its initializer `init` was walked.
    void bindVariable(CXCursor cursor, CXCursor init, FlowState& state) {
        auto value = frameValue(init);
        if (!value) return;
        std::string name = spelling(cursor);
        if (hasStaticStorage(cursor)) {
            storeFinding("frame-stored-static", cursor, name, *value, "static");
            if (!value->local.empty()) state.release(value->local);
            return;
        }
        bindLocal(name, *value, cursor, state);
    }

    void bindLocal(const std::string& name, const FrameValue& value, CXCursor at, FlowState& state) {
        frameLocals_[name] = value;
        frameLocals_[name].local.clear();
        if (!value.local.empty()) {
            // An alias of another local: the same reference, released through either name.
            auto held = state.owned.find(value.local);
            if (held != state.owned.end()) {
                Held alias = held->second;
                alias.name = name;
                state.owned[name] = alias;
            }
            return;
        }
        if (value.ownership != Ownership::kNewReference) return;
        clang::Location where = location(at);
        state.owned[name] = {name, value.what, where.line, where.column, nextGroup_++};
    }

    enum class Target { kLocal, kStatic, kMember, kOutParameter, kOther };

    Target classify(CXCursor lhs, std::string& name) const {
        CXCursor value = strip(lhs);
        CXCursorKind kind = kindOf(value);
        if (kind == CXCursor_ArraySubscriptExpr) {
            // `a[i][j]`: stored where its innermost base is.
            CXCursor base = value;
            while (kindOf(base) == CXCursor_ArraySubscriptExpr) {
                std::vector<CXCursor> parts = children(base);
                if (parts.empty()) return Target::kOther;
                base = strip(parts.front());
            }
            std::string ignored;
            Target target = classify(base, ignored);
            name = fmt::format("{}", fmt::join(tokens(value), ""));
            return target == Target::kStatic || target == Target::kMember ? target : Target::kOther;
        }
        if (kind == CXCursor_UnaryOperator) {
            std::vector<std::string> words = tokens(value);
            if (!words.empty() && words[0] == "*") return Target::kOutParameter;
            return Target::kOther;
        }
        CXCursor referenced = clang::api().clang_getCursorReferenced(value);
        if (kind == CXCursor_MemberRefExpr) {
            name = fmt::format("{}", fmt::join(tokens(value), ""));
            if (kindOf(referenced) == CXCursor_VarDecl) return Target::kStatic; // a static member
            return kindOf(referenced) == CXCursor_FieldDecl ? Target::kMember : Target::kOther;
        }
        if (kind == CXCursor_DeclRefExpr) {
            name = spelling(value);
            if (kindOf(referenced) == CXCursor_ParmDecl) return Target::kLocal;
            if (kindOf(referenced) == CXCursor_FieldDecl) return Target::kMember; // implicit this->
            if (kindOf(referenced) != CXCursor_VarDecl) return Target::kOther;
            return hasStaticStorage(referenced) ? Target::kStatic : Target::kLocal;
        }
        return Target::kOther;
    }

    void assignment(CXCursor lhs, CXCursor rhs, FlowState& state) {
        auto value = frameValue(rhs);
        std::string name;
        Target target = classify(lhs, name);
        if (!value) {
            // Rebinding a local to something else: it no longer holds a frame for the store rules.
            if (target == Target::kLocal) frameLocals_.erase(name);
            return;
        }
        switch (target) {
        case Target::kStatic:
        case Target::kMember:
            storeFinding(target == Target::kStatic ? "frame-stored-static" : "frame-stored-member", lhs,
                         name, *value, target == Target::kStatic ? "static" : "member");
            [[fallthrough]];
        case Target::kOutParameter:
            // Handed on (a finding of its own, or the caller's now): not a leak of this function.
            if (!value->local.empty()) state.release(value->local);
            return;
        case Target::kLocal:
            bindLocal(name, *value, lhs, state);
            return;
        case Target::kOther:
            return;
        }
    }
};

// What the rules found in one translation unit, and the functions whose walk stopped short.
struct UnitAnalysis {
    std::vector<Finding> findings;
    struct CutShort {
        std::string function;
        unsigned line = 0; // the statement it stopped at
    };
    std::vector<CutShort> cutShort;
};

// Every function defined in the main file, and the static variables declared at namespace scope.
void analyseDeclarations(CXTranslationUnit unit, CXCursor parent, const StackGuard& stack,
                         UnitAnalysis& out) {
    std::vector<Finding>& findings = out.findings;
    for (CXCursor cursor : children(parent)) {
        if (!clang::api().clang_Location_isFromMainFile(clang::api().clang_getCursorLocation(cursor)))
            continue;
        CXCursorKind kind = kindOf(cursor);
        if (kind == CXCursor_Namespace || kind == CXCursor_ClassDecl || kind == CXCursor_StructDecl ||
            kind == CXCursor_ClassTemplate || kind == CXCursor_LinkageSpec ||
            kind == CXCursor_UnionDecl) {
            analyseDeclarations(unit, cursor, stack, out);
        } else if (isFunctionKind(kind) && clang::api().clang_isCursorDefinition(cursor)) {
            FunctionAnalysis function(unit, cursor, stack, findings);
            try {
                function.run();
            } catch (const TooDeep& deep) {
                // What it found before stopping stands; the rest of it is not analysed.
                out.cutShort.push_back({function.name(), deep.line});
            }
        } else if (kind == CXCursor_VarDecl) {
            // A global's initializer runs once, outside any function.
            std::vector<CXCursor> parts = children(cursor);
            auto init = std::find_if(parts.rbegin(), parts.rend(), [](CXCursor child) {
                return clang::api().clang_isExpression(kindOf(child));
            });
            if (init == parts.rend() || kindOf(strip(*init)) != CXCursor_CallExpr) continue;
            if (auto value = frameCall(strip(*init))) {
                Finding finding;
                clang::Location where = clang::location(cursor);
                std::string name = qualifiedName(cursor);
                finding.kind = "lint:frame-stored-static";
                finding.summary = fmt::format(
                    "`{}` is a frame, stored in the static `{}`: it keeps that frame, its locals "
                    "and every caller's frame (through f_back) alive for the rest of the process",
                    value->what, name);
                finding.frames.push_back(
                    {"(static initializer)", where.file, static_cast<int>(where.line)});
                finding.locals.push_back(name);
                finding.column = static_cast<int>(where.column);
                finding.fix = kStoreFix;
                findings.push_back(std::move(finding));
            }
        }
    }
}

// --- Command lines ---------------------------------------------------------------------------

bool isCxxLanguage(const std::string& path) {
    std::string extension = fs::path(path).extension().string();
    return isOneOf(extension, {".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"});
}

// A file's command line, and which of its arguments names the file (none when no argument could be
// matched to it: such a line is used as it is).
struct CommandLine {
    std::vector<std::string> args;
    std::optional<size_t> fileArg;
};

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

// The command line to parse `file` with: its own from the database, a neighbour's for a file the
// database does not list (a header), or the explicit flags.
class CommandLines {
  public:
    explicit CommandLines(const CxxLintOptions& options) : options_(options) {
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

    const std::string& databasePath() const { return databasePath_; }

    CommandLine forFile(const std::string& file) const {
        if (database_) {
            clang::CompileCommandsGuard commands(
                clang::api().clang_CompilationDatabase_getCompileCommands(database_->get(),
                                                                          file.c_str()));
            if (commands.size() > 0) {
                std::vector<std::string> args = arguments(commands.at(0));
                std::optional<size_t> at = argumentNaming(args, file, directory(commands.at(0)));
                return {std::move(args), at};
            }
            // Not listed (a header): the command of a file beside it, or any, with this file instead.
            auto neighbour = neighbours_.find(fs::path(file).parent_path().string());
            const auto* borrowed = neighbour != neighbours_.end() ? &neighbour->second
                                                                  : (fallback_ ? &*fallback_ : nullptr);
            if (borrowed) {
                std::vector<std::string> args = borrowed->first;
                std::replace(args.begin(), args.end(), borrowed->second, file);
                auto at = std::find(args.begin(), args.end(), file);
                return {std::move(args),
                        at == args.end() ? std::nullopt : std::optional<size_t>(at - args.begin())};
            }
        }
        std::vector<std::string> args = {isCxxLanguage(file) ? "clang++" : "clang"};
        args.insert(args.end(), options_.flags.begin(), options_.flags.end());
        bool hasStandard =
            std::any_of(options_.flags.begin(), options_.flags.end(),
                        [](const std::string& flag) { return flag.starts_with("-std="); });
        if (isCxxLanguage(file) && !hasStandard) args.push_back("-std=c++17");
        for (const auto& dir : options_.includeDirs)
            args.push_back("-I" + dir);
        args.push_back("-I" + embeddedPythonIncludeDir());
        args.push_back(file);
        return {args, args.size() - 1};
    }

  private:
    const CxxLintOptions& options_;
    std::string databasePath_;
    std::optional<clang::CompilationDatabaseGuard> database_;
    std::multimap<std::string, std::pair<std::vector<std::string>, std::string>> neighbours_;
    std::optional<std::pair<std::vector<std::string>, std::string>> fallback_;

    static std::string directory(CXCompileCommand command) {
        return takeString(clang::api().clang_CompileCommand_getDirectory(command));
    }

    // The database's arguments, run from its directory.
    static std::vector<std::string> arguments(CXCompileCommand command) {
        std::vector<std::string> args;
        unsigned count = clang::api().clang_CompileCommand_getNumArgs(command);
        for (unsigned i = 0; i < count; ++i)
            args.push_back(takeString(clang::api().clang_CompileCommand_getArg(command, i)));
        if (!args.empty()) args.insert(args.begin() + 1, "-working-directory=" + directory(command));
        return args;
    }
};

// The first error of a translation unit, as "file:line: message"; empty when it has none.
std::optional<nlohmann::json> firstError(CXTranslationUnit unit, const std::string& file) {
    unsigned count = clang::api().clang_getNumDiagnostics(unit);
    for (unsigned i = 0; i < count; ++i) {
        CXDiagnostic diagnostic = clang::api().clang_getDiagnostic(unit, i);
        CXDiagnosticSeverity severity = clang::api().clang_getDiagnosticSeverity(diagnostic);
        if (severity >= CXDiagnostic_Error) {
            CXFile where = nullptr;
            unsigned line = 0;
            clang::api().clang_getExpansionLocation(clang::api().clang_getDiagnosticLocation(diagnostic),
                                                    &where, &line, nullptr, nullptr);
            std::string place = where ? takeString(clang::api().clang_getFileName(where)) : "";
            std::string message = takeString(clang::api().clang_getDiagnosticSpelling(diagnostic));
            clang::api().clang_disposeDiagnostic(diagnostic);
            if (!place.empty() && place != file)
                message = fmt::format("{}:{}: {}", place, line, message);
            return nlohmann::json{{"file", file},
                                  {"line", place == file ? line : 0},
                                  {"message", fmt::format("does not compile: {}", message)}};
        }
        clang::api().clang_disposeDiagnostic(diagnostic);
    }
    return std::nullopt;
}

// A translation unit of `args` (the compiler first); null when libclang could not parse it, `code`
// says why.
CXTranslationUnit parseArguments(CXIndex index, const std::vector<std::string>& args, unsigned options,
                                 CXErrorCode& code) {
    std::vector<const char*> argv;
    for (const auto& arg : args)
        argv.push_back(arg.c_str());
    CXTranslationUnit unit = nullptr;
    code = clang::api().clang_parseTranslationUnit2FullArgv(
        index, nullptr, argv.data(), static_cast<int>(argv.size()), nullptr, 0, options, &unit);
    return unit;
}

// --- Python.h, parsed once per command line ----------------------------------------------------
//
// Nearly every extension source opens the same way, a `#define PY_SSIZE_T_CLEAN` and then
// `#include <Python.h>`, and parsing that header is most of the time a file takes (about 70 ms of
// the 90 here). So the lint parses such an opening once per distinct command line, saves it as a
// precompiled header, and parses every file that opens with the same directives against it
// (`-include-pch`). The file's own lines still run: its `#define`s repeat the header's identically
// and its `#include <Python.h>` finds the include guard set, so what it declares, and where, is as
// without. A file whose opening holds anything else before Python.h (another include, a
// conditional, code, a line continued) is parsed as before, and so is any file whose parse with the
// header fails or reports an error about the header: it is an optimisation, never a verdict.

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    return text;
}

// The directives `file` opens with, up to and including its `#include <Python.h>`, one per line and
// without the comments around them: `#define`s, and `#ifndef NAME` / `#define NAME` / `#endif`.
// Nothing when it opens with anything else, or when a Python.h sits beside it (a quoted include
// would find that one first).
std::optional<std::string> pythonOpening(const std::string& file) {
    const fs::path path(file);
    if (!isOneOf(path.extension().string(), {".c", ".cc", ".cpp", ".cxx"})) return std::nullopt;
    std::error_code error;
    if (fs::exists(path.parent_path() / "Python.h", error)) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    std::string opening;
    bool inComment = false;
    std::optional<std::string> guarded; // the NAME of an open `#ifndef NAME`
    bool guardDefined = false;
    constexpr size_t kMaxLines = 400;
    std::string raw;
    for (size_t count = 0; count < kMaxLines && std::getline(in, raw); ++count) {
        std::string_view line = trimmed(raw);
        if (inComment) {
            size_t end = line.find("*/");
            if (end == std::string_view::npos) continue;
            inComment = false;
            line = trimmed(line.substr(end + 2));
        }
        if (line.empty()) continue;
        if (line.ends_with('\\')) return std::nullopt; // a continued line: not worth reading
        if (line.starts_with("//")) continue;
        if (line.starts_with("/*")) {
            size_t end = line.find("*/", 2);
            if (end == std::string_view::npos) {
                inComment = true;
                continue;
            }
            if (!trimmed(line.substr(end + 2)).empty()) return std::nullopt;
            continue;
        }
        if (!line.starts_with('#')) return std::nullopt;
        std::string_view directive = trimmed(line.substr(1));
        if (directive.starts_with("endif") || directive.starts_with("ifndef")) {
            // `#endif /* NAME */`: the comment is not the directive's
            if (size_t comment = directive.find("/*"); comment != std::string_view::npos) {
                size_t end = directive.find("*/", comment + 2);
                if (end == std::string_view::npos || !trimmed(directive.substr(end + 2)).empty())
                    return std::nullopt;
                directive = trimmed(directive.substr(0, comment));
            }
        }
        if (directive.find("/*") != std::string_view::npos ||
            directive.find("//") != std::string_view::npos)
            return std::nullopt;
        if (directive.starts_with("define") && directive.size() > 6 &&
            std::isspace(static_cast<unsigned char>(directive[6]))) {
            std::string_view definition = trimmed(directive.substr(6));
            if (guarded) {
                // `#ifndef NAME` must define that NAME and nothing else before its `#endif`.
                if (!definition.starts_with(*guarded) ||
                    (definition.size() > guarded->size() &&
                     !std::isspace(static_cast<unsigned char>(definition[guarded->size()]))))
                    return std::nullopt;
                guardDefined = true;
            }
            opening += "#define " + std::string(definition) + "\n";
            continue;
        }
        // Cython's opening: `#ifndef NAME`, `#define NAME`, `#endif`. Run twice, it defines the
        // same as once; no other conditional is taken.
        if (directive.starts_with("ifndef") && directive.size() > 6 &&
            std::isspace(static_cast<unsigned char>(directive[6])) && !guarded) {
            std::string_view name = trimmed(directive.substr(6));
            if (name.empty() || name.find_first_of(" \t") != std::string_view::npos) return std::nullopt;
            guarded = std::string(name);
            guardDefined = false;
            opening += "#ifndef " + *guarded + "\n";
            continue;
        }
        if (directive == "endif" && guarded && guardDefined) {
            guarded.reset();
            opening += "#endif\n";
            continue;
        }
        if (guarded) return std::nullopt;
        if (directive.starts_with("include")) {
            std::string_view target = trimmed(directive.substr(7));
            if (target != "<Python.h>" && target != "\"Python.h\"") return std::nullopt;
            return opening + "#include " + std::string(target) + "\n";
        }
        return std::nullopt;
    }
    return std::nullopt;
}

// Precompiled openings, one per command line and opening, in a directory of their own under the
// run's scratch directory (scratch_dir.h), removed when the lint ends.
class PrecompiledOpenings {
  public:
    explicit PrecompiledOpenings(const CxxLintOptions& options) : options_(options) {}
    ~PrecompiledOpenings() {
        if (!directory_) return;
        std::error_code error;
        fs::remove_all(*directory_, error);
    }
    PrecompiledOpenings(const PrecompiledOpenings&) = delete;
    PrecompiledOpenings& operator=(const PrecompiledOpenings&) = delete;

    // The header to parse `file` against, or nothing.
    std::optional<std::string> forFile(const std::string& file, const CommandLine& line) {
        if (!line.fileArg) return std::nullopt;
        if (std::find(line.args.begin(), line.args.end(), "-x") != line.args.end()) return std::nullopt;
        std::optional<std::string> opening = pythonOpening(file);
        if (!opening) return std::nullopt;
        std::string key = *opening;
        for (size_t i = 0; i < line.args.size(); ++i)
            key += '\0' + (i == *line.fileArg ? std::string("<file>") : line.args[i]);
        auto known = built_.find(key);
        if (known != built_.end()) return known->second;
        std::optional<std::string> header = build(*opening, line, isCxxLanguage(file));
        built_.emplace(std::move(key), header);
        return header;
    }

    size_t built() const {
        return static_cast<size_t>(
            std::count_if(built_.begin(), built_.end(), [](const auto& entry) { return entry.second; }));
    }

  private:
    const CxxLintOptions& options_;
    std::optional<fs::path> directory_;
    std::map<std::string, std::optional<std::string>> built_;

    std::optional<std::string> build(const std::string& opening, const CommandLine& line, bool cxx) {
        if (!directory_) {
            std::string pattern = (fs::temp_directory_path() / "leakgate-lint-XXXXXX").string();
            if (!::mkdtemp(pattern.data())) {
                base::log::debug("no directory for precompiled headers: {}", std::strerror(errno));
                return std::nullopt;
            }
            directory_ = pattern;
        }
        const size_t n = built_.size();
        const std::string header = (*directory_ / fmt::format("opening-{}.h", n)).string();
        const std::string saved = (*directory_ / fmt::format("opening-{}.pch", n)).string();
        {
            std::ofstream out(header, std::ios::binary);
            out << opening;
            if (!out) return std::nullopt;
        }
        std::vector<std::string> args = line.args;
        args[*line.fileArg] = header;
        args.insert(args.begin() + static_cast<std::ptrdiff_t>(*line.fileArg),
                    {"-x", cxx ? "c++-header" : "c-header"});
        base::ForkedChildSpec spec;
        spec.timeout = options_.timeout;
        spec.stackBytes = options_.stackBytes;
        base::ForkedChildOutcome child = base::runInForkedChild(
            [&](const base::ChildChannel& channel) {
                ::setenv("LIBCLANG_NOTHREADS", "1", 1);
                clang::IndexGuard index;
                CXErrorCode code = CXError_Success;
                clang::TranslationUnitGuard unit(parseArguments(
                    index.get(), args, CXTranslationUnit_ForSerialization | CXTranslationUnit_Incomplete,
                    code));
                if (code != CXError_Success || !unit.get() || firstError(unit.get(), header)) return;
                if (clang::api().clang_saveTranslationUnit(unit.get(), saved.c_str(), 0) == 0)
                    channel.send("saved\n");
            },
            spec);
        if (child.timedOut || child.signal || child.exitCode != 0 || child.sent != "saved\n") {
            base::log::debug("the opening {:?} did not precompile; its files are parsed without it",
                             opening);
            return std::nullopt;
        }
        return saved;
    }
};

// Whether an error of `unit` is about the precompiled header it was given (built with other
// options, a header changed since): clang says "precompiled header", "PCH" or "AST file". Any other
// error is the file's own and would be the same without the header.
bool rejectsPrecompiledHeader(CXTranslationUnit unit) {
    unsigned count = clang::api().clang_getNumDiagnostics(unit);
    for (unsigned i = 0; i < count; ++i) {
        CXDiagnostic diagnostic = clang::api().clang_getDiagnostic(unit, i);
        bool rejected = false;
        if (clang::api().clang_getDiagnosticSeverity(diagnostic) >= CXDiagnostic_Error) {
            std::string message = takeString(clang::api().clang_getDiagnosticSpelling(diagnostic));
            rejected = message.find("precompiled") != std::string::npos ||
                       message.find("PCH") != std::string::npos ||
                       message.find("AST file") != std::string::npos;
        }
        clang::api().clang_disposeDiagnostic(diagnostic);
        if (rejected) return true;
    }
    return false;
}

// --- One translation unit, in a process of its own -------------------------------------------

// What the child sends once libclang has returned the translation unit: a crash after it is the
// walk's, not the parse's.
constexpr std::string_view kParsedMark = "parsed\n";

std::string parseFailure(CXErrorCode code) {
    if (code == CXError_Crashed)
        return "libclang crashed parsing this file (it recovered: error 2); not analysed";
    return fmt::format("libclang could not parse it (error {})", static_cast<int>(code));
}

// The child's half: parse, apply the rules, and send the parsed mark, then one line of JSON,
// {"findings": [...], "unparsed": an entry or null}.
void lintTranslationUnit(const std::string& file, const CommandLine& line,
                         const std::optional<std::string>& opening, const base::ChildChannel& channel) {
    // libclang parses on a thread of its own with an 8 MiB stack unless told not to; told, it
    // parses on this one, whose stack is the large one forked_child.h gives the work.
    ::setenv("LIBCLANG_NOTHREADS", "1", 1);
    clang::IndexGuard index(/*excludeDeclarationsFromPch=*/true);
    auto parse = [&](bool withOpening, CXErrorCode& code) {
        std::vector<std::string> args = line.args;
        if (withOpening)
            args.insert(args.begin() + static_cast<std::ptrdiff_t>(*line.fileArg),
                        {"-include-pch", *opening});
        return parseArguments(index.get(), args, CXTranslationUnit_KeepGoing, code);
    };
    CXErrorCode code = CXError_Success;
    CXTranslationUnit raw = parse(opening.has_value(), code);
    if (opening && (code != CXError_Success || !raw || rejectsPrecompiledHeader(raw))) {
        if (raw) clang::api().clang_disposeTranslationUnit(raw);
        raw = parse(false, code);
    }
    clang::TranslationUnitGuard unit(raw);
    channel.send(kParsedMark);
    nlohmann::json out = {{"findings", nlohmann::json::array()}, {"unparsed", nullptr}};
    if (code != CXError_Success || !unit.get()) {
        out["unparsed"] = {{"file", file}, {"line", 0}, {"message", parseFailure(code)}};
    } else if (auto error = firstError(unit.get(), file)) {
        out["unparsed"] = std::move(*error);
    } else {
        UnitAnalysis analysis;
        StackGuard stack;
        analyseDeclarations(unit.get(), clang::api().clang_getTranslationUnitCursor(unit.get()), stack,
                            analysis);
        out["findings"] = analysis.findings;
        if (!analysis.cutShort.empty()) {
            // Not wholly analysed is not clean: the file is listed, its findings kept.
            const auto& first = analysis.cutShort.front();
            out["unparsed"] = {
                {"file", file},
                {"line", first.line},
                {"message",
                 fmt::format("`{}` nests statements too deep to walk: it was analysed down to "
                             "line {} only",
                             first.function, first.line)}};
        }
    }
    channel.send(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

// The parent's half: the file's findings and `unparsed` entry from what came back, or from what
// happened to the child.
void lintInChild(const std::string& file, const CommandLine& line,
                 const std::optional<std::string>& opening, const CxxLintOptions& options,
                 CxxLintResult& result) {
    base::ForkedChildSpec spec;
    spec.timeout = options.timeout;
    spec.stackBytes = options.stackBytes;
    base::ForkedChildOutcome child = base::runInForkedChild(
        [&](const base::ChildChannel& channel) { lintTranslationUnit(file, line, opening, channel); },
        spec);
    const bool parsed = child.sent.starts_with(kParsedMark);
    if (!child.timedOut && !child.signal && child.exitCode == 0 && parsed) {
        try {
            nlohmann::json out = nlohmann::json::parse(child.sent.substr(kParsedMark.size()));
            for (const auto& finding : out.at("findings"))
                result.findings.push_back(finding.get<Finding>());
            if (!out.at("unparsed").is_null()) result.unparsed.push_back(out.at("unparsed"));
            return;
        } catch (const nlohmann::json::exception& error) {
            base::log::debug("unreadable result of the child that linted {}: {}", file, error.what());
        }
    }
    nlohmann::json entry = {{"file", file}, {"line", 0}};
    if (child.timedOut) {
        entry["message"] =
            fmt::format("timed out after {:g} s {}; its process was killed and the file is not analysed",
                        std::chrono::duration<double>(options.timeout).count(),
                        parsed ? "analysing this file" : "parsing this file (libclang)");
        entry["timed_out"] = true;
    } else if (child.signal) {
        entry["message"] =
            parsed
                ? fmt::format("leakgate's analysis crashed ({}) on this file after libclang parsed it; "
                              "not analysed",
                              base::signalName(*child.signal))
                : fmt::format("libclang crashed ({}) parsing this file; not analysed",
                              base::signalName(*child.signal));
        entry["signal"] = base::signalName(*child.signal);
    } else {
        // What it wrote last says why ("leakgate: ..." when the work threw).
        std::string_view said = child.stderrTail;
        while (!said.empty() && std::isspace(static_cast<unsigned char>(said.back())))
            said.remove_suffix(1);
        if (size_t newline = said.find_last_of('\n'); newline != std::string_view::npos)
            said.remove_prefix(newline + 1);
        entry["message"] = fmt::format("the process that {} this file ended without a result (exit "
                                       "status {}{}{}); not analysed",
                                       parsed ? "analysed" : "parsed", child.exitCode.value_or(-1),
                                       said.empty() ? "" : ": ", said);
    }
    if (!child.stderrTail.empty()) entry["stderr_tail"] = child.stderrTail;
    result.unparsed.push_back(std::move(entry));
}

} // namespace

bool cxxLintAvailable() {
    return clang::loadLibclang() != nullptr;
}
std::string cxxLintUnavailableReason() {
    return clang::libclangUnavailableReason();
}

bool isCxxSource(const std::string& path) {
    std::string extension = fs::path(path).extension().string();
    return isOneOf(extension, {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx"});
}

std::string embeddedPythonIncludeDir() {
    return LEAKGATE_PYTHON_INCLUDE_DIR;
}

CxxLintResult lintCxxFiles(const CxxLintOptions& options) {
    CxxLintResult result;
    CommandLines commandLines(options);
    PrecompiledOpenings openings(options);
    result.compileCommands = commandLines.databasePath();
    for (const auto& file : options.files) {
        ++result.files;
        CommandLine line = commandLines.forFile(file);
        std::optional<std::string> opening =
            options.precompileOpenings ? openings.forFile(file, line) : std::nullopt;
        lintInChild(file, line, opening, options, result);
    }
    result.precompiledOpenings = openings.built();
    return result;
}

} // namespace leakgate::lint
