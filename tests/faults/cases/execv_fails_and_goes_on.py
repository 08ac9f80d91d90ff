# fault: the script calls os.execv of a program that does not exist, catches the error and goes on (issue 42, item 7): the result sent at the call stands, so the run is an error naming the call, never a measurement of half a program
# run: scan -- {script}
# exit: 3
# text: called os.exec*() of /nonexistent/leakgate-no-such-program
import os

try:
    os.execv("/nonexistent/leakgate-no-such-program", ["x"])
except OSError:
    pass
print("went on")
