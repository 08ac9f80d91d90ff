#!/usr/bin/env python3
"""C++ namespaces follow the folders: a file under lib/FOLDER/ declares its names in
leakgate::FOLDER (or a namespace below it, as leakgate::base::log), one under probes/, cmd/ or
package/ in leakgate::probes, leakgate::cmd or leakgate::package, and a public header of
include/leakgate/ in leakgate or below it. Reads every C++ file under those folders; exits 1 naming
each namespace that declares a name against the rule, each name declared outside any namespace,
and each `using namespace` a header would hand to every file that includes it.

    check_namespaces.py [ROOT]      check the tree at ROOT (default: this repository)
    check_namespaces.py --self-test the checker on small files that break each rule (it must fail them)

What declares no name of ours is left alone: anonymous namespaces (their names are the file's
own), namespace aliases (`namespace fs = std::filesystem;`), a namespace that only holds other
namespaces (`namespace leakgate { namespace base {`), explicit specialisations (`template <>`: they
go where the template they specialise is, fmt's or pybind11's), static_assert, and what C++ and
CPython put at global scope: `main`, extern "C" declarations (a C name has no namespace) and the
PYBIND11_MODULE and PYBIND11_EMBEDDED_MODULE entry points.
"""
import os
import re
import sys
import tempfile

SOURCES = (".h", ".hpp", ".cpp", ".cc")
HEADERS = (".h", ".hpp")
TOPS = ("include", "lib", "probes", "cmd", "package")

# The one exception, as (file, namespace): lib/report/model.cpp defines the public report model of
# include/leakgate/report.h (toString, Report::exitCode, the JSON codec), and the public API's
# names are declared in `leakgate`, so their definitions are too: nlohmann::json finds to_json and
# from_json by argument-dependent lookup in the namespace of the type they encode, and a plug-in
# links the functions by their mangled names.
ALLOWED = {
    ("lib/report/model.cpp", "leakgate"),
}

# What may stand outside any namespace (see the docstring), by how its declaration starts.
GLOBAL_SCOPE = re.compile(r'(extern\s*""|int\s+main\s*\(|PYBIND11_(EMBEDDED_)?MODULE\s*\()')
# What declares no name, wherever it stands.
NO_NAME = re.compile(r"(template\s*<\s*>|static_assert\b|namespace\s+\w+\s*=)")
NAMESPACE = re.compile(r"(?:inline\s+)?namespace\b\s*([A-Za-z_][\w:\s]*?)?\s*$")
USING_NAMESPACE = re.compile(r"using\s+namespace\b")


def required_namespace(path):
    """The namespace a repository-relative path's names belong in, as a list of names; None for a
    C++ file directly under lib/, which belongs in none of its folders."""
    parts = path.split("/")
    if parts[0] == "include":
        return ["leakgate"]
    if parts[0] == "lib":
        return ["leakgate", parts[1]] if len(parts) > 2 else None
    return ["leakgate", parts[0]]


