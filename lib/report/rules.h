// Every finding kind in one table: what produced it (which decides the fields a Finding fills),
// its rule for SARIF (id, name, description) and its general fix. Writers ask here instead of
// reading a kind's spelling.
#pragma once

#include <span>
#include <string_view>

namespace leakgate::report {

enum class Evidence {
    kObjectGraph, // the scanner explained objects in the heap: frame-cycle, retained-frame
    kLaunchLoop,  // a loop's figures per call against the reference: launch-*, decorations-*
    kSource,      // a static rule matched a source line: lint:*
    kPlugin,      // a probe plug-in's check (gate --probe): what it filled in, nothing more
};

struct Rule {
    const char* kind; // the finding kind, and the SARIF rule id
    Evidence evidence;
    const char* name;
    const char* shortDescription; // one line
    const char* fullDescription;  // what it means and why it leaks
    const char* help;             // the fix pattern in general; each finding carries its own case's fix
    const char* readmeSection;    // its heading in docs/reference/checks.md (SARIF's help and helpUri)
    // SARIF's level: `error` for what a measurement showed, `warning` for what a source rule matched.
    const char* level = "error";
};

// The rules with a kind of their own, in SARIF order, the lint's ("lint:<rule>") among them.
std::span<const Rule> findingRules();
// Null for a kind with no row (a plug-in's, or one a newer worker reported).
const Rule* findRule(std::string_view kind);
Evidence evidenceOf(std::string_view kind);

} // namespace leakgate::report
