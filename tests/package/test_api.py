"""leakgate_dsl's Python API, in this process: regions, sentinels, explain() and the assertions,
on the bundled 4.6.1 model (a frame cycle) and its fixed counterpart."""

import ctypes
import gc
import os
import sys

import pytest

import leakgate_dsl
from conftest import FIXTURES, PACKAGE, SOURCE, KERNEL, load

MIB = 1 << 20


def decorate_with(dsl, nbytes=64 * MIB):
    """What a user's code does: holds its data in a local while it decorates a kernel."""
    tensor = leakgate_dsl.sentinel("tensor", nbytes)

    @dsl.kernel
    def kernel():
        pass

    return None


def test_the_package_is_the_installed_one_not_the_source_tree():
    assert not str(PACKAGE).startswith(str(SOURCE) + os.sep), PACKAGE
    inside = [p for p in sys.path if p and os.path.realpath(p).startswith(str(SOURCE) + os.sep)]
    assert not inside, inside  # nothing of the source tree is importable
    # The wheel's CLI is the extension module: no binary, no libleakgate.so, no libpython linked.
    assert not (PACKAGE / "bin").exists()
    assert not (PACKAGE / "lib").exists()
    assert (PACKAGE / "share/leakgate/lib/workloads/harness.py").is_file()
    assert leakgate_dsl._native.__file__.startswith(str(PACKAGE))
    assert leakgate_dsl.__version__


def test_a_region_explains_the_models_frame_cycle(model):
    result = leakgate_dsl.measure(decorate_with, model)
    assert result.valid, result.error
    assert result.check("frame-cycle").status == "fail"
    assert result.check("sentinels").status == "fail"
    [verdict] = result.sentinels
    assert (verdict.label, verdict.verdict, verdict.bytes) == ("tensor", "freed-by-gc-only", 64 * MIB)
    cycle = result.frame_cycles[0]
    assert cycle.culprit.function == KERNEL, cycle
    assert "cur_frame" in cycle.locals
    # the statement to change: the one that binds `cur_frame`, not the culprit's return
    assert cycle.fix_site is not None and cycle.fix_site.line == 44, cycle
    assert cycle.payload_bytes == {}
    assert any(frame.function == "decorate_with" for frame in cycle.frames)
    assert result.pinned_bytes >= 64 * MIB
    assert KERNEL in result.text and "cur_frame" in result.text
    assert result.cyclic_garbage >= 2 and result.allocations > 0


def test_the_fixed_model_is_clean(clean_model):
    result = leakgate_dsl.measure(decorate_with, clean_model)
    assert result.valid, result.error
    assert [c.status for c in result.checks if c.name != "device-memory"] == ["pass", "pass", "pass", "pass"]
    assert [v.verdict for v in result.sentinels] == ["freed-by-refcount"]
    assert leakgate_dsl.violations(result) == []


def test_assert_clean_raises_with_the_explanation(model):
    with pytest.raises(AssertionError) as raised:
        leakgate_dsl.assert_clean(leakgate_dsl.measure(decorate_with, model))
    message = str(raised.value)
    for expected in ("frame-cycle shape", KERNEL, "cur_frame", "freed-by-gc-only", "fix:"):
        assert expected in message, message


def test_assertion_helpers(model, clean_model):
    leakgate_dsl.assert_no_frame_cycles(decorate_with, clean_model)
    leakgate_dsl.assert_sentinels_freed(decorate_with, clean_model)
    with pytest.raises(AssertionError, match=KERNEL):
        leakgate_dsl.assert_no_frame_cycles(decorate_with, model)
    with pytest.raises(AssertionError, match="freed-by-gc-only"):
        leakgate_dsl.assert_sentinels_freed(decorate_with, model)
    with pytest.raises(leakgate_dsl.MeasurementError, match="made no sentinel"):
        leakgate_dsl.assert_sentinels_freed(lambda: None)


def test_with_statement_region_and_gc_state_restored(model):
    gc.enable()
    with leakgate_dsl.region("decorate") as measured:
        assert not gc.isenabled()
        decorate_with(model)
    assert gc.isenabled()
    assert measured.result.check("frame-cycle").status == "fail"
    gc.disable()
    try:
        with leakgate_dsl.region():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_collection_the_body_starts_is_measured_not_refused(model, clean_model):
    def collects(dsl):
        decorate_with(dsl)
        gc.collect()

    result = leakgate_dsl.measure(collects, model)
    assert result.valid, result.error
    assert [c.culprit.function for c in result.frame_cycles] == [KERNEL]
    assert "which the program started" in result.check("frame-cycle").reason, result.text
    # The body's collection freed the sentinel its frame cycle pinned: pinned until a collection.
    assert [v.verdict for v in result.sentinels] == ["freed-by-gc-only"]
    assert "freed by a collection the program started" in result.check("sentinels").reason
    leakgate_dsl.assert_clean(leakgate_dsl.measure(collects, clean_model))


