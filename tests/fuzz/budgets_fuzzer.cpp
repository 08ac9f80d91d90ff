// The budgets reader (lib/commands/baseline.h, parseBudgets: what loadBudgets reads from a
// --budgets file). Any text is either budgets or a UsageError; nothing else may come out of it.
#include "leakgate/errors.h"
#include "lib/commands/baseline.h"
#include "lib/commands/gate.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
    using namespace leakgate;
    const std::string text(reinterpret_cast<const char*>(data), size);
    commands::Budgets budgets;
    try {
        budgets = commands::parseBudgets(text, "fuzz.budgets");
    } catch (const UsageError&) {
        return 0;
    }
    for (const auto& [check, amount] : budgets.allowedGrowth) {
        if (amount < 0) fuzz::fail("a budget below 0 was accepted: " + check);
        if (budgets.forCheck(check) != amount) fuzz::fail("forCheck disagrees with the table: " + check);
    }
    for (const std::string& check : commands::gateChecks())
        (void)budgets.forCheck(check);
    return 0;
}
