# fault: /dev/zero as the budgets file (item 12)
# run: gate --target reference --checks decorate --baseline {script} --budgets /dev/zero
# exit: 2
pass
