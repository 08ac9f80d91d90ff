# fault: the script raises KeyboardInterrupt
# run: scan -- {script}
# exit: 3
# text: KeyboardInterrupt
raise KeyboardInterrupt
