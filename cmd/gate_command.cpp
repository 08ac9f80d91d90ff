// leakgate gate: a DSL's decorators and launch path against the reference runtime
// (lib/commands/gate.h).
#include "cmd/subcommand.h"
#include "lib/commands/builtin_targets.h"
#include "lib/commands/gate.h"

#include <fmt/format.h>

#include <cstdio>

namespace leakgate::cmd {
namespace {

// Capped so that MiB << 20 cannot wrap: a sentinel is a payload, not a memory test.
constexpr std::int64_t kMaxSentinelMiB = 1 << 20; // 1 TiB

class GateCommand : public Subcommand {
  public:
    GateCommand(CLI::App& app, Common& common)
        : Subcommand(app.add_subcommand(
              "gate", "Audit a DSL's decorators against leakgate's reference runtime (a release gate)")),
          common_(common) {
        addOutputOptions(app_, common, gate_.python);
        app_->add_option(
            "--target", gate_.target,
            "A target module (a path, or a built-in name: " + commands::builtinTargetNames() +
                "); default: the bundled model of nvidia-cutlass-dsl 4.6.1");
        app_->add_option(
            "--checks", checks_,
            "Comma-separated checks or workloads to run (default: all; see docs/reference/checks.md; "
            "`probe` alone: only the --probe plug-ins' checks)");
        app_->add_option("--sentinel-mib", sentinelMiB_, "Host payload of each sentinel, in MiB")
            ->check(CLI::Range(std::int64_t{0}, kMaxSentinelMiB));
        app_->add_option(
                "--device-sentinel-mib", deviceSentinelMiB_,
                "Device payload (cuMemAlloc) placed in each decorate/import case when CUDA can be "
                "used, in MiB (default 256; 0: none)")
            ->check(CLI::Range(std::int64_t{0}, kMaxSentinelMiB));
        app_->add_option("--soak-steps", gate_.soakSteps,
                         "Soak steps per target (default: run for --soak-seconds)")
            ->check(kNonNegative);
        app_->add_option("--soak-seconds", gate_.soakSeconds,
                         "Soak budget per target, in seconds (default 30)")
            ->check(kPositive);
        app_->add_option(
                "--soak-max-mib", soakMaxMiB_,
                fmt::format("RSS growth at which a soak stops before its budget, in MiB (default {})",
                            soakMaxMiB_))
            ->check(CLI::Range(std::int64_t{1}, kMaxSentinelMiB));
        app_->add_option(
                "--baseline", gate_.baseline,
                "JSON of an earlier gate run (the last good release): a figure that grew beyond "
                "its budget fails")
            ->check(CLI::ExistingFile);
        app_->add_option("--budgets", gate_.budgets,
                         "Budgets file for --baseline (`check = amount` lines)")
            ->check(CLI::ExistingFile);
        app_->add_option("--launch-calls", gate_.launchCalls,
                         "Calls per measured launch run (default 2000)")
            ->check(kPositive);
        app_->add_option("--launch-runs", gate_.launchRuns, "Measured runs per launch case (default 5)")
            ->check(kPositive);
        app_->add_option("--probe", gate_.probes,
                         "A probe plug-in: a Python file (FILE.py) or a C++ shared library "
                         "(leakgate/plugin.h); repeatable")
            ->type_name("FILE")
            ->expected(1)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        addJobsOption(app_, gate_.jobs,
                      "Workers run at the same time: target and reference, and different workloads");
        app_->add_flag("--lint", gate_.lint,
                       "Also lint the target's sources (a file target's file; cute: the installed "
                       "nvidia_cutlass_dsl) and mark findings the dynamic checks confirm");
        app_->add_flag(
            "--list-checks", listChecks_,
            "Print the gate's checks (workload, unit, default budget, explaining finding) and exit");
        app_->add_option(
                "--distinct-values", gate_.distinctValues,
                "Distinct values the values workload packs to test boundedness (default 1000000)")
            ->check(kPositive);
    }

    std::vector<std::string> inputs() const override {
        std::vector<std::string> inputs;
        for (const std::string* path : {&gate_.target, &gate_.baseline, &gate_.budgets})
            if (!path->empty()) inputs.push_back(*path);
        return inputs;
    }

    int run(const Invocation& invocation) override {
        if (listChecks_) {
            std::fputs(commands::gateCheckTable().c_str(), stdout);
            return 0;
        }
        gate_.checks = commaList(checks_);
        gate_.timeout = std::chrono::seconds(common_.timeoutSeconds);
        gate_.sentinelBytes = sentinelMiB_ << 20;
        gate_.deviceSentinelBytes = deviceSentinelMiB_ << 20;
        gate_.soakMaxGrowthBytes = soakMaxMiB_ << 20;
        gate_.forwardOutput = !common_.output.quiet;
        return report::emit(withArguments(commands::runGate(gate_), invocation), common_.output);
    }

  private:
    Common& common_;
    commands::GateOptions gate_;
    std::string checks_;
    bool listChecks_ = false;
    std::int64_t sentinelMiB_ = gate_.sentinelBytes >> 20;
    std::int64_t deviceSentinelMiB_ = gate_.deviceSentinelBytes >> 20;
    std::int64_t soakMaxMiB_ = gate_.soakMaxGrowthBytes >> 20;
};

} // namespace

std::unique_ptr<Subcommand> addGateCommand(CLI::App& app, Common& common) {
    return std::make_unique<GateCommand>(app, common);
}

} // namespace leakgate::cmd
