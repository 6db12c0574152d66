#!/usr/bin/env python3
"""PyTorch's side of jet_bench_train_step: the time of one eager training step (forward in train
mode, cross-entropy, backward, SGD update), timed the way jet_bench_train_step times jet::Trainer.

Networks:
  resnet18       the converter's zoo ResNet-18 that jet_bench_train_step trains (converter/zoo.cpp):
                 torchvision's layers with batch norm folded away (every convolution has a bias, no
                 BatchNorm2d), the shortcut added before the block's last ReLU. The same layers and
                 parameter count as ours: the like-for-like comparison.
  resnet18-bn    torchvision's resnet18 as PyTorch users train it (BatchNorm2d in train mode,
                 convolutions without bias): what a PyTorch user would run; our zoo model has no
                 batch norm, so this costs PyTorch more work than our step does.
  small-cnn      samples/finetune's CNN (conv-bn-relu-pool twice, fc-relu-fc; 1x28x28 in, 10 out),
                 every layer trainable (prepare.py times the sample's own step, last 3 layers).
Step: optimizer.zero_grad(set_to_none=True), logits = model(x), F.cross_entropy(logits, labels),
backward, optimizer.step(), loss.item() (one synchronization per step, as ours reads the loss
back). SGD with momentum 0.9, lr 1e-3, no weight decay (jet_bench_train_step's), or --adam
(lr 1e-4). All parameters trainable, f32, TF32 off (ours does no TF32), cudnn.benchmark on
(eager PyTorch's usual choice: cuDNN's fastest algorithms, not necessarily deterministic).
Inputs: uniform in [-0.5, 0.5), labels (i * 37) % classes, as ours. Wall-clock time per step
(time.perf_counter), median and min over --steps after --warmup steps; then the forward and the
loss alone (eval mode, torch.no_grad: jet_bench_train_step's evaluate()).

  torch_train_step.py [--network resnet18|resnet18-bn|small-cnn] [--device cuda|cpu]
                      [--batch 32] [--image 224] [--steps 20] [--warmup 3] [--threads N] [--adam]
                      [--profile]
Prints a human line, then one JSON line ({"peer": "torch", "median_ms": ...}). --profile then
records 5 more steps with torch.profiler and prints the GPU kernels by their time per step (what
cuDNN and PyTorch ran, to set against jet_bench_train_step --profile's parts).
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as e:
    print("torch_train_step: skipped: %s" % e)
    sys.exit(77)


class BasicBlock(nn.Module):
    """The zoo's basic block: conv3x3(+bias)-relu, conv3x3(+bias) + shortcut, relu; a 1x1
    projection (+bias, no activation) when the shape changes."""

    def __init__(self, cin, cout, stride, bn):
        super().__init__()
        norm = (lambda c: nn.BatchNorm2d(c)) if bn else (lambda c: nn.Identity())
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=not bn)
        self.bn1 = norm(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=not bn)
        self.bn2 = norm(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=not bn), norm(cout))

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)) + shortcut)


class ResNet18(nn.Module):
    """ResNet-18: 7x7/2 stem (+ReLU), 3x3/2 max pool, [2, 2, 2, 2] basic blocks of width 64 << s,
    global average pool, fc to 1000. bn=False is the zoo's (batch norm folded into biases);
    bn=True has torchvision's layers."""

    def __init__(self, bn):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=not bn)
        self.bn1 = nn.BatchNorm2d(64) if bn else nn.Identity()
        blocks, cin = [], 64
        for stage in range(4):
            for b in range(2):
                cout = 64 << stage
                blocks.append(BasicBlock(cin, cout, 2 if stage > 0 and b == 0 else 1, bn))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, 1000)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.blocks(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class SmallCnn(nn.Module):
    """samples/finetune/torch_step.py's SmallCnn without its input normalization (a scale and shift,
    negligible next to the rest)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(),
                                        nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--network", default="resnet18", choices=["resnet18", "resnet18-bn", "small-cnn"])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: PyTorch's default)")
    ap.add_argument("--adam", action="store_true")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch_train_step: skipped: no CUDA device")
        return 77
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    dev = torch.device(args.device)
    if args.network == "small-cnn":
        model, shape, classes = SmallCnn(), (args.batch, 1, 28, 28), 10
    else:
        model, shape, classes = ResNet18(args.network == "resnet18-bn"), (args.batch, 3, args.image, args.image), 1000
    model = model.to(dev).train()
    x = (torch.rand(shape, device=dev) - 0.5).contiguous()
    labels = torch.tensor([(i * 37) % classes for i in range(args.batch)], device=dev, dtype=torch.long)
    params = [p for p in model.parameters()]
    opt = (torch.optim.Adam(params, lr=1e-4) if args.adam
           else torch.optim.SGD(params, lr=1e-3, momentum=0.9))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        opt.step()
        return loss.item()

    times, loss = [], 0.0
    for i in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        loss = step()
        if i >= args.warmup:
            times.append(1e3 * (time.perf_counter() - t0))
    # The forward and the loss alone, as jet_bench_train_step's evaluate(): eval mode, no autograd.
    model.eval()
    eval_times = []
    with torch.no_grad():
        for i in range(args.warmup + args.steps):
            t0 = time.perf_counter()
            F.cross_entropy(model(x), labels).item()
            if i >= args.warmup:
                eval_times.append(1e3 * (time.perf_counter() - t0))
    model.train()
    trainable = sum(p.numel() for p in params)
    where = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu, %d threads" % torch.get_num_threads()
    print("torch %s %s batch %d on %s, %s, %d trainable parameters: median %.3f ms, min %.3f ms over %d "
          "steps (loss %.4f); forward + loss (eval, no_grad) %.3f ms" % (
              torch.__version__, args.network, args.batch, where, "Adam" if args.adam else "SGD momentum",
              trainable, statistics.median(times), min(times), args.steps, loss, statistics.median(eval_times)))
    print(json.dumps({"peer": "torch", "torch": torch.__version__, "network": args.network,
                      "device": args.device, "batch": args.batch, "image": args.image,
                      "optimizer": "adam" if args.adam else "sgd-momentum", "trainable": trainable,
                      "median_ms": statistics.median(times), "min_ms": min(times), "steps": args.steps,
                      "eval_median_ms": statistics.median(eval_times),
                      "threads": torch.get_num_threads()}))
    if args.profile and args.device == "cuda":
        print_kernel_profile(step, 5)
    return 0


def print_kernel_profile(step, steps):
    """The GPU kernels of `steps` steps by their total time, per step."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    def device_us(e):  # torch >= 2.4 names it device_time_total, older ones cuda_time_total
        return getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0))
    rows = [(device_us(e) / steps, e.count // steps, e.key) for e in prof.key_averages()
            if device_us(e) > 0]
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    print("kernel profile (torch.profiler, %d steps): %.3f ms of GPU kernels per step" % (steps, total / 1e3))
    for us, n, name in rows[:40]:
        print("  %8.3f ms %4d x  %s" % (us / 1e3, n, name[:150]))


if __name__ == "__main__":
    sys.exit(main())
