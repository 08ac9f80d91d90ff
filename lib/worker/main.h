// A worker: its spec (CBOR, as lib/workloads/spec.h writes it, or JSON text) readable on
// descriptor FD; it runs the spec's workloads in the interpreter the spec names and sends each
// WorkloadResult as JSON on the result pipe, once, after TOKEN and a newline. It starts one of two
// ways (lib/worker/client.h chooses):
// - the leakgate binary's worker mode, `leakgate __worker FD TOKEN`, which embeds that interpreter
//   (workerMain, lib/worker/embedded.cpp);
// - where leakgate itself runs as the Python package's extension module (the wheel's CLI), that
//   interpreter's own executable loading the module (`python boot.py MODULE FD TOKEN`,
//   lib/worker/boot.py), already started when the worker's code runs (workerMainInInterpreter,
//   lib/worker/in_interpreter.cpp). The pipe arrives on fd 3 (kResultFd) and is moved off it,
// close-on-exec, before any code of the target's runs: a write to fd 3, a child's `echo >&3` or a
// file opened on fd 3 cannot reach or be mistaken for the channel.
#pragma once

#include "leakgate/api.h"
#include "lib/workloads/spec.h"

#include <functional>
#include <memory>
#include <string>

namespace leakgate::worker {

inline constexpr const char* kWorkerMode = "__worker";
// The worker's own exit statuses, read by the parent (lib/worker/client.cpp): its result
// descriptor was closed or replaced by the code under test, so no result was sent; its parent
// went away.
inline constexpr int kChannelLostExit = 121;
inline constexpr int kParentGoneExit = 122;

// The interpreter of a worker, made ready for the spec's workloads; what it returns is held until
// the worker ends (the embedded interpreter itself, or nothing).
using StartInterpreter = std::function<std::shared_ptr<void>(const workloads::WorkerSpec&)>;
// The worker's body, after `start`. Does not return when the spec was read: the worker ends
// with _exit once its results are sent.
int runWorker(const std::string& specFd, const std::string& token, const StartInterpreter& start);

LEAKGATE_API int workerMain(const std::string& specFd, const std::string& token);
int workerMainInInterpreter(const std::string& specFd, const std::string& token);

} // namespace leakgate::worker
