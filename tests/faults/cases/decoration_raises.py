# fault: a target whose decorators raise (item 4)
# run: gate --target {script} --checks decorate
# exit: 3
# text: ERROR decorate-sentinels
TARGET_NAME = "raises"


def kernel(*args, **options):
    raise RuntimeError("no kernels today")


jit = kernel
