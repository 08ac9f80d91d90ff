"""huggingface_hub: _get_metadata_or_catch_error returns the caught HEAD error with its traceback.

https://github.com/huggingface/huggingface_hub/pull/4614 ("Don't retain caller frames when
falling back to cache after a failed HEAD call"; downstream:
https://github.com/vllm-project/vllm/pull/50341). The HEAD failure (here OfflineModeIsEnabled,
with HF_HUB_OFFLINE=1) is caught, kept in the local `head_error_call` and returned; its
traceback holds the frame whose local holds it, so hf_hub_download falling back to the cache
leaves a cycle that keeps the calling stack. Fixed in 1.27.0 (`_detach_tracebacks`).
The cache is a temporary folder made here; no network.
"""
# package: huggingface_hub
# leaking: 1.26.1
# fixed: 1.27.0
# python: 3.11+
# culprit: huggingface_hub.file_download._get_metadata_or_catch_error

import os
import shutil
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

from huggingface_hub import hf_hub_download  # noqa: E402


def make_cache():
    cache, sha = tempfile.mkdtemp(prefix="leakgate-hf-"), "a" * 40
    repo = os.path.join(cache, "models--user--repo")
    os.makedirs(os.path.join(repo, "refs"))
    os.makedirs(os.path.join(repo, "snapshots", sha))
    with open(os.path.join(repo, "refs", "main"), "w") as fh:
        fh.write(sha)
    with open(os.path.join(repo, "snapshots", sha, "config.json"), "w") as fh:
        fh.write("{}")
    return cache


def load_config(cache):
    payload = bytearray(4 << 20)
    path = hf_hub_download("user/repo", "config.json", revision="main", cache_dir=cache)
    return path, len(payload)


cache = make_cache()
try:
    load_config(cache)
finally:
    shutil.rmtree(cache, ignore_errors=True)
