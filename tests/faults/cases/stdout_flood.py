# fault: 200 MB on stdout
# run: scan -q -- {script}
# exit: 0
import sys

chunk = "x" * (1 << 20)
for _ in range(200):
    sys.stdout.write(chunk)
