// Runs independent pieces of work on a bounded number of threads: the gate's workers (each a
// process of its own, so the threads only wait) and bisect's releases. A task may wait for one
// earlier task, whose result it reads: the launch workloads wait for the target's decorate worker,
// which says whether the target has scalar types at all.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace leakgate::base {

struct Task {
    std::function<void()> run;
    std::optional<size_t> after; // the index of an earlier task that must have finished first
};

// Starts the tasks in their order, at most `jobs` at a time (at least one), each as soon as a
// thread is free and its prerequisite has finished; returns when every started task has finished.
// With jobs = 1 they run one after another, in order, on the calling thread. The first exception
// a task throws stops tasks from starting, and is rethrown once the running ones have finished.
void runTasks(const std::vector<Task>& tasks, int jobs);

} // namespace leakgate::base
