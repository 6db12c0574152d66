#!/usr/bin/python3
"""tools/npy against numpy itself: numpy writes .npy files of several dtypes, shapes and format
versions and our reader must give the same values; our writer's files must load in numpy with
the right dtype, shape and values. Needs numpy (Debian python3-numpy, see scripts/setup.sh).

usage: npy_interop.py JET_NPY_TOOL WORK_DIR"""
import json
import os
import shlex
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("FAILED: /usr/bin/python3 has no numpy: run scripts/setup.sh (installs python3-numpy)")
    sys.exit(1)

tool, work = sys.argv[1], sys.argv[2]
# Cross builds run the tool through the emulator (CMAKE_CROSSCOMPILING_EMULATOR).
EMULATOR = shlex.split(os.environ.get("JET_TEST_EMULATOR", ""))
os.makedirs(work, exist_ok=True)
failures = []


def dump(path):
    r = subprocess.run(EMULATOR + [tool, "dump", path], capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else None), r.stderr


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


rng = np.random.default_rng(5)
cases = [
    ("f4_2x3", rng.standard_normal((2, 3)).astype("<f4"), None),
    ("f4_scalar", np.array(3.5, dtype="<f4"), None),
    ("f4_1d", np.arange(7, dtype="<f4") - 3, None),
    ("f4_4d", rng.uniform(-1, 1, (2, 3, 4, 5)).astype("<f4"), None),
    ("f4_empty", np.zeros((0, 4), dtype="<f4"), None),
    ("f2_3x3", rng.standard_normal((3, 3)).astype("<f2"), None),
    ("f8_5", rng.standard_normal(5).astype("<f8"), None),
    ("i8_2x2", np.array([[-3, 4], [1 << 40, 0]], dtype="<i8"), None),
    ("i4_4", np.array([-7, 0, 9, 123456], dtype="<i4"), None),
    ("u1_6", np.array([0, 1, 127, 128, 254, 255], dtype="|u1"), None),
    ("b1_3", np.array([True, False, True]), None),
    ("f4_v2", rng.standard_normal((2, 2)).astype("<f4"), (2, 0)),
    ("f4_v3", rng.standard_normal((3,)).astype("<f4"), (3, 0)),
    ("f4_noncontiguous_slice", np.arange(12, dtype="<f4").reshape(3, 4)[:, 1], None),
]
for name, arr, version in cases:
    path = os.path.join(work, name + ".npy")
    if version is None:
        np.save(path, arr)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, arr, version=version)
    rc, got, err = dump(path)
    check(rc == 0, f"{name}: our reader failed: {err.strip()}")
    if rc != 0:
        continue
    check(got["dims"] == list(arr.shape), f"{name}: dims {got['dims']} != {list(arr.shape)}")
    check(got["type"] == arr.dtype.str, f"{name}: type {got['type']} != {arr.dtype.str}")
    want = arr.astype(np.float32).ravel(order="C")
    have = np.array([float(v) for v in got["values"]], dtype=np.float32)
    check(have.shape == want.shape and np.array_equal(have, want), f"{name}: values differ")

# What we refuse, numpy can write: each must fail with a clear message.
refused = [
    ("fortran", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)), "Fortran"),
    ("big_endian", np.arange(3, dtype=">f4"), "big-endian"),
    ("complex", np.arange(3, dtype="<c8"), "unsupported dtype '<c8'"),
    ("structured", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]), "structured"),
]
for name, arr, expected in refused:
    path = os.path.join(work, name + ".npy")
    np.save(path, arr)
    rc, _, err = dump(path)
    check(rc != 0 and expected in err and path in err, f"{name}: expected an error with '{expected}', got rc {rc}: {err.strip()}")

# Our writer, read by numpy.
for dtype, shape in [("f32", [2, 3]), ("f16", [4, 5, 6]), ("f32", []), ("f32", [9]), ("f16", [0, 2])]:
    path = os.path.join(work, "ours_%s_%s.npy" % (dtype, "x".join(map(str, shape)) or "scalar"))
    r = subprocess.run(EMULATOR + [tool, "write", path, dtype] + [str(d) for d in shape], capture_output=True, text=True)
    check(r.returncode == 0, f"write {path}: {r.stderr.strip()}")
    if r.returncode != 0:
        continue
    arr = np.load(path)
    check(arr.dtype == np.dtype("<f4" if dtype == "f32" else "<f2"), f"{path}: numpy dtype {arr.dtype}")
    check(list(arr.shape) == shape, f"{path}: numpy shape {arr.shape}")
    check(not np.isfortran(arr) or arr.ndim < 2, f"{path}: loaded as Fortran order")
    n = int(np.prod(shape)) if shape else 1
    want = ((np.arange(n) % 17) * 0.25 - 2.0).astype(arr.dtype).reshape(shape)
    check(np.array_equal(arr, want), f"{path}: values differ")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"npy interop: {len(cases)} numpy files read, {len(refused)} refused as expected, 5 of ours loaded in numpy")
