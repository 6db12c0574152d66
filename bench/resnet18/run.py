#!/usr/bin/env python3
"""ResNet-18 at batch 1: jetinfer (jet-bench) against PyTorch on the same GPU, in one run.

jetinfer's ResNet-18 is built programmatically through the converter IR (converter/zoo.cpp,
random weights, BatchNorm folded into the conv biases as the ONNX importer will do) and written
by jet-make-model in three variants: f32, f16, f16 channels-last. jet-bench times plain runs and
CUDA-graph replays (GPU compute time from CUDA events, host latency from a steady clock) and one
profiled pass. The peer is bench/resnet18/torch_resnet18.py: eager, CUDA graph, and
torch.compile(mode="reduce-overhead"), fp32 and fp16.

Usage (gpu-check.sh's bench step):  run.py BUILD_DIR OUT_MARKDOWN [--iterations N]
Writes a markdown report and prints its summary line last.
"""
import json
import os
import subprocess
import sys
import tempfile


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def median_of(phase, key):
    if not phase or not phase.get("ran"):
        return None
    return phase[key]["median"]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    build, out_md = sys.argv[1], sys.argv[2]
    iterations = 500
    if "--iterations" in sys.argv:
        iterations = int(sys.argv[sys.argv.index("--iterations") + 1])
    tools = os.path.join(build, "tools")
    here = os.path.dirname(os.path.abspath(__file__))
    tmp = tempfile.mkdtemp(prefix="jet-r18-")

    variants = [("f32", []), ("f16", ["--f16"]), ("f16-nhwc", ["--f16", "--channels-last"])]
    jet = {}
    for name, flags in variants:
        path = os.path.join(tmp, f"resnet18-{name}.jet")
        sh([os.path.join(tools, "jet-make-model"), "resnet18", path] + flags)
        r = sh([os.path.join(tools, "jet-bench"), path, "--device", "cuda", "--warmup", "100",
                "--iterations", str(iterations), "--profile", "--json"])
        jet[name] = json.loads(r.stdout)

    torch_rows = []
    try:
        r = subprocess.run(["python3", os.path.join(here, "torch_resnet18.py"),
                            "--iterations", str(iterations)],
                           capture_output=True, text=True, timeout=420)
        for line in r.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                torch_rows.append(json.loads(line))
        if r.returncode != 0:
            torch_rows.append({"error": f"torch script exit {r.returncode}: {r.stderr[-500:]}"})
    except Exception as e:
        torch_rows.append({"error": repr(e)})

    def torch_ms(mode, dtype):
        for t in torch_rows:
            if t.get("mode") == mode and t.get("dtype") == dtype and "median_ms" in t:
                return t["median_ms"]
        return None

    lines = ["# ResNet-18, batch 1, 224x224: jetinfer vs PyTorch (same GPU, same run)", ""]
    lines.append("GPU compute time per inference, median of %d iterations (CUDA events), ms." % iterations)
    lines.append("ratio = PyTorch time / jetinfer time (> 1: jetinfer faster).")
    lines.append("")
    lines.append("| jetinfer variant | plain | CUDA graph | host enqueue (plain) | torch eager | torch CUDA graph | torch.compile + graphs | vs compile |")
    lines.append("|---|---|---|---|---|---|---|---|")
    summary = []
    for name, _ in variants:
        j = jet[name]
        plain = median_of(j.get("plain"), "gpu_compute_ms")
        graph = median_of(j.get("graph"), "gpu_compute_ms")
        enq = median_of(j.get("plain"), "enqueue_ms")
        dt = "f32" if name == "f32" else "f16"
        te, tg, tc = torch_ms("eager", dt), torch_ms("cuda-graph", dt), torch_ms("compile-reduce-overhead", dt)
        best = graph if graph is not None else plain
        ratio = (tc / best) if (tc and best) else None
        fmt = lambda v: "n/a" if v is None else "%.3f" % v
        lines.append(f"| {name} | {fmt(plain)} | {fmt(graph)} | {fmt(enq)} | {fmt(te)} | {fmt(tg)} | {fmt(tc)} | {fmt(ratio)}x |")
        summary.append(f"{name} {fmt(best)} ms vs compile {fmt(tc)} ms ({fmt(ratio)}x)")
    lines.append("")
    lines.append("Goal: 1.5x faster than torch.compile + CUDA graphs at batch 1.")
    lines.append("")
    for t in torch_rows:
        if "error" in t:
            lines.append(f"- torch: {t.get('mode', '')} {t.get('dtype', '')}: ERROR {t['error']}")
    lines.append("")
    for name, _ in variants:
        prof = jet[name].get("profile")
        if not prof:
            continue
        layers = sorted(prof["layers"], key=lambda l: -l["ms"])
        lines.append(f"## Per-layer profile, {name} (total {prof['total_ms']:.3f} ms, top 12)")
        lines.append("")
        lines.append("| layer | type | ms | % |")
        lines.append("|---|---|---|---|")
        for l in layers[:12]:
            lines.append(f"| {l['name']} | {l['type']} | {l['ms']:.4f} | {l['percent']:.1f} |")
        lines.append("")
    lines.append("## Raw")
    lines.append("")
    lines.append("```")
    for name, _ in variants:
        j = dict(jet[name])
        j.pop("profile", None)
        lines.append(f"jet-bench {name}: " + json.dumps(j))
    for t in torch_rows:
        lines.append("torch: " + json.dumps(t))
    lines.append("```")
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("resnet18 b1: " + "; ".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
