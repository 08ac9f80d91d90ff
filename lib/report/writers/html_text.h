// The text of the HTML report's page (lib/report/writers/html.h), made safe and readable: every
// string goes through esc; text written for people through prose, where `name` marks code; SVG text
// through svgProse and plain. The page (html.cpp), its findings (html_findings.cpp) and its figures
// (html_charts.cpp) all write their text with these.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace leakgate::report::html {

// Every string that reaches the page goes through here: file names, functions, summaries and
// labels come from the target, and a script may be named `<script>....py`. (No attribute of the
// page carries one of them.)
// Terminal colour codes of the code under test are dropped first: a page shows none of them.
std::string esc(std::string_view text);

// Text written for people (summaries, reasons, fixes, captions), where `name` marks code: each
// pair of backticks becomes <code>. Escaped first, so what is inside stays text; a lone backtick
// is left as it is.
std::string prose(std::string_view text);

// The same for SVG text, which has no <code>: the name is set in bold; a backtick left alone (a
// label cut short) is dropped.
std::string svgProse(std::string_view text);

// A tooltip (an SVG <title>): the text without its backticks.
std::string plain(std::string_view text);

// A reason or message of several lines (a Python traceback, most often): the first line, and the
// rest folded under it.
std::string foldedProse(const std::string& text, const char* what);

// A word in a coloured box (a status, a finding's kind); `cssClass` is one of the page's style.
std::string badge(const char* cssClass, std::string_view text);

// `text` as it is when it is `limit` bytes or fewer; otherwise its first `limit - 1` bytes (whole
// UTF-8 characters only) and an ellipsis.
std::string shorten(const std::string& text, size_t limit);

// The monospace text's width in the SVGs, close enough to size boxes.
inline constexpr double kCharWidth = 7.3;

} // namespace leakgate::report::html
