# fault: two reports on stdout
# run: scan --json - --sarif - -- {script}
# exit: 2
# text: can be '-'
pass
