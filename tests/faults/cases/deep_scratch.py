# fault: the script builds a scratch tree 40 levels deep, then Ctrl-C (issue 42, item 5): leakgate exits at once
# run: scan -- {script}
# send: SIGINT 4
# exit: 130
import os
import tempfile

path = tempfile.gettempdir()
for level in range(40):
    path = os.path.join(path, f"d{level}")
    os.mkdir(path)
    with open(os.path.join(path, "f"), "w") as f:
        f.write("x")
while True:
    pass
