# fault: --json and --html on one file (item 10)
# run: scan --json {dir}/r --html {dir}/r -- {script}
# exit: 2
# absent: {dir}/r
pass
