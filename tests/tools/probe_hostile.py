#!/usr/bin/python3
"""The hostile-input probe of issue 12, re-runnable: every reproduced case run against the built
tools, asserting no crash (a signal), no hang (each command has a timeout), no destroyed file and
the right message. Prints one table row per case and exits 1 if any case failed.

  probe_hostile.py --bin-dir BUILD --work DIR

BUILD holds tools/jet-run, tools/jet-inspect, tools/jet-bench, tools/jet-make-model and
converter/jet-convert (the jet-convert cases are skipped, saying so, when it was not built).
Device nodes (mknod) and the full-disk case (a 64 KiB tmpfs) need root, as CI runs; without root
they are reported as not run. ONNX models are encoded here by hand (no onnx module needed)."""
import argparse
import json
import math
import os
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--bin-dir", required=True)
parser.add_argument("--work", required=True)
args = parser.parse_args()

B = os.path.abspath(args.bin_dir)
RUN = os.path.join(B, "tools", "jet-run")
INSPECT = os.path.join(B, "tools", "jet-inspect")
BENCH = os.path.join(B, "tools", "jet-bench")
MAKE = os.path.join(B, "tools", "jet-make-model")
CONVERT = os.path.join(B, "converter", "jet-convert")
HAVE_CONVERT = os.path.exists(CONVERT)
ROOT = os.geteuid() == 0
EMULATOR = shlex.split(os.environ.get("JET_TEST_EMULATOR", ""))

work = os.path.abspath(args.work)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
results = []  # (case, outcome, detail)


class Result:
    def __init__(self, rc, out, hung):
        self.rc, self.out, self.hung = rc, out, hung


def run(cmd, timeout=30, shell_prefix=None):
    """Runs cmd; rc < 0 is death by a signal. A timeout kills it and counts as a hang."""
    full = EMULATOR + cmd
    if shell_prefix:
        full = ["/bin/sh", "-c", shell_prefix + " exec " + " ".join(shlex.quote(c) for c in full)]
    try:
        r = subprocess.run(full, capture_output=True, timeout=timeout)
        return Result(r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace"), False)
    except subprocess.TimeoutExpired as e:
        out = ((e.stdout or b"") + (e.stderr or b"")).decode("utf-8", "replace")
        return Result(None, out, True)


def case(name, fn):
    try:
        problems = fn()
    except Exception as e:  # a bug in the probe itself must not hide the other cases
        problems = ["probe error: %r" % (e,)]
    if problems is None:
        results.append((name, "not run", "needs root" if not ROOT else "needs jet-convert"))
    elif isinstance(problems, str):
        results.append((name, "not run", problems))
    elif problems:
        results.append((name, "FAILED", "; ".join(problems)))
    else:
        results.append((name, "ok", ""))


def expect(r, rc, text=None, problems=None):
    """Appends to problems what is wrong with r: crash, hang, exit status, missing message."""
    if r.hung:
        problems.append("hung (killed after the timeout)")
        return
    if r.rc is not None and r.rc < 0:
        problems.append("crashed with signal %d" % -r.rc)
        return
    if r.rc != rc:
        problems.append("exit status %s, expected %d (%s)" % (r.rc, rc, r.out.strip()[-300:]))
    if text is not None and text not in r.out:
        problems.append("message lacks %r (got %r)" % (text, r.out.strip()[-300:]))


def kind(path):
    try:
        m = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    for test, name in [(stat.S_ISLNK, "link"), (stat.S_ISREG, "file"), (stat.S_ISCHR, "chr"),
                       (stat.S_ISFIFO, "fifo"), (stat.S_ISBLK, "blk"), (stat.S_ISDIR, "dir")]:
        if test(m):
            return name
    return "other"


def read(path):
    with open(path, "rb") as f:
        return f.read()


def scratch(name):
    d = os.path.join(work, name)
    os.makedirs(d)
    return d


# ---- hand-encoded ONNX -----------------------------------------------------------------------
def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    key = varint((num << 3) | wire)
    if wire == 0:
        return key + varint(payload)
    if wire == 5:
        return key + struct.pack("<f", payload)
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return key + varint(len(payload)) + payload


def value_info(name, dims):
    shape = b"".join(field(1, 2, field(1, 0, d)) for d in dims) if dims is not None else b""
    tensor_type = field(1, 0, 1) + (field(2, 2, shape) if dims is not None else b"")
    return field(1, 2, name) + field(2, 2, field(1, 2, tensor_type))


def int64_tensor(name, values):
    return (field(1, 0, len(values)) + field(2, 0, 7) + field(8, 2, name) +
            field(9, 2, struct.pack("<%dq" % len(values), *values)))


def float_tensor(name, dims, values):
    return (b"".join(field(1, 0, d) for d in dims) + field(2, 0, 1) + field(8, 2, name) +
            field(9, 2, struct.pack("<%df" % len(values), *values)))


def node(op, inputs, outputs, name="", attrs=b""):
    return (b"".join(field(1, 2, i) for i in inputs) + b"".join(field(2, 2, o) for o in outputs) +
            (field(3, 2, name) if name else b"") + field(4, 2, op) + attrs)


def onnx_model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = (b"".join(field(1, 2, n) for n in nodes) + field(2, 2, "probe") +
             b"".join(field(5, 2, t) for t in initializers) +
             b"".join(field(11, 2, value_info(n, d)) for n, d in inputs) +
             b"".join(field(12, 2, value_info(n, d)) for n, d in outputs))
    return field(1, 0, 8) + field(8, 2, field(2, 0, opset)) + field(7, 2, graph)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def npy_f32(path, dims, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else ""))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    write(path, b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() +
          struct.pack("<%df" % len(values), *values))


