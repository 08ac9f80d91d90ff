// leakgate cache list|prune: what leakgate keeps between runs (lib/commands/cache.h).
#include "cmd/subcommand.h"
#include "lib/commands/cache.h"

#include <cstdio>

namespace leakgate::cmd {
namespace {

class CacheCommand : public Subcommand {
  public:
    explicit CacheCommand(CLI::App& app)
        : Subcommand(app.add_subcommand(
              "cache",
              "What leakgate keeps: the release venvs, the wheelhouse, interpreters' environments")) {
        app_->require_subcommand(1);
        list_ = app_->add_subcommand("list",
                                     "Each venv, the wheelhouse and the kept environments, with sizes");
        CLI::App* prune = app_->add_subcommand("prune", "Remove venvs, kept environments and wheels");
        prune->add_flag("--keep-wheels", prune_.keepWheels,
                        "Keep the wheelhouse (venvs are re-made from it offline)");
        prune
            ->add_option("--older-than", prune_.olderThanDays,
                         "Only what was not used (venvs) or written (files) for DAYS days")
            ->type_name("DAYS")
            ->check(kNonNegative);
    }

    int run(const Invocation&) override {
        if (list_->parsed()) {
            std::fputs(commands::formatCacheList(commands::readCache()).c_str(), stdout);
            return 0;
        }
        const commands::PruneOutcome pruned = commands::pruneCache(prune_);
        std::fputs(commands::formatPruneOutcome(pruned, commands::readCache()).c_str(), stdout);
        return 0;
    }

  private:
    CLI::App* list_;
    commands::PruneOptions prune_;
};

} // namespace

std::unique_ptr<Subcommand> addCacheCommand(CLI::App& app, Common&) {
    return std::make_unique<CacheCommand>(app);
}

} // namespace leakgate::cmd
