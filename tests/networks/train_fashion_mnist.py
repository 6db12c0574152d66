#!/usr/bin/python3
"""Trains a small CNN on Fashion-MNIST (Debian's dataset-fashion-mnist) and exports it to ONNX.

  /usr/bin/python3 train_fashion_mnist.py OUT_DIR

Writes to OUT_DIR:
  fashion_mnist.onnx        opset 17, input "image" float32 [500, 1, 28, 28] of raw pixel values
                            0..255 (the normalization is part of the network), output "logits"
                            [500, 10]
  test_images.npy           uint8 [10000, 1, 28, 28], the whole test set
  test_labels.npy           uint8 [10000]
  pytorch_accuracy.txt      PyTorch's test accuracy of the exported network (a fraction)

Two epochs on two CPU threads, seeded: about a minute, about 89% test accuracy.
"""
import gzip
import os
import sys
import time

import numpy as np
import torch
from torch import nn

DATASET_DIR = "/usr/share/datasets/fashion-mnist"
SEED = 0
EPOCHS = 2
TRAIN_BATCH = 256
EXPORT_BATCH = 500  # the checker runs the 10000 test images in 20 batches
MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST training set, pixels scaled to [0, 1]


def read_idx(name, header_bytes):
    path = os.path.join(DATASET_DIR, name)
    if not os.path.exists(path):
        sys.exit("train_fashion_mnist: %s is missing: apt-get install dataset-fashion-mnist "
                 "(scripts/setup.sh)" % path)
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=header_bytes)


def load(kind):
    images = read_idx("%s-images-idx3-ubyte.gz" % kind, 16).reshape(-1, 1, 28, 28)
    labels = read_idx("%s-labels-idx1-ubyte.gz" % kind, 8)
    return images, labels


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, pixels):
        # Raw 0..255 pixels in: the exported graph starts with the normalization (Div, Sub, Div).
        x = (pixels / 255.0 - MEAN) / STD
        return self.classifier(self.features(x))


def accuracy(model, images, labels):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(images), EXPORT_BATCH):
            x = torch.from_numpy(images[i:i + EXPORT_BATCH].astype(np.float32))
            correct += int((model(x).argmax(1).numpy() == labels[i:i + EXPORT_BATCH]).sum())
    return correct / len(images)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: train_fashion_mnist.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)

    train_images, train_labels = load("train")
    test_images, test_labels = load("t10k")
    # channels_last: this PyTorch build's NCHW convolution backward is about three times slower.
    model = SmallCnn().to(memory_format=torch.channels_last)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    start = time.time()
    for epoch in range(EPOCHS):
        model.train()
        order = rng.permutation(len(train_images))
        for i in range(0, len(order), TRAIN_BATCH):
            idx = order[i:i + TRAIN_BATCH]
            x = torch.from_numpy(train_images[idx].astype(np.float32))
            x = x.to(memory_format=torch.channels_last)
            y = torch.from_numpy(train_labels[idx].astype(np.int64))
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        print("train_fashion_mnist: epoch %d loss %.4f (%.1f s)" % (epoch + 1, loss.item(),
                                                                     time.time() - start), flush=True)

    model = model.to(memory_format=torch.contiguous_format)
    acc = accuracy(model, test_images, test_labels)
    print("train_fashion_mnist: PyTorch test accuracy %.4f" % acc)
    torch.onnx.export(model, torch.zeros(EXPORT_BATCH, 1, 28, 28),
                      os.path.join(out_dir, "fashion_mnist.onnx"), opset_version=17,
                      input_names=["image"], output_names=["logits"], do_constant_folding=True)
    np.save(os.path.join(out_dir, "test_images.npy"), np.ascontiguousarray(test_images))
    np.save(os.path.join(out_dir, "test_labels.npy"), np.ascontiguousarray(test_labels))
    with open(os.path.join(out_dir, "pytorch_accuracy.txt"), "w") as f:
        f.write("%.6f\n" % acc)


if __name__ == "__main__":
    main()
