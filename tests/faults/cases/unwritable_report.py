# fault: the report's directory cannot be written (its parent is a file)
# run: scan --json {script}.d/report.json -- {script}
# exit: 3
# text: cannot create
# absent: {script}.d
pass
