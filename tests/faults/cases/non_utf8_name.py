# fault: a script whose name is not UTF-8 (item 12)
# name: caf\xe9.py
# run: scan --json {dir}/r.json -- {script}
# exit: 0
# json-file: {dir}/r.json
pass