def strip(text):
    """The code of a C++ file with comments, string and character literals and preprocessor lines
    blanked out (each literal left as an empty pair of quotes), newlines kept so that line
    numbers hold."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            out.append(c)
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end) or " ")
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[i:i + 24])
        if raw:
            end = text.find(")" + raw.group(1) + '"', i + raw.end())
            end = n if end < 0 else end + len(raw.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            # A number, with its digit separators (1'000).
            number = re.match(r"\.?\d(?:[eEpP][+-]|['\w.])*", text[i:])
            out.append("0")
            i += number.end()
            continue
        if c.isalpha() or c == "_":
            word = re.match(r"\w+", text[i:]).group(0)
            out.append(word)
            i += len(word)
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def declared_name(statement):
    """The name a declaration declares, as well as a reader of its first words can tell."""
    text = " ".join(statement.split())
    if text.startswith("template"):
        depth, j = 0, text.find("<")
        while 0 <= j < len(text):
            depth += {"<": 1, ">": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        text = text[j:].strip()
    kind = re.match(r"(class|struct|union|enum(\s+class|\s+struct)?)\s+((?:[A-Z_][A-Z0-9_]*\s+)*)(\w+)", text)
    if kind:
        return kind.group(4)
    head = re.split(r"[(={;]|(?<!:):(?!:)", text, maxsplit=1)[0]
    if re.search(r"\boperator\b", head):
        return "operator" + head.split("operator", 1)[1].strip()
    words = re.findall(r"[~\w]+", head)
    return words[-1] if words else text[:40]


class Namespace:
    """An open namespace block: its full name (None when it or one around it is anonymous), the
    line it opens on, and whether a declaration in it was looked at already."""

    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.checked = False


def violations_in(path, text):
    """The problems of one file, as `path:line: sentence` strings."""
    required = required_namespace(path)
    if required is None:
        return [f"{path}:1: a C++ file directly under lib/ is in no folder, so in no folder's namespace"]
    folder = "/".join(path.split("/")[:2 if path.startswith("lib/") else 1]) + "/"
    rule = f"files under {folder} declare their names in {'::'.join(required)} or a namespace below it"
    code = strip(text)
    found = []
    scopes = []  # each open brace: a Namespace, or None for any other (a class, a function, extern "C")
    statement_start = 0

    def line_of(index):
        return code.count("\n", 0, index) + 1

    def declare(statement_end):
        """A declaration at namespace scope, or outside any: check where it stands."""
        statement = code[statement_start:statement_end]
        head = statement.strip()
        if not head or NO_NAME.match(head):
            return
        line = line_of(statement_start + len(statement) - len(statement.lstrip()))
        if USING_NAMESPACE.match(head):
            if path.endswith(HEADERS):
                found.append(f"{path}:{line}: `{head}` in a header reaches every file that includes it; "
                             "name what it uses, or declare it in a .cpp file")
            return
        if not scopes:
            if not GLOBAL_SCOPE.match(head):
                found.append(f"{path}:{line}: declares `{declared_name(head)}` outside any namespace; {rule}")
            return
        scope = scopes[-1]
        if scope.name is None or scope.checked:
            return  # anonymous, or this block was looked at already
        scope.checked = True
        name = "::".join(scope.name)
        if scope.name[:len(required)] == required or (path, name) in ALLOWED:
            return
        found.append(f"{path}:{scope.line}: namespace {name} declares `{declared_name(head)}` "
                     f"(line {line}); {rule}")

    for match in re.finditer(r"[{};]", code):
        at = match.start()
        in_namespace_scope = None not in scopes
        if match.group(0) == "{":
            opened = NAMESPACE.match(code[statement_start:at].strip()) if in_namespace_scope else None
            if opened:
                outer = scopes[-1].name if scopes else []
                names = opened.group(1)
                full = None if names is None or outer is None else outer + [
                    part.strip() for part in names.split("::")]
                scopes.append(Namespace(full, line_of(at)))
            else:
                # extern "C" { ... } holds C names, wherever it stands; anything else opening a
                # brace at namespace scope declares something (a class, a function, a table).
                if in_namespace_scope and not re.match(r'extern\s*""\s*$', code[statement_start:at].strip()):
                    declare(at)
                scopes.append(None)
        elif match.group(0) == "}":
            if not scopes:
                return found + [f"{path}:{line_of(at)}: a `}}` closes nothing; the checker cannot follow "
                                "this file's braces (an #if whose branches open different braces?)"]
            scopes.pop()
        elif in_namespace_scope:
            declare(at)
        statement_start = at + 1
    if scopes:
        found.append(f"{path}:{line_of(len(code))}: {len(scopes)} brace(s) left open at its end; the "
                     "checker cannot follow this file's braces (an #if whose branches open different braces?)")
    return found


def violations(root):
    found = []
    read = 0
    for top in TOPS:
        for directory, subdirectories, files in os.walk(os.path.join(root, top)):
            subdirectories.sort()
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    found.extend(violations_in(path, f.read()))
                read += 1
    if not read:
        found.append(f"{root}: no C++ file under {', '.join(TOPS)}: not a leakgate tree")
    return found


def self_test():
    """Each rule broken once in a tiny file must be reported; the accepted forms must pass."""
    cases = {
        "clean": ("lib/base/a.h", "namespace leakgate::base {\nvoid f();\n}\n", 0),
        "below the folder's": ("lib/base/a.h", "namespace leakgate::base::log {\nvoid f();\n}\n", 0),
        "a subfolder's file": ("lib/report/writers/a.h", "namespace leakgate::report {\nvoid f();\n}\n", 0),
        "nested blocks": ("lib/base/a.cpp",
                          "namespace leakgate {\nnamespace base {\nnamespace {\nint x;\n}\nint y;\n}\n}\n", 0),
        "anonymous and alias": ("cmd/a.cpp", "namespace fs = std::filesystem;\nnamespace {\n"
                                "using namespace leakgate;\nint helper() { return 1; }\n}\n", 0),
        "global entry points": ("package/a.cpp",
                                'extern "C" int c_name();\nextern "C" {\nint other();\n}\n'
                                "int main(int argc, char** argv) { return 0; }\n"
                                "PYBIND11_MODULE(_native, m) { m.doc() = \"}\"; }\n", 0),
        "specialisation": ("lib/report/a.h", "template <> struct fmt::formatter<leakgate::X> {};\n"
                           "namespace pybind11::detail {\ntemplate <> struct type_caster<Y> {};\n}\n", 0),
        "comments, strings, numbers": ("lib/report/a.cpp",
                                       "// namespace leakgate {\n/* } */\nnamespace leakgate::report {\n"
                                       "const char* s = \"namespace x { int y; }\";\nauto r = R\"x(})x\";\n"
                                       "int n = 1'000'000; char c = '{';\n#define OPEN {\n}\n", 0),
        "public header in leakgate": ("include/leakgate/a.h", "namespace leakgate {\nstruct A {};\n}\n", 0),
        "allowed exception": ("lib/report/model.cpp", "namespace leakgate {\nvoid to_json();\n}\n", 0),
        "using namespace in a .cpp": ("probes/a.cpp", "namespace leakgate::probes {\nusing namespace std;\n}\n", 0),
        "another folder's namespace": ("lib/base/a.h", "namespace leakgate::worker {\nvoid f();\n}\n", 1),
        "a forward declaration elsewhere": ("lib/worker/a.h", "namespace leakgate::workloads {\nstruct S;\n}\n", 1),
        "plain leakgate": ("lib/commands/a.cpp", "namespace leakgate {\nnamespace {\n}\nint run();\n}\n", 1),
        "leakgate around a nested block": ("lib/lint/a.h",
                                           "namespace leakgate {\nnamespace lint {\n}\nstruct S { int x; };\n}\n", 1),
        "outside any namespace": ("probes/a.cpp", "void registerAll() {}\n", 1),
        "a class outside any namespace": ("cmd/a.h", "class Parser;\n", 1),
        "model.cpp's exception is its own": ("lib/report/units.cpp", "namespace leakgate {\nint x;\n}\n", 1),
        "public header outside leakgate": ("include/leakgate/a.h", "namespace plugin {\nstruct A {};\n}\n", 1),
        "one report per block": ("lib/base/a.cpp", "namespace leakgate {\nint x;\nint y;\n}\n", 1),
        "using namespace in a header": ("lib/base/a.h", "namespace leakgate::base {\nusing namespace std;\n}\n", 1),
        "a file directly under lib/": ("lib/a.cpp", "namespace leakgate {\n}\n", 1),
        "unbalanced braces": ("lib/base/a.cpp", "namespace leakgate::base {\n#if A\nvoid f() {\n#else\n"
                              "void f(int) {\n#endif\n}\n}\n", 1),
    }
    failures = 0
    for name, (path, text, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
            got = violations(root)
        if len(got) != expected:
            print(f"self-test `{name}`: {len(got)} problems, expected {expected}")
            for line in got:
                print("   ", line)
            failures += 1
    print("self-test:", "failed" if failures else f"{len(cases)} cases as expected")
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    found = violations(root)
    for line in found:
        print(line)
    print(f"{len(found)} problem{'s' if len(found) != 1 else ''} with namespaces and folders")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
