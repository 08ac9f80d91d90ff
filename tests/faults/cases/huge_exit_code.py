# fault: SystemExit with an integer beyond 64 bits (item 12)
# run: scan -- {script}
# exit: 0
raise SystemExit(10**30)
