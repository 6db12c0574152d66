#!/usr/bin/env python3
"""Fits the GEMM engines' tile/split-K cost model (kernels/cuda/gemm_config.cu) to measured
tactic timings: bench/conv --tactics --csv FILE writes one line per (layer, algorithm, tactic).

For each engine (f16: the tensor-core menu, f32: the FMA menu) the model estimates a
configuration's time as
    ceil(per_sm / together) * steps * max(latency, 2 * bm * bn * 32 * together / rate')
    + (splits > 1) * (launch + 2 * splits * M * N * 4 / bytes_per_cycle / sms)
with per_sm = ceil(blocks / sms), together = min(per_sm, blocks_per_sm[tile]),
steps = split depth / 32 and rate' = rate[tile] * min(1, together * warps[tile] / full_warps)
(the engine's full_warps; 0 leaves the rate as it is). Coordinate descent over latency, launch and the per-tile rates
minimizes the summed time of the configurations the model picks (each (layer, algorithm)'s
measured time of its pick) against the summed best. Prints the constants to paste into
gemm_config.cu and the regret per layer.

Usage: fit_heuristic.py CSV [CSV...] [--sms 132] [--start LATENCY,LAUNCH,RATE0,RATE1,...]
                        [--restarts N] [--seed S] [--only-tiles T,T,...]
                        [--renumber OLD:NEW,...]
--start begins the descent at those constants (e.g. gemm_config.cu's for the engine whose tile
count they match) instead of the generic starting point: the descent only ever improves on its
start, so this refits from the constants in use. --restarts N also descends from N random
starting points (random.seed(S), default 1) on a wider grid and keeps the best of all: the
coordinate descent stops in local minima. --only-tiles moves only those tiles' rates (no
restarts; give --start with the engine's constants): the Hopper tiles (f16 13-16) and the f32
engine's X3 tiles (3-5) are fitted so, the rest held, because a fit of every rate on data from
one GPU would move the tiles that the other GPUs choose among. A problem is fitted over the
tactics measured for it (a sweep without the X3 tiles leaves them out of its problems).

--renumber maps tile numbers of older sweeps onto the menu (OLD:- drops a tile the menu no longer
has).

The Hopper tiles' rates of 2026-11-27 (fifth session): --only-tiles 13,14 with --start at
gemm_config.cu's constants and 51 for both, over
bench/results/2026-11-27-h200-hopper-tiles/b-f16-n32.csv, b-f16-n1.csv and conv_mbv2pw_n1.csv with
--renumber 14:-,15:-,16:14 (that sweep's menu had 128x256 as 14 and a one-block 128x128 as 15,
dropped since, and 256x128 as 16): 13 -> 2560, 14 stays 51.
The sixth session's (2026-11-27) 64x128 and 128x64 Hopper tiles: --only-tiles 15,16 over
bench/results/2026-11-27-h200-hopper-tiles-6th/f16-n32.csv, f16-n1.csv and conv_mbv2pw_n1.csv
with --renumber 15:-,17:15,18:- (that sweep also had two 4-stage forms, as 15 and 18, dropped
since) and --start at gemm_config.cu's constants with 51 for both: 3072 and 2048.

gemm_config.cu's constants of 2026-11-27 (second session) over conv_r50_f16.csv,
conv_r50_f32.csv and conv_mbv2pw_n1.csv: f16 from --start with the previous constants (a fixed
point: the descent keeps 50, 6000, 1536, 1024, 51, 51, 1024, 51, 716.8, 51, 1024, 1536, 2048,
51, 51; mean pick / best 1.018); f32 3200, 500, 256, 256, 179.2 (1.0615), the best of 12 random
starts of an ad-hoc script, also a fixed point of --start. This script's default run (generic
start, --restarts 12) finds 2400, 500, 384, 384, 256 (1.0607), which is not yet measured in the
networks.
"""
import csv
import math
import random
import sys
from collections import defaultdict