def test_what_the_body_keeps_past_its_collection_and_drops_later_is_read():
    # The body's collection moves what it keeps to the oldest generation; a cycle dropped after it
    # is found there by the reads, which examine the whole heap from that collection on.
    def keeps_then_drops():
        kept = {"payload": bytearray(MIB)}
        kept["self"] = kept
        tensor = leakgate_dsl.sentinel("tensor", MIB)
        holder = [tensor]
        holder.append(holder)
        gc.collect()
        del kept, tensor, holder

    result = leakgate_dsl.measure(keeps_then_drops)
    assert result.valid, result.error
    assert [v.verdict for v in result.sentinels] == ["freed-by-gc-only"]
    assert "found by" not in result.check("sentinels").reason


def test_garbage_from_before_the_region_is_not_the_bodys():
    class Node:
        pass

    gc.disable()
    try:
        old = Node()
        old.me = old
        old.frame = sys._getframe()
        gc.collect()  # alive: in the oldest generation
        del old       # garbage there, before the region
        result = leakgate_dsl.measure(gc.collect)
    finally:
        gc.collect()
        gc.enable()
    leakgate_dsl.assert_clean(result)


def test_a_collection_whose_garbage_a_hook_hides_makes_the_result_invalid(clean_model):
    # A gc.callbacks hook of the program's, run before leakgate's, empties gc.garbage: what that
    # collection found cannot be read, so the measurement is not made.
    def hides(phase, info):
        if phase == "stop":
            gc.garbage.clear()

    def collects_a_cycle():
        decorate_with(clean_model)
        cycle = []
        cycle.append(cycle)
        del cycle
        gc.collect()

    gc.callbacks.insert(0, hides)
    try:
        result = leakgate_dsl.measure(collects_a_cycle)
    finally:
        gc.callbacks.remove(hides)
    assert not result.valid
    assert "leakgate did not start" in result.error, result.error
    assert all(c.status == "error" for c in result.checks if c.name != "device-memory")
    with pytest.raises(leakgate_dsl.MeasurementError, match="could not measure"):
        leakgate_dsl.assert_clean(result)


def test_gc_enable_in_the_body_makes_it_invalid():
    result = leakgate_dsl.measure(gc.enable)
    assert not result.valid and "re-enabled" in result.error


def test_a_region_that_raised_propagates_and_measures_nothing():
    region = leakgate_dsl.region("raises")
    with pytest.raises(ZeroDivisionError):
        with region:
            1 / 0
    assert not region.result.valid
    assert "ZeroDivisionError" in region.result.error


def test_a_region_entered_twice_is_a_clear_error():
    region = leakgate_dsl.region("once")
    with region:
        with pytest.raises(RuntimeError, match="already active"):
            region.__enter__()
    with pytest.raises(RuntimeError, match="already measured"):
        with region:
            pass
    with leakgate_dsl.region("after"):  # the errors left nothing behind
        pass


def test_an_inner_leak_fails_the_inner_region_and_the_outer_one(model):
    # GIVEN a region inside another, WHEN the inner body leaves the model's frame cycle with a
    # sentinel in it, THEN the inner region finds it, and so does the outer one, naming the inner:
    # the inner's reads freed that garbage, so the outer takes over what they found.
    with leakgate_dsl.region("outer") as outer:
        inner = leakgate_dsl.measure(decorate_with, model)
    assert inner.valid, inner.error
    assert [c.culprit.function for c in inner.frame_cycles] == [KERNEL]
    assert [v.verdict for v in inner.sentinels] == ["freed-by-gc-only"]
    result = outer.result
    assert result.valid, result.error
    assert [c.culprit.function for c in result.frame_cycles] == [KERNEL]
    assert [(v.label, v.verdict) for v in result.sentinels] == [(v.label, v.verdict) for v in inner.sentinels]
    frame_cycle = result.check("frame-cycle")
    assert frame_cycle.status == "fail" and "in region `decorate_with` inside it" in frame_cycle.reason
    assert result.cyclic_garbage >= inner.cyclic_garbage > 0
    assert result.allocations >= inner.allocations
    with pytest.raises(AssertionError, match="cur_frame"):
        leakgate_dsl.assert_clean(result)


