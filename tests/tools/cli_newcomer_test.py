#!/usr/bin/python3
"""The newcomer options of the CLIs, end to end on the CPU backend, on tiny_cnn models
jet-make-model writes (no numpy, no ONNX needed). One ctest per case:

  cli_newcomer_test.py CASE --work DIR --make JET_MAKE_MODEL --run JET_RUN --bench JET_BENCH
                       --inspect JET_INSPECT --compare JET_COMPARE --tune JET_TUNE --cuda-build 0|1

CASE: opt_equals (--opt=value on every tool), no_gpu (--device cuda without a GPU names
--device cpu), image_errors (an image for a model without preprocessing), compare (jet-compare
fp32 against fp16, --layers, exit statuses), cuda_compare (CUDA builds: CPU against CUDA; without
a usable device it reports "CUDA backend not tested here", as the kernel tests do)."""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("case")
for tool in ("work", "make", "run", "bench", "inspect", "compare", "tune"):
    parser.add_argument("--" + tool, required=True)
parser.add_argument("--cuda-build", type=int, default=0)
args = parser.parse_args()
work = os.path.join(args.work, args.case)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
EMULATOR = shlex.split(os.environ.get("JET_TEST_EMULATOR", ""))


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(cmd, expect_rc=0):
    r = subprocess.run(EMULATOR + cmd, capture_output=True, text=True, timeout=300)
    print("$", " ".join(cmd), "->", r.returncode)
    if expect_rc is not None and r.returncode != expect_rc:
        failures.append("%s: exit status %d, expected %d" % (" ".join(cmd), r.returncode, expect_rc))
        print("stdout:", r.stdout, "\nstderr:", r.stderr)
    return r


def model(name, *flags):
    path = os.path.join(work, name)
    run([args.make, "tiny_cnn", path, "--seed", "5"] + list(flags))
    return path


def output_hashes(text):
    return re.findall(r"hash ([0-9a-f]{16})", text)


def case_opt_equals():
    m = model("m.jet")
    spaced = run([args.run, m, "--device", "cpu", "--seed", "3"])
    joined = run([args.run, m, "--device=cpu", "--seed=3"])
    check(output_hashes(spaced.stdout) and output_hashes(spaced.stdout) == output_hashes(joined.stdout),
          "jet-run --seed=3 gives other outputs than --seed 3")
    other = run([args.run, m, "--device=cpu", "--seed=4"])
    check(output_hashes(other.stdout) != output_hashes(joined.stdout), "--seed=4 was ignored")
    svg = os.path.join(work, "plan.svg")
    run([args.inspect, m, "--plan-svg=" + svg])
    check(os.path.exists(svg), "jet-inspect --plan-svg=FILE wrote nothing")
    bench = run([args.bench, m, "--device=cpu", "--warmup=1", "--iterations=3"])
    check("3 runs" in bench.stdout or "iterations" in bench.stdout or bench.stdout.strip() != "", "jet-bench printed nothing")
    m2 = os.path.join(work, "m2.jet")
    run([args.make, "tiny_cnn", m2, "--seed=5"])
    check(open(m, "rb").read() == open(m2, "rb").read(), "jet-make-model --seed=5 differs from --seed 5")
    tuned = os.path.join(work, "tuned.jet")
    run([args.tune, m, "--output=" + tuned, "--device=cpu"])
    check(os.path.exists(tuned), "jet-tune --output=FILE --device=cpu wrote nothing")
    r = run([args.run, m, "--device=gpu"], expect_rc=2)
    check("--device takes cpu or cuda" in r.stderr, "a bad --device=value is not reported")


def case_no_gpu():
    m = model("m.jet")
    r = run([args.run, m, "--device", "cuda"], expect_rc=None)
    if r.returncode == 0:
        print("a CUDA device is usable here: the no-GPU message cannot be checked")
        return
    check(r.returncode == 1, "jet-run --device cuda without a GPU: exit status %d" % r.returncode)
    check("--device cpu" in r.stderr, "jet-run --device cuda without a GPU does not name --device cpu: " + r.stderr)
    want = "no CUDA device is usable here" if args.cuda_build else "this build has no CUDA backend"
    check(want in r.stderr, "the message does not say '%s': %s" % (want, r.stderr))
    r = run([args.compare, m, "--a", "cpu", "--b", "cuda"], expect_rc=1)
    check("--device cpu" in r.stderr, "jet-compare --b cuda without a GPU: " + r.stderr)


