# fault: SIGTERM to leakgate while a child of the worker sits in another session (item 7)
# run: scan -- {script}
# send: SIGTERM 3
# exit: 143
import subprocess

subprocess.Popen(["setsid", "sleep", "600"])
while True:
    pass
