#!/usr/bin/python3
"""Prepares samples/finetune: a small CNN trained by PyTorch on 8 of the 10 Fashion-MNIST classes
(Debian's dataset-fashion-mnist), exported to ONNX and converted to a .jet; the fine-tuning set
(a few hundred training images of all 10 classes); the test set; PyTorch's time for the sample's
training step.

  /usr/bin/python3 prepare.py --convert jet-convert --out DIR [--batch 32]

Writes to DIR:
  pretrained.onnx, pretrained.jet  input "image" [B, 1, 28, 28] raw pixels 0..255 (the
                            normalization is part of the network), output "logits" [B, 10]. The
                            head has 10 outputs from the start; classes 8 (Bag) and 9 (Ankle boot)
                            never occur in the pretraining, so it never predicts them. Batch norm is
                            kept (--disable-pass fold_batchnorm) so that it can train.
  finetune_images.npy, finetune_labels.npy   40 training images per class, all 10 classes, shuffled
  test_images.npy, test_labels.npy           the 10000 test images
  labels.txt                                 the class names
  pytorch_step_ms.txt                        PyTorch's median time for the sample's step (CPU, one
                                             thread and all threads), the same trainable layers
Exits 77 (skipped, saying why) without python3-torch or the dataset. Cached: a DIR that already
holds every file is left as it is (delete it to redo).
"""
import argparse
import gzip
import os
import subprocess
import sys
import time

try:
    import numpy as np
    import torch
    from torch import nn
    from torch_step import SmallCnn, step_time_ms
except ImportError as e:
    print("finetune prepare: skipped: %s (apt-get install python3-torch)" % e)
    sys.exit(77)

DATASET_DIR = "/usr/share/datasets/fashion-mnist"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
           "Ankle boot"]
OLD_CLASSES = 8
PRETRAIN_IMAGES = 12000  # of the 8 old classes: one epoch, a few seconds
PER_CLASS = 40
FILES = ["pretrained.onnx", "pretrained.jet", "finetune_images.npy", "finetune_labels.npy",
         "test_images.npy", "test_labels.npy", "labels.txt", "pytorch_step_ms.txt"]


def read_idx(name, header_bytes):
    path = os.path.join(DATASET_DIR, name)
    if not os.path.exists(path):
        print("finetune prepare: skipped: %s is missing (apt-get install dataset-fashion-mnist)" % path)
        sys.exit(77)
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=header_bytes)


def load(kind):
    images = read_idx("%s-images-idx3-ubyte.gz" % kind, 16).reshape(-1, 1, 28, 28)
    labels = read_idx("%s-labels-idx1-ubyte.gz" % kind, 8)
    return images, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--convert", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    if all(os.path.exists(os.path.join(args.out, f)) for f in FILES):
        print("finetune prepare: %s is prepared (cached)" % args.out)
        return
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(2)
    rng = np.random.default_rng(0)
    train_images, train_labels = load("train")
    test_images, test_labels = load("t10k")

    # Pretraining on the 8 old classes.
    old = np.flatnonzero(train_labels < OLD_CLASSES)
    pretrain = rng.permutation(old)[:PRETRAIN_IMAGES]
    # channels_last: this PyTorch build's NCHW convolution backward is about three times slower.
    model = SmallCnn().to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    t0 = time.time()
    for i in range(0, len(pretrain), 64):
        idx = pretrain[i:i + 64]
        opt.zero_grad()
        x = torch.from_numpy(train_images[idx].astype(np.float32)).to(memory_format=torch.channels_last)
        loss = loss_fn(model(x),
                       torch.from_numpy(train_labels[idx].astype(np.int64)))
        loss.backward()
        opt.step()
    print("finetune prepare: pretrained on %d images of classes 0..%d in %.1f s (last loss %.3f)"
          % (len(pretrain), OLD_CLASSES - 1, time.time() - t0, loss.item()))

    # The fine-tuning set: PER_CLASS unseen training images of every class.
    unused = np.setdiff1d(np.arange(len(train_labels)), pretrain)
    chosen = np.concatenate([rng.permutation(unused[train_labels[unused] == c])[:PER_CLASS]
                             for c in range(len(CLASSES))])
    chosen = rng.permutation(chosen)
    np.save(os.path.join(args.out, "finetune_images.npy"), train_images[chosen].astype(np.float32))
    np.save(os.path.join(args.out, "finetune_labels.npy"), train_labels[chosen].astype(np.float32))
    np.save(os.path.join(args.out, "test_images.npy"), test_images.astype(np.float32))
    np.save(os.path.join(args.out, "test_labels.npy"), test_labels.astype(np.float32))
    with open(os.path.join(args.out, "labels.txt"), "w") as f:
        f.write("\n".join(CLASSES) + "\n")

    model = model.to(memory_format=torch.contiguous_format)
    model.eval()
    onnx_path = os.path.join(args.out, "pretrained.onnx")
    # PRESERVE (not EVAL): EVAL would fold the batch norm into the convolutions on export.
    torch.onnx.export(model, torch.zeros(args.batch, 1, 28, 28), onnx_path, input_names=["image"],
                      output_names=["logits"], opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    subprocess.run([args.convert, onnx_path, "-o", os.path.join(args.out, "pretrained.jet"),
                    "--disable-pass", "fold_batchnorm", "--layout", "nchw"], check=True,
                   stdout=subprocess.DEVNULL)

    # PyTorch's time for the sample's default step (the second batch norm and both linear layers
    # trainable: finetune.cpp --last-layers 3) on this CPU.
    x = torch.from_numpy(train_images[chosen[:args.batch]].astype(np.float32))
    y = torch.from_numpy(train_labels[chosen[:args.batch]].astype(np.int64))
    one = step_time_ms(model, x, y, threads=1)
    every = step_time_ms(model, x, y, threads=os.cpu_count() or 1)
    with open(os.path.join(args.out, "pytorch_step_ms.txt"), "w") as f:
        f.write("%.4f %.4f %d %s\n" % (one, every, os.cpu_count() or 1, torch.__version__))
    print("finetune prepare: PyTorch %s step (batch %d, CPU): %.3f ms on 1 thread, %.3f ms on %d"
          % (torch.__version__, args.batch, one, every, os.cpu_count() or 1))


if __name__ == "__main__":
    main()
