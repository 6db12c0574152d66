#!/usr/bin/python3
"""Exports the torchvision classifiers to ONNX and writes the network test inputs.

  /usr/bin/python3 export_models.py OUT_DIR

Writes OUT_DIR/<model>_op<opset>.onnx for ResNet-18, MobileNetV2, EfficientNet-B0 and SqueezeNet
1.1 at opsets 13 and 17 (Debian's python3-torch / python3-torchvision), and the inputs:
  classifier_input.npy  float32 [2, 3, 224, 224]: skimage's astronaut and chelsea photos, centre
                        cropped, resized, normalized with ImageNet's mean and std
  blazeface_input.npy   float32 [1, 128, 128, 3] (NHWC, values in [-1, 1]): the astronaut's face

The weights are torchvision's random initialization under a fixed seed (no downloads). Random
BatchNorm running statistics (mean 0, variance 1) would let activations grow or vanish layer by
layer, which no trained network does and which would make fp16 comparisons meaningless; so the
running statistics are set from one pass in training mode over a batch of skimage photos
(momentum None: the plain average), as a trained network's would be.
"""
import os
import sys

import numpy as np
import skimage.data
import skimage.transform
import torch
import torchvision

SEED = 0
OPSETS = (13, 17)
MODELS = (
    ("resnet18", torchvision.models.resnet18),
    ("mobilenet_v2", torchvision.models.mobilenet_v2),
    ("efficientnet_b0", torchvision.models.efficientnet_b0),
    ("squeezenet1_1", torchvision.models.squeezenet1_1),
)
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def rgb(image):
    """uint8 HxWx3 (grey images repeated) as float in [0, 1]."""
    image = np.asarray(image)
    if image.ndim == 2:
        image = np.stack([image] * 3, axis=-1)
    return image[:, :, :3].astype(np.float32) / 255.0


def square_crop(image, top=None, left=None, size=None):
    """The centred square of an HxWxC image unless a crop is given."""
    h, w = image.shape[:2]
    if size is None:
        size = min(h, w)
        top, left = (h - size) // 2, (w - size) // 2
    return image[top:top + size, left:left + size]


def resized(image, size):
    return skimage.transform.resize(image, (size, size), order=1, anti_aliasing=True,
                                    mode="reflect").astype(np.float32)


def imagenet_batch(images, size=224):
    """NCHW float32, ImageNet-normalized."""
    batch = [(resized(square_crop(rgb(im)), size) - IMAGENET_MEAN) / IMAGENET_STD for im in images]
    return np.ascontiguousarray(np.stack(batch).transpose(0, 3, 1, 2)).astype(np.float32)


def calibration_batch():
    """Photos (and their mirror images) for the BatchNorm statistics."""
    photos = [skimage.data.astronaut(), skimage.data.chelsea(), skimage.data.coffee(),
              skimage.data.rocket(), skimage.data.hubble_deep_field(),
              skimage.data.immunohistochemistry(), skimage.data.camera(), skimage.data.coins()]
    batch = imagenet_batch(photos)
    return np.concatenate([batch, batch[:, :, :, ::-1]]).copy()


def set_batchnorm_statistics(model, batch):
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # cumulative average: after one pass, that batch's statistics
    model.train()
    with torch.no_grad():
        model(torch.from_numpy(batch))
    model.eval()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_models.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(2)

    classifier_input = imagenet_batch([skimage.data.astronaut(), skimage.data.chelsea()])
    np.save(os.path.join(out_dir, "classifier_input.npy"), classifier_input)

    # BlazeFace (front camera model): a 128x128 RGB image in [-1, 1], NHWC; the crop holds the
    # astronaut's head and shoulders (the face about half the frame, as in a selfie).
    face = resized(square_crop(rgb(skimage.data.astronaut()), top=0, left=100, size=256), 128)
    np.save(os.path.join(out_dir, "blazeface_input.npy"),
            (face[None] * 2.0 - 1.0).astype(np.float32))

    calibration = calibration_batch()
    for name, build in MODELS:
        torch.manual_seed(SEED)
        model = build(weights=None)
        set_batchnorm_statistics(model, calibration)
        for opset in OPSETS:
            path = os.path.join(out_dir, "%s_op%d.onnx" % (name, opset))
            torch.onnx.export(model, torch.from_numpy(classifier_input), path,
                              opset_version=opset, input_names=["input"],
                              output_names=["logits"], do_constant_folding=True)
            print("export_models: wrote %s" % path, flush=True)


if __name__ == "__main__":
    main()
