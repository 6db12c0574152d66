#!/usr/bin/python3
"""The samples.classify_fashion_mnist test: classify on real Fashion-MNIST test images, against
ONNX Runtime.

  /usr/bin/python3 check_classify.py --classify PATH/classify --network DIR --work DIR
                                     [--count N] [--device cpu|cuda]

DIR (--network) is tests/networks' prepared fashion_mnist directory: model.jet (the CNN trained
by train_fashion_mnist.py, batch 500) and ref_logits.npy (ONNX Runtime's logits for the 10000
test images). The first N test images of Debian's dataset-fashion-mnist are written as 28x28 grey
PNGs under --work and classified with --normalize raw (the network normalizes itself) and the
class names of fashion_mnist_labels.txt. For every image, classify's top-5 must be ONNX Runtime's
top-5 (softmax of its logits) in the same order (classes whose probabilities agree within 1e-4
may swap), each probability within 1e-4; the true labels'
accuracy is reported. Standard library only.
"""
import argparse
import gzip
import math
import os
import re
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
IMAGES = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"
LABELS = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz"


def write_grey_png(path, width, height, pixels):
    """An 8-bit greyscale PNG, no filtering."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xffffffff)
    raw = b"".join(b"\x00" + pixels[y * width:(y + 1) * width] for y in range(height))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)


def read_npy_f32(path):
    """A little-endian float32 .npy: (dims, values)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("check_classify: %s is not a .npy file" % path)
    header_len = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = 10 if data[6] == 1 else 12
    header = data[start:start + header_len].decode("latin1")
    if "'<f4'" not in header or "True" in header:
        sys.exit("check_classify: %s: want little-endian float32, C order (%s)" % (path, header))
    dims = [int(d) for d in re.search(r"\(([^)]*)\)", header).group(1).split(",") if d.strip()]
    body = data[start + header_len:]
    return dims, struct.unpack("<%df" % (len(body) // 4), body)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--classify", required=True)
    parser.add_argument("--network", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--count", type=int, default=12)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    for path in (IMAGES, LABELS):
        if not os.path.exists(path):
            print("check_classify: %s is missing (apt-get install dataset-fashion-mnist, scripts/setup.sh)" % path)
            return 1
    os.makedirs(args.work, exist_ok=True)
    with gzip.open(IMAGES, "rb") as f:
        images = f.read()[16:]
    with gzip.open(LABELS, "rb") as f:
        truth = f.read()[8:]
    names = [l.rstrip("\n") for l in open(os.path.join(HERE, "fashion_mnist_labels.txt"))]
    files = []
    for i in range(args.count):
        path = os.path.join(args.work, "fashion_test_%05d.png" % i)
        write_grey_png(path, 28, 28, images[i * 784:(i + 1) * 784])
        files.append(path)
    cmd = [args.classify, os.path.join(args.network, "model.jet")] + files + [
        "--labels", os.path.join(HERE, "fashion_mnist_labels.txt"), "--normalize", "raw",
        "--device", args.device]
    print("check_classify: $ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.decode("utf-8", "replace")
    print(out)
    if proc.returncode != 0:
        print("check_classify: classify failed (exit status %d)" % proc.returncode)
        return 1
    # Per image: its block of "  r. NAME  PROB  (class C)" lines.
    ours, current = [], None
    for line in out.splitlines():
        m = re.match(r"^\s+\d+\. .*\s([0-9.]+)\s+\(class (\d+)\)$", line)
        if m and current is not None:
            current.append((int(m.group(2)), float(m.group(1))))
        elif line.endswith("):") and not line.startswith(" "):
            current = []
            ours.append(current)
    dims, logits = read_npy_f32(os.path.join(args.network, "ref_logits.npy"))
    ok = len(ours) == args.count
    if not ok:
        print("check_classify: expected %d images in the output, found %d" % (args.count, len(ours)))
    correct = 0
    for i, top in enumerate(ours):
        row = logits[i * dims[1]:(i + 1) * dims[1]]
        m = max(row)
        e = [math.exp(v - m) for v in row]
        p = [v / sum(e) for v in e]
        want = sorted(range(dims[1]), key=lambda c: (-p[c], c))[:5]
        # Rank by rank, the class we put there must have the reference's probability for that
        # rank (classes whose probabilities agree within the tolerance may swap places), and the
        # probability we print (4 decimals) must be the reference's within 1e-4.
        same_order = len(top) == 5 and all(abs(p[c] - p[w]) <= 1e-4 for (c, _), w in zip(top, want))
        close = all(abs(prob - p[c]) <= 1e-4 for c, prob in top)
        correct += bool(top) and top[0][0] == truth[i]
        if not same_order or not close:
            print("check_classify: image %d: classify's top-5 %s, ONNX Runtime's %s (%s)"
                  % (i, top, [(c, round(p[c], 4)) for c in want], "order differs" if not same_order
                     else "probabilities differ by more than 1e-4"))
            ok = False
    print("check_classify: %d images, top-5 and probabilities as ONNX Runtime's: %s; top-1 right "
          "for %d of %d (true labels: %s)" % (len(ours), "yes" if ok else "NO", correct, args.count,
                                              ", ".join(names[t] for t in truth[:args.count])))
    print("check_classify: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
