#!/usr/bin/python3
"""The jet-* command-line tools end to end, on the CPU backend, on a model jet-make-model wrote.
One ctest per case:

  cli_test.py CASE --model M.jet --work DIR --run JET_RUN --bench JET_BENCH --inspect JET_INSPECT
              [--tune JET_TUNE] [--have-onnx 0|1]

CASE: inspect, plan_svg, bench, tune (no numpy needed); run_save, run_npy, run_pb, errors (need
numpy: Debian python3-numpy, see scripts/setup.sh); cuda_run, cuda_bench, cuda_tune (CUDA builds;
without a usable device they report "CUDA backend not tested here", as the kernel tests do)."""
import argparse
import ast
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

parser = argparse.ArgumentParser()
parser.add_argument("case")
parser.add_argument("--model", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--run", required=True)
parser.add_argument("--bench", required=True)
parser.add_argument("--inspect", required=True)
parser.add_argument("--have-onnx", type=int, default=1)
parser.add_argument("--tune", default="")  # jet-tune (the tune and cuda_tune cases)
args = parser.parse_args()

work = os.path.join(args.work, args.case)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


# Cross builds run the tools through the emulator (CMAKE_CROSSCOMPILING_EMULATOR).
EMULATOR = shlex.split(os.environ.get("JET_TEST_EMULATOR", ""))


def run(cmd, expect_rc=0):
    r = subprocess.run(EMULATOR + cmd, capture_output=True, text=True)
    print("$", " ".join(cmd), "->", r.returncode)
    if expect_rc is not None and r.returncode != expect_rc:
        failures.append(f"{' '.join(cmd)}: exit status {r.returncode}, expected {expect_rc}")
        print("FAIL: exit status", r.returncode, "\nstdout:", r.stdout, "\nstderr:", r.stderr)
    return r


def need_numpy():
    try:
        import numpy
        return numpy
    except ImportError:
        print("FAILED: /usr/bin/python3 has no numpy: run scripts/setup.sh (installs python3-numpy)")
        sys.exit(1)


def model_facts():
    r = run([args.inspect, args.model, "--json"])
    return json.loads(r.stdout)


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def case_inspect():
    r = run([args.inspect, args.model])
    for key in ["file:", "schema:", "producer:", "input:", "output:", "ops:", "parameters:", "arena:",
                "workspace:", "labels:"]:
        check(re.search(r"^" + re.escape(key), r.stdout, re.M) is not None, f"text report lacks '{key}'")
    check("planner" in r.stdout and "lower bound" in r.stdout, "text report lacks the plan line")
    facts = model_facts()
    for key in ["file_bytes", "schema_version", "producer", "inputs", "outputs", "ops_by_type", "num_ops",
                "parameter_count", "weight_bytes", "arena_bytes", "lower_bound_bytes", "arena_ratio", "planner",
                "workspace_bytes", "labels", "properties", "arena_tensors"]:
        check(key in facts, f"JSON lacks '{key}'")
    check(facts["file_bytes"] == os.path.getsize(args.model), "file_bytes is not the file's size")
    check(facts["schema_version"].startswith("1."), f"schema_version {facts['schema_version']}")
    check(sum(facts["ops_by_type"].values()) == facts["num_ops"] > 0, "ops_by_type does not add up to num_ops")
    check(len(facts["inputs"]) >= 1 and len(facts["outputs"]) >= 1, "no inputs or outputs")
    for t in facts["inputs"] + facts["outputs"]:
        check(t["dtype"] in ("f32", "f16") and len(t["shape"]) >= 1 and t["bytes"] > 0, f"tensor entry {t}")
    check(facts["parameter_count"] > 0 and facts["weight_bytes"] >= facts["parameter_count"] * 2,
          "parameter count / bytes")
    check(facts["arena_bytes"] >= facts["lower_bound_bytes"] > 0, "arena below its lower bound")
    check(abs(facts["arena_ratio"] - facts["arena_bytes"] / facts["lower_bound_bytes"]) < 1e-6, "arena_ratio")
    check(facts["properties"].get("zoo.model") == "tiny_cnn", f"properties {facts['properties']}")
    # --ops lists every op once.
    r = run([args.inspect, args.model, "--ops"])
    check(len(re.findall(r"^op +\d+:", r.stdout, re.M)) == facts["num_ops"], "--ops does not list every op")


def case_plan_svg():
    svg = os.path.join(work, "plan.svg")
    run([args.inspect, args.model, "--plan-svg", svg])
    check(os.path.exists(svg), "no SVG written")
    text = open(svg, encoding="utf-8").read()
    check(text.startswith("<svg"), "the SVG does not start with <svg")
    facts = model_facts()
    rects = text.count('<rect class="tensor"')
    check(rects == facts["arena_tensors"] > 0, f"{rects} tensor boxes for {facts['arena_tensors']} arena tensors")
    root = ET.fromstring(text)  # well-formed XML
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    check(len(titles) == rects, "a <title> per tensor box")
    for t in facts["inputs"] + facts["outputs"]:
        check(any(x.startswith(t["name"] + " (") for x in titles), f"no box titled '{t['name']}'")
    check(all("bytes" in x and "offset" in x and "steps" in x for x in titles), "tooltips lack bytes/offset/steps")


def saved_outputs(np, facts, directory):
    out = {}
    for t in facts["outputs"]:
        path = os.path.join(directory, sanitize(t["name"]) + ".npy")
        if check(os.path.exists(path), f"missing saved output {path}"):
            out[t["name"]] = np.load(path)
            check(list(out[t["name"]].shape) == t["shape"], f"{path}: shape {out[t['name']].shape} != {t['shape']}")
            check(out[t["name"]].dtype == np.dtype("<f4" if t["dtype"] == "f32" else "<f2"), f"{path}: dtype")
    return out


def case_run_save():
    np = need_numpy()
    facts = model_facts()
    a, b, c = (os.path.join(work, x) for x in ("a", "b", "c"))
    r1 = run([args.run, args.model, "--device", "cpu", "--save-outputs", a])
    r2 = run([args.run, args.model, "--device", "cpu", "--save-outputs", b])
    check("seed 1" in r1.stdout, "the default seed is not printed")
    for t in facts["outputs"]:
        check(re.search(r"^output '" + re.escape(t["name"]) + r"' .*hash [0-9a-f]{16}$", r1.stdout, re.M)
              is not None, f"no output line for '{t['name']}'")
    check(r1.stdout.count(" hash ") == len(facts["outputs"]), "one checksum line per output")
    check(r1.stdout == r2.stdout.replace(b, a), "two runs print different checksums")
    oa, ob = saved_outputs(np, facts, a), saved_outputs(np, facts, b)
    for name in oa:
        check(np.all(np.isfinite(oa[name].astype(np.float32))), f"{name}: non-finite values")
        check(np.array_equal(oa[name], ob[name]), f"{name}: two runs differ")
        check(np.any(oa[name] != 0), f"{name}: all zeros")
    # Another seed: other inputs, other outputs.
    r3 = run([args.run, args.model, "--device", "cpu", "--seed", "7", "--save-outputs", c])
    check("seed 7" in r3.stdout, "--seed is not printed")
    oc = saved_outputs(np, facts, c)
    check(any(not np.array_equal(oa[n], oc[n]) for n in oa), "--seed 7 gives the same outputs as seed 1")


def input_arrays(np, facts, dtype):
    rng = np.random.default_rng(11)
    return {t["name"]: rng.uniform(-1, 1, t["shape"]).astype(dtype) for t in facts["inputs"]}


def case_run_npy():
    np = need_numpy()
    facts = model_facts()
    inputs = input_arrays(np, facts, np.float32)
    specs32, specs64 = [], []
    for name, arr in inputs.items():
        p32 = os.path.join(work, sanitize(name) + ".f32.npy")
        p64 = os.path.join(work, sanitize(name) + ".f64.npy")
        np.save(p32, arr)
        np.save(p64, arr.astype(np.float64))  # the same values: jet-run converts f64 to f32 exactly
        specs32 += ["--input", f"{name}={p32}"]
        specs64 += ["--input", f"{name}={p64}"]
    d32, d64, drnd = (os.path.join(work, x) for x in ("f32", "f64", "rnd"))
    r = run([args.run, args.model, "--device", "cpu", "--save-outputs", d32] + specs32)
    check("random" not in r.stdout, "an input given as a file was filled randomly")
    run([args.run, args.model, "--device", "cpu", "--save-outputs", d64] + specs64)
    run([args.run, args.model, "--device", "cpu", "--save-outputs", drnd])
    o32, o64, ornd = (saved_outputs(np, facts, d) for d in (d32, d64, drnd))
    for name in o32:
        check(np.array_equal(o32[name], o64[name]), f"{name}: f64 input file gives other outputs than f32")
        check(not np.array_equal(o32[name], ornd[name]), f"{name}: the input file made no difference")


def tensor_proto_bytes(name, array):
    """An ONNX TensorProto, encoded by hand: dims (1), data_type (2, FLOAT = 1), name (8),
    raw_data (9)."""
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)
    msg = b"".join(b"\x08" + varint(d) for d in array.shape)
    msg += b"\x10" + varint(1)
    nb = name.encode()
    msg += b"\x42" + varint(len(nb)) + nb
    raw = array.astype("<f4").tobytes()
    msg += b"\x4a" + varint(len(raw)) + raw
    return msg


