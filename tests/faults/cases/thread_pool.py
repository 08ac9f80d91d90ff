# fault: a thread pool left open (item 9)
# run: scan --timeout 60 -- {script}
# exit: 0
from concurrent.futures import ThreadPoolExecutor

pool = ThreadPoolExecutor(4)
pool.submit(print, "hello")
