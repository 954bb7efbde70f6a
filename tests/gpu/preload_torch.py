"""PyTorch under the LD_PRELOAD interposer (scripts/gpu-preload.sh).

`python preload_torch.py --child` runs the workload once and prints one JSON line:
a loop of small matmul/tanh temporaries and a small MLP training step with fixed seeds,
timed in microseconds per iteration (median of several repetitions), and a checksum (sum of
the weights after training). Without --child it runs the child in five configurations —
raw cudaMalloc (PYTORCH_NO_CUDA_MEMORY_CACHING=1), the interposer (default and
RMM_PRELOAD_SYNC=device and =0, also without PyTorch's cache), PyTorch's caching allocator — prints a
table, checks that every checksum is identical and that the interposer saw PyTorch's
cudaMalloc calls (RMM_PRELOAD_STATS=1 output), and exits non-zero otherwise.

`python preload_torch.py --target N` runs only the two configurations of the performance
target (the interposer by default ÷ PyTorch's caching allocator), N rounds in fresh
processes, alternating which goes first, and prints each round's ratios and the ratios of
the medians (about 25 s a round on the H100; the full table takes about 55 s).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time


def child():
    import torch

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")

    def timed(fn, iters, reps=5):
        fn(iters // 5)  # warm-up
        out = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t = time.perf_counter()
            fn(iters)
            torch.cuda.synchronize()
            out.append((time.perf_counter() - t) * 1e6 / iters)
        return statistics.median(out)

    x = torch.randn(256, 256, device=dev)

    def temporaries(n):
        y = x
        for _ in range(n):
            y = torch.tanh(y @ x) * 0.5 + y * 0.5
        return y

    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10),
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    gen = torch.Generator(device=dev).manual_seed(1)
    data = torch.randn(64, 512, device=dev, generator=gen)
    target = torch.randint(0, 10, (64,), device=dev, generator=gen)

    def train(n):
        for _ in range(n):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(data), target)
            loss.backward()
            opt.step()

    loop_us = timed(temporaries, 200)
    mlp_us = timed(train, 100)
    y = temporaries(50)
    checksum = float(sum(p.double().sum().item() for p in model.parameters()))
    print(json.dumps({"loop_us": loop_us, "mlp_us": mlp_us, "checksum": checksum,
                      "y": float(y.double().sum().item()), "torch": torch.__version__}))


INTERPOSER = "interposer (default)"
CACHING = "PyTorch caching allocator"


def run_child(name, extra, base):
    """One child run in configuration `name`: its JSON line with "intercepted" added, or
    None after printing why it failed."""
    p = subprocess.run([sys.executable, __file__, "--child"], env={**base, **extra},
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f"{name}: failed ({p.returncode})\n{p.stdout}\n{p.stderr}")
        return None
    r = json.loads(p.stdout.strip().splitlines()[-1])
    m = re.search(r"device 0: allocations (\d+)", p.stderr)
    r["intercepted"] = int(m.group(1)) if m else None
    if "LD_PRELOAD" in extra:
        sys.stderr.write(p.stderr)
        if not r["intercepted"]:
            print(f"{name}: the interposer intercepted no cudaMalloc (PyTorch bypasses the dynamic symbol?)")
            return None
    return r


def target(rounds, configs, base):
    """The interposer ÷ PyTorch's cache over `rounds` rounds of fresh processes, the order
    alternating; 1 when a run failed or the checksums differ."""
    times = {name: {"loop_us": [], "mlp_us": []} for name, _ in configs}
    sums, ok = set(), True
    for k in range(rounds):
        order = configs if k % 2 == 0 else configs[::-1]
        got = {}
        for name, extra in order:
            r = run_child(name, extra, base)
            if r is None:
                ok = False
                continue
            got[name] = r
            sums.add((r["checksum"], r["y"]))
            for key in ("loop_us", "mlp_us"):
                times[name][key].append(r[key])
        if len(got) == 2:
            a, b = got[INTERPOSER], got[CACHING]
            print(f"round {k + 1}: loop {a['loop_us']:.1f} / {b['loop_us']:.1f} = "
                  f"{a['loop_us'] / b['loop_us']:.2f}, MLP {a['mlp_us']:.1f} / {b['mlp_us']:.1f} = "
                  f"{a['mlp_us'] / b['mlp_us']:.2f}", flush=True)
    for key, label in (("loop_us", "loop"), ("mlp_us", "MLP step")):
        a, b = times[INTERPOSER][key], times[CACHING][key]
        if a and b:
            ma, mb = statistics.median(a), statistics.median(b)
            print(f"{label}: medians of {len(a)} / {len(b)} runs, interposer {ma:.1f} µs ÷ "
                  f"PyTorch's cache {mb:.1f} µs = {ma / mb:.2f}")
    if len(sums) > 1:
        print("checksums differ between runs")
        ok = False
    elif sums:
        print("checksums identical")
    return 0 if ok else 1


def main():
    preload = os.environ.get("RMM_PRELOAD_LIB", "target/release/librmm_preload.so")
    preload = os.path.abspath(preload)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("RMM_PRELOAD") and k not in ("LD_PRELOAD", "PYTORCH_NO_CUDA_MEMORY_CACHING")}
    configs = [
        ("raw cudaMalloc", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}),
        ("interposer (default)", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "LD_PRELOAD": preload,
                                  "RMM_PRELOAD_STATS": "1"}),
        ("interposer (sync=device)", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "LD_PRELOAD": preload,
                                      "RMM_PRELOAD_STATS": "1", "RMM_PRELOAD_SYNC": "device"}),
        ("interposer (sync=0)", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "LD_PRELOAD": preload,
                                 "RMM_PRELOAD_STATS": "1", "RMM_PRELOAD_SYNC": "0"}),
        ("PyTorch caching allocator", {}),
    ]
    if "--target" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--target") + 1])
        return target(rounds, [c for c in configs if c[0] in (INTERPOSER, CACHING)], base)
    rows, ok = [], True
    for name, extra in configs:
        r = run_child(name, extra, base)
        if r is None:
            ok = False
            continue
        rows.append((name, r))
    print(f"torch {rows[0][1]['torch'] if rows else '?'}")
    print(f"{'configuration':<28}{'loop µs/it':>12}{'MLP µs/it':>12}{'intercepted':>13}  checksum")
    for name, r in rows:
        print(f"{name:<28}{r['loop_us']:>12.1f}{r['mlp_us']:>12.1f}{str(r['intercepted']):>13}  "
              f"{r['checksum']!r} / {r['y']!r}")
    sums = {(r["checksum"], r["y"]) for _, r in rows}
    if len(sums) != 1:
        print("checksums differ between configurations")
        ok = False
    else:
        print("checksums identical")
    return 0 if ok else 1


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        sys.exit(main())
