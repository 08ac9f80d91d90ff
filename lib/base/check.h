// LEAKGATE_CHECK: internal invariants. A failed check is a bug in leakgate, not a user error,
// so it aborts with file and line instead of throwing an Error.
#pragma once

#include <cstdio>
#include <cstdlib>

#define LEAKGATE_CHECK(cond)                                                                            \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            std::fprintf(stderr, "leakgate: internal check failed at %s:%d: %s\n", __FILE__, __LINE__,  \
                         #cond);                                                                        \
            std::abort();                                                                               \
        }                                                                                               \
    } while (0)
