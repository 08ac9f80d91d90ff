# fault: a heap of 5e6 live objects at the reads
# run: scan -- {script}
# exit: 0
# text: no frame in cyclic garbage
heap = [[] for _ in range(5_000_000)]
