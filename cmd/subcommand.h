// One subcommand of the command line: it adds its options to the app, says which files the run
// reads (a report written over one would destroy it), and runs once parsed. main.cpp parses, finds
// the subcommand that was given, checks the outputs against its inputs and runs it.
#pragma once

#include "cmd/options.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace leakgate::cmd {

class Subcommand {
  public:
    explicit Subcommand(CLI::App* app) : app_(app) {}
    virtual ~Subcommand() = default;

    bool parsed() const { return app_->parsed(); }
    // The files the run reads; a UsageError for arguments that name none where one is needed.
    virtual std::vector<std::string> inputs() const { return {}; }
    // After the outputs were checked, with the run's scratch directory made: the exit code.
    virtual int run(const Invocation& invocation) = 0;

  protected:
    CLI::App* app_;
};

// Each adds its subcommand to `app`; `common` receives the options they share.
std::unique_ptr<Subcommand> addScanCommand(CLI::App& app, Common& common);
std::unique_ptr<Subcommand> addGateCommand(CLI::App& app, Common& common);
std::unique_ptr<Subcommand> addLintCommand(CLI::App& app, Common& common);
std::unique_ptr<Subcommand> addBisectCommand(CLI::App& app, Common& common);
std::unique_ptr<Subcommand> addMergeCommand(CLI::App& app, Common& common);
std::unique_ptr<Subcommand> addCacheCommand(CLI::App& app, Common& common);
std::unique_ptr<Subcommand> addReproCommand(CLI::App& app, Common& common);

} // namespace leakgate::cmd
