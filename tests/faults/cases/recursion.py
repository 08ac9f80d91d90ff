# fault: unbounded recursion
# run: scan -- {script}
# exit: 3
# text: RecursionError
def down():
    down()


down()
