// leakgate repro: a standalone reproducer written from one finding of a JSON report, and its
// verdict in the interpreters given (lib/commands/repro.h).
#include "cmd/subcommand.h"
#include "lib/commands/repro.h"

#include <chrono>
#include <cstdio>

namespace leakgate::cmd {
namespace {

class ReproCommand : public Subcommand {
  public:
    ReproCommand(CLI::App& app, Common& common)
        : Subcommand(app.add_subcommand(
              "repro",
              "Write a standalone Python reproducer for a finding of a JSON report, and run it")),
          common_(common) {
        app_->add_option("--from", options_.from, "A gate, scan or bisect --json report")
            ->type_name("REPORT");
        app_->add_flag("--from-scan", options_.fromScan,
                       "Scan the script after -- first, and write the reproducer for its report "
                       "(instead of --from)");
        app_->add_flag("--from-gate", options_.fromGate,
                       "Gate --target first (its decorate, import and launch checks), and write the "
                       "reproducer for its report (instead of --from)");
        app_->add_option("--python", options_.python,
                         "--from-scan, --from-gate: the interpreter of the environment to run in "
                         "(default: the build's)");
        app_->add_option("command", command_,
                         "-- SCRIPT [ARGS...]: the scanned script, which the reproducer of a scan "
                         "finding re-runs (with --from-scan, or with a scan report)");
        app_->add_option("--finding", finding_,
                         "Which finding, 1-based as the report lists the target's (default: the first "
                         "of a shape repro writes)")
            ->check(CLI::PositiveNumber)
            ->type_name("N");
        app_->add_option("--release", options_.release,
                         "A bisect report's release to reproduce (default: the newest that failed)")
            ->type_name("VERSION");
        app_->add_option("--target", options_.target,
                         "The target the finding was measured on, where the report does not say (a "
                         "built-in DSL or a target file)");
        app_->add_option("--out", options_.out, "Write the reproducer to FILE (default: stdout)")
            ->type_name("FILE");
        app_->add_option("--payload-bytes", options_.payloadBytes,
                         "The caller's payload in a frame-cycle reproducer (default: the finding's "
                         "bytes, 1 to 256 MiB)")
            ->check(kPositive);
        addPythons("--verify-with", options_.verifyWith,
                   "Run the reproducer with PYTHON and report its exit");
        addPythons("--expect-leak", options_.expectLeak,
                   "Run it with PYTHON, which must reproduce the finding (exit 1)");
        addPythons("--expect-clean", options_.expectClean,
                   "Run it with PYTHON, which must be clean (exit 0)");
        app_->add_flag("--reduce", options_.reduce,
                       "Cut the scanned script down to the statements the finding needs, each cut "
                       "checked against --expect-leak and --expect-clean");
        app_->add_option("--reduce-seconds", reduceSeconds_,
                         "Stop cutting after this many seconds, keeping what is cut (default 300)")
            ->check(kPositive);
        app_->add_option("--timeout", common.timeoutSeconds, "Seconds before a reproducer run is killed")
            ->check(kPositive);
        app_->add_flag("-q,--quiet", common.output.quiet, "No summary");
    }

    std::vector<std::string> inputs() const override {
        std::vector<std::string> files;
        if (!options_.from.empty()) files.push_back(options_.from);
        if (!command_.empty()) files.push_back(command_.front());
        return files;
    }

    int run(const Invocation&) override {
        if (!command_.empty()) {
            options_.script = command_.front();
            options_.scriptArgs.assign(command_.begin() + 1, command_.end());
        }
        options_.finding = finding_;
        options_.timeout = std::chrono::seconds(common_.timeoutSeconds);
        options_.reduceBudget = std::chrono::seconds(reduceSeconds_);
        const commands::ReproResult result = commands::runRepro(options_);
        // Without --out the script is the output; the summary then goes to stderr.
        const bool toStdout = options_.out.empty() || options_.out == "-";
        if (toStdout) std::fputs(result.script.text.c_str(), stdout);
        if (!common_.output.quiet)
            std::fputs(commands::describeRepro(result, options_).c_str(), toStdout ? stderr : stdout);
        return static_cast<int>(result.exitCode());
    }

  private:
    void addPythons(const char* name, std::vector<std::string>& into, const char* help) {
        app_->add_option(name, into, std::string(help) + "; repeatable")
            ->type_name("PYTHON")
            ->expected(1)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }

    Common& common_;
    commands::ReproOptions options_;
    std::optional<int> finding_;
    int reduceSeconds_ = 300;
    std::vector<std::string> command_;
};

} // namespace

std::unique_ptr<Subcommand> addReproCommand(CLI::App& app, Common& common) {
    return std::make_unique<ReproCommand>(app, common);
}

} // namespace leakgate::cmd