def npy_values(path):
    data = read(path)
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


RELU_ONNX = onnx_model([node("Relu", ["x"], ["y"], "relu")], [("x", [1, 4])], [("y", [1, 4])])


def tiny_model(d, name="m.jet", seed=1):
    path = os.path.join(d, name)
    r = run([MAKE, "tiny_cnn", path, "--seed", str(seed)])
    assert r.rc == 0, r.out
    return path


# ---- files: device nodes, symlinks, FIFOs, failed writes, own input --------------------------
def devices_written_through():
    if not ROOT:
        return None
    d = scratch("devices")
    p = []
    null, full = os.path.join(d, "null"), os.path.join(d, "full")
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    expect(run([MAKE, "tiny_cnn", null]), 0, None, p)
    expect(run([MAKE, "tiny_cnn", full]), 1, "No space left on device", p)
    if HAVE_CONVERT:
        write(os.path.join(d, "relu.onnx"), RELU_ONNX)
        expect(run([CONVERT, os.path.join(d, "relu.onnx"), "-o", null]), 0, None, p)
        expect(run([CONVERT, os.path.join(d, "relu.onnx"), "-o", full]), 1, "No space left on device", p)
    m = tiny_model(d)
    expect(run([INSPECT, m, "--plan-svg", null]), 0, None, p)
    if kind(null) != "chr" or kind(full) != "chr":
        p.append("a device node was replaced: null is %s, full is %s" % (kind(null), kind(full)))
    return p


def symlink_written_through():
    d = scratch("symlink")
    p = []
    target, link = os.path.join(d, "target.jet"), os.path.join(d, "link.jet")
    write(target, b"old")
    os.symlink("target.jet", link)
    expect(run([MAKE, "tiny_cnn", link]), 0, None, p)
    if kind(link) != "link":
        p.append("the symlink was replaced by a %s" % kind(link))
    expect(run([INSPECT, target]), 0, "tiny_cnn", p)
    return p


def convert_temp_not_predictable():
    if not HAVE_CONVERT:
        return None
    d = scratch("planted")
    p = []
    write(os.path.join(d, "relu.onnx"), RELU_ONNX)
    victim = os.path.join(d, "victim")
    write(victim, b"precious")
    # The old temp name was OUT.tmp.<pid>: plant links for a range of likely pids.
    base = os.getpid()
    for pid in range(base, base + 200):
        os.symlink(victim, os.path.join(d, "out.jet.tmp.%d" % pid))
    expect(run([CONVERT, os.path.join(d, "relu.onnx"), "-o", os.path.join(d, "out.jet")]), 0, None, p)
    if read(victim) != b"precious":
        p.append("the planted symlink's target was written")
    if kind(os.path.join(d, "out.jet")) != "file":
        p.append("out.jet is %s" % kind(os.path.join(d, "out.jet")))
    return p


