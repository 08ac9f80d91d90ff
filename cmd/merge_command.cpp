// leakgate merge: the JSON reports of bisect shards joined into one (lib/commands/merge.h).
#include "cmd/subcommand.h"
#include "lib/commands/merge.h"

namespace leakgate::cmd {
namespace {

class MergeCommand : public Subcommand {
  public:
    MergeCommand(CLI::App& app, Common& common)
        : Subcommand(app.add_subcommand(
              "merge", "Join the JSON reports of bisect shards (--shard I/N) into one bisect report")),
          common_(common) {
        OutputOptions& output = common.output;
        app_->add_option("reports", files_, "bisect --json reports")->required()->type_name("FILE");
        app_->add_option("--json", output.json, "Write the joined JSON report to FILE ('-' for stdout)");
        app_->add_option("--junit", output.junit, "Write the joined JUnit XML report to FILE");
        app_->add_option("--sarif", output.sarif,
                         "Write the joined SARIF 2.1.0 report to FILE (a run per release)");
        app_->add_option("--html", output.html, "Write the joined report as an HTML page to FILE");
        app_->add_flag("-q,--quiet", output.quiet, "No text report");
        addColorOptions(app_, output);
    }

    std::vector<std::string> inputs() const override { return files_; }

    int run(const Invocation&) override {
        return report::emit(commands::mergeBisectReports(files_), common_.output);
    }

  private:
    Common& common_;
    std::vector<std::string> files_;
};

} // namespace

std::unique_ptr<Subcommand> addMergeCommand(CLI::App& app, Common& common) {
    return std::make_unique<MergeCommand>(app, common);
}

} // namespace leakgate::cmd
