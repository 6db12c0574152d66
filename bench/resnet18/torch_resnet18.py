#!/usr/bin/env python3
"""PyTorch peer for bench/resnet18: torchvision ResNet-18 at batch 1 on one GPU, timed the way
jet-bench times jetinfer (warm-up, then per-iteration CUDA-event GPU time and host latency).

Modes: eager, CUDA graph (torch.cuda.graphs), torch.compile (mode="reduce-overhead", which adds
CUDA graphs). fp32 (TF32 off, as jetinfer's fp32 path does no TF32) and fp16 (model.half()).
channels_last memory format for the fp16 runs, the layout PyTorch recommends for tensor cores.

Prints one JSON object per line: {"peer": "torch", "mode": ..., "dtype": ..., "median_ms": ...}.
Usage: python3 torch_resnet18.py [--iterations N] [--warmup N] [--no-compile] [--image 224]
"""
import argparse
import json
import statistics
import sys
import time

import torch


def resnet18():
    try:
        import torchvision
        return torchvision.models.resnet18(weights=None), "torchvision"
    except Exception:  # torchvision missing: the same architecture, written out
        return _resnet18_plain(), "plain-torch (torchvision not installed)"


def _resnet18_plain():
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + idt)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers)


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


def report(mode, dtype, gpu_ms, host_ms, source, extra=None):
    rec = {"peer": "torch", "torch": torch.__version__, "model": source, "mode": mode,
           "dtype": dtype, "iterations": len(gpu_ms),
           "median_ms": statistics.median(gpu_ms), "min_ms": min(gpu_ms),
           "p90_ms": sorted(gpu_ms)[int(0.9 * (len(gpu_ms) - 1))],
           "host_median_ms": statistics.median(host_ms)}
    if extra:
        rec.update(extra)
    print(json.dumps(rec), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print(json.dumps({"peer": "torch", "error": "no CUDA device"}))
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")

    for dtype_name, dtype in (("f32", torch.float32), ("f16", torch.float16)):
        model, source = resnet18()
        model = model.eval().to(dev, dtype=dtype)
        fmt = torch.channels_last if dtype == torch.float16 else torch.contiguous_format
        model = model.to(memory_format=fmt)
        x = torch.randn(1, 3, args.image, args.image, device=dev, dtype=dtype).to(memory_format=fmt)
        with torch.inference_mode():
            g, h = time_fn(lambda: model(x), args.warmup, args.iterations)
            report("eager", dtype_name, g, h, source, {"memory_format": str(fmt)})

            # CUDA graph of the eager model (static input / output buffers).
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
            report("cuda-graph", dtype_name, g, h, source)
            del graph, y

        if not args.no_compile:
            try:
                t0 = time.perf_counter()
                compiled = torch.compile(model, mode="reduce-overhead")
                with torch.inference_mode():
                    for _ in range(3):
                        compiled(x)
                    torch.cuda.synchronize()
                    compile_s = time.perf_counter() - t0
                    g, h = time_fn(lambda: compiled(x), args.warmup, args.iterations)
                report("compile-reduce-overhead", dtype_name, g, h, source,
                       {"compile_s": round(compile_s, 1)})
            except Exception as e:  # report, don't hide: the comparison table says it is missing
                print(json.dumps({"peer": "torch", "mode": "compile-reduce-overhead",
                                  "dtype": dtype_name, "error": repr(e)[:300]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
