"""What an empty measured region costs in a process with a large heap: the price `--leakgate`
pays for every test (issue 44: 54 ms per test with numba-cuda loaded, 146-188 ms with Warp, about
three full collections of the whole heap).

    python3 bench/region_cost.py [--objects N] [--runs R]

Needs leakgate_dsl importable (the wheel, or a build's package). Builds a heap of N tracked
objects that stay alive (instances in lists, as a loaded DSL keeps its modules, types and caches),
then times, in the same process and interleaved run by run so that the machine's noise hits each
alike:

  collect   one gc.collect() of that heap: the unit the region is compared with;
  region    `with leakgate_dsl.region(): pass`, and the same with a pre-existing retained frame
            (a traceback pytest keeps) and a few thousand objects of garbage made before it;
  finding   a region whose body leaves the 4.6.1 model's frame cycle with a sentinel in it,
            checked to be found (frame-cycle fail, sentinel freed-by-gc-only), and one whose body
            keeps its own frame in a module-level list, checked to be found (retained-frame fail,
            naming the list), so that a cheaper region is not one that stopped looking.

Prints medians with their spread (min-max) and each figure as a ratio to one collection, which
holds from machine to machine better than milliseconds do.
"""

import argparse
import gc
import statistics
import sys
import time

import leakgate_dsl


class Held:
    __slots__ = ("value", "peer")

    def __init__(self, value):
        self.value = value
        self.peer = None


def build_heap(objects):
    """About `objects` tracked objects, all reachable: pairs of a list and an instance."""
    return [[Held(i)] for i in range(objects // 2)]


def garbage(count):
    """`count` two-object cycles left unreachable: what a test runner leaves between collections."""
    for i in range(count):
        a, b = Held(i), Held(i)
        a.peer, b.peer = b, a


def keeps_a_traceback():
    """A frame retained before the region, as pytest's sys.last_traceback keeps one."""
    try:
        raise RuntimeError("an earlier test failed")
    except RuntimeError as error:
        return error.__traceback__


def cur_frame_kernel(fn):
    import inspect

    cur_frame = inspect.currentframe()  # the 4.6.1 defect: its own frame in a local
    return fn


def leaks():
    tensor = leakgate_dsl.sentinel("tensor", 1 << 20)

    @cur_frame_kernel
    def kernel():
        pass


_KEPT = []


def keeps_its_frame():
    """A frame retained by the body: the retained-frame check's finding, which a region takes
    while the frame is young and explains from the whole heap."""
    _KEPT.append(sys._getframe())


def timed(fn):
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1e3


def empty_region():
    with leakgate_dsl.region("empty"):
        pass


def region_with_earlier_garbage():
    garbage(2000)
    with leakgate_dsl.region("empty"):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()

    kept = keeps_a_traceback()  # noqa: F841 (kept alive on purpose)
    heap = build_heap(args.objects)  # noqa: F841
    gc.collect()
    tracked = len(gc.get_objects())
    print(f"heap: {tracked:,} tracked objects; Python {sys.version.split()[0]}; "
          f"leakgate_dsl {leakgate_dsl.__version__}; {args.runs} runs each, interleaved")

    times = {"collect": [], "region": [], "region, garbage before": [], "region, finding": [],
             "region, retained frame": []}
    for _ in range(args.runs):
        times["collect"].append(timed(gc.collect))
        times["region"].append(timed(empty_region))
        times["region, garbage before"].append(timed(region_with_earlier_garbage))
        found = []
        times["region, finding"].append(timed(lambda: found.append(leakgate_dsl.measure(leaks))))
        result = found[0]
        verdicts = [v.verdict for v in result.sentinels]
        if result.check("frame-cycle").status != "fail" or verdicts != ["freed-by-gc-only"]:
            sys.exit(f"the region lost the finding: {result.text}")
        times["region, retained frame"].append(
            timed(lambda: found.append(leakgate_dsl.measure(keeps_its_frame))))
        retained = found[1].check("retained-frame")
        _KEPT.clear()
        if retained.status != "fail" or "_KEPT[0]" not in retained.reason:
            sys.exit(f"the region lost the retained frame: {found[1].text}")

    unit = statistics.median(times["collect"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<24} median {median:8.1f} ms  (min {min(values):.1f}, max {max(values):.1f})"
              f"  = {median / unit:6.3f} collections")
    print("  every `region, finding` run found the frame cycle and its sentinel freed-by-gc-only, and every "
          "`region, retained frame` run the frame and the list that keeps it")


if __name__ == "__main__":
    main()
