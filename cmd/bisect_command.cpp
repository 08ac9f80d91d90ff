// leakgate bisect: the gate on releases of a package, each in its own venv (lib/commands/bisect.h).
#include "cmd/subcommand.h"
#include "leakgate/errors.h"
#include "lib/commands/bisect.h"
#include "lib/commands/builtin_targets.h"

#include <fmt/format.h>

#include <sstream>

namespace leakgate::cmd {
namespace {

class BisectCommand : public Subcommand {
  public:
    BisectCommand(CLI::App& app, Common& common)
        : Subcommand(app.add_subcommand(
              "bisect",
              "Run the gate on releases of a DSL package, each in its own venv, and tabulate")),
          common_(common) {
        OutputOptions& output = common.output;
        app_->add_option(
            "--package", bisect_.package,
            "The PyPI package (default: the built-in target's, nvidia-cutlass-dsl for cute)");
        app_->add_option("--versions", versions_,
                         "Comma-separated versions (4.4.2,4.6.1), or a PEP 440 specifier set "
                         "matched against the index ('>=4.6,<4.8')");
        app_->add_option("--from", bisect_.from, "With --to: every release from this version ...");
        app_->add_option("--to", bisect_.to, "... to this one, inclusive");
        app_->add_flag("--pre", bisect_.pre, "Pre- and dev-releases count as releases (PEP 440 order)");
        app_->add_option("--python", bisect_.pythonVersion,
                         "X.Y: the Python of the venvs; only the one this build embeds (a build per "
                         "Python: scripts/build.sh)")
            ->type_name("X.Y");
        app_->add_option("-j,--jobs", bisect_.jobs,
                         "Releases installed and gated at the same time (default 1)")
            ->check(CLI::Range(1, 64));
        app_->add_option("--shard", shard_,
                         "I/N: only the I-th of every N releases (1-based), for N CI jobs; "
                         "`leakgate merge` joins their JSON")
            ->type_name("I/N");
        app_->add_option("--extra", bisect_.extras,
                         "An optional extra installed with every release (package[cu13]); repeatable")
            ->type_name("EXTRA")
            ->expected(1)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        app_->add_option("--with", bisect_.with,
                         "A requirement installed beside every release, in its venv ('numpy<2.5', "
                         "setuptools); repeatable")
            ->type_name("REQ")
            ->expected(1)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        app_->add_option("--installer", bisect_.installer,
                         "What installs each release from the wheelhouse: auto (default: uv when "
                         "$LEAKGATE_UV or PATH has it, else pip), uv or pip")
            ->check(CLI::IsMember({"auto", "uv", "pip"}));
        app_->add_option("--target", bisect_.gate.target,
                         "The target for every version: a built-in DSL (" +
                             commands::builtinTargetNames(true) + "; default cute) or a file");
        app_->add_option("--checks", checks_, "Checks or workloads (default decorate,import)");
        app_->add_option("--probe", bisect_.gate.probes,
                         "A probe plug-in run on every version (as gate --probe); repeatable")
            ->type_name("FILE")
            ->expected(1)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        app_->add_option("--json", output.json, "Write the JSON table to FILE ('-' for stdout)");
        app_->add_option("--junit", output.junit,
                         "Write a JUnit XML report to FILE: a suite per release and role, its "
                         "transitions as properties");
        app_->add_option("--sarif", output.sarif,
                         "Write a SARIF 2.1.0 report to FILE ('-' for stdout): a run per release, each "
                         "its own category");
        app_->add_option(
            "--html", output.html,
            "Write an HTML page to FILE: the matrix, the transitions, each release's findings");
        app_->add_option("--timeout", common.timeoutSeconds, "Seconds before a worker is killed")
            ->check(kPositive);
        app_->add_option("--soak-seconds", bisect_.gate.soakSeconds,
                         "Soak budget per target, in seconds");
        app_->add_option("--launch-calls", bisect_.gate.launchCalls, "Calls per measured launch run");
        app_->add_option("--launch-runs", bisect_.gate.launchRuns, "Measured runs per launch case");
        app_->add_option("--distinct-values", bisect_.gate.distinctValues,
                         "Distinct values for values-bounded");
        app_->add_flag("-q,--quiet", output.quiet, "No text report, no target output");
        addColorOptions(app_, output);
    }

    int run(const Invocation&) override {
        if (!shard_.empty()) {
            int index = 0, count = 0;
            char slash = 0, extra = 0;
            std::stringstream parts(shard_);
            if (!(parts >> index >> slash >> count) || slash != '/' || parts >> extra || count < 1 ||
                index < 1 || index > count) {
                throw UsageError(
                    fmt::format("--shard {}: give I/N with 1 <= I <= N (--shard 2/4)", shard_));
            }
            bisect_.shard = index;
            bisect_.shards = count;
        }
        bisect_.versions = commaList(versions_);
        bisect_.gate.checks = commaList(checks_);
        bisect_.gate.timeout = std::chrono::seconds(common_.timeoutSeconds);
        // The cores not taken by the releases gated at the same time go to each gate's workers.
        bisect_.gate.jobs = std::max(1, defaultJobs() / bisect_.jobs);
        bisect_.gate.forwardOutput = !common_.output.quiet;
        return report::emit(commands::runBisect(bisect_), common_.output);
    }

  private:
    Common& common_;
    commands::BisectOptions bisect_;
    std::string versions_;
    std::string checks_ = "decorate,import";
    std::string shard_;
};

} // namespace

std::unique_ptr<Subcommand> addBisectCommand(CLI::App& app, Common& common) {
    return std::make_unique<BisectCommand>(app, common);
}

} // namespace leakgate::cmd
