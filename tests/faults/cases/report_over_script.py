# fault: the JSON report would overwrite the scanned script (item 10)
# run: scan --json {script} -- {script}
# exit: 2
# text: is an input of this run
pass
