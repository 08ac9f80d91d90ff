// leakgate lint: frame-capture patterns in Python and C/C++ sources (lib/commands/lint.h).
#include "cmd/subcommand.h"
#include "lib/commands/lint.h"

#include <cstdio>

namespace leakgate::cmd {
namespace {

class LintCommand : public Subcommand {
  public:
    LintCommand(CLI::App& app, Common& common)
        : Subcommand(app.add_subcommand("lint", "Find frame-capture patterns in Python (AST) and C/C++ "
                                                "sources (libclang), before anything runs")),
          common_(common) {
        addOutputOptions(app_, common, lint_.python);
        app_->add_option("paths", lint_.paths, "Python and C/C++ files, or directories")->required();
        addJobsOption(app_, lint_.jobs,
                      "Python lint workers at the same time, each given a share of the files");
        app_->add_option("--compile-commands", lint_.compileCommands,
                         "C/C++: a compile_commands.json or its directory (default: one at the top "
                         "of a directory given, or in its build/)");
        app_->add_option("--cxx-flag", lint_.cxxFlags,
                         "C/C++: a compiler flag for files without a compile command (repeat; "
                         "--cxx-flag=-DNAME)");
        app_->add_option("-I,--include", lint_.includeDirs,
                         "C/C++: an include directory for files without a compile command (repeat; "
                         "Python.h's is always added)");
        app_->add_option_function<std::vector<std::string>>(
                "--select", [this](const std::vector<std::string>& rules) { lint_.select = rules; },
                "Only these rules (comma-separated; replaces the pyproject.toml's `select`)")
            ->type_name("RULES");
        app_->add_option("--ignore", lint_.ignore, "Not these rules (comma-separated; repeatable)")
            ->type_name("RULES");
        app_->add_option("--exclude", lint_.exclude,
                         "Skip paths matching GLOB (a name: any component; with `/`: the path from the "
                         "current directory); repeatable, added to the pyproject.toml's")
            ->type_name("GLOB");
        app_->add_flag(
            "--site-packages-headers", lint_.sitePackagesHeaders,
            "C/C++: also read the headers found under site-packages (a package's shipped API)");
        CLI::Option* configOption =
            app_->add_option(
                    "--config", lint_.configFile,
                    "A pyproject.toml whose [tool.leakgate.lint] to read (default: the nearest one "
                    "above the paths)")
                ->type_name("FILE");
        app_->add_flag("--no-config", noConfig_, "Read no pyproject.toml")->excludes(configOption);
        CLI::Option* fixOption = app_->add_flag(
            "--fix", lint_.fix,
            "Write the fixes the lint knows into the files given (each checked on a fixed copy "
            "first); print their unified diff");
        app_->add_flag("--diff", lint_.diff,
                       "Print the unified diff of the fixes --fix would write; write nothing")
            ->excludes(fixOption);
    }

    std::vector<std::string> inputs() const override {
        std::vector<std::string> inputs = lint_.paths;
        if (lint_.compileCommands) inputs.push_back(*lint_.compileCommands);
        if (lint_.configFile) inputs.push_back(*lint_.configFile);
        return inputs;
    }

    int run(const Invocation& invocation) override {
        lint_.readProjectFile = !noConfig_;
        lint_.timeout = std::chrono::seconds(common_.timeoutSeconds);
        lint_.forwardOutput = !common_.output.quiet;
        Report report = commands::runLint(lint_);
        if (lint_.fix || lint_.diff) printFixes(report);
        return report::emit(withArguments(std::move(report), invocation), common_.output);
    }

  private:
    // The diffs on stdout (on stderr when a report goes to stdout), the files not fixed on stderr.
    void printFixes(const Report& report) const {
        const report::Outputs& output = common_.output;
        bool reportOnStdout =
            output.json == "-" || output.junit == "-" || output.sarif == "-" || output.html == "-";
        FILE* diffs = reportOnStdout ? stderr : stdout;
        for (const auto& result : report.results) {
            auto fixes = result.details.find("fixes");
            if (fixes == result.details.end()) continue;
            for (const auto& fix : *fixes) {
                if (fix.contains("diff")) {
                    std::fputs(fix["diff"].get<std::string>().c_str(), diffs);
                } else {
                    std::fprintf(stderr, "leakgate: lint --fix: %s not fixed: %s\n",
                                 fix.value("file", "").c_str(), fix.value("reason", "").c_str());
                }
            }
        }
        std::fflush(diffs);
    }

    Common& common_;
    commands::LintOptions lint_;
    bool noConfig_ = false;
};

} // namespace

std::unique_ptr<Subcommand> addLintCommand(CLI::App& app, Common& common) {
    return std::make_unique<LintCommand>(app, common);
}

} // namespace leakgate::cmd