def case_image_errors():
    m = model("m.jet")
    ppm = os.path.join(work, "x.ppm")
    with open(ppm, "wb") as f:
        f.write(b"P6\n2 2\n255\n" + bytes(range(12)))
    r = run([args.run, m, ppm, "--device", "cpu"], expect_rc=1)
    check("records no preprocessing" in r.stderr and "--preprocess" in r.stderr,
          "an image for a model without preprocessing: " + r.stderr)
    r = run([args.run, m, os.path.join(work, "missing.png"), "--device", "cpu"], expect_rc=1)
    check("missing.png" in r.stderr, "a missing image is not named: " + r.stderr)
    r = run([args.run, m, "--device", "cpu", "--top-k", "0"], expect_rc=2)
    check("--top-k" in r.stderr, "--top-k 0 is not refused")
    r = run([args.run, m, "--device", "cpu", "--top-k", "3"])
    rows = re.findall(r"^\s+(\d)\. class \d+\s+\S+\s+value (\S+)", r.stdout, re.M)
    # tiny_cnn: outputs 'features' [2, 12, 5, 5] and 'probs' [2, 10] (softmax): 3 rows per image
    # and output, largest first.
    check(len(rows) == 12, "--top-k 3 printed %d rows:\n%s" % (len(rows), r.stdout))
    for i in range(0, len(rows) - 2, 3):
        values = [float(v) for _, v in rows[i:i + 3]]
        check(values == sorted(values, reverse=True), "--top-k rows not in descending order: %s" % values)
    check("top-3 of 'probs' image 1 (the values are probabilities" in r.stdout,
          "--top-k does not recognize softmax outputs as probabilities:\n" + r.stdout)
    check("the model has no labels" in r.stdout, "--top-k does not say the model has no labels")


def case_compare():
    a = model("a.jet")
    b = model("b.jet", "--f16")
    r = run([args.compare, a, b, "--layers"])
    check(re.search(r"^PASS: 2 of 2 outputs", r.stdout, re.M) is not None, "fp32 vs fp16 does not pass:\n" + r.stdout)
    layers = re.findall(r"^layer\s", r.stdout, re.M)
    check(len(layers) >= 3, "--layers reported %d layers:\n%s" % (len(layers), r.stdout))
    r = run([args.compare, a, b, "--tolerance=0"], expect_rc=1)
    check("FAIL" in r.stdout, "--tolerance 0 does not fail fp16")
    r = run([args.compare, a, a], expect_rc=2)
    check("both sides run" in r.stderr, "comparing a model with itself on one device is not refused")
    same = run([args.compare, a, model("c.jet")])  # the same model written twice: no error at all
    check(len(re.findall(r"^output\s+\[[^\]]*\]\s+0\s+0\s+0\s+ok", same.stdout, re.M)) == 2,
          "identical models show an error:\n" + same.stdout)


def case_cuda_compare():
    """CUDA builds: one model on the CPU and on CUDA, then CPU fp32 against CUDA fp16."""
    a = model("a.jet")
    r = run([args.compare, a, "--a", "cpu", "--b", "cuda", "--layers"], expect_rc=None)
    if r.returncode == 1 and "no CUDA device is usable here" in r.stderr:
        print("CUDA backend not tested here (no usable CUDA device)")
        return
    check(r.returncode == 0 and re.search(r"^PASS: 2 of 2 outputs", r.stdout, re.M) is not None,
          "cpu vs cuda (fp32) does not pass:\n" + r.stdout + r.stderr)
    check(len(re.findall(r"^layer\s", r.stdout, re.M)) >= 3, "--layers on CUDA reported no layers")
    b = model("b.jet", "--f16")
    r = run([args.compare, a, b, "--a", "cpu", "--b", "cuda", "--layers"])
    check(re.search(r"^PASS: 2 of 2 outputs", r.stdout, re.M) is not None,
          "cpu fp32 vs cuda fp16 does not pass:\n" + r.stdout)


globals()["case_" + args.case]()
if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("ok")
