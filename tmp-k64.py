import csv, sys, math, collections, re
csvp, logp = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(csvp)))
# cuDNN ms per (layer, n) from the log's tables
cud = {}
hdr = None
for l in open(logp):
    if l.startswith('| layer |'):
        hdr = [c.strip() for c in l.strip().strip('|').split('|')]
        continue
    if hdr and l.startswith('| ') and not l.startswith('|---'):
        c = [x.strip() for x in l.strip().strip('|').split('|')]
        if len(c) == len(hdr):
            d = dict(zip(hdr, c))
            try: cud[(d['layer'], d['N'])] = float(d['cuDNN ms'])
            except: pass
NEW = {7, 8, 9, 10, 11}
PAIR = {7: 0, 8: 1, 9: 2, 10: 3, 11: 5}
names = ['128x128','128x64','64x128','64x64','64x32','32x64','32x32','128x128K64','128x64K64','64x128K64','64x64K64','32x64K64']
best_old, best_new = {}, {}
tile_best = collections.defaultdict(dict)   # (layer,n) -> tile -> ms (min over split, algo)
tile_nosplit = collections.defaultdict(dict)
for r in rows:
    key = (r['layer'], r['n']); ms = float(r['ms']); t = int(r['tactic'])
    if ms <= 0: continue
    tile = (t - 1) // 8 if t > 0 and r['algo'] != 'winograd' and r['algo'] != 'direct' else None
    if tile is None or tile not in NEW:
        best_old[key] = min(best_old.get(key, 1e9), ms)
    best_new[key] = min(best_new.get(key, 1e9), ms)
    if tile is not None:
        tile_best[key][tile] = min(tile_best[key].get(tile, 1e9), ms)
        if (t - 1) % 8 == 0: tile_nosplit[key][tile] = min(tile_nosplit[key].get(tile, 1e9), ms)
for n in sorted({k[1] for k in best_new}, key=int):
    ks = [k for k in best_new if k[1] == n and k in cud]
    g = lambda d: math.exp(sum(math.log(cud[k] / d[k]) for k in ks) / len(ks))
    print(f"N={n}: layers {len(ks)}  geomean vs cuDNN old-menu {g(best_old):.3f}  with K64 {g(best_new):.3f}  "
          f"sum old {sum(best_old[k] for k in ks):.4f} new {sum(best_new[k] for k in ks):.4f} cuDNN {sum(cud[k] for k in ks):.4f} ms")
    for nt, ot in PAIR.items():
        rs = [tile_best[k][nt] / tile_best[k][ot] for k in ks if nt in tile_best[k] and ot in tile_best[k]]
        rs1 = [tile_nosplit[k][nt] / tile_nosplit[k][ot] for k in ks if nt in tile_nosplit[k] and ot in tile_nosplit[k]]
        wins = sum(1 for k in ks if best_new[k] < best_old[k] and min(tile_best[k].items(), key=lambda x: x[1])[0] == nt)
        if rs:
            print(f"   {names[nt]:>11} / {names[ot]:<8} time ratio geomean best-split {math.exp(sum(map(math.log, rs))/len(rs)):.3f} "
                  f"no-split {math.exp(sum(map(math.log, rs1))/len(rs1)):.3f}  best-of-all on {wins} layers")
    for k in sorted(ks, key=lambda k: -cud[k])[:8]:
        bt = min(tile_best[k].items(), key=lambda x: x[1]) if tile_best[k] else (None, 0)
        print(f"   {k[0]:<24} cuDNN {cud[k]*1000:7.1f} us  old {best_old[k]*1000:7.1f}  new {best_new[k]*1000:7.1f}  best tile {names[bt[0]] if bt[0] is not None else '-'}")