def test_an_inner_region_leaves_the_outer_bodys_garbage_to_the_outer(model, clean_model):
    # GIVEN an outer body that leaves the model's cycle before and after a clean inner region,
    # THEN the inner passes (the outer's garbage is kept alive through its reads) and the outer
    # finds both cycles as its own.
    with leakgate_dsl.region("outer") as outer:
        decorate_with(model)
        inner = leakgate_dsl.measure(decorate_with, clean_model)
        decorate_with(model)
    assert inner.valid and leakgate_dsl.violations(inner) == [], inner.text
    assert inner.cyclic_garbage == 0, inner.text
    result = outer.result
    assert result.valid, result.error
    assert len(result.sentinels) == 3, result.sentinels
    assert [v.verdict for v in result.sentinels] == ["freed-by-gc-only", "freed-by-refcount", "freed-by-gc-only"]
    assert result.check("frame-cycle").status == "fail"
    assert "inside it" not in result.check("frame-cycle").reason
    assert result.frame_cycles[0].culprit.function == KERNEL


def test_per_call_and_regions_inside_a_region():
    def clean():
        return 7 + 1

    def keeps_nothing(n):
        return [n] * 3

    with leakgate_dsl.region("outer") as outer:
        figures = leakgate_dsl.per_call(clean, calls=200, warmup=5)
        leakgate_dsl.assert_per_call(clean, calls=200, net_blocks=0, cyclic_garbage=0)
        leakgate_dsl.assert_clean(leakgate_dsl.measure(keeps_nothing, 3))
        with leakgate_dsl.region("innermost-parent") as middle:
            leakgate_dsl.measure(keeps_nothing, 4)
    assert figures.cyclic_garbage == 0 and figures.result.valid
    assert middle.result.valid and leakgate_dsl.violations(middle.result) == []
    assert outer.result.valid and leakgate_dsl.violations(outer.result) == [], outer.result.text


def test_sentinels_of_the_outer_and_of_the_inner_each_judged_where_they_belong(model):
    def make(label):
        return leakgate_dsl.sentinel(label, MIB)

    with leakgate_dsl.region("outer") as outer:
        kept_by_outer = make("outer-data")
        with leakgate_dsl.region("inner") as inner:
            kept_past_inner = make("inner-data")  # a local of this frame: alive at the inner's reads
        del kept_by_outer, kept_past_inner       # freed before the outer's reads
    assert [(v.label, v.verdict) for v in inner.result.sentinels] == [("inner-data", "never-freed")]
    assert sorted((v.label, v.verdict) for v in outer.result.sentinels) == [
        ("inner-data", "freed-by-refcount"), ("outer-data", "freed-by-refcount")]
    assert outer.result.check("sentinels").status == "pass", outer.result.text


def test_collections_in_nested_regions_are_each_regions_own(model, clean_model):
    with leakgate_dsl.region("outer") as outer:
        decorate_with(model)
        gc.collect()  # before the inner region: the outer's
        inner = leakgate_dsl.measure(decorate_with, clean_model)
        gc.collect()  # after it: the outer's too
    assert inner.valid, inner.error
    leakgate_dsl.assert_clean(inner)
    assert outer.result.valid, outer.result.error
    assert [c.culprit.function for c in outer.result.frame_cycles] == [KERNEL]
    assert "inside it" not in outer.result.check("frame-cycle").reason
    with leakgate_dsl.region("outer") as outer:
        def collects():
            decorate_with(model)
            gc.collect()
        inner = leakgate_dsl.measure(collects)
    assert inner.valid and [c.culprit.function for c in inner.frame_cycles] == [KERNEL]
    assert outer.result.valid, outer.result.error
    assert "collects` inside it" in outer.result.check("frame-cycle").reason
    with leakgate_dsl.region("outer") as outer:
        inner = leakgate_dsl.measure(gc.enable)
        gc.disable()
    assert not inner.valid and "re-enabled" in inner.error
    assert not outer.result.valid and "in region `enable` inside it" in outer.result.error


def test_what_an_inner_region_that_raised_left_is_read_by_the_outer(model):
    # The inner region measured nothing (its body raised), so it collected nothing either: the
    # cycle its body left is the outer's to find.
    with leakgate_dsl.region("outer") as outer:
        inner = leakgate_dsl.region("inner")
        with pytest.raises(ZeroDivisionError):
            with inner:
                decorate_with(model)
                1 / 0
    assert not inner.result.valid and "ZeroDivisionError" in inner.result.error
    result = outer.result
    assert result.valid, result.error
    assert [c.culprit.function for c in result.frame_cycles] == [KERNEL]
    assert [v.verdict for v in result.sentinels] == ["freed-by-gc-only"]
    assert "inside it" not in result.check("frame-cycle").reason


