// The one source of libleakgate.so of its own (lib/CMakeLists.txt): the rest of it is the three
// layers' archives, linked whole.
#include "leakgate/api.h"

#include "leakgate/version.h"

extern "C" LEAKGATE_API const char* leakgate_version() {
    return LEAKGATE_VERSION_STRING;
}