def case_run_pb():
    np = need_numpy()
    facts = model_facts()
    inputs = input_arrays(np, facts, np.float32)
    npy_specs, pb_specs = [], []
    for name, arr in inputs.items():
        p = os.path.join(work, sanitize(name) + ".npy")
        np.save(p, arr)
        npy_specs += ["--input", f"{name}={p}"]
        pb = os.path.join(work, sanitize(name) + ".pb")
        with open(pb, "wb") as f:
            f.write(tensor_proto_bytes(name, arr))
        pb_specs += ["--input", pb]  # no NAME=: the TensorProto's name says which input
    dnpy, dpb = os.path.join(work, "npy"), os.path.join(work, "pb")
    if not args.have_onnx:
        r = run([args.run, args.model, "--device", "cpu"] + pb_specs, expect_rc=1)
        check("built without ONNX TensorProto support (.pb); use .npy" in r.stderr, f"stderr: {r.stderr}")
        return
    run([args.run, args.model, "--device", "cpu", "--save-outputs", dnpy] + npy_specs)
    r = run([args.run, args.model, "--device", "cpu", "--save-outputs", dpb] + pb_specs)
    check("(FLOAT)" in r.stdout, "the .pb input's type is not reported")
    onpy, opb = saved_outputs(np, facts, dnpy), saved_outputs(np, facts, dpb)
    for name in onpy:
        check(np.array_equal(onpy[name], opb[name]), f"{name}: .pb input gives other outputs than .npy")


