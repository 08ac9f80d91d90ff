#include "lib/commands/versions.h"

#include "leakgate/errors.h"
#include "lib/base/data_dir.h"
#include "lib/base/subprocess.h"
#include "lib/python/environment.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace leakgate::commands {

VersionSelection selectVersions(const std::vector<std::string>& versions,
                                const std::optional<std::string>& specifier, bool pre) {
    nlohmann::json request{
        {"versions", versions},
        {"specifier", specifier ? nlohmann::json(*specifier) : nlohmann::json(nullptr)},
        {"pre", pre}};
    base::ProcessSpec spec;
    spec.argv = {python::buildPythonExecutable(), "-I",
                 (base::dataDir() / "lib/commands/versions.py").string()};
    spec.input = request.dump();
    spec.timeout = std::chrono::seconds(60);
    const base::ProcessOutcome outcome = base::runProcess(spec);
    nlohmann::json answer;
    if (!outcome.timedOut && outcome.exitCode == 0)
        answer = nlohmann::json::parse(outcome.stdoutText, nullptr, /*allow_exceptions=*/false);
    if (!answer.is_object()) {
        throw EnvironmentError(fmt::format("cannot order versions with {} (PEP 440, the packaging "
                                           "library or pip's copy of it): {}",
                                           spec.argv.front(), outcome.stderrTail));
    }
    if (answer.contains("error")) throw UsageError(answer["error"].get<std::string>());
    VersionSelection selection;
    selection.selected = answer.value("selected", std::vector<std::string>{});
    selection.invalid = answer.value("invalid", std::vector<std::string>{});
    selection.implementation = answer.value("implementation", "");
    return selection;
}

bool isSpecifier(const std::string& text) {
    const auto first = text.find_first_not_of(' ');
    return first != std::string::npos &&
           std::string_view("<>=!~").find(text[first]) != std::string_view::npos;
}

} // namespace leakgate::commands
