// leakgate scan: a script or a module run under gc.disable() (lib/commands/scan.h).
#include "cmd/subcommand.h"
#include "leakgate/errors.h"
#include "lib/commands/scan.h"

namespace leakgate::cmd {
namespace {

class ScanCommand : public Subcommand {
  public:
    ScanCommand(CLI::App& app, Common& common)
        : Subcommand(app.add_subcommand(
              "scan", "Run a script under gc.disable() and explain the frames it leaks")),
          common_(common) {
        addOutputOptions(app_, common, scan_.python);
        app_->add_option("-m", scan_.module, "Run MODULE as `python -m` does (then ARGS...)")
            ->type_name("MODULE");
        // The limits that make a finding of the cycles without a frame and of a holder's growth.
        auto addLimit = [&](const char* option, std::int64_t& limit, const char* help) {
            app_->add_option(option, limit, help)->check(CLI::PositiveNumber)->capture_default_str();
        };
        addLimit("--cycle-instances", scan_.cycleInstances,
                 "cyclic-garbage: fail when one shape of cycle without a frame has this many instances");
        addLimit("--cycle-bytes", scan_.cycleBytes,
                 "cyclic-garbage: fail when one shape of cycle without a frame pins this many bytes");
        addLimit("--held-entries", scan_.heldEntries,
                 "held-growth: fail when one library-held container gains this many entries while the "
                 "program's "
                 "code runs");
        addLimit(
            "--held-bytes", scan_.heldBytes,
            "held-growth: fail when the entries one library-held container gains keep this many bytes");
        app_->add_flag(
            "--trace-sites", scan_.traceSites,
            "Run the script under tracemalloc, so that cyclic-garbage says where its cycles are "
            "made (slower)");
        app_->add_option("command", command_, "-- SCRIPT [ARGS...], or ARGS... after -m MODULE");
    }

    std::vector<std::string> inputs() const override {
        if (!scan_.module.empty()) return {};
        if (command_.empty()) throw UsageError("scan: give a script (-- SCRIPT [ARGS...]) or -m MODULE");
        return {command_.front()};
    }

    int run(const Invocation& invocation) override {
        if (scan_.module.empty()) {
            scan_.script = command_.front();
            scan_.args.assign(command_.begin() + 1, command_.end());
        } else {
            scan_.args = command_;
        }
        scan_.timeout = std::chrono::seconds(common_.timeoutSeconds);
        scan_.forwardOutput = !common_.output.quiet;
        return report::emit(withArguments(commands::runScan(scan_), invocation), common_.output);
    }

  private:
    Common& common_;
    commands::ScanOptions scan_;
    std::vector<std::string> command_;
};

} // namespace

std::unique_ptr<Subcommand> addScanCommand(CLI::App& app, Common& common) {
    return std::make_unique<ScanCommand>(app, common);
}

} // namespace leakgate::cmd
