#!/usr/bin/python3
"""The finetune sample's network in PyTorch (SmallCnn) and PyTorch's time for the sample's training
step: forward, cross-entropy, backward and an SGD update with momentum of the last three layers
with parameters (finetune --last-layers 3: the second batch norm and both linear layers), batch 32.
prepare.py imports it for the CPU time; run alone, it times the step on the GPU, where the
prepared data comes from the workstation (the GPU machine has no numpy or dataset):

  python3 torch_step.py --device cuda --out DIR [--batch 32]

writes DIR/pytorch_step_ms_cuda.txt: "median_ms torch_version gpu name", which finetune --device
cuda prints beside its own step time. The weights do not change the time: the network is freshly
initialized here. Needs only torch.
"""
import argparse
import os
import sys
import time

import torch
from torch import nn

NUM_CLASSES = 10
MEAN, STD = 0.2860, 0.3530
# finetune --last-layers 3 (the default): the second batch norm and both linear layers.
TRAINABLE = ["features.5.", "classifier.1.", "classifier.3."]


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(),
                                        nn.Linear(64, NUM_CLASSES))

    def forward(self, pixels):
        return self.classifier(self.features((pixels / 255.0 - MEAN) / STD))


def step_time_ms(model, x, y, device="cpu", threads=None, steps=30, warmup=5):
    """Median time of the sample's step: forward, cross-entropy, backward, SGD update. x and y
    are host tensors, moved to the device in every step, and the loss comes back to the host:
    finetune's Trainer::step takes its batch from host memory and returns the loss."""
    if threads is not None:
        torch.set_num_threads(threads)
    cuda = torch.device(device).type == "cuda"
    model.train()
    for name, p in model.named_parameters():
        p.requires_grad_(any(name.startswith(t) for t in TRAINABLE))
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1e-9, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        loss.item()
        if cuda:
            torch.cuda.synchronize()  # the update too (item() waits for the loss only)
        if i >= warmup:
            times.append(1e3 * (time.perf_counter() - t0))
    for p in model.parameters():
        p.requires_grad_(True)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    if args.device != "cuda":
        sys.exit("torch_step.py: only --device cuda is timed here (prepare.py times the CPU)")
    if not torch.cuda.is_available():
        print("torch_step.py: skipped: PyTorch sees no CUDA device")
        sys.exit(77)
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = SmallCnn().to(dev)
    x = torch.randint(0, 256, (args.batch, 1, 28, 28)).float()
    y = torch.randint(0, NUM_CLASSES, (args.batch,))
    ms = step_time_ms(model, x, y, dev, steps=200, warmup=20)
    name = torch.cuda.get_device_name(0)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "pytorch_step_ms_cuda.txt"), "w") as f:
        f.write("%.4f %s %s\n" % (ms, torch.__version__, name))
    print("torch_step.py: PyTorch %s step (batch %d, %s): median %.3f ms" % (torch.__version__, args.batch,
                                                                             name, ms))


if __name__ == "__main__":
    main()
