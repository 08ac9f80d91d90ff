// The worker mode of the leakgate binary (`leakgate __worker FD TOKEN`): the worker embeds the
// interpreter its spec names. A file of its own: the Python package's extension module links the
// rest of the worker but must not link this, whose `_leakgate` module registers itself for an
// interpreter that has not started yet (probes/embedded_module.cpp).
#include "lib/python/interpreter.h"
#include "lib/worker/main.h"
#include "lib/workloads/spec.h"
#include "probes/leakgate_module.h"

namespace leakgate::worker {

int workerMain(const std::string& specFd, const std::string& token) {
    probes::registerLeakgateModule();
    return runWorker(specFd, token, [](const workloads::WorkerSpec& spec) {
        return std::shared_ptr<void>(std::make_shared<python::Interpreter>(spec.environment, spec.argv));
    });
}

} // namespace leakgate::worker
