#!/usr/bin/python3
"""End-to-end check of jet::Trainer against PyTorch (issue 15, "Correctness"): the same small CNN
(conv-bn-relu-pool, conv+relu-pool, flatten, fc-relu, fc) with the same initial weights, the same
batches in the same order and the same optimizer; the per-step losses of jetinfer's CPU backend
must match PyTorch's for the first 20 steps within 1e-4 relative.

  /usr/bin/python3 torch_match.py --convert jet-convert --driver jet_train_driver --work DIR

The network is exported to ONNX by PyTorch (batch norm kept: exported as in inference and
converted with --disable-pass fold_batchnorm; the trainer runs it with batch statistics, as
PyTorch's model.train()), converted by jet-convert, and trained by jet_train_driver
(tests/training/train_driver.cpp). Three runs: SGD with momentum and weight decay; Adam with
gradient clipping by global norm; AdamW training only the last two layers. Exits 77 (skipped,
saying why) when PyTorch is missing.
"""
import argparse
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as e:  # CI installs python3-torch (scripts/setup.sh); skip elsewhere
    print("torch_match: skipped: %s (apt-get install python3-torch)" % e)
    sys.exit(77)

STEPS = 20
BATCH = 8
CLASSES = 10
TOLERANCE = 1e-4


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3, padding=1, stride=1)
        self.fc1 = nn.Linear(8 * 3 * 3, 24)
        self.fc2 = nn.Linear(24, CLASSES)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = nn.functional.avg_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(torch.relu(self.fc1(x)))


def torch_losses(model, images, labels, optimizer_name, lr, options):
    model.train()
    params = dict(model.named_parameters())
    if options.get("last_layers"):
        trainable = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
        for name, p in params.items():
            p.requires_grad_(name in trainable)
    chosen = [p for p in model.parameters() if p.requires_grad]
    wd = options.get("weight_decay", 0.0)
    if optimizer_name == "sgd":
        opt = torch.optim.SGD(chosen, lr=lr, momentum=options.get("momentum", 0.0), weight_decay=wd)
    elif optimizer_name == "adam":
        opt = torch.optim.Adam(chosen, lr=lr, weight_decay=wd)
    else:
        opt = torch.optim.AdamW(chosen, lr=lr, weight_decay=wd)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for s in range(STEPS):
        x = torch.from_numpy(images[s * BATCH:(s + 1) * BATCH])
        y = torch.from_numpy(labels[s * BATCH:(s + 1) * BATCH].astype(np.int64))
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        if options.get("clip"):
            torch.nn.utils.clip_grad_norm_(chosen, options["clip"])
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--convert", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--reference-out")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    # Rounded to f16 values (exact in f32): the committed copy is stored as f16.
    images = rng.standard_normal((STEPS * BATCH, 1, 12, 12)).astype(np.float16).astype(np.float32)
    # Labels a function of the image (the class of the largest of 10 fixed projections), so that
    # there is something to learn and the loss falls.
    projections = rng.standard_normal((CLASSES, 12 * 12)).astype(np.float32)
    labels = np.argmax(images.reshape(len(images), -1) @ projections.T, axis=1).astype(np.int32)
    images_path = os.path.join(args.work, "images.npy")
    labels_path = os.path.join(args.work, "labels.npy")
    np.save(images_path, images)
    np.save(labels_path, labels.astype(np.float32))

    model = SmallCnn()
    with torch.no_grad():  # running statistics other than 0 / 1 to start from
        model.train()
        model(torch.from_numpy(images[:BATCH]) * 1.5 + 0.2)
    model.eval()
    onnx_path = os.path.join(args.work, "small_cnn.onnx")
    # PRESERVE (not EVAL): EVAL would fold the batch norm into the convolution on export.
    torch.onnx.export(model, torch.zeros(BATCH, 1, 12, 12), onnx_path, input_names=["image"],
                      output_names=["logits"], opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    jet_path = os.path.join(args.work, "small_cnn.jet")
    subprocess.run([args.convert, onnx_path, "-o", jet_path, "--disable-pass", "fold_batchnorm",
                    "--layout", "nchw"], check=True, stdout=subprocess.DEVNULL)
    initial = {k: v.clone() for k, v in model.state_dict().items()}

    runs = [
        ("sgd", 0.05, {"momentum": 0.9, "weight_decay": 1e-4}),
        ("adam", 2e-3, {"clip": 1.0}),
        ("adamw", 2e-3, {"weight_decay": 0.01, "last_layers": 2}),
    ]
    worst_all = 0.0
    reference = []
    for name, lr, options in runs:
        model.load_state_dict(initial)
        for p in model.parameters():
            p.requires_grad_(True)
        want = torch_losses(model, images, labels, name, lr, options)
        cmd = [args.driver, jet_path, images_path, labels_path, str(STEPS), name, repr(lr)]
        cmd += ["%s=%s" % (k, v) for k, v in options.items()]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
        got = [float(v) for v in out]
        reference.append("%s %r %s | %s" % (name, lr, " ".join("%s=%s" % (k, v) for k, v in options.items()),
                                            " ".join("%.9g" % w for w in want)))
        if len(got) != STEPS:
            sys.exit("torch_match: %s: the driver printed %d losses, expected %d" % (name, len(got), STEPS))
        rel = [abs(g - w) / abs(w) for g, w in zip(got, want)]
        worst = max(rel)
        worst_all = max(worst_all, worst)
        print("%-6s lr %g %s: loss %.6f -> %.6f (PyTorch %.6f -> %.6f), worst relative difference %.2e"
              % (name, lr, options, got[0], got[-1], want[0], want[-1], worst))
        fell = np.mean(want[-5:]) < np.mean(want[:5])
        if worst > TOLERANCE or not fell:
            for s, (g, w) in enumerate(zip(got, want)):
                print("  step %2d  jet %.8f  torch %.8f  rel %.2e" % (s, g, w, abs(g - w) / abs(w)))
            sys.exit("torch_match: %s: the losses differ by more than %g relative (or did not fall)"
                     % (name, TOLERANCE))
    print("torch_match: every run within %.2e relative of PyTorch (tolerance %g)" % (worst_all, TOLERANCE))
    if args.reference_out:
        out = args.reference_out
        os.makedirs(out, exist_ok=True)
        with open(jet_path, "rb") as f, open(os.path.join(out, "small_cnn.jet"), "wb") as g:
            g.write(f.read())
        np.save(os.path.join(out, "images.npy"), images.astype(np.float16))
        np.save(os.path.join(out, "labels.npy"), labels.astype(np.uint8))
        with open(os.path.join(out, "losses.txt"), "w") as f:
            f.write("# PyTorch %s, torch_match.py: OPTIMIZER LR OPTIONS | the loss of steps 1..%d\n"
                    % (torch.__version__, STEPS))
            f.write("\n".join(reference) + "\n")
        print("torch_match: wrote the reference to %s" % out)


if __name__ == "__main__":
    main()
