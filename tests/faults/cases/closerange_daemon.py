# fault: the script closes every descriptor above 2 and opens a file that takes the result's number (issue 42, item 3)
# run: scan -- {script}
# exit: 3
# text: closed or replaced leakgate's result descriptor
import os

os.closerange(3, 4096)
files = [open(os.path.join(os.getcwd(), f"user-{i}.txt"), "w") for i in range(800)]
for f in files:
    f.write("the user's data\n")
    f.close()
for i in range(800):
    with open(os.path.join(os.getcwd(), f"user-{i}.txt")) as f:
        assert f.read() == "the user's data\n", f"user-{i}.txt was written into"
