import csv, sys, math, collections
def load(p):
    best = {}; heur = {}
    for r in csv.DictReader(open(p)):
        k = (r['layer'], r['n']); ms = float(r['ms'])
        if ms <= 0: continue
        best[k] = min(best.get(k, 1e9), ms)
        if r['tactic'] == '0' and r['algo'] == r['heuristic_algo']: heur[k] = ms
    return best, heur
a, ha = load(sys.argv[1]); b, hb = load(sys.argv[2])
for n in ['1', '32']:
    ks = [k for k in a if k[1] == n and k in b]
    g = math.exp(sum(math.log(a[k] / b[k]) for k in ks) / len(ks))
    print(f"N={n}: best A/B time ratio geomean {g:.3f} (>1: B faster); sums A {sum(a[k] for k in ks)*1e3:.1f} B {sum(b[k] for k in ks)*1e3:.1f} us")
for n in ['1', '32']:
    for k in sorted([k for k in a if k[1] == n and k in b], key=lambda k: a[k] / b[k]):
        print(f"   {k[0]:<24} N={n:<3} A {a[k]*1e3:7.1f}  B {b[k]*1e3:7.1f}  {a[k]/b[k]:.3f}")
