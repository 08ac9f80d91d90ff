// The leakgate binary: the command line (cmd/cli.h), or the worker mode (`leakgate __worker FD
// TOKEN`, lib/worker/main.h), which embeds the interpreter its spec names.
#include "lib/worker/main.h"
#include "cmd/cli.h"
#include "leakgate/errors.h"

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    using namespace leakgate;
    if (argc == 4 && std::string(argv[1]) == worker::kWorkerMode) {
        try {
            return worker::workerMain(argv[2], argv[3]);
        } catch (const std::exception& error) {
            std::fprintf(stderr, "leakgate worker: %s\n", error.what());
            return static_cast<int>(ExitCode::kErrored);
        }
    }
    return cmd::runCli(argc, argv);
}
