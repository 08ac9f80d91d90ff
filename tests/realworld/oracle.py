"""Plain-Python oracle for the realworld corpus.

usage: python oracle.py [--held] DRIVER [OUT.json]

Runs DRIVER as __main__ (runpy) under gc.disable(), after collecting what was garbage before it,
then Python's own exit steps (threading._shutdown, the atexit callbacks), then one collection with
gc.DEBUG_SAVEALL, and writes what gc.garbage holds as JSON: the frames (function names, whether a
frame's locals hold a payload: a bytearray or bytes of at least 1 MiB), and the bytes pinned: the
sizes of the garbage objects plus the objects they refer to that the collector does not track
(a bytearray payload is one of those), each counted once.

It also describes the cycles without a frame (for the cases of kind `cyclic-garbage`): the
strongly connected components of gc.garbage (references as gc.get_referents gives them, between
garbage objects) that have more than one object, or one that refers to itself, and hold no frame.
A component's shape is the sorted list of its objects' type names; its bytes are the sizes of
its objects and of what it keeps that is in no other component (garbage it alone refers to, the
untracked objects, an ndarray's data: an owning array's __sizeof__ counts its buffer, a view is
followed to its base), each object counted once. `cycle_leaking` is true when one shape has at
least CYCLE_INSTANCES instances or its instances pin at least CYCLE_BYTES, leakgate's default
limits (`scan --cycle-instances`, `--cycle-bytes`).

With --held (the cases of kind `held-growth`), after that collection it finds every
functools.lru_cache function alive (gc.get_objects()) and its entries (cache_info().currsize);
`held_leaking` is true when one has at least HELD_ENTRIES, leakgate's default limit (`scan
--held-entries`); `held_worst` names the largest and the bytes clearing it frees: the summed
sys.getsizeof of the tracked objects alive before cache_clear() and a collection, less after.
"""
import atexit
import gc
import json
import runpy
import sys
import threading
import types

PAYLOAD_MIN = 1 << 20
CYCLE_INSTANCES = 100
CYCLE_BYTES = 1 << 20
HELD_ENTRIES = 1000


def _run(path):
    sys.argv = [path]
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit:
        pass


def _components(garbage):
    """Tarjan's strongly connected components of the garbage graph (iterative)."""
    ids = {id(o): i for i, o in enumerate(garbage)}
    edges = []
    for o in garbage:
        edges.append([ids[id(r)] for r in gc.get_referents(o) if id(r) in ids])
    index = [-1] * len(garbage)
    low = [0] * len(garbage)
    on_stack = [False] * len(garbage)
    stack, comps, counter = [], [], 0
    for root in range(len(garbage)):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if index[w] == -1:
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                comps.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return [c for c in comps if len(c) > 1 or c[0] in edges[c[0]]]


def _type_name(o):
    t = type(o)
    return t.__qualname__ if t.__module__ == "builtins" else "%s.%s" % (t.__module__, t.__qualname__)


def _cycles(garbage):
    """{shape: [instances, bytes]} of the cycles without a frame, and the shape of the worst."""
    comps = _components(garbage)
    owner = {}
    for n, comp in enumerate(comps):
        for i in comp:
            owner[id(garbage[i])] = n
    in_garbage = {id(o) for o in garbage}
    seen = set()
    shapes = {}
    for n, comp in enumerate(comps):
        members = [garbage[i] for i in comp]
        if any(isinstance(o, types.FrameType) for o in members):
            continue
        shape = "[%s]" % ", ".join(sorted(_type_name(o) for o in members))
        total = 0
        stack = list(members)
        while stack:
            o = stack.pop()
            if id(o) in seen:
                continue
            seen.add(id(o))
            total += sys.getsizeof(o)
            refs = list(gc.get_referents(o))
            base = getattr(o, "base", None) if type(o).__name__ == "ndarray" else None
            if base is not None:
                refs.append(base)  # a view keeps its base's buffer
            for r in refs:
                if id(r) in seen or owner.get(id(r), n) != n:
                    continue
                if id(r) in in_garbage or not gc.is_tracked(r):
                    stack.append(r)
        entry = shapes.setdefault(shape, [0, 0])
        entry[0] += 1
        entry[1] += total
    return shapes