SPLITS = [1, 2, 3, 4, 6, 8, 12, 16]
ENGINES = {
    # tile id: (bm, bn, blocks per SM from the compiler's resource report, warps)
    "f16": [(128, 128, 2, 8), (128, 64, 2, 8), (64, 128, 2, 8), (64, 64, 4, 4), (64, 32, 4, 4),
            (32, 64, 4, 4), (32, 32, 4, 4), (64, 64, 3, 4), (32, 64, 3, 4), (128, 64, 3, 4),
            (64, 128, 3, 4), (128, 128, 2, 8), (64, 128, 3, 4),
            # the Hopper tiles (wgmma, sm_90a): measured only on the H100 / H200
            (128, 128, 2, 8), (256, 128, 1, 16), (64, 128, 3, 4), (128, 64, 3, 8)],
    "f32": [(128, 128, 2, 8), (128, 64, 4, 4), (64, 64, 8, 2),
            # the X3 tiles (3xTF32 on tensor cores, sm_80+)
            (128, 128, 1, 8), (128, 64, 2, 4), (64, 64, 3, 4)],
}
FULL_WARPS = {"f16": 8, "f32": 0}  # gemm_config.cu's EngineModel::full_warps
BYTES_PER_CYCLE = 16.0


def split_depth(K, s):
    tiles = (K + 63) // 64
    return (tiles + s - 1) // s * 64


def effective(K, s):
    kps = split_depth(K, s)
    return (K + kps - 1) // kps


def cost(p, tiles, t, s, M, N, K, sms):
    bm, bn, bps, warps = tiles[t]
    blocks = math.ceil(M / bm) * math.ceil(N / bn) * s
    per_sm = math.ceil(blocks / sms)
    together = min(per_sm, bps)
    steps = split_depth(K, s) / 32.0
    rate = p["rate"][t]
    if p["full_warps"] > 0:
        rate *= min(1.0, together * warps / p["full_warps"])
    step = max(p["latency"], 2.0 * bm * bn * 32 * together / rate)
    c = math.ceil(per_sm / together) * steps * step
    if s > 1:
        c += p["launch"] + 2.0 * s * M * N * 4 / (BYTES_PER_CYCLE * sms)
    return c


def load(paths, renumber=None):
    """renumber: {old tile: new tile, or None to drop it}."""
    problems = defaultdict(dict)  # (dtype, layer, n, algo) -> {(tile, split): ms}
    dims = {}
    for path in paths:
        for r in csv.DictReader(open(path)):
            t = int(r["tactic"])
            if t == 0 or r["algo"] in ("direct", "winograd"):
                continue
            n, c, h, w, k = (int(r[x]) for x in ("n", "c", "h", "w", "k"))
            rr, ss, st, pad = (int(r[x]) for x in ("r", "s", "stride", "pad"))
            oh = (h + 2 * pad - rr) // st + 1
            ow = (w + 2 * pad - ss) // st + 1
            key = (r["dtype"], r["layer"], n, r["algo"], r["layout"])
            dims[key] = (n * oh * ow, k, c * rr * ss)
            tile = (t - 1) // 8
            if renumber and tile in renumber:
                tile = renumber[tile]
                if tile is None:
                    continue
            problems[key][(tile, SPLITS[(t - 1) % 8])] = float(r["ms"])
    return problems, dims


def score(p, tiles, probs, dims, sms):
    """Mean of pick / best over the problems (batch 1 and batch 32 weigh alike), and the summed
    times of the picks and of the best."""
    ratio = total = best = 0.0
    for key, times in probs.items():
        M, N, K = dims[key]
        pick = min(times, key=lambda ts: cost(p, tiles, ts[0], ts[1], M, N, K, sms))
        b = min(times.values())
        ratio += times[pick] / b
        total += times[pick]
        best += b
    return ratio / len(probs), total, best