def fifo_inputs_do_not_hang():
    d = scratch("fifo")
    p = []
    fifo = os.path.join(d, "model.jet")
    os.mkfifo(fifo)
    fifo_npy = os.path.join(d, "x.npy")  # jet-run picks the reader by the extension
    os.mkfifo(fifo_npy)
    m = tiny_model(d, "real.jet")
    expect(run([RUN, fifo, "--device", "cpu"], timeout=10), 1, "is a FIFO, not a regular file", p)
    expect(run([INSPECT, fifo], timeout=10), 1, "is a FIFO", p)
    expect(run([BENCH, fifo, "--device", "cpu"], timeout=10), 1, "is a FIFO", p)
    expect(run([RUN, m, "--device", "cpu", "--input", "image=" + fifo_npy], timeout=10), 1, "is a FIFO", p)
    if HAVE_CONVERT:
        write(os.path.join(d, "relu.onnx"), RELU_ONNX)
        expect(run([CONVERT, fifo, "-o", os.path.join(d, "a.jet")], timeout=10), 1, "is a FIFO", p)
        expect(run([CONVERT, os.path.join(d, "relu.onnx"), "-o", os.path.join(d, "b.jet"), "--labels", fifo],
                   timeout=10), 1, "is a FIFO", p)
        # Output to a FIFO nobody reads: refused at once, the FIFO stays.
        expect(run([CONVERT, os.path.join(d, "relu.onnx"), "-o", fifo], timeout=10), 1, "FIFO with no reader", p)
    expect(run([MAKE, "tiny_cnn", fifo], timeout=10), 1, "FIFO with no reader", p)
    if kind(fifo) != "fifo":
        p.append("the FIFO was replaced by a %s" % kind(fifo))
    return p


def unbounded_inputs_refused():
    d = scratch("zero")
    p = []
    m = tiny_model(d)
    expect(run([RUN, "/dev/zero", "--device", "cpu"]), 1, "character device", p)
    zero_npy = os.path.join(d, "zero.npy")  # jet-run picks the reader by the extension
    os.symlink("/dev/zero", zero_npy)
    expect(run([RUN, m, "--device", "cpu", "--input", "image=" + zero_npy]), 1, "character device", p)
    if HAVE_CONVERT:
        write(os.path.join(d, "relu.onnx"), RELU_ONNX)
        expect(run([CONVERT, "/dev/zero", "-o", os.path.join(d, "a.jet")]), 1, "character device", p)
        expect(run([CONVERT, os.path.join(d, "relu.onnx"), "-o", os.path.join(d, "b.jet"), "--labels", "/dev/zero"]),
               1, "character device", p)
    return p


def failed_write_keeps_old_file_ulimit():
    d = scratch("ulimit")
    p = []
    m = tiny_model(d, "m.jet", seed=1)
    good = read(m)
    # 16 blocks of 512 bytes: less than a tiny_cnn model.
    r = run([MAKE, "tiny_cnn", m, "--seed", "2"], shell_prefix="ulimit -f 16;")
    expect(r, 1, "File too large", p)
    if ".tmp" in r.out:
        p.append("the message names a temporary file")
    if HAVE_CONVERT:
        write(os.path.join(d, "relu.onnx"), RELU_ONNX)
        write(os.path.join(d, "big_labels.txt"), b"label\n" * 4000)
        r = run([CONVERT, os.path.join(d, "relu.onnx"), "-o", m, "--labels", os.path.join(d, "big_labels.txt")],
                shell_prefix="ulimit -f 16;")
        expect(r, 1, "File too large", p)
    if read(m) != good:
        p.append("the previous model was changed")
    left = sorted(set(os.listdir(d)) - {"m.jet", "relu.onnx", "big_labels.txt"})
    if left:
        p.append("left behind: %s" % left)
    return p


