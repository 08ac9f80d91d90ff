// What the C/C++ rules' findings say: the summary that names the frame and where it went, and the
// fix. The walk (lib/lint/cxx_rules.cpp) decides where a finding is; the words are here.
#pragma once

#include "leakgate/report.h"
#include "lib/clang/libclang.h"
#include "lib/lint/cxx_ast.h"

#include <string>

namespace leakgate::lint::cxx {

// frame-stored-static or frame-stored-member (`rule`): the frame `value` stored in `target`, a
// `where` ("static" or "member") that outlives the call, at `at` in `function`.
Finding storedFrameFinding(const std::string& rule, const std::string& function,
                           const clang::Location& at, const std::string& target, const FrameValue& value,
                           const char* where);

// frame-stored-static for a static variable `name` (qualified) at `at` whose initializer, run once
// outside any function, takes the frame `value`.
Finding staticInitializerFinding(const clang::Location& at, const std::string& name,
                                 const FrameValue& value);

// frame-ref-leaked: the new reference `local` = `source`, taken at `line` and `column` of
// `function`, not released on the path where `function` `how` ("returns", "falls off its end")
// at `exit`.
Finding leakedReferenceFinding(const std::string& function, const std::string& local,
                               const std::string& source, unsigned line, unsigned column,
                               const clang::Location& exit, const std::string& how);

} // namespace leakgate::lint::cxx
