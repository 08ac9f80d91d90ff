"""A CUDA graph kept by a frame cycle, with no leakgate sentinel in it (docs/notes/gpu.md, issue 41).

With torch's cudaMallocAsync backend, what a graph allocates while it is captured is an allocation
node of the graph: its memory belongs to the CUDA graph memory pool until the graph is destroyed.
`capture_step` captures a graph whose output (1 GiB) is allocated inside the capture, replays it,
and keeps its own frame in a local: under gc.disable() the graph, and the pool's memory with it,
stay until a collection. Run it under `leakgate scan`; with `--check` it prints what the driver's
graph-pool attribute (cuDeviceGetGraphMemAttribute, USED_MEM_CURRENT) and torch's counters read
after the return and after gc.collect(); with `clean` the frame is not kept.
"""
import ctypes
import gc
import os
import sys

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")
import torch  # noqa: E402


def capture_step(keep_frame):
    static_in = torch.ones(256 << 20, device="cuda")  # 1 GiB, allocated before the capture
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        static_in * 2  # warm-up, as torch's graph guide does
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = static_in * 2  # 1 GiB, allocated inside the capture: the graph's
    graph.replay()
    torch.cuda.synchronize()
    frame = sys._getframe() if keep_frame else None  # the defect: the frame in its own local
    return float(static_out[0]) + (frame is not None)


def graph_pool_used():
    driver = ctypes.CDLL("libcuda.so.1")
    used = ctypes.c_uint64()
    # CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT is 0 in cuda.h's CUgraphMem_attribute
    result = driver.cuDeviceGetGraphMemAttribute(0, 0, ctypes.byref(used))
    return used.value if result == 0 else f"CUresult {result}"


gc.disable()
capture_step(keep_frame="clean" not in sys.argv[1:])
if "--check" in sys.argv[1:]:
    def show(when):
        torch.cuda.synchronize()
        print(f"{when}: graph pool {graph_pool_used()} B, torch allocated {torch.cuda.memory_allocated()} B,"
              f" reserved {torch.cuda.memory_reserved()} B")
    show("after capture_step")
    gc.collect()
    show("after gc.collect()")
