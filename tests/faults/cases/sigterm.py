# fault: SIGTERM to leakgate while its worker spins (item 7)
# run: scan --json {dir}/report.json -- {script}
# send: SIGTERM 3
# exit: 143
# absent: {dir}/report.json
while True:
    pass
