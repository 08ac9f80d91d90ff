# fault: a script that does not compile (item 12)
# run: scan -- {script}
# exit: 3
# text: SyntaxError
# text-absent: harness
def broken(:
