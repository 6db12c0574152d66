#!/usr/bin/python3
"""The newcomer's path, end to end (README "Your own model"): a torchvision export and a real
photo through the command-line tools, against PyTorch.

  /usr/bin/python3 newcomer.py --work DIR --convert jet-convert --run jet-run --compare jet-compare
                               --inspect jet-inspect

1. (cached under DIR/cache/newcomer, keyed by this script and export_models.py) PyTorch exports
   ResNet-18 at batch 1 (torchvision's architecture, random weights under seed 0, BatchNorm
   statistics from photos: export_models.py), writes torchvision's ImageNet class names as a labels
   file, and computes the top-5 classes of skimage's chelsea.png (a real photo, from Debian's
   python3-skimage) with the same preprocessing as `--preprocess imagenet`: the centred square
   of 0.875 of the shorter side (whole pixels), bilinear resize to 224x224 (half-pixel centres, no
   antialiasing: torch.nn.functional.interpolate), ImageNet mean and std.
2. jet-convert model.onnx -o model.jet --preprocess imagenet --labels labels.txt (jet-inspect shows
   both)
3. jet-run model.jet chelsea.png --top-k 5 --device cpu: the same five classes in the same order
   as PyTorch, their labels, and logits within 1e-4 of PyTorch's; a JPEG (rocket.jpg) runs too.
4. jet-convert --precision fp16, then jet-compare model.jet model_fp16.jet --layers --input
   chelsea.png: every layer's error is reported (one row per intermediate tensor) and the
   outputs pass (rel_rms <= 2e-2).
Prints the seconds each step took. Exit status 0 when everything holds.
"""
import argparse
import hashlib
import math
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
sys.path.insert(0, HERE)
import prepare  # noqa: E402  (cached_stage, run, file_hash, fail)

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
CROP_FRACTION = 0.875
SIZE = 224


