# fault: SIGINT (Ctrl-C) to leakgate while its worker spins (item 7)
# run: scan -- {script}
# send: SIGINT 3
# exit: 130
while True:
    pass
