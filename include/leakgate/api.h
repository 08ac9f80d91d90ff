// leakgate's public C++ API: the headers of include/leakgate/ and nothing else. Everything under
// lib/ and probes/ is internal, even where the shared library exports a symbol of it for the
// leakgate executable.
//
// Versions. The API follows the project's version (leakgate/version.h): while it is 0.x, a minor
// release may change the API, and says so in CHANGELOG.md. What a C++ plug-in shares with the
// binary that loads it (the classes and structs of these headers, their layout and their
// virtual functions) is versioned by LEAKGATE_PLUGIN_ABI_VERSION (leakgate/plugin.h), which
// changes whenever any of it does; the loader refuses a plug-in built for another.
#pragma once

#include "leakgate/version.h"

// Marks what libleakgate.so exports (the build compiles everything else hidden). A few functions
// of internal headers carry it too: the leakgate executable (cmd/main.cpp) calls them. They are
// not API.
#define LEAKGATE_API __attribute__((visibility("default")))

// The version of the libleakgate.so loaded at run time ("0.2.0"), to compare with the
// LEAKGATE_VERSION_STRING a plug-in was built with.
extern "C" LEAKGATE_API const char* leakgate_version();
