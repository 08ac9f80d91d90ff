# fault: the script aborts
# run: scan -- {script}
# exit: 3
# text: killed by signal 6
import os

os.abort()
