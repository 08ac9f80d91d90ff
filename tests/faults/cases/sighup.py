# fault: SIGHUP to leakgate while its worker spins (item 7)
# run: scan -- {script}
# send: SIGHUP 3
# exit: 129
while True:
    pass