def case_bench():
    facts = model_facts()
    r = run([args.bench, args.model, "--device", "cpu", "--iterations", "5", "--warmup", "1", "--json", "--profile"])
    j = json.loads(r.stdout)
    check(j["device"] == "cpu" and j["iterations"] == 5 and j["warmup"] == 1, "run parameters")
    plain = j["plain"]
    check(plain["ran"] is True and plain["error"] is None, "plain phase did not run")
    lat = plain["latency_ms"]
    for key in ["min", "median", "p90", "p99", "max", "mean"]:
        check(key in lat and lat[key] > 0, f"latency_ms.{key}")
    check(lat["min"] <= lat["median"] <= lat["p90"] <= lat["p99"] <= lat["max"], "percentiles out of order")
    check(lat["min"] <= lat["mean"] <= lat["max"], "mean outside [min, max]")
    check(plain["throughput_per_s"] > 0 and plain["total_s"] > 0, "throughput")
    check(abs(plain["throughput_per_s"] * plain["total_s"] - 5) < 1e-6, "throughput != iterations / total_s")
    check(plain["gpu_compute_ms"] is None, "GPU compute time on CPU")
    check(j["graph"] is None, "a CUDA graph phase on CPU")
    prof = j["profile"]
    check(len(prof["layers"]) == facts["num_ops"], "profile: one row per op")
    check([l["op"] for l in prof["layers"]] == list(range(facts["num_ops"])), "profile rows in op order")
    check(abs(sum(l["percent"] for l in prof["layers"]) - 100) < 1e-3, "profile percents do not add up to 100")
    check(abs(sum(l["ms"] for l in prof["layers"]) - prof["total_ms"]) < 1e-6 * max(1, prof["total_ms"]),
          "profile total")
    types = {}
    for l in prof["layers"]:
        types[l["type"]] = types.get(l["type"], 0) + 1
    check(types == facts["ops_by_type"], f"profile op types {types} != {facts['ops_by_type']}")
    # What an inference costs besides time: on CPU every op is one routine call.
    check(j["ops"] == facts["num_ops"] and j["kernels_per_inference"] == facts["num_ops"], "CPU kernels = ops")
    check(j["graph_nodes"] is None, "graph nodes on CPU")
    mem = j["memory"]
    check(mem["weights_bytes"] > 0 and mem["arena_bytes"] > 0 and mem["workspace_bytes"] >= 0, f"memory {mem}")
    check(mem["runtime_total_bytes"] == mem["weights_bytes"] + mem["arena_bytes"] + mem["workspace_bytes"],
          "runtime_total_bytes is not the sum")
    check(mem["device_free_before"] is None and mem["device_used_delta"] is None, "cudaMemGetInfo figures on CPU")
    cold = j["cold_load_ms"]
    check(all(cold[k] >= 0 for k in ("load", "context", "first_run")) and cold["total"] > 0, f"cold load {cold}")
    check(cold["total"] + 1e-6 >= cold["load"] + cold["context"] + cold["inputs"] + cold["first_run"] - 1e-3,
          "cold load parts")
    phases = cold["load_phases"]
    check(len(phases) >= 5 and all(p["ms"] >= 0 and p["phase"] for p in phases), f"load phases {phases}")
    check(sum(p["ms"] for p in phases) <= cold["load"] + 1e-3, "the load phases are parts of the load")
    check(cold["second_run"] >= 0, "second run")
    check(j["tuning"]["tuned_at_load"] is False and j["tuning"]["tuning_ms"] == 0, "tuning without --tune")
    check(j["notes"] == [], f"notes {j['notes']}")
    r = run([args.bench, args.model, "--device", "cpu", "--iterations", "2", "--warmup", "0", "--json", "--tune"])
    jt = json.loads(r.stdout)
    check(jt["tuning"]["tuned_at_load"] is True and jt["tuning"]["tuning_ms"] > 0, "--tune: tuning figures")
    check(jt["cold_load_ms"]["load"] >= jt["tuning"]["tuning_ms"] - 1e-3, "--tune: tuning is part of the load")
    r = run([args.bench, args.model, "--device", "cpu", "--iterations", "3", "--warmup", "0", "--profile"])
    for key in ["latency", "throughput", "per-layer times", "top ", "kernels per inference: %d" % facts["num_ops"],
                "memory (runtime)", "cold load to first result"]:
        check(key in r.stdout, f"text report lacks '{key}'")


