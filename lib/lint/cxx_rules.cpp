#include "lib/lint/cxx_rules.h"

#include "lib/lint/cxx_ast.h"
#include "lib/lint/cxx_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <pthread.h>
#include <set>
#include <string_view>
#include <utility>

namespace leakgate::lint::cxx {
namespace {

using clang::children;
using clang::takeString;

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

    void storeFinding(const std::string& rule, CXCursor at, const std::string& target,
                      const FrameValue& value, const char* where) {
        findings_.push_back(storedFrameFinding(rule, name_, location(at), target, value, where));
    }

    void leakFindings(const FlowState& state, const clang::Location& exit, const std::string& how) {
        for (const auto& [name, held] : state.owned) {
            if (!reportedLeaks_.insert({name, held.line}).second) continue;
            findings_.push_back(
                leakedReferenceFinding(name_, name, held.source, held.line, held.column, exit, how));
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
                findings.push_back(
                    staticInitializerFinding(clang::location(cursor), qualifiedName(cursor), *value));
            }
        }
    }
}

} // namespace

UnitAnalysis analyseUnit(CXTranslationUnit unit) {
    UnitAnalysis analysis;
    StackGuard stack;
    analyseDeclarations(unit, clang::api().clang_getTranslationUnitCursor(unit), stack, analysis);
    return analysis;
}

} // namespace leakgate::lint::cxx
