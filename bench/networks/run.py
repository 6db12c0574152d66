#!/usr/bin/env python3
"""Whole networks: jetinfer (jet-bench, untuned and tuned at load) against PyTorch on the same GPU,
in one run.

Networks: ResNet-18, ResNet-50, MobileNetV2 and EfficientNet-B0 at batch 1, and ResNet-50 at batch
32, 224x224; f16 (channels-last, the CUDA default) and f32. All are the converter's zoo models
(jet-make-model, random weights; the same layers as torchvision's), made on the GPU machine, so
nothing needs to be carried. With --efficientnet-testdata, EfficientNet-B0 comes instead from the
prepared real-network tests that scripts/gpu-data.sh carries
(.testdata/networks/<fp16|fp32>/efficientnet_b0_op13 or _op17/model.jet, exported at batch 2: it
is then timed, PyTorch too, at batch 2, and the report says so). jetinfer is timed as jet-bench does (CUDA-graph replay, GPU time from CUDA events): untuned
(the runtime's heuristic) and tuned (jet-bench --tune: every convolution's algorithms and tactics
measured at load). The peer is bench/networks/torch_networks.py (torchvision: eager, CUDA graph,
torch.compile(mode="reduce-overhead"), TF32 off).

Per network: GPU time, kernels launched per inference (the captured graph's kernel nodes), device
memory (the runtime's weights + arena + workspace, cudaMemGetInfo before the load and after the
first run, PyTorch's peak), cold load time to the first result (CUDA context creation excluded)
and the tuning time; then where the cold load's time goes (Engine::load's phases, the first run
against a second one) and tuning's own check (the whole network tuned against untuned at load).

Usage (gpu-check.sh's bench step):
  run.py BUILD_DIR OUT_MARKDOWN [--iterations N] [--warmup N] [--networks a,b] [--dtypes f16,f32]
         [--no-torch] [--no-compile] [--efficientnet-testdata] [--testdata DIR]
  networks: resnet18, resnet50, mobilenet_v2, efficientnet_b0, resnet50_b32 (default: all)
torch.compile of every network and dtype takes minutes: split the work over calls with
--networks / --dtypes. Writes a markdown report and prints one summary line per network last.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# name -> (zoo model for jet-make-model or None, batch, torchvision name)
NETWORKS = {
    "resnet18": ("resnet18", 1, "resnet18"),
    "resnet50": ("resnet50", 1, "resnet50"),
    "mobilenet_v2": ("mobilenet_v2", 1, "mobilenet_v2"),
    "efficientnet_b0": ("efficientnet_b0", 1, "efficientnet_b0"),
    "resnet50_b32": ("resnet50", 32, "resnet50"),
}
ORDER = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "resnet50_b32"]


def fmt(v, digits=3):
    return "n/a" if v is None else ("%.*f" % (digits, v))


def mib(v):
    return "n/a" if v is None else "%.1f" % (v / 2**20)


def graph_ms(j):
    """The graph phase's median GPU time (the plain phase's without a graph; host latency where
    there is no GPU time, i.e. a CPU run of this script's logic)."""
    for phase in (j.get("graph"), j.get("plain")):
        if phase and phase.get("ran"):
            times = phase.get("gpu_compute_ms") or phase.get("latency_ms")
            return times["median"] if times else None
    return None


def jet_model(args, tmp, name, dtype):
    """(path of the .jet file, its batch, None) for a network and dtype, or (None, None, reason)."""
    zoo, batch, _ = NETWORKS[name]
    tools = os.path.join(args.build, "tools")
    if name == "efficientnet_b0" and args.efficientnet_testdata:
        # The real-network tests' conversions (jet-convert --precision fp16 / fp32; fp16 is
        # channels-last), exported at opsets 13 and 17: either will do.
        precision = "fp16" if dtype == "f16" else "fp32"
        paths = [os.path.join(args.testdata, precision, f"{name}_op{opset}", "model.jet") for opset in (13, 17)]
        path = next((p for p in paths if os.path.exists(p)), None)
        if path is None:
            return None, None, (f"{os.path.join(args.testdata, precision, name)}_op13|_op17/model.jet absent "
                                "(scripts/gpu-data.sh prepares it: carry .testdata/networks)")
        r = subprocess.run([os.path.join(tools, "jet-inspect"), path, "--json"], capture_output=True, text=True)
        if r.returncode != 0:
            return None, None, "jet-inspect failed: " + (r.stderr or r.stdout).strip()[-300:]
        return path, json.loads(r.stdout)["inputs"][0]["shape"][0], None
    path = os.path.join(tmp, f"{name}-{dtype}.jet")
    flags = ["--f16", "--channels-last"] if dtype == "f16" else []
    if batch != 1:
        flags += ["--batch", str(batch)]
    r = subprocess.run([os.path.join(tools, "jet-make-model"), zoo, path] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        return None, None, "jet-make-model failed: " + (r.stderr or r.stdout).strip()[-300:]
    return path, batch, None


def jet_bench(args, path, tune):
    cmd = [os.path.join(args.build, "tools", "jet-bench"), path, "--device", "cuda", "--warmup",
           str(args.warmup), "--iterations", str(args.iterations), "--json"]
    if tune:
        cmd.append("--tune")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip()[-400:]}
    return json.loads(r.stdout)


