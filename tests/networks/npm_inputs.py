#!/usr/bin/python3
"""Writes the inputs of the networks fetched from npm besides BlazeFace (docs/networks.md), from
skimage's photos, preprocessed as each package's own code does:

  /usr/bin/python3 npm_inputs.py OUT_DIR

  ocr_input.npy   float32 [1, 3, 48, W]: the title line of skimage's `page` (a photographed book
                  page reading "Region-based segmentation"), resized to a height of 48 pixels
                  keeping its aspect ratio, values x / 255, channels B, G, R (planar), as
                  @gutenye/ocr-common's Recognition does (resize({height: 48}), imageToInput with
                  mean 0 and std 1, [...B, ...G, ...R])
  mlsd_input.npy  float32 [1, 320, 320, 4] (NHWC): skimage's `rocket` (the launch tower's girders
                  are straight lines) stretched to 320x320, R, G, B in 0..255 and a fourth
                  channel of ones, as jp.keijiro.mlsd's Preprocess.compute does
  face_input.npy  float32 [2, 3, 240, 320]: skimage's `astronaut` (a face in colour) and `camera`
                  (the cameraman's face, grey, repeated in three planes), each stretched to
                  320x240 as the package's cv.resize does, rounded to 8 bits, planes R, G, B,
                  values (x - 127) / 128, as faceplugin-face-recognition-js's
                  preprocessDetection does; two batches of the model's batch size 1
"""
import os
import sys

import numpy as np
import skimage.data
import skimage.transform

OCR_HEIGHT = 48
OCR_CROP = (slice(2, 36), slice(0, 300))  # rows, columns of `page` holding the title line
MLSD_SIZE = 320
FACE_HEIGHT, FACE_WIDTH = 240, 320


def main():
    out_dir = sys.argv[1]
    page = skimage.data.page()[OCR_CROP].astype(np.float64)  # grey, 0..255
    h, w = page.shape
    width = int(round(w * OCR_HEIGHT / h))
    line = skimage.transform.resize(page, (OCR_HEIGHT, width), order=1, anti_aliasing=True,
                                    mode="edge", preserve_range=True)
    line = np.clip(np.round(line), 0, 255) / 255.0  # the package resizes 8-bit images
    ocr = np.stack([line] * 3)[None].astype(np.float32)  # B, G, R are equal for a grey photo
    np.save(os.path.join(out_dir, "ocr_input.npy"), ocr)

    rocket = skimage.data.rocket().astype(np.float64)
    rgb = skimage.transform.resize(rocket, (MLSD_SIZE, MLSD_SIZE), order=1, anti_aliasing=True,
                                   mode="edge", preserve_range=True)
    rgba = np.concatenate([np.clip(rgb, 0, 255), np.ones((MLSD_SIZE, MLSD_SIZE, 1))], axis=-1)
    np.save(os.path.join(out_dir, "mlsd_input.npy"), rgba[None].astype(np.float32))

    camera = skimage.data.camera()
    faces = [face_input(skimage.data.astronaut()), face_input(np.stack([camera] * 3, axis=-1))]
    np.save(os.path.join(out_dir, "face_input.npy"), np.concatenate(faces).astype(np.float32))


def face_input(rgb):
    """[1, 3, 240, 320]: the photo stretched to 320x240 (bilinear, no antialiasing, as OpenCV's
    resize), 8-bit, (x - 127) / 128."""
    small = skimage.transform.resize(rgb.astype(np.float64), (FACE_HEIGHT, FACE_WIDTH), order=1,
                                     anti_aliasing=False, mode="edge", preserve_range=True)
    small = np.clip(np.round(small), 0, 255)
    return ((small - 127.0) / 128.0).transpose(2, 0, 1)[None]


if __name__ == "__main__":
    main()
