#include "lib/worker/main.h"

#include "leakgate/errors.h"
#include "lib/base/subprocess.h"
#include "lib/worker/registry.h"
#include "lib/workloads/harness_loader.h"
#include "probes/probe.h"
#include "probes/sentinel_probe.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace leakgate::worker {
namespace {

// Where the result pipe was moved: well above the descriptors a program opens.
constexpr int kHiddenResultFd = 730;

// What the result channel is: the pipe the parent gave, by device and inode. The code under test
// may close it (os.closerange(3, 4096), the daemon idiom) and open a file that takes its number:
// the result is written only to that same pipe, never into a user's file.
struct ChannelIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    pid_t process = 0; // a forked child of the code under test that reaches the end sends nothing
};
ChannelIdentity g_channel;

int hideResultChannel() {
    int fd = ::fcntl(base::kResultFd, F_DUPFD_CLOEXEC, kHiddenResultFd);
    ::close(base::kResultFd);
    struct stat info {};
    if (fd >= 0 && ::fstat(fd, &info) == 0) g_channel = {info.st_dev, info.st_ino, ::getpid()};
    return fd; // -1 when the parent gave no pipe: nobody to tell
}

bool channelIsOurs(int channel) {
    struct stat info {};
    return ::fstat(channel, &info) == 0 && S_ISFIFO(info.st_mode) && info.st_dev == g_channel.device &&
           info.st_ino == g_channel.inode;
}

// The worker ends with its parent, even one killed with SIGKILL (which no handler sees): a thread
// that holds no Python state looks at the parent once a second and, when it changed (the worker
// was reparented), kills the worker's process group, the code under test's children with it.
// A thread rather than PR_SET_PDEATHSIG, which fires when the parent's spawning thread ends (a
// gate's task pool thread), not the parent.
void watchParent() {
    const pid_t parent = ::getppid();
    std::thread([parent] {
        for (;;) {
            if (::getppid() != parent) {
                if (::getpgrp() == ::getpid()) ::kill(0, SIGKILL);
                ::_exit(kParentGoneExit);
            }
            std::this_thread::sleep_for(std::chrono::seconds(1));
        }
    }).detach();
}

bool writeAll(int channel, std::string_view left) {
    while (!left.empty()) {
        ssize_t written = ::write(channel, left.data(), left.size());
        if (written <= 0) return false; // the parent is gone: nobody to tell
        left.remove_prefix(static_cast<size_t>(written));
    }
    return true;
}

// One result: the token line, then its JSON. A chain's each as it is made, the token line, its JSON
// and a newline (compact JSON has none of its own), so that what was measured before a crash is
// kept (lib/worker/client.h).
void sendResult(int channel, const std::string& token, const WorkloadResult& result, bool chained) {
    if (channel < 0) return;
    if (::getpid() != g_channel.process) ::_exit(0); // a fork of the code under test: not ours to say
    if (!channelIsOurs(channel)) {
        // Closed, or another file under its number: say so by the exit status (the parent names
        // the likely cause), and write nothing into what is not ours.
        std::fflush(stdout);
        std::fflush(stderr);
        ::_exit(kChannelLostExit);
    }
    std::string text =
        token + "\n" +
        nlohmann::json(result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (chained) text += "\n";
    writeAll(channel, text);
}

// The workload running now, for the audit hook below: what it sends when the code under test
// replaces the worker's process.
struct Running {
    int channel = -1;
    const std::string* token = nullptr;
    const workloads::WorkerSpec* spec = nullptr;
    bool chained = false;
    bool told = false;
};
Running g_running;

// os.execv() and its kind raise the "os.exec" audit event before the process is replaced: the
// worker sends that workload's result then, an `error` naming the call, since nothing it would
// have measured will be (the channel closes on exec). A fork of the code under test that execs
// (a subprocess started by hand) is not the worker: nothing is said for it.
int execAuditHook(const char* event, PyObject* args, void*) {
    if (std::string_view(event) != "os.exec" || g_running.told || !g_running.spec) return 0;
    if (::getpid() != g_channel.process) return 0;
    std::string path = "?";
    if (args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 0) {
        if (PyObject* text = PyObject_Str(PyTuple_GET_ITEM(args, 0))) {
            if (const char* utf8 = PyUnicode_AsUTF8(text)) path = utf8;
            Py_DECREF(text);
        }
        PyErr_Clear();
    }
    WorkloadResult result;
    result.workload = g_running.spec->workload;
    result.subject = g_running.spec->subject;
    result.error =
        WorkloadError{fmt::format("the code under test called os.exec*() of {}, which replaces the "
                                  "worker's process, before leakgate's reads: nothing was measured "
                                  "(leakgate sent this result at the call)",
                                  path),
                      std::nullopt, ""};
    g_running.told = true;
    std::fflush(stdout);
    std::fflush(stderr);
    sendResult(g_running.channel, *g_running.token, result, g_running.chained);
    return 0;
}

// The spec, read whole from its descriptor, which is then closed: the code under test never sees it.
std::string readSpec(const std::string& specFd) {
    int fd = -1;
    try {
        size_t used = 0;
        fd = std::stoi(specFd, &used);
        if (used != specFd.size() || fd < 0) throw std::invalid_argument(specFd);
    } catch (const std::exception&) {
        throw UsageError(fmt::format("worker spec: `{}` is not a descriptor number", specFd));
    }
    constexpr size_t kMaxSpecBytes = 256u << 20;
    std::string text;
    char buffer[65536];
    for (;;) {
        ssize_t got = ::read(fd, buffer, sizeof(buffer));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0)
            throw UsageError(
                fmt::format("worker spec: cannot read descriptor {}: {}", fd, std::strerror(errno)));
        if (got == 0) break;
        text.append(buffer, static_cast<size_t>(got));
        if (text.size() > kMaxSpecBytes) throw UsageError("worker spec: over 256 MiB");
    }
    ::close(fd);
    return text;
}

