# fault: an infinite loop, with --timeout
# run: scan --timeout 3 -- {script}
# exit: 3
# text: timed out after 3 s
while True:
    pass
