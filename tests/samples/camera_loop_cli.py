#!/usr/bin/python3
"""The camera_loop program end to end (samples/camera_loop/README.md):

  camera_loop_cli.py --program PATH/camera_loop --model blazeface.jet --images DIR --work DIR

- --frames N --json --save: exit 0, one JSON object with N frames, every stage's p50/p90/p99,
  FPS and jitter; N annotated PNG files;
- --frames 0 (until Ctrl-C): SIGINT once frames are coming stops it cleanly (exit 0, the report
  printed, the frames it did counted);
- usage and input errors: exit 2 or 1 with a message naming the problem.
Standard library only.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time


def fail(message):
    sys.stderr.write("camera_loop_cli: FAIL: %s\n" % message)
    sys.exit(1)


def run(cmd, expect_rc):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    if proc.returncode != expect_rc:
        fail("%s: exit %d, expected %d\nstdout: %s\nstderr: %s" % (" ".join(cmd), proc.returncode,
                                                                  expect_rc, out[-2000:], err[-2000:]))
    return out, err


def check_report(report, frames_at_least, frames_exactly=None):
    if frames_exactly is not None and report["frames"] != frames_exactly:
        fail("report frames %s, expected %d" % (report["frames"], frames_exactly))
    if report["frames"] < frames_at_least:
        fail("report frames %s, expected at least %d" % (report["frames"], frames_at_least))
    if not report["fps"] > 0:
        fail("fps %s" % report["fps"])
    for stage in ("capture", "preprocess", "inference", "postprocess", "end_to_end"):
        s = report["stages_ms"].get(stage)
        if s is None:
            fail("no %s stage in %s" % (stage, report["stages_ms"]))
        if s["count"] != report["frames"] or not 0 <= s["p50"] <= s["p90"] <= s["p99"] <= s["max"]:
            fail("stage %s: %s" % (stage, s))
    if "frame_interval_stddev" not in report["jitter_ms"]:
        fail("no jitter in %s" % report)
    if report["device"] == "cpu" and report["cuda_graph"]:
        fail("a CUDA graph on the CPU")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--images", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    base = [args.program, "--model", args.model, "--device", "cpu"]

    # A fixed number of frames, JSON, annotated frames.
    saved = os.path.join(args.work, "saved")
    out, _ = run(base + ["--source", args.images, "--frames", "6", "--warmup", "1", "--json",
                         "--save", saved], 0)
    report = json.loads(out)
    check_report(report, 6, 6)
    pngs = sorted(n for n in os.listdir(saved) if n.endswith(".png"))
    if pngs != ["frame_%06d.png" % i for i in range(1, 7)]:
        fail("saved frames: %s" % pngs)
    for name in pngs:
        with open(os.path.join(saved, name), "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                fail("%s is not a PNG" % name)
    if [n for n in os.listdir(saved) if n.endswith(".tmp")]:
        fail("temporary files left in %s" % saved)

    # Until Ctrl-C: SIGINT once at least two frames are saved.
    live = os.path.join(args.work, "live")
    proc = subprocess.Popen(base + ["--source", args.images, "--frames", "0", "--warmup", "1", "--json",
                                    "--save", live], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if os.path.isdir(live) and len([n for n in os.listdir(live) if n.endswith(".png")]) >= 2:
            break
        time.sleep(0.05)
    if proc.poll() is not None:
        fail("camera_loop --frames 0 ended by itself (exit %d): %s" % (proc.returncode, proc.stderr.read().decode()))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    if proc.returncode != 0:
        fail("after SIGINT: exit %d, stderr %s" % (proc.returncode, err.decode()))
    report = json.loads(out.decode())
    check_report(report, 2)
    # The report counts the frames it saved: Ctrl-C ends after the frame in progress.
    saved_live = len([n for n in os.listdir(live) if n.endswith(".png")])
    if report["frames"] != saved_live:
        fail("after SIGINT: %d frames reported, %d saved" % (report["frames"], saved_live))

    # Errors.
    _, err = run([args.program], 2)
    if "--model is required" not in err:
        fail("no model: %s" % err)
    _, err = run(base + ["--frames", "x"], 2)
    if "--frames" not in err:
        fail("bad --frames: %s" % err)
    _, err = run(base + ["--source", os.path.join(args.work, "no-such-dir")], 1)
    if "no-such-dir" not in err:
        fail("bad source: %s" % err)
    _, err = run([args.program, "--model", os.path.join(args.work, "missing.jet"), "--device", "cpu",
                  "--source", "synthetic:64x48", "--frames", "1"], 1)
    if "missing.jet" not in err:
        fail("missing model: %s" % err)
    print("camera_loop_cli: all checks passed (%d frames until SIGINT)" % report["frames"])


if __name__ == "__main__":
    main()