def case_errors():
    missing = os.path.join(work, "no_such_model.jet")
    for tool in (args.run, args.bench, args.inspect):
        r = run([tool, missing] + (["--device", "cpu"] if tool != args.inspect else []), expect_rc=1)
        check(missing in r.stderr and "error" in r.stderr, f"{tool}: missing model: {r.stderr}")
    data = bytearray(open(args.model, "rb").read())
    corrupt = os.path.join(work, "corrupt.jet")
    data[len(data) // 2] ^= 0x5A  # a weight or table byte: the checksum catches it
    open(corrupt, "wb").write(data)
    for tool in (args.run, args.inspect):
        r = run([tool, corrupt] + (["--device", "cpu"] if tool == args.run else []), expect_rc=1)
        check(corrupt in r.stderr, f"{tool}: corrupted model: {r.stderr}")
    truncated = os.path.join(work, "truncated.jet")
    open(truncated, "wb").write(bytes(data[:100]))
    r = run([args.inspect, truncated], expect_rc=1)
    check(truncated in r.stderr, f"truncated model: {r.stderr}")

    facts = model_facts()
    first = facts["inputs"][0]
    np = need_numpy()
    good = os.path.join(work, "good.npy")
    np.save(good, np.zeros(first["shape"], dtype=np.float32))
    r = run([args.run, args.model, "--device", "cpu", "--input", f"no_such_input={good}"], expect_rc=1)
    check("no_such_input" in r.stderr and first["name"] in r.stderr, f"wrong input name: {r.stderr}")
    bad_shape = os.path.join(work, "bad_shape.npy")
    np.save(bad_shape, np.zeros([s + 1 for s in first["shape"]], dtype=np.float32))
    r = run([args.run, args.model, "--device", "cpu", "--input", f"{first['name']}={bad_shape}"], expect_rc=1)
    check("does not match" in r.stderr and bad_shape in r.stderr, f"wrong shape: {r.stderr}")
    r = run([args.run, args.model, "--device", "cpu", "--input", f"{first['name']}={good}",
             "--input", f"{first['name']}={good}"], expect_rc=1)
    check("more than once" in r.stderr, f"duplicate input: {r.stderr}")
    fortran = os.path.join(work, "fortran.npy")
    np.save(fortran, np.asfortranarray(np.zeros(first["shape"], dtype=np.float32)))
    if len(first["shape"]) >= 2:
        r = run([args.run, args.model, "--device", "cpu", "--input", f"{first['name']}={fortran}"], expect_rc=1)
        check("Fortran" in r.stderr, f"Fortran-order input: {r.stderr}")
    txt = os.path.join(work, "input.txt")
    open(txt, "w").write("1 2 3")
    r = run([args.run, args.model, "--device", "cpu", "--input", f"{first['name']}={txt}"], expect_rc=1)
    check("unknown input file type" in r.stderr, f".txt input: {r.stderr}")
    r = run([args.run, args.model, "--device", "tpu"], expect_rc=2)
    check("--device" in r.stderr, f"bad device: {r.stderr}")
    r = run([args.bench, args.model, "--iterations", "0"], expect_rc=2)
    check("--iterations" in r.stderr, f"bad iterations: {r.stderr}")
    r = run([args.inspect, args.model, "--frobnicate"], expect_rc=2)
    check("unknown option" in r.stderr, f"unknown option: {r.stderr}")
    r = run([args.run], expect_rc=2)
    check("no model" in r.stderr, f"no model: {r.stderr}")
    blocked = os.path.join(work, "a_file")
    open(blocked, "w").write("x")
    r = run([args.run, args.model, "--device", "cpu", "--save-outputs", blocked], expect_rc=1)
    check("not a directory" in r.stderr, f"--save-outputs onto a file: {r.stderr}")


def load_own_npy(path):
    """A .npy file as jet-run writes it ('<f4' or '<f2', C order), read without numpy: the CUDA
    cases run on machines that may not have it."""
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    hlen = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = (10 if data[6] == 1 else 12)
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    code = {"<f4": "f", "<f2": "e"}[header["descr"]]
    n = 1
    for d in header["shape"]:
        n *= d
    values = struct.unpack("<%d%s" % (n, code), data[start + hlen:])
    return list(header["shape"]), values


def cuda_unavailable(r):
    if r.returncode != 0 and "no CUDA device" in r.stderr:
        print("jet tests: CUDA backend not tested here:", r.stderr.strip())
        return True
    return False


def case_cuda_run():
    variants = [("f32", [], 1e-2)]
    make_model = os.path.join(os.path.dirname(args.run), "jet-make-model")
    if os.path.exists(make_model):
        variants.append(("f16_nhwc", ["--f16", "--channels-last"], 5e-2))
    for name, flags, tol in variants:
        model = args.model
        if flags:
            model = os.path.join(work, f"tiny_cnn_{name}.jet")
            run([make_model, "tiny_cnn", model] + flags)
        dcpu, dcuda = os.path.join(work, name + "_cpu"), os.path.join(work, name + "_cuda")
        run([args.run, model, "--device", "cpu", "--save-outputs", dcpu])
        r = run([args.run, model, "--device", "cuda", "--save-outputs", dcuda], expect_rc=None)
        if cuda_unavailable(r):
            return
        check(r.returncode == 0, f"jet-run --device cuda failed: {r.stderr}")
        check("device cuda" in r.stdout, "jet-run does not say it ran on cuda")
        for f in sorted(os.listdir(dcpu)):
            shape_a, a = load_own_npy(os.path.join(dcpu, f))
            if not check(os.path.exists(os.path.join(dcuda, f)), f"{name}: no CUDA output {f}"):
                continue
            shape_b, b = load_own_npy(os.path.join(dcuda, f))
            check(shape_a == shape_b, f"{name} {f}: shapes {shape_a} vs {shape_b}")
            bad = [i for i, (x, y) in enumerate(zip(a, b)) if not abs(x - y) <= tol * (1 + abs(x))]
            check(not bad, f"{name} {f}: {len(bad)} of {len(a)} values differ beyond {tol} "
                           f"(first at {bad[:1]}: cpu {[a[i] for i in bad[:1]]}, cuda {[b[i] for i in bad[:1]]})")


def case_cuda_bench():
    facts = model_facts()
    r = run([args.bench, args.model, "--device", "cuda", "--iterations", "5", "--warmup", "2", "--json", "--profile"],
            expect_rc=None)
    if cuda_unavailable(r):
        return
    check(r.returncode == 0, f"jet-bench --device cuda failed: {r.stderr}")
    j = json.loads(r.stdout)
    plain = j["plain"]
    check(plain["ran"] is True, "plain phase did not run")
    for key in ("latency_ms", "enqueue_ms", "gpu_compute_ms"):
        check(plain[key] is not None and plain[key]["min"] > 0, f"plain {key}")
    g = j["graph"]
    check(g is not None and (g["ran"] is True or g["error"].startswith("capture failed")), f"graph phase {g}")
    if g and g["ran"]:
        check(g["gpu_compute_ms"] is not None and g["gpu_compute_ms"]["min"] > 0, "graph gpu_compute_ms")
    check(len(j["profile"]["layers"]) == facts["num_ops"], "profile: one row per op")
    r = run([args.bench, args.model, "--device", "cuda", "--iterations", "5", "--warmup", "1", "--json",
             "--batch-runs", "--no-graph"])
    j = json.loads(r.stdout)
    check(j["batch_runs"] is True and j["graph"] is None, "--batch-runs --no-graph")
    check(j["plain"]["latency_ms"] is None and j["plain"]["gpu_compute_ms"] is not None, "batched: GPU times only")


def tune_case(device):
    """jet-tune writes a model that stores its choices and the device; the same device uses them."""
    facts = model_facts()
    tuned = os.path.join(work, "tuned.jet")
    r = run([args.tune, args.model, "-o", tuned, "--device", device, "--json"], expect_rc=None)
    if device == "cuda" and cuda_unavailable(r):
        return
    check(r.returncode == 0, f"jet-tune failed: {r.stderr}")
    j = json.loads(r.stdout)
    convs = facts["ops_by_type"].get("Conv", 0)
    check(j["convolutions"] == convs and len(j["layers"]) == convs, f"one row per convolution ({convs})")
    check(j["tuning_ms"] > 0, "tuning time")
    for l in j["layers"]:
        check(l["ms"] is not None and l["ms"] >= 0 and l["tactic"] >= 0 and l["algo"], f"layer row {l}")
        if device == "cpu":
            check(l["tactic"] == 0, "the CPU backend has no tactics")
    if device == "cpu":
        check(j["device"] == {"name": "cpu", "cc_major": 0, "cc_minor": 0}, f"device {j['device']}")
    r = run([args.bench, tuned, "--device", device, "--iterations", "2", "--warmup", "0", "--json"])
    b = json.loads(r.stdout)
    check(b["tuning"]["stored_choices_used"] is True and b["notes"] == [], f"stored choices not used: {b['tuning']}")
    name = j["device"]["name"]
    check(b["tuning"]["tuned_on"] == f"{name} {j['device']['cc_major']}.{j['device']['cc_minor']}", "tuned_on")
    r = run([args.inspect, tuned, "--json"])
    ji = json.loads(r.stdout)
    check(ji["num_ops"] == facts["num_ops"], "the tuned model has the same ops")
    check(ji["tuned_on"] == j["device"], f"jet-inspect tuned_on {ji['tuned_on']}")
    check(facts["tuned_on"] is None, "the untuned model has no tuned_on")
    check("tuned on:" in run([args.inspect, tuned]).stdout, "jet-inspect's text lacks 'tuned on:'")
    r = run([args.tune, args.model, "-o", tuned, "--device", device])
    for key in ["algo#tactic", "heuristic", "tuning time:", "wrote " + tuned]:
        check(key in r.stdout, f"text report lacks '{key}'")
    # Errors: no output, a missing model (the previous tuned file stays as it was).
    before = open(tuned, "rb").read()
    run([args.tune, args.model], expect_rc=2)
    r = run([args.tune, os.path.join(work, "missing.jet"), "-o", tuned, "--device", device], expect_rc=1)
    check("missing.jet" in r.stderr, "the missing model is not named")
    check(open(tuned, "rb").read() == before, "a failed jet-tune changed the existing output")


def case_tune():
    tune_case("cpu")


def case_cuda_tune():
    tune_case("cuda")


cases = {"inspect": case_inspect, "plan_svg": case_plan_svg, "run_save": case_run_save, "run_npy": case_run_npy,
         "run_pb": case_run_pb, "bench": case_bench, "errors": case_errors, "cuda_run": case_cuda_run,
         "cuda_bench": case_cuda_bench, "tune": case_tune, "cuda_tune": case_cuda_tune}
if args.case not in cases:
    print("unknown case", args.case)
    sys.exit(2)
cases[args.case]()
if failures:
    print(f"{len(failures)} failure(s) in {args.case}")
    sys.exit(1)
print(f"cli {args.case}: ok")
