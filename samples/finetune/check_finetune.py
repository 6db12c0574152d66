#!/usr/bin/python3
"""ctest samples.finetune: prepares (prepare.py: PyTorch pretraining on 8 Fashion-MNIST classes,
export, jet-convert; cached in --data), runs the finetune sample on the CPU and checks that it did
what it claims: the two new classes go from never predicted to at least 60% test accuracy, the
eight old ones lose at most 10 points, the loss curve is written. Exits 77 (skipped, saying
why) when prepare.py does (no python3-torch or no dataset-fashion-mnist).

  /usr/bin/python3 check_finetune.py --convert jet-convert --finetune finetune --data DIR [--device cuda]
  python3 check_finetune.py --prepared --finetune finetune --data DIR --device cuda
      on the GPU machine, which has no numpy or dataset: DIR was prepared on the workstation
      (and torch_step.py put PyTorch's GPU time in it)
"""
import argparse
import os
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--convert")
    ap.add_argument("--prepared", action="store_true", help="DIR is prepared: do not run prepare.py")
    ap.add_argument("--finetune", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if args.prepared:
        if not os.path.exists(os.path.join(args.data, "pretrained.jet")):
            sys.exit("check_finetune: --prepared, but %s has no pretrained.jet" % args.data)
    elif not args.convert:
        sys.exit("check_finetune: --convert is needed to prepare the data (or --prepared)")
    else:
        prep = subprocess.run([sys.executable, os.path.join(here, "prepare.py"), "--convert", args.convert,
                               "--out", args.data])
        if prep.returncode == 77:
            sys.exit(77)
        if prep.returncode != 0:
            sys.exit("check_finetune: prepare.py failed")
    svg = os.path.join(args.data, "loss_curve.check.svg")
    if os.path.exists(svg):
        os.remove(svg)
    run = subprocess.run([args.finetune, "--data", args.data, "--device", args.device, "--svg", svg],
                         capture_output=True, text=True)
    print(run.stdout)
    if run.returncode == 77 or "no CUDA device" in run.stderr:
        print("check_finetune: skipped: %s" % run.stderr.strip())
        sys.exit(77)
    if run.returncode != 0:
        sys.exit("check_finetune: finetune failed: %s" % run.stderr)
    m = re.search(r"old classes 0-7: ([\d.]+)% -> ([\d.]+)%; new classes 8-9: ([\d.]+)% -> ([\d.]+)%",
                  run.stdout)
    if not m:
        sys.exit("check_finetune: no accuracy summary in the output")
    old_before, old_after, new_before, new_after = (float(v) for v in m.groups())
    problems = []
    if new_before > 5:
        problems.append("the new classes were predicted before fine-tuning (%.1f%%)" % new_before)
    if new_after < 60:
        problems.append("the new classes reach only %.1f%% (at least 60%% expected)" % new_after)
    if old_after < old_before - 10:
        problems.append("the old classes fell from %.1f%% to %.1f%%" % (old_before, old_after))
    if not os.path.exists(svg) or "<polyline" not in open(svg).read():
        problems.append("no loss curve in %s" % svg)
    if problems:
        sys.exit("check_finetune: " + "; ".join(problems))
    print("check_finetune: new classes %.1f%% -> %.1f%%, old classes %.1f%% -> %.1f%%"
          % (new_before, new_after, old_before, old_after))


if __name__ == "__main__":
    main()
