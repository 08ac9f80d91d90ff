#include "lib/commands/baseline.h"

#include "leakgate/errors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

namespace leakgate::commands {
namespace {

namespace fs = std::filesystem;

Report reportWith(const std::string& check, Status status, std::optional<std::int64_t> amount) {
    WorkloadResult result;
    result.workload = check.substr(0, check.find('-'));
    result.checks.push_back({check, status, "measured", amount});
    Report report;
    report.command = "gate";
    report.results.push_back(result);
    return report;
}

nlohmann::json baselineWith(const std::string& check, nlohmann::json amount) {
    return {
        {"schema", kSchema}, {"command", "gate"}, {"checks", {{{"name", check}, {"amount", amount}}}}};
}

Status judged(const std::string& check, std::int64_t before, std::int64_t now,
              Status own = Status::kPass) {
    Report report = reportWith(check, own, now);
    applyBaseline(report, baselineWith(check, before), defaultBudgets());
    return report.results[0].checks[0].status;
}

class TempFile {
  public:
    explicit TempFile(const std::string& text)
        : path_(fs::temp_directory_path() / ("leakgate-baseline-test-" + std::to_string(::getpid()) +
                                             "-" + std::to_string(counter_++))) {
        std::ofstream(path_) << text;
    }
    ~TempFile() { fs::remove(path_); }
    std::string path() const { return path_.string(); }

  private:
    static inline int counter_ = 0;
    fs::path path_;
};

TEST(Baseline, EveryCheckKindFailsBeyondItsBudgetAndPassesWithinIt) {
    Budgets budgets = defaultBudgets();
    for (const char* check :
         {"decorate-sentinels", "decorate-frame-cycle", "import-retained-frame",
          "decorate-device-memory", "launch-allocations", "launch-net-blocks", "launch-cyclic-garbage",
          "soak-growth", "device-allocations", "device-cyclic-garbage", "decorations-retained"}) {
        const std::int64_t budget = budgets.forCheck(check);
        EXPECT_EQ(judged(check, 1000, 1000 + budget + 1), Status::kFail) << check;
        EXPECT_EQ(judged(check, 1000, 1000 + budget), Status::kPass) << check;
        // A failing check that did not grow beyond the baseline passes: it is no regression.
        EXPECT_EQ(judged(check, 5000, 5000, Status::kFail), Status::kPass) << check;
    }
}

TEST(Baseline, DecorationsRetainedMayMoveByItsOwnNoise) {
    // Its figure moves by up to 17 thousandths between processes that keep nothing.
    EXPECT_EQ(defaultBudgets().forCheck("decorations-retained"), 50);
    EXPECT_EQ(defaultBudgets().forCheck("decorations-cyclic-garbage"), 10);
}

TEST(Baseline, TheLaunchChecksRealFiguresAreCompared) {
    // 21.00 allocator calls per call now, 0.00 in the baseline (the reference's own run).
    EXPECT_EQ(judged("launch-allocations", 0, 21000), Status::kFail);
}

TEST(Baseline, ExtremeFiguresCannotOverflowIntoAPass) {
    const std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
    const std::int64_t highest = std::numeric_limits<std::int64_t>::max();
    EXPECT_EQ(judged("decorate-sentinels", lowest, 200ll << 20), Status::kFail);
    EXPECT_EQ(judged("decorate-sentinels", lowest, highest), Status::kFail);
    EXPECT_EQ(judged("decorate-sentinels", highest, lowest), Status::kPass);
}

TEST(Baseline, ACheckWithNoComparableFigureKeepsItsOwnVerdict) {
    for (Status own : {Status::kPass, Status::kFail}) {
        Report report = reportWith("decorate-sentinels", own, 100);
        applyBaseline(report, baselineWith("decorate-frame-cycle", 0), defaultBudgets());
        EXPECT_EQ(report.results[0].checks[0].status, own);
        Report nullAmount = reportWith("decorate-sentinels", own, 100);
        applyBaseline(nullAmount, baselineWith("decorate-sentinels", nullptr), defaultBudgets());
        EXPECT_EQ(nullAmount.results[0].checks[0].status, own);
    }
}

TEST(Baseline, AMalformedBaselineIsAUsageErrorBeforeAnythingRuns) {
    TempFile notObjects(R"({"schema": "leakgate/1", "command": "gate", "checks": [1, "x"]})");
    EXPECT_THROW(loadBaseline(notObjects.path()), UsageError);
    TempFile tooLarge(R"({"schema": "leakgate/1", "command": "gate",
                          "checks": [{"name": "decorate-sentinels", "amount": 9223372036854775808}]})");
    EXPECT_THROW(loadBaseline(tooLarge.path()), UsageError);
    TempFile fractional(R"({"schema": "leakgate/1", "command": "gate",
                            "checks": [{"name": "decorate-sentinels", "amount": 1.5}]})");
    EXPECT_THROW(loadBaseline(fractional.path()), UsageError);
    TempFile good(R"({"schema": "leakgate/1", "command": "gate",
                      "checks": [{"name": "decorate-sentinels", "amount": null}, {"name": "x", "amount": -3}]})");
    EXPECT_NO_THROW(loadBaseline(good.path()));
}

TEST(Baseline, ADeviceOrAFifoIsRefusedWithoutReadingIt) {
    EXPECT_THROW(loadBaseline("/dev/zero"), UsageError);
    EXPECT_THROW(loadBudgets("/dev/zero"), UsageError);
    fs::path fifo = fs::temp_directory_path() / ("leakgate-baseline-fifo-" + std::to_string(::getpid()));
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_THROW(loadBaseline(fifo.string()), UsageError); // would block on open if it were read
    EXPECT_THROW(loadBudgets(fifo.string()), UsageError);
    fs::remove(fifo);
}

TEST(Budgets, OnlyWholeNumbersAreAmounts) {
    for (const char* amount : {"1.9e9", "0x10", "12abc", "", "-5", "99999999999999999999"}) {
        TempFile file(std::string("decorate-sentinels = ") + amount + "\n");
        EXPECT_THROW(loadBudgets(file.path()), UsageError) << amount;
    }
    TempFile good("decorate-sentinels = 1900000000  # bytes\n");
    EXPECT_EQ(loadBudgets(good.path()).forCheck("decorate-sentinels"), 1900000000);
}

} // namespace
} // namespace leakgate::commands
