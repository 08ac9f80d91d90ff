"""`python3 lib/lint/python_rules PATH...`: leakgate lint's Python rules on their own, without
leakgate, for debugging: each finding as `file:line:column: rule [function] name: message`, then
how many; exit 1 when there is a finding."""

import os
import sys

if __package__:  # python3 -m python_rules, from lib/lint
    from . import main
else:  # python3 lib/lint/python_rules: sys.path[0] is this folder, not the one that holds it
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    from python_rules import main

sys.exit(main(sys.argv[1:]))
