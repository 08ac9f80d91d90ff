// libclang's AST as the C/C++ rules read it (lib/lint/cxx_rules.cpp): a cursor's kind and name, the
// expression under its casts and parentheses, the cursors below one that match; the calls that
// return a frame, and how the value they return is held; the variables that outlive any call.
#pragma once

#include "lib/clang/libclang.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace leakgate::lint::cxx {

// Whether `name` (a function's, a file's extension) is one of `names`.
bool isOneOf(const std::string& name, std::initializer_list<const char*> names);

CXCursorKind kindOf(CXCursor cursor);
std::string spelling(CXCursor cursor);

// Through parentheses, casts and the implicit nodes libclang does not expose, to the expression
// that gives the value.
CXCursor strip(CXCursor cursor);

// Every cursor under `root` (root included) that `match` accepts, in source order. With a stack
// of its own: expressions nest as deep as the code does (a 30,000-term sum is 30,000 levels).
template <typename Match> void collect(CXCursor root, Match match, std::vector<CXCursor>& out) {
    std::vector<CXCursor> pending = {root};
    while (!pending.empty()) {
        CXCursor cursor = pending.back();
        pending.pop_back();
        if (match(cursor)) out.push_back(cursor);
        std::vector<CXCursor> inner = clang::children(cursor);
        pending.insert(pending.end(), inner.rbegin(), inner.rend());
    }
}

// --- What returns a frame --------------------------------------------------------------------

// How a frame value is held: a borrowed pointer, a new reference the code must release, or an
// owning C++ object (py::object, nb::object) that releases itself.
enum class Ownership { kBorrowed, kNewReference, kOwningObject };

struct FrameValue {
    std::string what; // how a person reads the source: "PyFrame_GetBack()"
    Ownership ownership = Ownership::kBorrowed;
    std::string local; // set when the value is a local that holds a frame
};

// The frame a call returns, if it returns one.
std::optional<FrameValue> frameCall(CXCursor call);

// --- Variables -------------------------------------------------------------------------------

bool isFunctionKind(CXCursorKind kind);

// A variable that lives past any one call: a global, a namespace or class static, a static local.
bool hasStaticStorage(CXCursor variable);

// "ns::Class::method", "function": the semantic parents up to the translation unit.
std::string qualifiedName(CXCursor cursor);

} // namespace leakgate::lint::cxx
