#include "lib/base/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace leakgate::base {
namespace {

using namespace std::chrono_literals;

TEST(TaskPool, OneJobRunsEveryTaskInOrderOnTheCallingThread) {
    std::vector<int> order;
    std::vector<Task> tasks;
    const auto caller = std::this_thread::get_id();
    bool elsewhere = false;
    for (int i = 0; i < 5; ++i) {
        tasks.push_back({[&, i] {
            order.push_back(i);
            elsewhere = elsewhere || std::this_thread::get_id() != caller;
        }});
    }
    runTasks(tasks, 1);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_FALSE(elsewhere);
}

TEST(TaskPool, NoMoreThanTheJobsRunAtOnceAndSeveralDo) {
    std::atomic<int> running{0}, most{0};
    std::vector<Task> tasks;
    for (int i = 0; i < 12; ++i) {
        tasks.push_back({[&] {
            int now = ++running;
            for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
            }
            std::this_thread::sleep_for(20ms);
            --running;
        }});
    }
    runTasks(tasks, 3);
    EXPECT_EQ(most, 3);
}

TEST(TaskPool, ATaskStartsOnlyAfterItsPrerequisiteFinished) {
    std::mutex lock;
    std::vector<std::string> events;
    auto note = [&](const std::string& event) {
        std::lock_guard<std::mutex> held(lock);
        events.push_back(event);
    };
    std::vector<Task> tasks;
    tasks.push_back({[&] {
        std::this_thread::sleep_for(50ms);
        note("first done");
    }});
    tasks.push_back({[&] { note("independent"); }});
    tasks.push_back({[&] { note("dependent"); }, 0});
    runTasks(tasks, 4);
    ASSERT_EQ(events.size(), 3u);
    // The independent task did not wait for the slow one; the dependent one did.
    EXPECT_EQ(events[0], "independent");
    EXPECT_EQ(events[1], "first done");
    EXPECT_EQ(events[2], "dependent");
}

TEST(TaskPool, AThrowingTaskStopsTheRestAndItsExceptionIsRethrown) {
    std::atomic<int> ran{0};
    std::vector<Task> tasks;
    tasks.push_back({[] { throw std::runtime_error("broken"); }});
    for (int i = 0; i < 5; ++i)
        tasks.push_back({[&] { ++ran; }});
    EXPECT_THROW(
        {
            try {
                runTasks(tasks, 1);
            } catch (const std::runtime_error& error) {
                EXPECT_STREQ(error.what(), "broken");
                throw;
            }
        },
        std::runtime_error);
    EXPECT_EQ(ran, 0);
}

TEST(TaskPool, NoTasksAndMoreJobsThanTasksAreFine) {
    runTasks({}, 4);
    int ran = 0;
    runTasks({{[&] { ++ran; }}}, 8);
    EXPECT_EQ(ran, 1);
}

} // namespace
} // namespace leakgate::base