def _tracked_bytes():
    return sum(sys.getsizeof(o) for o in gc.get_objects())


def _largest_cache():
    """The lru_cache function with the most entries, and the bytes clearing it frees."""
    import functools
    lru = type(functools.lru_cache(None)(lambda: None))
    caches = [o for o in gc.get_objects() if type(o) is lru]
    if not caches:
        return None
    worst = max(caches, key=lambda c: c.cache_info().currsize)
    entries = worst.cache_info().currsize
    name = "%s.%s" % (getattr(worst, "__module__", "?"), getattr(worst, "__qualname__", "?"))
    del caches
    before = _tracked_bytes()
    worst.cache_clear()
    gc.collect()
    return {"cache": name, "entries": entries, "bytes": max(0, before - _tracked_bytes())}


def main():
    args = sys.argv[1:]
    held = "--held" in args
    args = [a for a in args if a != "--held"]
    path = args[0]
    out = args[1] if len(args) > 1 else None
    gc.collect()
    gc.disable()
    status, error = "ok", None
    try:
        _run(path)
    except BaseException as exc:  # the driver failed: report it, do not judge
        status, error = "error", "%s: %s" % (type(exc).__name__, exc)
        exc = None
    try:
        threading._shutdown()
    except Exception:
        pass
    try:
        atexit._run_exitfuncs()
    except Exception:
        pass
    sys.stdout.flush()
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    gc.set_debug(0)
    garbage = list(gc.garbage)
    gc.garbage.clear()
    frames = [o for o in garbage if isinstance(o, types.FrameType)]
    # bytes pinned by the frames: the garbage reachable from a frame, not through module
    # globals or builtins, plus the untracked objects (a bytearray payload) those refer to.
    in_garbage = {id(o) for o in garbage}
    skip = set()
    for f in frames:
        skip.add(id(f.f_globals))
        skip.add(id(f.f_builtins))
    seen = set()
    total = 0
    stack = list(frames)
    while stack:
        o = stack.pop()
        if id(o) in seen or id(o) in skip:
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        for r in gc.get_referents(o):
            if id(r) in seen or id(r) in skip:
                continue
            if id(r) in in_garbage or not gc.is_tracked(r):
                # untracked objects (a bytearray, a dict of only untracked values) are not
                # in gc.garbage; they live exactly as long as what refers to them here
                stack.append(r)
    payload_frames = []
    payload_bytes = 0
    counted = set()
    for f in frames:
        for name, v in f.f_locals.items():
            if isinstance(v, (bytearray, bytes)) and len(v) >= PAYLOAD_MIN:
                payload_frames.append("%s.%s" % (f.f_code.co_qualname, name))
                if id(v) not in counted:
                    counted.add(id(v))
                    payload_bytes += len(v)
    shapes = _cycles(garbage)
    over = {k: v for k, v in shapes.items() if v[0] >= CYCLE_INSTANCES or v[1] >= CYCLE_BYTES}
    pool = over or shapes
    worst = max(pool, key=lambda k: (pool[k][1], pool[k][0])) if pool else None
    result = {
        "status": status,
        "error": error,
        "leaking": bool(frames),
        "frames": [f.f_code.co_qualname for f in frames],
        "garbage_objects": len(garbage),
        "bytes": total,
        "payload_frames": payload_frames,
        "payload_bytes": payload_bytes,
        # cycles without a frame
        "cycle_leaking": bool(over),
        "cycle_shapes": len(shapes),
        "cycle_worst": ({"shape": worst, "instances": shapes[worst][0],
                         "bytes": shapes[worst][1]} if worst else None),
        "cycle_over": sorted(([k, v[0], v[1]] for k, v in over.items()),
                             key=lambda e: -e[2]),
    }
    if held:
        worst_cache = _largest_cache()
        result["held_worst"] = worst_cache
        result["held_leaking"] = bool(worst_cache and worst_cache["entries"] >= HELD_ENTRIES)
    text = json.dumps(result)
    if out:
        with open(out, "w") as fh:
            fh.write(text)
    else:
        print(text)
    del garbage, frames


if __name__ == "__main__":
    main()