def descend(p, tiles, probs, dims, sms, grid, rate_grid, rounds, only=None):
    """Coordinate descent from p over the grids; returns (score, constants). only: the tiles
    whose rates may move (the others and the latency and launch stay), or None for all."""
    cur = score(p, tiles, probs, dims, sms)[0]
    for _ in range(rounds):
        for name, values in (grid.items() if only is None else ()):
            for v in values:
                q = dict(p, **{name: v})
                s = score(q, tiles, probs, dims, sms)[0]
                if s < cur - 1e-12:
                    cur, p = s, q
        for t in range(len(tiles)):
            if only is not None and t not in only:
                continue
            for v in rate_grid:
                rates = list(p["rate"])
                rates[t] = v
                q = dict(p, rate=rates)
                s = score(q, tiles, probs, dims, sms)[0]
                if s < cur - 1e-12:
                    cur, p = s, q
    return cur, p


def main():
    opts = {"--sms", "--start", "--restarts", "--seed", "--only-tiles", "--renumber"}
    args = [a for i, a in enumerate(sys.argv[1:], 1)
            if not a.startswith("--") and sys.argv[i - 1] not in opts]
    value = lambda name, default: sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default
    sms = int(value("--sms", 132))
    restarts = int(value("--restarts", 0))
    seed = int(value("--seed", 1))
    start = None
    if "--start" in sys.argv:
        start = [float(x) for x in value("--start", "").split(",")]
    only = None
    if "--only-tiles" in sys.argv:
        only = {int(x) for x in value("--only-tiles", "").split(",")}
    renumber = None
    if "--renumber" in sys.argv:
        renumber = {}
        for pair in value("--renumber", "").split(","):
            old, new = pair.split(":")
            renumber[int(old)] = None if new == "-" else int(new)
    problems, dims = load(args, renumber)
    for engine, tiles in ENGINES.items():
        probs = {k: v for k, v in problems.items() if k[0] == engine}
        if not probs:
            continue
        fw = FULL_WARPS[engine]
        unit = 1024.0 if engine == "f16" else 256.0
        p = {"latency": 220.0, "launch": 3000.0, "full_warps": fw, "rate": [unit] * len(tiles)}
        if start and len(start) == 2 + len(tiles):
            p = {"latency": start[0], "launch": start[1], "full_warps": fw, "rate": start[2:]}
        grid = {"latency": [50, 100, 150, 220, 300, 400, 600, 800, 1200, 1600, 2400],
                "launch": [0, 500, 1000, 2000, 3000, 6000, 10000, 20000]}
        rate_grid = [x * unit for x in (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0, 1.5, 2.0, 2.5, 3.0)]
        cur, p = descend(p, tiles, probs, dims, sms, grid, rate_grid, 6, only)
        wide = {"latency": grid["latency"] + [3200], "launch": grid["launch"][:-1]}
        wide_rates = rate_grid + [4.0 * unit]
        random.seed(seed)
        for _ in range(restarts if only is None else 0):
            q = {"latency": random.choice(wide["latency"]), "launch": random.choice(wide["launch"]),
                 "full_warps": fw, "rate": [random.choice(wide_rates) for _ in tiles]}
            s, q = descend(q, tiles, probs, dims, sms, wide, wide_rates, 5)
            if s < cur - 1e-12:
                cur, p = s, q
        mean, total, best = score(p, tiles, probs, dims, sms)
        print(f"{engine}: mean pick/best {mean:.3f}; picks sum {total:.4f} ms vs best {best:.4f} ms "
              f"({total / best:.3f}x) over {len(probs)} (layer, algorithm) problems")
        print(f"  latency {p['latency']}, launch {p['launch']}, rates {[round(r, 1) for r in p['rate']]}")
        for key, times in sorted(probs.items()):
            M, N, K = dims[key]
            pick = min(times, key=lambda ts: cost(p, tiles, ts[0], ts[1], M, N, K, sms))
            b = min(times, key=times.get)
            if times[pick] > 1.15 * times[b]:
                print(f"  {key[1]:24s} N={key[2]:<3d} {key[3]:22s} pick {pick} {times[pick]*1e3:7.1f} us, "
                      f"best {b} {times[b]*1e3:7.1f} us")


if __name__ == "__main__":
    main()