def photo_path():
    """skimage's chelsea.png, read from the python3-skimage package's files."""
    out = subprocess.run([PYTHON, "-c", "import skimage.data, os; print(os.path.join(skimage.data.data_dir, 'chelsea.png'))"],
                         stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    if not os.path.isfile(out):
        prepare.fail("%s is missing (python3-skimage)" % out)
    return out


def export(out_dir, photo):
    """Stage 1 (run in its own process, cached): model.onnx, labels.txt, reference.txt."""
    import numpy as np
    import skimage.io
    import torch
    import torchvision
    import export_models

    torch.set_num_threads(2)
    torch.manual_seed(export_models.SEED)
    model = torchvision.models.resnet18(weights=None)
    export_models.set_batchnorm_statistics(model, export_models.calibration_batch())
    model.eval()
    torch.onnx.export(model, torch.zeros(1, 3, SIZE, SIZE), os.path.join(out_dir, "model.onnx"),
                      opset_version=17, input_names=["input"], output_names=["logits"],
                      do_constant_folding=True)
    categories = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.meta["categories"]
    with open(os.path.join(out_dir, "labels.txt"), "w") as f:
        f.write("\n".join(categories) + "\n")

    # The preprocessing `--preprocess imagenet` records, done by PyTorch.
    image = skimage.io.imread(photo)[:, :, :3]
    h, w = image.shape[:2]
    side = min(h, w)  # the largest centred square; then crop_fraction of it, rounded half up
    crop = max(1, int(math.floor(side * CROP_FRACTION + 0.5)))
    top, left = (h - crop) // 2, (w - crop) // 2
    x = torch.from_numpy(np.ascontiguousarray(image[top:top + crop, left:left + crop])).float()
    x = x.permute(2, 0, 1)[None]
    x = torch.nn.functional.interpolate(x, size=(SIZE, SIZE), mode="bilinear", align_corners=False,
                                        antialias=False)
    x = (x / 255.0 - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)
    with torch.no_grad():
        logits = model(x)[0].double()
    probs = torch.softmax(logits, 0)
    order = torch.argsort(logits, descending=True)
    with open(os.path.join(out_dir, "reference.txt"), "w") as f:
        for i in order[:6].tolist():
            f.write("%d %.8f %.8f\n" % (i, probs[i].item(), logits[i].item()))
    # A JPEG too (decoders may differ by a level here and there, so only its size is compared).
    jpeg = skimage.io.imread(os.path.join(os.path.dirname(photo), "rocket.jpg"))
    with open(os.path.join(out_dir, "jpeg_size.txt"), "w") as f:
        f.write("%dx%d\n" % (jpeg.shape[1], jpeg.shape[0]))
    print("newcomer: exported ResNet-18 (batch 1) and PyTorch's top-5 of %s" % photo)


def check(condition, message):
    if not condition:
        prepare.fail(message)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--export":
        export(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--convert", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--compare", required=True)
    parser.add_argument("--inspect", required=True)
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    os.makedirs(os.path.join(work, "cache"), exist_ok=True)
    steps = []

    start = time.time()
    photo = photo_path()
    key = prepare.file_hash(os.path.abspath(__file__), os.path.join(HERE, "export_models.py"), photo)
    stage = prepare.cached_stage(work, "newcomer", key,
                                 lambda tmp: prepare.run([PYTHON, os.path.abspath(__file__), "--export", tmp, photo]))
    steps.append(("PyTorch export + reference", time.time() - start, prepare.timings[-1][2]))
    reference = [line.split() for line in open(os.path.join(stage, "reference.txt"))]
    labels = open(os.path.join(stage, "labels.txt")).read().splitlines()
    out = os.path.join(work, "newcomer")
    os.makedirs(out, exist_ok=True)
    fp32, fp16 = os.path.join(out, "model.jet"), os.path.join(out, "model_fp16.jet")

    start = time.time()
    prepare.run([args.convert, os.path.join(stage, "model.onnx"), "-o", fp32, "--preprocess", "imagenet",
                 "--labels", os.path.join(stage, "labels.txt")])
    steps.append(("jet-convert fp32", time.time() - start, ""))

    inspect = prepare.run([args.inspect, fp32])
    check("preprocess:  'input' 224x224 centre crop 0.875, RGB, NCHW, mean 0.485 0.456 0.406, std 0.229 0.224 0.225"
          in inspect and "labels:      1000" in inspect, "jet-inspect does not show the metadata:\n" + inspect)

    start = time.time()
    text = prepare.run([args.run, fp32, photo, "--top-k", "5", "--device", "cpu"])
    steps.append(("jet-run --top-k 5", time.time() - start, ""))
    print(text)
    rows = re.findall(r"^\s+(\d)\. class (\d+)\s+([0-9.e+-]+)%\s+value (\S+)\s+(.*)$", text, re.M)
    check(len(rows) == 5, "jet-run printed %d top-k rows, expected 5:\n%s" % (len(rows), text))
    check("from %s (image 451x300, 224x224 centre crop 0.875" % photo in text,
          "jet-run did not read the photo with the recorded preprocessing:\n" + text)
    # The ranks are decided by logit gaps; the smallest one, against the 1e-4 checked below.
    gap = min(float(reference[i][2]) - float(reference[i + 1][2]) for i in range(5))
    print("newcomer: PyTorch's top-5 %s (smallest logit gap among ranks 1-6: %.4g)"
          % (", ".join("%s %s" % (r[0], labels[int(r[0])]) for r in reference[:5]), gap))
    for rank, (row, ref) in enumerate(zip(rows, reference[:5])):
        got_class, got_prob, got_logit, got_label = int(row[1]), float(row[2]) / 100.0, float(row[3]), row[4].strip()
        want_class, want_prob, want_logit = int(ref[0]), float(ref[1]), float(ref[2])
        check(got_class == want_class, "rank %d: jet-run says class %d, PyTorch %d" % (rank + 1, got_class, want_class))
        check(got_label == labels[want_class], "rank %d: label '%s', expected '%s'" % (rank + 1, got_label, labels[want_class]))
        # fp32 on the same input: logits within 1e-4 (relative to max(1, |logit|); jet-run prints
        # 6 significant digits), probabilities within 1e-3 of their value.
        check(abs(got_logit - want_logit) <= 1e-4 * max(1.0, abs(want_logit)),
              "rank %d (class %d): logit %.7g, PyTorch %.7g" % (rank + 1, got_class, got_logit, want_logit))
        check(abs(got_prob - want_prob) <= 1e-3 * want_prob + 1e-7,
              "rank %d (class %d): probability %.6g, PyTorch %.6g" % (rank + 1, got_class, got_prob, want_prob))
    print("newcomer: jet-run's top-5 is PyTorch's (classes, order, labels; logits within 1e-4)")
    jpeg = os.path.join(os.path.dirname(photo), "rocket.jpg")
    text = prepare.run([args.run, fp32, "--input", "input=" + jpeg, "--top-k=5", "--device=cpu"])
    size = open(os.path.join(stage, "jpeg_size.txt")).read().strip()
    check("from %s (image %s, 224x224 centre crop" % (jpeg, size) in text and
          len(re.findall(r"^\s+\d\. class \d+", text, re.M)) == 5,
          "jet-run on a JPEG (%s, %s):\n%s" % (jpeg, size, text))
    print("newcomer: a JPEG (rocket.jpg, %s) runs too" % size)

    start = time.time()
    prepare.run([args.convert, os.path.join(stage, "model.onnx"), "-o", fp16, "--precision", "fp16",
                 "--preprocess", "imagenet", "--labels", os.path.join(stage, "labels.txt")])
    steps.append(("jet-convert fp16", time.time() - start, ""))
    start = time.time()
    text = prepare.run([args.compare, fp32, fp16, "--layers", "--input", photo])
    steps.append(("jet-compare --layers", time.time() - start, ""))
    print(text)
    layers = re.findall(r"^layer\s+(\S+)\s+\[[^\]]*\]\s+(\S+)\s+(\S+)\s+(\S+)\s+(ok|FAIL\S*)\s+(\S+)", text, re.M)
    check(len(layers) >= 20, "jet-compare --layers reported %d layers, expected ResNet-18's (>= 20)" % len(layers))
    for layer in layers:
        check(all(math.isfinite(float(v)) for v in layer[1:4]), "layer %s: errors %s" % (layer[5], layer[1:4]))
    check(any(float(layer[2]) > 0 for layer in layers), "fp16 shows no error in any layer: nothing was compared")
    check(re.search(r"^PASS: 1 of 1 outputs", text, re.M) is not None, "jet-compare: the output did not pass")
    print("newcomer: jet-compare fp32 vs fp16 reported %d layers, the output within tolerance" % len(layers))

    for name, seconds, note in steps:
        print("newcomer: %-28s %6.1f s  %s" % (name, seconds, note))


if __name__ == "__main__":
    main()
