# fault: SIGUSR1 to leakgate while its worker spins (issue 42, item 4): the worker dies with it
# run: scan --json {dir}/report.json -- {script}
# send: SIGUSR1 3
# exit: 138
# absent: {dir}/report.json
while True:
    pass
