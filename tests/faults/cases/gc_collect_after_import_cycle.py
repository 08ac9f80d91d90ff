# fault: a module's decorator leaves its import frames in a cycle, then the script collects (issue 41): the module's globals survive the explanation, and the cycle, the import's own, is a note
# run: scan -- {script}
# exit: 0
# text: made while a module was imported pins only that import's frames
# text: which the program started
# text: VALUE 42
# text-absent: has no attribute
import gc
import os
import sys

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels_mod.py"), "w") as f:
    f.write("import sys\nVALUE = 42\n\ndef kernel(fn):\n    frame = sys._getframe()\n    return fn\n\n"
            "@kernel\ndef k():\n    pass\n")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels_mod  # noqa: E402  its <module> frame is pinned by kernel's frame cycle once the import ends

gc.collect()
print("VALUE", kernels_mod.VALUE)
