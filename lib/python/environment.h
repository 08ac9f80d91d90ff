// The Python environment a worker runs in: the build's own interpreter, or the one --python
// names (a venv's interpreter, whose site-packages are then used). Queried once in the parent by
// running that interpreter; passed to every worker in its spec.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace leakgate::python {

struct Environment {
    std::string executable;
    std::string version; // full version, "3.11.7"
    std::string prefix;
    std::string execPrefix;
    std::string basePrefix;
    std::string baseExecPrefix;
    std::vector<std::string> path; // that interpreter's sys.path, without the script directory
    std::string userSite;          // the user site-packages it would add once it exists ("": disabled)
};

// The interpreter whose environment a command runs in without --python: $LEAKGATE_DEFAULT_PYTHON
// when set, else the one leakgate was built against (its libpython is the one embedded).
std::string buildPythonExecutable();
// "3.11": the major.minor this build embeds.
std::string embeddedPythonVersion();

// Runs `executable` to read its paths and version. Throws UsageError when it cannot run or is a
// different major.minor than this build embeds (the message names both versions).
Environment queryEnvironment(const std::string& executable);

// `executable` as a command would run it: as given when it has a slash (made absolute, symlinks
// kept), else the first match on PATH. Throws UsageError when nothing on PATH matches.
std::string resolveExecutable(const std::string& executable);

// What an interpreter's answer depends on, for reusing it (lib/commands/environments.h):
// - before it runs: its file (through the venv's symlink, by inode, size and time), the
//   pyvenv.cfg beside it or one folder up, and the environment variables Python reads at start
//   (PYTHON*, HOME for the user site; the working directory when PYTHONPATH is set);
// - from its answer: each sys.path entry and the user site (absent, or a folder's time and its
//   .pth files and sitecustomize/usercustomize modules, by size and time: site.py runs those).
// Equal fingerprints mean the same answer unless a file changed without its time moving.
nlohmann::json launchFingerprint(const std::string& resolvedExecutable);
nlohmann::json pathFingerprint(const Environment& env);

void to_json(nlohmann::json& out, const Environment& env);
void from_json(const nlohmann::json& in, Environment& env);

} // namespace leakgate::python
