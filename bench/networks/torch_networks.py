#!/usr/bin/env python3
"""PyTorch peer for bench/networks: torchvision networks on one GPU, timed the way jet-bench times
jetinfer (warm-up, then per-iteration CUDA-event GPU time and host latency).

Modes: eager, CUDA graph (torch.cuda.graphs), torch.compile(mode="reduce-overhead", which adds
CUDA graphs). f32 with TF32 off (jetinfer's f32 path does no TF32) and f16 (model.half(),
channels_last, the layout PyTorch recommends for tensor cores). Random weights (weights=None):
the time does not depend on their values. Peak memory per mode: torch.cuda.max_memory_allocated
after reset_peak_memory_stats (what PyTorch's allocator handed out; the caching allocator's
reserve and the CUDA context are not in it).

Prints one JSON object per line:
  {"peer": "torch", "network": ..., "batch": ..., "mode": ..., "dtype": ..., "median_ms": ...,
   "peak_bytes": ...}   or the same keys with "error".
Usage: torch_networks.py --networks resnet18:1,resnet50:32 [--dtypes f16,f32] [--iterations N]
                         [--warmup N] [--no-compile] [--image 224]
"""
import argparse
import json
import statistics
import sys
import time

import torch


def build(name):
    import torchvision  # the peer is torchvision's definition; missing -> an error row
    return getattr(torchvision.models, name)(weights=None)


def time_fn(fn, warmup, iterations):
    """GPU time per call (CUDA events) and host latency per call including synchronization."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    gpu_ms, host_ms = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(iterations):
        t0 = time.perf_counter()
        start.record()
        fn()
        end.record()
        end.synchronize()
        host_ms.append((time.perf_counter() - t0) * 1e3)
        gpu_ms.append(start.elapsed_time(end))
    return gpu_ms, host_ms


def emit(rec):
    rec["peer"] = "torch"
    rec["torch"] = torch.__version__
    print(json.dumps(rec), flush=True)


def report(base, mode, gpu_ms, host_ms, peak, extra=None):
    rec = dict(base, mode=mode, iterations=len(gpu_ms), median_ms=statistics.median(gpu_ms),
               min_ms=min(gpu_ms), p90_ms=sorted(gpu_ms)[int(0.9 * (len(gpu_ms) - 1))],
               host_median_ms=statistics.median(host_ms), peak_bytes=peak)
    if extra:
        rec.update(extra)
    emit(rec)


def run_one(name, batch, dtype_name, args):
    dtype = torch.float16 if dtype_name == "f16" else torch.float32
    base = {"network": name, "batch": batch, "dtype": dtype_name}
    dev = torch.device("cuda")
    try:
        model = build(name)
    except Exception as e:  # report, don't hide: the table says it is missing
        for mode in ("eager", "cuda-graph", "compile-reduce-overhead"):
            emit(dict(base, mode=mode, error="building the torchvision model: " + repr(e)[:200]))
        return
    fmt = torch.channels_last if dtype == torch.float16 else torch.contiguous_format
    model = model.eval().to(dev, dtype=dtype).to(memory_format=fmt)
    x = torch.randn(batch, 3, args.image, args.image, device=dev, dtype=dtype).to(memory_format=fmt)
    with torch.inference_mode():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        g, h = time_fn(lambda: model(x), args.warmup, args.iterations)
        report(base, "eager", g, h, torch.cuda.max_memory_allocated(), {"memory_format": str(fmt)})

        # CUDA graph of the eager model (static input / output buffers).
        torch.cuda.reset_peak_memory_stats()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = model(x)
        g, h = time_fn(graph.replay, args.warmup, args.iterations)
        report(base, "cuda-graph", g, h, torch.cuda.max_memory_allocated())
        del graph, y

    if args.no_compile:
        return
    try:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        compiled = torch.compile(model, mode="reduce-overhead")
        with torch.inference_mode():
            for _ in range(3):
                compiled(x)
            torch.cuda.synchronize()
            compile_s = time.perf_counter() - t0
            g, h = time_fn(lambda: compiled(x), args.warmup, args.iterations)
        report(base, "compile-reduce-overhead", g, h, torch.cuda.max_memory_allocated(),
               {"compile_s": round(compile_s, 1)})
    except Exception as e:
        emit(dict(base, mode="compile-reduce-overhead", error=repr(e)[:300]))
    finally:
        torch._dynamo.reset()  # the next network compiles from scratch, its caches do not pile up


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--networks", required=True, help="name:batch,... (torchvision names)")
    ap.add_argument("--dtypes", default="f16,f32")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        emit({"error": "no CUDA device"})
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    for item in args.networks.split(","):
        name, batch = item.split(":")
        for dtype_name in args.dtypes.split(","):
            run_one(name, int(batch), dtype_name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
