"""huggingface_hub: hf_raise_for_status binds the refined error to a local before raising it.

https://github.com/huggingface/huggingface_hub/pull/4092 (first attempt:
https://github.com/huggingface/huggingface_hub/pull/4084; downstream report:
https://github.com/vllm-project/vllm/issues/38384). In 1.6.0 to 1.10.1 `entry_err = _format(...)`,
then `raise entry_err from e`: the raised error's traceback holds hf_raise_for_status's frame,
whose local `entry_err` holds the error; the callers' frames stay alive through f_back.
Fixed in 1.10.2. No network: the 404 response is built locally.
"""
# package: huggingface_hub
# leaking: 1.10.1
# fixed: 1.10.2
# python: 3.11+
# culprit: huggingface_hub.utils._http.hf_raise_for_status

import httpx
from huggingface_hub.utils import hf_raise_for_status


def fetch_weights():
    payload = bytearray(4 << 20)
    request = httpx.Request("GET", "https://huggingface.co/gpt2/resolve/main/nope.bin")
    response = httpx.Response(404, headers={"X-Error-Code": "EntryNotFound"}, request=request)
    try:
        hf_raise_for_status(response)
    except Exception:
        pass
    return len(payload)


fetch_weights()
