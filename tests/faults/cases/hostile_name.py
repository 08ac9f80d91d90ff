# fault: a script whose name is an option, a shell expansion and a newline
# name: --json;$(touch PWNED)`touch PWNED`\n.py
# run: scan -- {script}
# exit: 0
# absent: {dir}/PWNED
pass
