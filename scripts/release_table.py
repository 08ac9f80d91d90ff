#!/usr/bin/env python3
"""docs/notes/releases.md from `leakgate bisect --json` reports: the release history of a DSL package as
leakgate measures it, one table per report (a plain install, then each set of extras), with its
transitions and their culprits. scripts/releases.sh makes the reports and runs this.

    release_table.py --command "..." REPORT.json... > docs/notes/releases.md
"""

import argparse
import json
import sys

MARK = {"pass": "pass", "fail": "**FAIL**", "error": "error", "skip": "skip"}


def culprit(cell):
    return f"`{cell['culprit']}`" if cell.get("culprit") else "-"


def table(report):
    name = report["package"] + (f"[{','.join(report['extras'])}]" if report["extras"] else "")
    lines = [f"## {name}, target {report['target']}, Python {report['python']['version']}", ""]
    checks = report["checks"]
    lines.append("| release | " + " | ".join(f"`{c}`" for c in checks) + " | culprit |")
    lines.append("|---|" + "---|" * (len(checks) + 1))
    for row in report["versions"]:
        if row["error"]:
            first = row["error"].splitlines()[0]
            lines.append(f"| {row['version']} | " + " | ".join("error" for _ in checks) + f" | {first} |")
            continue
        cells = row["cells"]
        culprits = sorted({cells[c]["culprit"] for c in checks if c in cells and cells[c].get("culprit")})
        lines.append(f"| {row['version']} | "
                     + " | ".join(MARK.get(cells[c]["status"], cells[c]["status"]) if c in cells else "-"
                                  for c in checks)
                     + " | " + (", ".join(f"`{c}`" for c in culprits) or "-") + " |")
    lines += ["", f"Transitions ({len(report['transitions'])}):", ""]
    for transition in report["transitions"]:
        across = f", across {', '.join(transition['across'])}" if transition["across"] else ""
        kinds = {}
        for change in transition["changes"]:
            kinds.setdefault((change["kind"], culprit(change["before"]), culprit(change["after"])), []).append(
                change["check"])
        parts = []
        for (kind, before, after), names in kinds.items():
            what = {"regressed": f"culprit {after}", "fixed": f"was {before}",
                    "culprit": f"{before} -> {after}"}[kind]
            parts.append(f"{kind} {', '.join(f'`{n}`' for n in names)} ({what})")
        lines.append(f"- **{transition['from']} -> {transition['to']}**{across}: " + "; ".join(parts))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--command", required=True, help="the command that made the reports")
    parser.add_argument("reports", nargs="+")
    args = parser.parse_args()
    out = ["# Releases as leakgate measures them", "",
           "Made by `" + args.command + "` (this file is its output; do not edit it by hand). Each "
           "table: the gate's checks on every release, oldest first in PEP 440 order, pre-releases "
           "included; a culprit is the fix site of the finding that explains a failing check "
           "(docs/definitions.md, \"Launches and releases\"); a transition is where a check's "
           "verdict or culprit changes.", ""]
    for path in args.reports:
        with open(path) as report_file:
            out.append(table(json.load(report_file)))
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
