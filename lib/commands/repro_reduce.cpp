#include "lib/commands/repro_reduce.h"

#include "leakgate/errors.h"
#include "lib/base/subprocess.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <vector>

namespace leakgate::commands {
namespace {

// Every statement of the script at every depth, in source order, as
// [first line, last line, block, parent]: `first` counts a definition's decorators, `block` numbers
// the statement list it is in (0: the module's), `parent` is the statement that owns that list
// (-1 at the top). Run in the script's own interpreter, so that its grammar is the script's.
constexpr const char* kListStatements = R"py(
import ast, json, sys, tokenize
with tokenize.open(sys.argv[1]) as f:
    tree = ast.parse(f.read(), sys.argv[1])
found, blocks = [], [0]
def walk(body, block, parent):
    for node in body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        index = len(found)
        found.append([first, node.end_lineno, block, parent])
        lists = [getattr(node, name, None) for name in ("body", "orelse", "finalbody")]
        lists += [h.body for h in getattr(node, "handlers", [])]
        lists += [c.body for c in getattr(node, "cases", [])]
        for inner in lists:
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                blocks[0] += 1
                walk(inner, blocks[0], index)
walk(tree.body, 0, -1)
print(json.dumps(found))
)py";

struct Statement {
    int first = 0, last = 0; // 1-based lines, inclusive
    int block = 0, parent = -1;
    bool removable = false; // no other statement shares its lines (`a; b`, `if x: y`)
};

std::vector<Statement> listStatements(const std::string& python, const std::string& path) {
    base::ProcessSpec spec;
    spec.argv = {python, "-I", "-c", kListStatements, path};
    spec.timeout = std::chrono::seconds(60);
    const base::ProcessOutcome outcome = base::runProcess(spec);
    if (outcome.exitCode != 0)
        throw UsageError(fmt::format("repro --reduce: {} does not parse in {}: {}", path, python,
                                     outcome.stderrTail.empty() ? "no message" : outcome.stderrTail));
    std::vector<Statement> statements;
    for (const auto& row : nlohmann::json::parse(outcome.stdoutText))
        statements.push_back(
            {row[0].get<int>(), row[1].get<int>(), row[2].get<int>(), row[3].get<int>(), false});
    // A statement is cut by its lines: only where no statement outside it starts or ends on one.
    auto inside = [&](size_t inner, size_t outer) {
        for (int at = static_cast<int>(inner); at >= 0; at = statements[at].parent)
            if (static_cast<size_t>(at) == outer) return true;
        return false;
    };
    // A statement around it ends where it ends (the last of a block), but must not start on its
    // first line (`if x: y`); any other must not touch its lines at all (`a; b`).
    for (size_t i = 0; i < statements.size(); ++i) {
        Statement& self = statements[i];
        self.removable = true;
        for (size_t j = 0; j < statements.size() && self.removable; ++j) {
            if (j == i || inside(j, i)) continue;
            const Statement& other = statements[j];
            if (inside(i, j)) {
                self.removable = other.first < self.first;
            } else {
                self.removable = other.last < self.first || other.first > self.last;
            }
        }
    }
    return statements;
}

std::vector<std::string> readLines(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

// The script without the statements in `dropped` (and what they contain); a block left with none
// keeps a `pass` where its first statement was, indented as that statement.
std::string render(const std::vector<std::string>& lines, const std::vector<Statement>& statements,
                   const std::vector<bool>& dropped) {
    std::vector<bool> gone(lines.size() + 2, false);
    std::vector<std::string> passAt(lines.size() + 2);
    std::vector<int> firstOfBlock, keptInBlock;
    for (size_t i = 0; i < statements.size(); ++i) {
        const Statement& statement = statements[i];
        const size_t block = static_cast<size_t>(statement.block);
        if (block >= firstOfBlock.size()) {
            firstOfBlock.resize(block + 1, -1);
            keptInBlock.resize(block + 1, 0);
        }
        if (firstOfBlock[block] < 0) firstOfBlock[block] = static_cast<int>(i);
        if (!dropped[i]) ++keptInBlock[block];
        if (!dropped[i]) continue;
        for (int line = statement.first; line <= statement.last; ++line)
            gone[static_cast<size_t>(line)] = true;
        // The comment lines right above it (no blank line between) were about it: they go too.
        for (size_t line = static_cast<size_t>(statement.first) - 1; line >= 1; --line) {
            const std::string& text = lines[line - 1];
            const size_t start = text.find_first_not_of(" \t");
            if (start == std::string::npos || text[start] != '#') break;
            gone[line] = true;
        }
    }
    for (size_t block = 1; block < firstOfBlock.size(); ++block) {
        if (firstOfBlock[block] < 0 || keptInBlock[block] > 0) continue;
        const Statement& first = statements[static_cast<size_t>(firstOfBlock[block])];
        if (first.parent >= 0 && dropped[static_cast<size_t>(first.parent)]) continue;
        const std::string& text = lines[static_cast<size_t>(first.first - 1)];
        passAt[static_cast<size_t>(first.first)] =
            text.substr(0, text.find_first_not_of(" \t")) + "pass";
    }
    // What is kept, with no more than two blank lines in a row where statements went.
    std::string out;
    int blanks = 0;
    for (size_t line = 1; line <= lines.size(); ++line) {
        const std::string& text = passAt[line].empty() ? lines[line - 1] : passAt[line];
        if (gone[line] && passAt[line].empty()) continue;
        blanks = text.find_first_not_of(" \t\r") == std::string::npos ? blanks + 1 : 0;
        if (blanks <= 2) out += text + "\n";
    }
    return out;
}

} // namespace

Reduction reduceScript(const std::string& python, const std::string& path,
                       const std::function<bool(const std::string& source)>& holds,
                       std::chrono::seconds budget) {
    const auto started = std::chrono::steady_clock::now();
    const std::vector<std::string> lines = readLines(path);
    const std::vector<Statement> statements = listStatements(python, path);
    Reduction reduction;
    reduction.statements = statements.size();
    std::vector<bool> dropped(statements.size(), false);
    reduction.source = render(lines, statements, dropped);
    ++reduction.runs;
    if (!holds(reduction.source))
        throw UsageError(fmt::format("repro --reduce: the reproducer of {}, cut by nothing, does not "
                                     "give the verdicts expected of it: nothing to reduce from",
                                     path));
    // The blocks' statements, last first; a statement that must stay is then cut down inside.
    std::vector<std::vector<size_t>> children(statements.size() + 1);
    for (size_t i = 0; i < statements.size(); ++i) {
        const int parent = statements[i].parent;
        children[parent < 0 ? statements.size() : static_cast<size_t>(parent)].push_back(i);
    }
    std::vector<size_t> todo(children[statements.size()].begin(), children[statements.size()].end());
    while (!todo.empty()) {
        const size_t at = todo.back();
        todo.pop_back();
        if (std::chrono::steady_clock::now() - started > budget) {
            reduction.stoppedEarly = true;
            break;
        }
        bool kept = true;
        if (statements[at].removable) {
            dropped[at] = true;
            std::string candidate = render(lines, statements, dropped);
            ++reduction.runs;
            if (holds(candidate)) {
                reduction.source = std::move(candidate);
                kept = false;
            } else {
                dropped[at] = false;
            }
        }
        if (kept) todo.insert(todo.end(), children[at].begin(), children[at].end());
    }
    for (size_t i = 0; i < statements.size(); ++i) {
        bool gone = false;
        for (int at = static_cast<int>(i); at >= 0 && !gone; at = statements[at].parent)
            gone = dropped[static_cast<size_t>(at)];
        if (gone) ++reduction.dropped;
    }
    reduction.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return reduction;
}

} // namespace leakgate::commands
