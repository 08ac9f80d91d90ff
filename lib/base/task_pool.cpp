#include "lib/base/task_pool.h"

#include "lib/base/check.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace leakgate::base {

void runTasks(const std::vector<Task>& tasks, int jobs) {
    for (size_t i = 0; i < tasks.size(); ++i)
        LEAKGATE_CHECK(!tasks[i].after || *tasks[i].after < i);
    enum class State { kWaiting, kRunning, kDone };
    std::vector<State> states(tasks.size(), State::kWaiting);
    std::mutex lock;
    std::condition_variable changed;
    std::exception_ptr failure;

    // The first waiting task whose prerequisite is done; tasks.size() when none can start now.
    auto nextReady = [&] {
        for (size_t i = 0; i < tasks.size(); ++i) {
            if (states[i] != State::kWaiting) continue;
            if (!tasks[i].after || states[*tasks[i].after] == State::kDone) return i;
        }
        return tasks.size();
    };
    auto work = [&] {
        std::unique_lock<std::mutex> held(lock);
        while (true) {
            size_t task = tasks.size();
            changed.wait(held, [&] {
                if (failure) return true;
                task = nextReady();
                bool anyWaiting =
                    std::find(states.begin(), states.end(), State::kWaiting) != states.end();
                // Nothing to start now, but a running task may free a waiting one.
                return task < tasks.size() || !anyWaiting;
            });
            if (failure || task == tasks.size()) return;
            states[task] = State::kRunning;
            held.unlock();
            std::exception_ptr thrown;
            try {
                tasks[task].run();
            } catch (...) {
                thrown = std::current_exception();
            }
            held.lock();
            states[task] = State::kDone;
            if (thrown && !failure) failure = thrown;
            changed.notify_all();
        }
    };
    std::vector<std::thread> threads;
    const int count = std::min<int>(std::max(jobs, 1), static_cast<int>(tasks.size()));
    for (int i = 1; i < count; ++i)
        threads.emplace_back(work);
    work();
    for (auto& thread : threads)
        thread.join();
    if (failure) std::rethrow_exception(failure);
}

} // namespace leakgate::base