def failed_write_keeps_old_file_disk_full():
    if not ROOT:
        return None
    d = scratch("tmpfs")
    mnt = os.path.join(d, "mnt")
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]).returncode != 0:
        return "cannot mount a tmpfs here (root without CAP_SYS_ADMIN)"
    p = []
    try:
        m = os.path.join(mnt, "m.jet")
        write(m, b"previous model")
        expect(run([MAKE, "resnet18", m, "--image", "32"]), 1, "No space left on device", p)
        if read(m) != b"previous model":
            p.append("the previous file was changed")
        if sorted(os.listdir(mnt)) != ["m.jet"]:
            p.append("left behind: %s" % sorted(os.listdir(mnt)))
    finally:
        subprocess.run(["umount", mnt])
    return p


def killed_write_leaves_nothing():
    d = scratch("killed")
    p = []
    proc = subprocess.Popen(EMULATOR + [MAKE, "resnet50", os.path.join(d, "big.jet")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Kill it while it writes: wait until its temporary file holds data (or it finished).
    deadline = time.time() + 60
    while proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
        try:
            fds = os.listdir("/proc/%d/fd" % proc.pid)
        except OSError:
            break
        writing = False
        for fd in fds:
            try:
                target = os.readlink("/proc/%d/fd/%s" % (proc.pid, fd))
            except OSError:
                continue
            if target.startswith(d) and os.stat("/proc/%d/fd/%s" % (proc.pid, fd)).st_size > 0:
                writing = True
        if writing:
            break
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = [n for n in os.listdir(d) if n != "big.jet"]
    if left:
        p.append("a killed run left %s" % left)
    return p


def own_input_refused():
    d = scratch("own_input")
    p = []
    m = tiny_model(d)
    good = read(m)
    expect(run([INSPECT, m, "--plan-svg", m]), 2, "is the model file itself", p)
    if read(m) != good:
        p.append("jet-inspect changed its input")
    if HAVE_CONVERT:
        a = os.path.join(d, "a.onnx")
        write(a, RELU_ONNX)
        expect(run([CONVERT, a, "-o", a]), 2, "is the input model", p)
        if read(a) != RELU_ONNX:
            p.append("jet-convert changed its input")
    return p


def model_replaced_under_running_bench():
    d = scratch("live")
    p = []
    live = os.path.join(d, "live.jet")
    assert run([MAKE, "resnet18", live, "--image", "64"]).rc == 0
    assert run([MAKE, "resnet18", os.path.join(d, "new.jet"), "--image", "64", "--seed", "7"]).rc == 0
    new = read(os.path.join(d, "new.jet"))
    proc = subprocess.Popen(EMULATOR + [BENCH, live, "--device", "cpu", "--warmup", "2", "--iterations", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    time.sleep(1.0)
    for _ in range(3):  # `cp new.jet live.jet`: truncate and rewrite in place, three times
        with open(live, "wb") as f:
            f.write(new[: len(new) // 2])
            f.flush()
            time.sleep(0.1)
            f.write(new[len(new) // 2:])
        time.sleep(0.2)
    try:
        out, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        return ["jet-bench hung"]
    if proc.returncode != 0:
        p.append("jet-bench exit status %d (%s)" % (proc.returncode, out.decode(errors="replace")[-200:]))
    return p


# ---- numbers: NaN through jet-run -------------------------------------------------------------
def nan_through_relu_and_clip():
    if not HAVE_CONVERT:
        return None
    d = scratch("nan")
    p = []
    nan, inf = float("nan"), float("inf")
    x = [-1.0, 2.0, nan, -inf, inf, 7.0]
    lo = float_tensor("lo", [], [0.0])
    hi = float_tensor("hi", [], [6.0])
    model = onnx_model([node("Relu", ["x"], ["r"], "relu"), node("Clip", ["x", "lo", "hi"], ["c"], "relu6")],
                       [("x", [1, 6])], [("r", [1, 6]), ("c", [1, 6])], initializers=[lo, hi])
    write(os.path.join(d, "m.onnx"), model)
    expect(run([CONVERT, os.path.join(d, "m.onnx"), "-o", os.path.join(d, "m.jet")]), 0, None, p)
    npy_f32(os.path.join(d, "x.npy"), [1, 6], x)
    out = os.path.join(d, "out")
    r = run([RUN, os.path.join(d, "m.jet"), "--device", "cpu", "--input", "x=" + os.path.join(d, "x.npy"),
             "--save-outputs", out])
    expect(r, 0, "nonfinite", p)
    if p:
        return p
    want = {"r": [0.0, 2.0, nan, 0.0, inf, 7.0], "c": [0.0, 2.0, nan, 0.0, 6.0, 6.0]}
    for name, expected in want.items():
        got = npy_values(os.path.join(out, name + ".npy"))
        same = all((math.isnan(g) and math.isnan(e)) or g == e for g, e in zip(got, expected))
        if not same or len(got) != len(expected):
            p.append("%s gave %s, expected %s" % (name, got, expected))
    return p


def nan_input_counted_in_a_cnn():
    d = scratch("nan_cnn")
    p = []
    m = tiny_model(d)
    info = run([INSPECT, m, "--json"])
    x = json.loads(info.out)["inputs"][0]
    n = 1
    for dim in x["shape"]:
        n *= dim
    values = [0.25] * n
    values[n // 2] = float("nan")
    npy_f32(os.path.join(d, "x.npy"), x["shape"], values)
    r = run([RUN, m, "--device", "cpu", "--input", "%s=%s" % (x["name"], os.path.join(d, "x.npy"))])
    expect(r, 0, None, p)
    if "nonfinite 0 " in r.out:
        p.append("a NaN input vanished: %s" % r.out.strip()[-300:])
    return p


# ---- limits: huge Pad -------------------------------------------------------------------------
def pad_model(h_end, w_end):
    pads = int64_tensor("pads", [0, 0, 0, 0, 0, 0, h_end, w_end])
    return onnx_model([node("Pad", ["x", "pads"], ["y"], "pad")], [("x", [1, 1, 4, 4])], [("y", None)],
                      initializers=[pads])


def huge_pad_refused_at_conversion():
    if not HAVE_CONVERT:
        return None
    d = scratch("pad")
    p = []
    write(os.path.join(d, "huge.onnx"), pad_model(1 << 21, 1 << 21))  # 2^42 elements
    out = os.path.join(d, "huge.jet")
    expect(run([CONVERT, os.path.join(d, "huge.onnx"), "-o", out]), 1, "more than 2^40 elements", p)
    if os.path.exists(out):
        p.append("a model was written")
    return p


def large_pad_fails_with_a_clear_allocation_error():
    if not HAVE_CONVERT:
        return None
    d = scratch("pad_large")
    p = []
    write(os.path.join(d, "large.onnx"), pad_model((1 << 19) - 4, (1 << 19) - 4))  # 2^38 elements, 1 TiB
    out = os.path.join(d, "large.jet")
    expect(run([CONVERT, os.path.join(d, "large.onnx"), "-o", out]), 0, None, p)
    if p:
        return p
    expect(run([INSPECT, out]), 0, "arena:", p)
    with open("/proc/sys/vm/overcommit_memory") as f:
        overcommit = f.read().strip()
    if overcommit != "1":  # with "always overcommit" the allocation could succeed and the run swap
        r = run([RUN, out, "--device", "cpu"])
        expect(r, 1, "an arena of", p)
        expect(r, 1, "the largest is tensor 'y'", p)
        if out not in r.out:
            p.append("the allocation error does not name the model file")
    return p


# ---- crafted .jet files -----------------------------------------------------------------------
def crafted_jet_files():
    d = scratch("crafted")
    p = []
    m = tiny_model(d)
    good = read(m)
    write(os.path.join(d, "trunc.jet"), good[: len(good) // 2])
    expect(run([INSPECT, os.path.join(d, "trunc.jet")]), 1, "error:", p)
    flipped = bytearray(good)
    flipped[len(good) // 3] ^= 0x40
    write(os.path.join(d, "flip.jet"), bytes(flipped))
    expect(run([RUN, os.path.join(d, "flip.jet"), "--device", "cpu"]), 1, "checksum mismatch", p)
    write(os.path.join(d, "empty.jet"), b"")
    expect(run([BENCH, os.path.join(d, "empty.jet"), "--device", "cpu"]), 1, "too small", p)
    return p


# ---- messages ---------------------------------------------------------------------------------
def convert_messages():
    if not HAVE_CONVERT:
        return None
    d = scratch("messages")
    p = []
    # Unnamed unsupported nodes get <op>_<index>; a control character in a name is escaped.
    model = onnx_model([node("Acos", ["x"], ["a"]), node("Acos", ["a"], ["b"], "evil\x1b[31mname")],
                       [("x", [1, 4])], [("b", [1, 4])], opset=17)
    write(os.path.join(d, "m.onnx"), model)
    r = run([CONVERT, os.path.join(d, "m.onnx"), "-o", os.path.join(d, "m.jet")])
    expect(r, 1, "Acos 'Acos_0'", p)
    expect(r, 1, "evil\\x1b[31mname", p)
    if "\x1b" in r.out:
        p.append("a raw ESC reached the terminal")
    # Reads and writes carry the system's reason.
    r = run([CONVERT, os.path.join(d, "missing.onnx"), "-o", os.path.join(d, "x.jet")])
    expect(r, 1, "No such file or directory", p)
    write(os.path.join(d, "relu.onnx"), RELU_ONNX)
    r = run([CONVERT, os.path.join(d, "relu.onnx"), "-o", os.path.join(d, "no", "such", "dir.jet")])
    expect(r, 1, "No such file or directory", p)
    # A declared output shape that disagrees with the computed one: converted, with a warning.
    wrong = onnx_model([node("Relu", ["x"], ["y"], "relu")], [("x", [1, 4])], [("y", [1, 5])])
    write(os.path.join(d, "wrong.onnx"), wrong)
    r = run([CONVERT, os.path.join(d, "wrong.onnx"), "-o", os.path.join(d, "w.jet")])
    expect(r, 0, "warning: graph output 'y' computes dims [1, 4] but the model declares [1, 5]", p)
    return p


CASES = [
    ("device nodes as outputs are written through (mknod null, full)", devices_written_through),
    ("a symlink as the output is written through", symlink_written_through),
    ("jet-convert's temp file cannot be planted (OUT.tmp.<pid> links)", convert_temp_not_predictable),
    ("FIFOs as inputs or outputs: no hang", fifo_inputs_do_not_hang),
    ("/dev/zero as model, input or labels: refused, no unbounded read", unbounded_inputs_refused),
    ("failed write (ulimit -f) keeps the previous file, no temp left", failed_write_keeps_old_file_ulimit),
    ("failed write (full 64 KiB tmpfs) keeps the previous file", failed_write_keeps_old_file_disk_full),
    ("a killed write leaves no temporary file", killed_write_leaves_nothing),
    ("a tool never writes over its own input", own_input_refused),
    ("model rewritten in place under a running jet-bench: no SIGBUS", model_replaced_under_running_bench),
    ("NaN and inf through Relu and Clip(0, 6) (jet-run)", nan_through_relu_and_clip),
    ("a NaN input shows in a CNN's outputs (jet-run nonfinite)", nan_input_counted_in_a_cnn),
    ("Pad beyond 2^40 elements refused by jet-convert", huge_pad_refused_at_conversion),
    ("a 1 TiB Pad: a clear allocation error naming file and arena", large_pad_fails_with_a_clear_allocation_error),
    ("crafted .jet files (truncated, flipped, empty)", crafted_jet_files),
    ("jet-convert messages (names, escapes, strerror, shape warning)", convert_messages),
]

for name, fn in CASES:
    case(name, fn)

width = max(len(n) for n, _, _ in results)
print("\n| case | result | detail |\n| --- | --- | --- |")
for name, outcome, detail in results:
    print("| %s | %s | %s |" % (name, outcome, detail.replace("|", "/")))
failed = [r for r in results if r[1] == "FAILED"]
print("\nprobe: %d cases, %d ok, %d failed, %d not run" % (
    len(results), sum(r[1] == "ok" for r in results), len(failed), sum(r[1] == "not run" for r in results)))
sys.exit(1 if failed else 0)
