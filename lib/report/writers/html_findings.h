// A finding on the HTML report's page (lib/report/writers/html.h): its kind and summary, what it
// pins, and then what shows where it is: the reference path drawn as an SVG (a box per object, an
// arrow per edge), a lint finding's source lines with the column marked, or the launch path's
// cycle shapes and allocation sites; its fix last. The report's page and the bisect's page
// (html.cpp) both list findings with it.
#pragma once

#include "leakgate/report.h"

#include <string>

namespace leakgate::report::html {

// One finding of `result`, as an <article>. `id` is the finding's number on the page: it names
// the arrow markers of its path's SVG, which a page finds by id across all its SVGs.
std::string findingHtml(const Finding& finding, const WorkloadResult& result, int id);

} // namespace leakgate::report::html
