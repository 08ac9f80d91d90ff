# fault: an exception text with a lone surrogate (item 12)
# run: scan -- {script}
# exit: 3
# text: ValueError
raise ValueError("bad \udcff text")