// The package under test and its version, as the harness learned them loading the target
// (`details.target_package`): the reports name the release they judged. Nothing is recorded
// when no target was loaded or the harness cannot tell; a failure here never costs the result.
void recordTargetPackage(WorkloadResult& result) {
    try {
        pybind11::dict modules = pybind11::module_::import("sys").attr("modules");
        if (!modules.contains(workloads::kHarnessModule)) return;
        pybind11::object package = modules[workloads::kHarnessModule].attr("loaded_target_package")();
        if (package.is_none()) return;
        pybind11::object version = package["version"];
        result.details["target_package"] = {
            {"name", package["name"].cast<std::string>()},
            {"version",
             version.is_none() ? nlohmann::json(nullptr) : nlohmann::json(version.cast<std::string>())}};
    } catch (const pybind11::error_already_set&) {
    } catch (const pybind11::cast_error&) {
    }
}

// What the code under test printed and Python still buffers (sys.stdout is block-buffered on a
// pipe) goes out before the worker ends without finalising.
void flushPythonStreams() {
    for (const char* name : {"stdout", "stderr"}) {
        try {
            pybind11::object stream = pybind11::module_::import("sys").attr(name);
            if (!stream.is_none()) stream.attr("flush")();
        } catch (const pybind11::error_already_set&) {
            // a stream the code under test replaced or closed: nothing to flush
        }
    }
}

// One workload of the worker's chain, its errors made its result's.
WorkloadResult runOne(const workloads::WorkerSpec& spec, bool first) {
    WorkloadResult result;
    result.workload = spec.workload;
    result.subject = spec.subject;
    const WorkloadEntry& entry = findWorkload(spec.workload);
    try {
        // The lint measures nothing: its collector stays on, so each file's cycles (its syntax
        // tree's parent links) are freed as it goes.
        if (first && entry.command != Command::kLint) probes::watchGc();
        result = entry.run(spec);
    } catch (const pybind11::error_already_set& error) {
        // Converted here, while the interpreter that raised it still lives.
        result.error = WorkloadError{fmt::format("Python error in leakgate's harness: {}", error.what()),
                                     std::nullopt, ""};
    } catch (const Error& error) {
        result.error = WorkloadError{error.what(), std::nullopt, ""};
        result.error->usage = error.exitCode() == ExitCode::kUsage;
    } catch (const std::exception& error) {
        // leakgate's own fault (a pybind11 cast, a standard-library error): said as such, in a
        // result, rather than a worker that dies without one.
        result.error =
            WorkloadError{fmt::format("leakgate's worker failed: {}", error.what()), std::nullopt, ""};
    }
    recordTargetPackage(result);
    return result;
}

} // namespace

int runWorker(const std::string& specFd, const std::string& token, const StartInterpreter& start) {
    const int channel = hideResultChannel();
    watchParent();
    const workloads::WorkerSpec spec = workloads::parseWorkerSpec(readSpec(specFd));
    // Each of the chain, in order; every one is known and of the first one's command (a gate
    // workload does not share a process with a scan).
    std::vector<workloads::WorkerSpec> chain{spec};
    chain.front().then.clear();
    const WorkloadEntry& entry = findWorkload(spec.workload);
    for (const std::string& next : spec.then) {
        if (findWorkload(next).command != entry.command)
            throw UsageError(
                fmt::format("worker spec: `{}` cannot follow `{}` in one worker", next, spec.workload));
        chain.push_back(chain.front());
        chain.back().workload = next;
    }
    {
        std::shared_ptr<void> interpreter = start(spec);
        probes::Session session; // ends before the interpreter does
        // One after another in one interpreter: each measurement collects what was garbage before
        // it and takes its probes' first readings at its own start (probes/measurement.h), so
        // the one before it changes none of its figures.
        static bool hooked = false; // an audit hook cannot be removed: one for the process
        if (!hooked) {
            PySys_AddAuditHook(execAuditHook, nullptr);
            hooked = true;
        }
        for (const workloads::WorkerSpec& one : chain) {
            g_running = {channel, &token, &one, chain.size() > 1, false};
            WorkloadResult result = runOne(one, &one == &chain.front());
            flushPythonStreams();
            std::fflush(stdout);
            std::fflush(stderr);
            // Already sent by the audit hook when the code under test called os.exec*() and went on
            // (the exec failed and it caught the error): that result stands, the measurement is not.
            if (!g_running.told) sendResult(channel, token, result, chain.size() > 1);
        }
        if (channel >= 0) ::close(channel);
        // Nothing after the result is measured: the worker ends here, without finalising the
        // interpreter (the gate would wait for it: a tenth of a decorate-and-import gate, a third
        // of a scan that built a million objects). What the code under test wrote is flushed above;
        // its atexit hooks do not run, as under os._exit.
        ::_exit(0);
    }
}

} // namespace leakgate::worker
