#!/usr/bin/python3
"""The samples.face_detect_* tests: runs face_detect on the prepared photo and compares its faces
with ONNX Runtime's pipeline (reference.json, written by prepare_data.py --reference):

  /usr/bin/python3 check_faces.py --sample PATH/face_detect --data DIR --device cpu|cuda
                                  --precision fp32|fp16

Every reference face must be found (the face of ours with the largest IoU against it), with box
IoU >= 0.95 and |score difference| <= 0.01, and no face of ours may be left unmatched. Exit
status 0 when they agree, 1 when not (saying which and by how much), 77 (ctest: skipped) for
--device cuda on a machine without a GPU device node. Standard library only (runs on the GPU machine).
"""
import argparse
import json
import os
import subprocess
import sys

MIN_IOU = 0.95
MAX_SCORE_DIFF = 0.01


def iou(a, b):
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if area_a <= 0 or area_b <= 0 or w <= 0 or h <= 0:
        return 0.0
    return w * h / (area_a + area_b - w * h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--device", required=True, choices=["cpu", "cuda"])
    parser.add_argument("--precision", required=True, choices=["fp32", "fp16"])
    args = parser.parse_args()
    model = os.path.join(args.data, "blazeface_%s.jet" % args.precision)
    photo = os.path.join(args.data, "astronaut.png")
    reference = os.path.join(args.data, "reference.json")
    for path in (model, photo, reference):
        if not os.path.exists(path):
            print("check_faces: %s is missing (run prepare_data.py --reference)" % path)
            return 1
    if args.device == "cuda" and not os.path.exists("/dev/nvidia0") and not os.path.exists("/dev/nvhost-gpu") \
            and not os.path.exists("/dev/nvgpu/igpu0"):
        print("check_faces: no GPU device node here (/dev/nvidia0, Jetson /dev/nvgpu): skipped")
        return 77
    cmd = [args.sample, model, photo, "--device", args.device, "--runs", "3", "--json"]
    print("check_faces: $ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        print(text)
        print("check_faces: face_detect failed (exit status %d)" % proc.returncode)
        return 1
    ours = json.loads(text.strip().splitlines()[-1])
    ref = json.load(open(reference))
    print("check_faces: ONNX Runtime finds %d face(s), face_detect (%s, %s) %d; latency %s ms"
          % (len(ref["faces"]), args.device, args.precision, len(ours["faces"]),
             ours["median_ms"]["total"]))
    ok = len(ref["faces"]) > 0
    if not ok:
        print("check_faces: the reference finds no face in the photo")
    matched = set()
    for i, r in enumerate(ref["faces"]):
        best, best_iou = None, 0.0
        for j, o in enumerate(ours["faces"]):
            overlap = iou(r["box"], o["box"])
            if overlap > best_iou:
                best, best_iou = j, overlap
        if best is None:
            print("check_faces: reference face %d (box %s, score %.4f) not found"
                  % (i + 1, [round(v, 1) for v in r["box"]], r["score"]))
            ok = False
            continue
        matched.add(best)
        o = ours["faces"][best]
        diff = abs(o["score"] - r["score"])
        good = best_iou >= MIN_IOU and diff <= MAX_SCORE_DIFF
        print("check_faces: face %d: reference box %s score %.4f, ours box %s score %.4f: "
              "IoU %.4f (>= %.2f), score difference %.4f (<= %.2f): %s"
              % (i + 1, [round(v, 1) for v in r["box"]], r["score"],
                 [round(v, 1) for v in o["box"]], o["score"], best_iou, MIN_IOU, diff,
                 MAX_SCORE_DIFF, "agree" if good else "DISAGREE"))
        ok = ok and good
    for j, o in enumerate(ours["faces"]):
        if j not in matched:
            print("check_faces: face_detect's face %d (box %s, score %.4f) is not in the reference"
                  % (j + 1, [round(v, 1) for v in o["box"]], o["score"]))
            ok = False
    print("check_faces: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
