# fault: a child in another session keeps the pipes open after the result (item 8)
# run: scan -- {script}
# exit: 0
# json: results.0.details.worker_orphans_killed
import subprocess

subprocess.Popen(["setsid", "sleep", "600"])