def run_torch(args, batches):
    """The PyTorch rows for the networks in `batches` (name -> the batch jetinfer ran)."""
    if args.no_torch or not batches:
        return []
    here = os.path.dirname(os.path.abspath(__file__))
    spec = ",".join(f"{NETWORKS[n][2]}:{b}" for n, b in batches.items())
    cmd = [sys.executable, os.path.join(here, "torch_networks.py"), "--networks", spec, "--dtypes",
           ",".join(args.dtypes), "--iterations", str(args.iterations), "--warmup", str(args.warmup)]
    if args.no_compile:
        cmd.append("--no-compile")
    rows = []
    try:
        # torch.compile takes up to a minute per network and dtype.
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + 90 * len(batches) * len(args.dtypes))
        rows = [json.loads(l) for l in r.stdout.splitlines() if l.strip().startswith("{")]
        if r.returncode != 0:
            rows.append({"error": f"torch script exit {r.returncode}: {r.stderr[-500:]}"})
    except Exception as e:
        rows.append({"error": repr(e)[:300]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("out_md")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--networks", default=",".join(ORDER))
    ap.add_argument("--dtypes", default="f16,f32")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--efficientnet-testdata", action="store_true",
                    help="EfficientNet-B0 from the prepared real-network tests instead of the zoo")
    ap.add_argument("--testdata", default=os.path.join(".testdata", "networks"))
    args = ap.parse_args()
    names = [n for n in args.networks.split(",") if n]
    args.dtypes = [d for d in args.dtypes.split(",") if d]
    unknown = [n for n in names if n not in NETWORKS] + [d for d in args.dtypes if d not in ("f16", "f32")]
    if unknown:
        print("run.py: unknown network or dtype: " + ", ".join(unknown), file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="jet-networks-")

    jet, skipped, batches = {}, {}, {}
    for name in names:
        for dtype in args.dtypes:
            path, batch, why = jet_model(args, tmp, name, dtype)
            if path is None:
                skipped[(name, dtype)] = why
                print(f"skipped {name} {dtype}: {why}", flush=True)
                continue
            batches[name] = batch
            jet[(name, dtype)] = (jet_bench(args, path, False), jet_bench(args, path, True))
            print(f"jet-bench {name} {dtype} (batch {batch}): done", flush=True)
    torch_rows = run_torch(args, batches)

    def torch_row(name, dtype, mode):
        tv, batch = NETWORKS[name][2], batches.get(name)
        for t in torch_rows:
            if (t.get("network"), t.get("batch"), t.get("dtype"), t.get("mode")) == (tv, batch, dtype, mode):
                return t
        return {}

    lines = ["# Networks: jetinfer vs PyTorch (same GPU, same run)", ""]
    lines.append(f"224x224. GPU time per inference, median of {args.iterations} iterations after {args.warmup} "
                 "warm-up (CUDA events), ms. jetinfer: CUDA-graph replay (jet-bench), untuned (heuristic) and "
                 "tuned at load (`jet-bench --tune`). PyTorch: eager, CUDA graph, torch.compile(mode=\"reduce-overhead\"); "
                 "TF32 off; f16 in channels_last. ratio = torch.compile time / jetinfer tuned time (> 1: jetinfer faster).")
    lines.append("")
    lines.append("Memory: jetinfer's own accounting (weights + arena + workspace), the cudaMemGetInfo difference from "
                 "before the load to after the first run (includes allocator granularity and module loading), and "
                 "PyTorch's peak (torch.cuda.max_memory_allocated, per mode). Cold load: Engine::load + context + "
                 "first run, CUDA context creation excluded (untuned; the tuned figure includes the tuning time).")
    lines.append("")
    lines.append("| network | batch | dtype | jet untuned | jet tuned | torch eager | torch graph | torch.compile | ratio | "
                 "kernels (untuned / tuned) | jet memory MiB (runtime / MemGetInfo) | torch peak MiB (compile) | "
                 "cold load ms | tuning ms |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    errors = []
    for name in names:
        parts = []
        for dtype in args.dtypes:
            if (name, dtype) in skipped:
                lines.append(f"| {name} | {NETWORKS[name][1]} | {dtype} | skipped: {skipped[(name, dtype)]} |||||||||||")
                parts.append(f"{dtype} skipped")
                continue
            untuned, tuned = jet[(name, dtype)]
            for label, j in (("untuned", untuned), ("tuned", tuned)):
                if "error" in j:
                    errors.append(f"jet-bench {name} {dtype} {label}: {j['error']}")
            u, t = graph_ms(untuned), graph_ms(tuned)
            te, tg, tc = (torch_row(name, dtype, m) for m in ("eager", "cuda-graph", "compile-reduce-overhead"))
            for row in (te, tg, tc):
                if "error" in row:
                    errors.append(f"torch {name} {dtype} {row.get('mode')}: {row['error']}")
            compile_ms = tc.get("median_ms")
            ratio = compile_ms / t if compile_ms and t else None
            mem = untuned.get("memory", {})
            kern = f"{untuned.get('kernels_per_inference', 'n/a')} / {tuned.get('kernels_per_inference', 'n/a')}"
            cold = untuned.get("cold_load_ms", {}).get("total")
            tuning = tuned.get("tuning", {}).get("tuning_ms")
            lines.append(
                f"| {name} | {batches[name]} | {dtype} | {fmt(u)} | {fmt(t)} | {fmt(te.get('median_ms'))} | {fmt(tg.get('median_ms'))} | "
                f"{fmt(compile_ms)} | {fmt(ratio, 2)}x | {kern} | {mib(mem.get('runtime_total_bytes'))} / "
                f"{mib(mem.get('device_used_delta'))} | {mib(tc.get('peak_bytes'))} | {fmt(cold, 1)} | {fmt(tuning, 0)} |")
            parts.append(f"{dtype} {fmt(t)} ms tuned ({fmt(u)} untuned) vs compile {fmt(compile_ms)} ms "
                         f"({fmt(ratio, 2)}x), {tuned.get('kernels_per_inference', 'n/a')} kernels, "
                         f"{mib(mem.get('runtime_total_bytes'))} MiB, cold {fmt(cold, 1)} ms, tuning {fmt(tuning, 0)} ms")
        batch_note = f" (batch {batches[name]})" if name in batches and batches[name] != NETWORKS[name][1] else ""
        summary.append(f"{name}{batch_note}: " + "; ".join(parts))
    lines.append("")
    lines.append("## Where the time goes at load, and tuning's own check")
    lines.append("")
    lines.append("Cold load (untuned run): Engine::load's phases, then context, input upload and first run; "
                 "'2nd run' is a run right after the first (first - 2nd: what first launches cost, e.g. "
                 "lazy module loading). Tuning check (tuned run): the whole network at load with the tuned "
                 "and the untuned choices (ms), and how many convolutions tuning changed (0: untuned kept).")
    lines.append("")
    lines.append("| network | dtype | cold load ms | load phases (ms) | context | inputs | first run | 2nd run | "
                 "tuning check tuned / untuned ms | convs changed |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for (name, dtype), (untuned, tuned) in jet.items():
        c = untuned.get("cold_load_ms", {})
        phases = "; ".join(f"{p['phase']} {p['ms']:.1f}" for p in c.get("load_phases", []))
        tn = tuned.get("tuning", {})
        lines.append(f"| {name} | {dtype} | {fmt(c.get('total'), 1)} | {phases or 'n/a'} | {fmt(c.get('context'), 1)} | "
                     f"{fmt(c.get('inputs'), 1)} | {fmt(c.get('first_run'), 1)} | {fmt(c.get('second_run'), 1)} | "
                     f"{fmt(tn.get('network_ms_tuned'))} / {fmt(tn.get('network_ms_untuned'))} | "
                     f"{tn.get('convs_changed', 'n/a')} |")
    lines.append("")
    if errors:
        lines.append("Errors:")
        lines.append("")
        lines += [f"- {e}" for e in errors]
        lines.append("")
    lines.append("## Raw")
    lines.append("")
    lines.append("```")
    for (name, dtype), (untuned, tuned) in jet.items():
        lines.append(f"jet-bench {name} {dtype} untuned: " + json.dumps(untuned))
        lines.append(f"jet-bench {name} {dtype} tuned: " + json.dumps(tuned))
    for t in torch_rows:
        lines.append("torch: " + json.dumps(t))
    lines.append("```")
    with open(args.out_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    for e in errors:
        print("error: " + e)
    print("== summary ==")
    for s in summary:  # last: gpu-check pastes the lines after the marker
        print(s)
    return 1 if any(k.startswith("jet-bench") for k in errors) else 0


if __name__ == "__main__":
    sys.exit(main())