def test_regions_end_in_the_reverse_order_of_their_beginnings():
    outer, inner = leakgate_dsl.region("outer"), leakgate_dsl.region("inner")
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(RuntimeError, match="`inner`, begun inside it, is active"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    assert inner.result.valid and outer.result.valid
    assert not leakgate_dsl._native.region_active()


@pytest.mark.parametrize("nbytes, error, match", [
    (0, ValueError, "positive"), (-5, ValueError, "positive"), (1.5, TypeError, "int"),
    (True, TypeError, "int"),
])
def test_bad_sentinel_sizes(nbytes, error, match):
    with leakgate_dsl.region():
        with pytest.raises(error, match=match):
            leakgate_dsl.sentinel("bad", nbytes)


def test_sentinels_need_a_region():
    with pytest.raises(RuntimeError, match="no region is measuring"):
        leakgate_dsl.sentinel("outside", 1024)


def test_track_any_weakrefable_object(model):
    class Tensor:
        nbytes = 4096

    def user():
        data = leakgate_dsl.track(Tensor(), "tensor")

        @model.kernel
        def kernel():
            pass

    result = leakgate_dsl.measure(user)
    assert [(v.label, v.bytes, v.kind, v.verdict) for v in result.sentinels] == [
        ("tensor", 4096, "host", "freed-by-gc-only")]
    with leakgate_dsl.region():
        with pytest.raises(TypeError, match="cannot be weakly referenced"):
            leakgate_dsl.track(12345)


def test_device_sentinel_without_cuda_says_why():
    status = leakgate_dsl.cuda_status()
    with leakgate_dsl.region():
        if status["available"]:
            sentinel = leakgate_dsl.device_sentinel("device", MIB)
            assert sentinel.nbytes == MIB
            del sentinel
        else:
            with pytest.raises(leakgate_dsl.CudaUnavailable) as raised:
                leakgate_dsl.device_sentinel("device", MIB)
            assert str(raised.value) == status["reason"] and status["reason"]


def test_explain_gc_garbage_like_the_cli(model):
    gc.disable()
    try:
        gc.collect()

        def decorate():
            payload = bytearray(8 * MIB)

            @model.kernel
            def kernel():
                pass

        decorate()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        gc.set_debug(0)
        result = leakgate_dsl.explain(gc.garbage)
        gc.garbage.clear()
    finally:
        gc.set_debug(0)
        gc.enable()
    [cycle] = result.frame_cycles
    assert cycle.culprit.function == KERNEL and "cur_frame" in cycle.locals
    assert cycle.bytes >= 8 * MIB
    assert f"frame-cycle: local `cur_frame` of `{KERNEL}`" in result.text


def test_per_call_counts_cyclic_garbage_and_allocations():
    def leaves_a_ctypes_cycle():
        # ctypes.cast keeps its source in the result's _objects, keyed by the result's own id: the
        # launch path's cycle, one per scalar argument per launch.
        ctypes.cast(ctypes.pointer(ctypes.c_int(7)), ctypes.c_void_p)

    def clean():
        return 7 + 1

    figures = leakgate_dsl.per_call(leaves_a_ctypes_cycle, calls=500, warmup=10)
    assert figures.cyclic_garbage > 0.9 and figures.allocations > 1, figures
    assert leakgate_dsl.per_call(clean, calls=500).cyclic_garbage == 0
    leakgate_dsl.assert_per_call(clean, calls=500, cyclic_garbage=0, net_blocks=0)
    with pytest.raises(AssertionError, match="cyclic-garbage objects per call"):
        leakgate_dsl.assert_per_call(leaves_a_ctypes_cycle, calls=200, cyclic_garbage=0)
    with pytest.raises(ValueError, match="calls"):
        leakgate_dsl.per_call(clean, calls=0)


_REGISTRY = []


def _kept_before():
    _REGISTRY.append(sys._getframe())


def _kept_by_the_outer_body():
    _REGISTRY.append(sys._getframe())


def _kept_by_the_inner_body():
    _REGISTRY.append(sys._getframe())


def _culprits(result):
    return sorted({finding.culprit.function for finding in result.retained_frames})


def test_retained_frames_are_new_ones_only():
    _kept_before()  # retained before the region: not this measurement's doing
    try:
        result = leakgate_dsl.measure(_kept_by_the_inner_body)
        assert result.check("retained-frame").status == "fail"
        assert _culprits(result) == ["_kept_by_the_inner_body"], result.text
        assert "_REGISTRY" in result.retained_frames[0].summary
    finally:
        _REGISTRY.clear()
    assert leakgate_dsl.measure(lambda: None).check("retained-frame").status == "pass"


def test_a_frame_retained_inside_a_region_is_found_though_its_reads_examine_the_young_generations():
    # GIVEN a heap whose old objects the region's reads do not examine, and a frame kept before,
    # WHEN the body keeps a frame in an old list, in a new object, or through an exception's
    # traceback, THEN each is found, with what keeps it; a frame only the body's garbage kept is
    # the frame-cycle check's, not a retained one.
    old_heap = [[object()] for _ in range(20000)]
    _kept_before()
    kept_in_new = []

    def keeps_in_a_new_object():
        holder = {"frame": sys._getframe()}
        kept_in_new.append(holder)

    def keeps_a_traceback():
        try:
            raise ValueError("kept")
        except ValueError as error:
            kept_in_new.append(error)

    def leaves_its_frame_in_garbage():
        frame = sys._getframe()  # a cycle: the frame holds itself; nothing else does

    try:
        for body, route in ((_kept_by_the_inner_body, "_REGISTRY"), (keeps_in_a_new_object, "['frame']"),
                            (keeps_a_traceback, "__traceback__")):
            result = leakgate_dsl.measure(body)
            assert result.valid, result.error
            retained = result.check("retained-frame")
            assert retained.status == "fail", result.text
            assert body.__name__ in retained.reason and route in result.text, result.text
            kept_in_new.clear()
            del _REGISTRY[1:]
        result = leakgate_dsl.measure(leaves_its_frame_in_garbage)
        assert result.check("frame-cycle").status == "fail", result.text
        assert result.check("retained-frame").status == "pass", result.text
    finally:
        _REGISTRY.clear()
    del old_heap


def test_frames_retained_around_and_inside_an_inner_region_are_found_where_they_belong():
    # GIVEN a frame kept before the outer region, WHEN the outer body keeps one before and after
    # an inner region whose body keeps one, THEN the inner finds only its own (the outer body's,
    # young when it began, is left out), and the outer finds its own and the inner's, not the
    # one from before.
    _kept_before()
    try:
        with leakgate_dsl.region("outer") as outer:
            _kept_by_the_outer_body()
            inner = leakgate_dsl.measure(_kept_by_the_inner_body)
            _kept_by_the_outer_body()
        assert inner.valid and outer.result.valid, (inner.error, outer.result.error)
        assert _culprits(inner) == ["_kept_by_the_inner_body"], inner.text
        assert inner.details["earlier_retained_frames"] >= 1
        assert _culprits(outer.result) == ["_kept_by_the_inner_body", "_kept_by_the_outer_body"], outer.result.text
        assert "_kept_before" not in outer.result.text
    finally:
        _REGISTRY.clear()


def test_what_the_caller_kept_in_gc_garbage_is_put_back():
    kept = object()
    gc.garbage.append(kept)
    try:
        result = leakgate_dsl.measure(lambda: None)
        assert result.valid, result.error
        assert gc.garbage == [kept]
    finally:
        gc.garbage.clear()


@pytest.fixture
def heldlib():
    """The held-growth fixtures' library: `convert(key)` caches a 4 KiB buffer per new key and
    never evicts. Registered in sys.modules, where a library lives (and held-growth looks)."""
    name = "leakgate_test_heldlib_convert"
    module = load(FIXTURES / "scan/heldlib/convert.py", name)
    sys.modules[name] = module
    yield module
    del sys.modules[name]


def test_a_region_with_held_judges_what_the_body_left_in_a_library_cache(heldlib):
    with leakgate_dsl.region("fills the cache", held=True) as filled:
        for key in range(2000):
            heldlib.convert(key)
    held = filled.result.check("held-growth")
    assert held is not None and held.status == "fail", filled.result.text
    assert "_converted" in held.reason and "2000" in held.reason, held.reason
    with pytest.raises(AssertionError, match="held growth"):
        filled.assert_clean()

    with leakgate_dsl.region("hits the cache", held=True) as hits:  # keys it has: no growth
        for key in range(2000):
            heldlib.convert(key)
    assert hits.result.check("held-growth").status == "pass", hits.result.text

    with leakgate_dsl.region("not asked") as plain:
        for key in range(2000, 4000):
            heldlib.convert(key)
    assert plain.result.check("held-growth") is None  # off unless asked: its marks cost
    with pytest.raises(ValueError, match="held_entries"):
        leakgate_dsl.region(held_entries=0)
