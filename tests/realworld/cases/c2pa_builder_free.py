"""c2pa-python: closing a Builder leaves a ctypes pointer in a cycle (ctypes.cast).

https://github.com/contentauth/c2pa-python/pull/283 ("fix: Avoid object cycles to relieve gc
pressure", commit b681ba6). In 0.32.14 `ManagedResource._free_native_ptr` frees the native
handle with `_lib.c2pa_free(ctypes.cast(ptr, ctypes.c_void_p))`; ctypes.cast stores its source
in the source's own `_objects` dict (https://bugs.python.org/issue12836), so the `LP_C2paBuilder`
pointer and that dict form a cycle with no frame, one per Builder (Reader, Context, Stream and
Signer are freed the same way). 0.34.0 passes the pointer to c2pa_free directly (the next
release on PyPI; 0.33.0 was tagged but not published). The driver builds manifests in a loop
with the public Builder, as the PR's memory scenarios do.
"""
# package: c2pa-python
# leaking: 0.32.14
# fixed: 0.34.0
# python: 3.11
# kind: cyclic-garbage
# culprit: c2pa.c2pa.ManagedResource._free_native_ptr

import io
import json

import c2pa

MANIFEST = {
    "claim_generator_info": [{"name": "leakgate-corpus", "version": "0.1"}],
    "title": "photo.jpg",
    "format": "image/jpeg",
    "assertions": [],
}


def archive_manifest():
    with c2pa.Builder(json.dumps(MANIFEST)) as builder:
        archive = io.BytesIO()
        builder.to_archive(archive)
        return len(archive.getvalue())


for _ in range(150):
    archive_manifest()
