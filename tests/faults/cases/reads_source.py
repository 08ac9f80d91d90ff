# fault: a target that reads its kernels' source (item 6)
# run: gate --target {script} --checks decorate
# exit: 0
# text: sentinels freed by reference counting
import inspect

TARGET_NAME = "reads_source"


def kernel(*args, **options):
    if len(args) == 1 and callable(args[0]):
        inspect.getsource(args[0])
        return args[0]
    return lambda fn: (inspect.getsource(fn), fn)[1]


jit = kernel
