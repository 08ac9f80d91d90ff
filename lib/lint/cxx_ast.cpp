#include "lib/lint/cxx_ast.h"

#include <fmt/format.h>

#include <algorithm>

namespace leakgate::lint::cxx {

using clang::children;
using clang::takeString;

bool isOneOf(const std::string& name, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const char* candidate) { return name == candidate; });
}

CXCursorKind kindOf(CXCursor cursor) {
    return clang::api().clang_getCursorKind(cursor);
}
std::string spelling(CXCursor cursor) {
    return takeString(clang::api().clang_getCursorSpelling(cursor));
}

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

// --- What returns a frame --------------------------------------------------------------------

namespace {

bool isFrameAttribute(const std::string& literal) {
    return isOneOf(literal, {"\"currentframe\"", "\"_getframe\""});
}

bool containsFrameAttributeLiteral(CXCursor root) {
    std::vector<CXCursor> literals;
    collect(
        root,
        [](CXCursor c) { return kindOf(c) == CXCursor_StringLiteral && isFrameAttribute(spelling(c)); },
        literals);
    return !literals.empty();
}

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

} // namespace

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

bool hasStaticStorage(CXCursor variable) {
    if (kindOf(variable) != CXCursor_VarDecl) return false;
    CX_StorageClass storage = clang::api().clang_Cursor_getStorageClass(variable);
    if (storage == CX_SC_Static || storage == CX_SC_Extern) return true;
    return !isFunctionKind(kindOf(clang::api().clang_getCursorSemanticParent(variable)));
}

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

} // namespace leakgate::lint::cxx
