# fault: a script whose name holds a carriage return and an escape sequence (issue 42, item 7): the name is printed escaped
# name: job\rFAKE\x1b[2J.py
# run: scan -- {script}
# exit: 0
# text: job\rFAKE\x1b[2J.py
pass
