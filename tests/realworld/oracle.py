"""Plain-Python oracle for the realworld corpus.

usage: python oracle.py DRIVER [OUT.json]

Runs DRIVER as __main__ (runpy) under gc.disable(), after collecting what was garbage before it,
then Python's own exit steps (threading._shutdown, the atexit callbacks), then one collection with
gc.DEBUG_SAVEALL, and writes what gc.garbage holds as JSON: the frames (function names, whether a
frame's locals hold a payload: a bytearray or bytes of at least 1 MiB), and the bytes pinned: the
sizes of the garbage objects plus the objects they refer to that the collector does not track
(a bytearray payload is one of those), each counted once.
"""
import atexit
import gc
import json
import runpy
import sys
import threading
import types

PAYLOAD_MIN = 1 << 20


def _run(path):
    sys.argv = [path]
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit:
        pass


def main():
    path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else None
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
    result = {
        "status": status,
        "error": error,
        "leaking": bool(frames),
        "frames": [f.f_code.co_qualname for f in frames],
        "garbage_objects": len(garbage),
        "bytes": total,
        "payload_frames": payload_frames,
        "payload_bytes": payload_bytes,
    }
    text = json.dumps(result)
    if out:
        with open(out, "w") as fh:
            fh.write(text)
    else:
        print(text)
    del garbage, frames


if __name__ == "__main__":
    main()
