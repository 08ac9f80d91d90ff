# fault: the script leaves by os._exit, skipping the reads
# run: scan -- {script}
# exit: 3
# text: exited with status 5 without a result
import os

os._exit(5)
