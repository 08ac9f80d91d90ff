// What the parent reads from a worker's result channel (lib/worker/client.h): one result, or a
// chain's results each in its own message, kept up to a crash and refused when anything else is
// in the channel.
#include "lib/worker/client.h"

#include <gtest/gtest.h>

namespace leakgate::worker {
namespace {

const std::string kToken = "0123456789abcdef0123456789abcdef";

std::string resultJson(const std::string& workload) {
    WorkloadResult result;
    result.workload = workload;
    result.subject = "cute";
    result.checks.push_back({workload + "-sentinels", Status::kPass, "freed", 0});
    return nlohmann::json(result).dump();
}

std::string message(const std::string& workload) {
    return kToken + "\n" + resultJson(workload) + "\n";
}

TEST(WorkerResults, OneResultIsOneJsonAfterTheTokenLine) {
    auto read = parseWorkerResult(kToken + "\n" + resultJson("import"), kToken);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->workload, "import");
    EXPECT_FALSE(parseWorkerResult(kToken + "\n" + resultJson("import") + "{}", kToken));
    EXPECT_FALSE(parseWorkerResult("ffff\n" + resultJson("import"), kToken));
}

TEST(WorkerResults, AChainsResultsComeInOrderAndAreKeptUpToACrash) {
    auto both = parseWorkerResults(message("import") + message("decorate"), kToken, 2);
    ASSERT_TRUE(both);
    ASSERT_EQ(both->size(), 2u);
    EXPECT_EQ((*both)[0].workload, "import");
    EXPECT_EQ((*both)[1].workload, "decorate");
    // The worker died while the second workload ran: the first's result stands.
    auto first = parseWorkerResults(message("import"), kToken, 2);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->size(), 1u);
}

TEST(WorkerResults, AnythingElseInAChainsChannelMakesItUnreadable) {
    const std::string two = message("import") + message("decorate");
    EXPECT_FALSE(parseWorkerResults(two + message("decorate"), kToken, 2)); // one too many
    EXPECT_FALSE(parseWorkerResults(message("import") + "forged\n" + message("decorate"), kToken, 2));
    EXPECT_FALSE(
        parseWorkerResults(message("import") + "ffff\n" + resultJson("decorate") + "\n", kToken, 2));
    EXPECT_FALSE(parseWorkerResults(two.substr(0, two.size() - 5), kToken, 2)); // cut mid-message
}

} // namespace
} // namespace leakgate::worker
