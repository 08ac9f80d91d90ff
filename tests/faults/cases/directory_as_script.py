# fault: a directory given as the script (item 5)
# run: scan -- {dir}
# exit: 2
pass
