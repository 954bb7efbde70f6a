"""PyTorch's caching allocator vs ``rmm_torch_allocator`` over an rmm pool, on a GPU.

``python torch_timing.py MODE`` (MODE: ``caching`` or ``rmm``) trains a small MLP and a
matmul/tanh loop in one process and prints one JSON line: milliseconds per step of each,
and the final loss (which must be identical in both modes: same seed, same kernels).
``python torch_timing.py table [RUNS]`` runs each mode RUNS times (default 5), alternating,
in fresh processes (the allocator can only be chosen before PyTorch's first allocation),
and prints the medians as a Markdown table.
"""

import json
import statistics
import subprocess
import sys
import time


def run(mode):
    import torch

    if mode == "rmm":
        import rmm
        from rmm.allocators.torch import rmm_torch_allocator

        rmm.reinitialize(pool_allocator=True, initial_pool_size="4GiB")
        stats = rmm.mr.StatisticsResourceAdaptor(rmm.mr.get_current_device_resource())
        rmm.mr.set_current_device_resource(stats)
        torch.cuda.memory.change_current_allocator(rmm_torch_allocator)
    torch.manual_seed(0)
    dev = torch.device("cuda")

    # MLP training steps (forward, backward, Adam): many short-lived tensors per step.
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096),
        torch.nn.ReLU(),
        torch.nn.Linear(4096, 4096),
        torch.nn.ReLU(),
        torch.nn.Linear(4096, 10),
    ).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(512, 1024, device=dev)
    y = torch.randint(0, 10, (512,), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    steps = 300
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
    mlp_ms = (time.perf_counter() - t0) * 1e3 / steps

    # matmul/tanh loop: allocation-heavy, little compute per tensor.
    a = torch.randn(256, 256, device=dev)
    for _ in range(50):
        a = torch.tanh(a @ a) * 0.5
    torch.cuda.synchronize()
    loops = 5000
    t0 = time.perf_counter()
    for _ in range(loops):
        a = torch.tanh(a @ a) * 0.5
    torch.cuda.synchronize()
    loop_us = (time.perf_counter() - t0) * 1e6 / loops

    out = {
        "mode": mode,
        "mlp_ms_per_step": mlp_ms,
        "loop_us_per_iter": loop_us,
        "final_loss": float(loss.item()),
        "checksum": float(a.double().sum().item()),
    }
    if mode == "rmm":
        c = stats.allocation_counts
        out["rmm_total_allocations"] = c.total_count
        out["rmm_peak_bytes"] = c.peak_bytes
    print(json.dumps(out))


def table(runs):
    results = {"caching": [], "rmm": []}
    for _ in range(runs):
        for mode in ("caching", "rmm"):
            p = subprocess.run(
                [sys.executable, __file__, mode], capture_output=True, text=True, check=True
            )
            results[mode].append(json.loads(p.stdout.strip().splitlines()[-1]))
    med = {
        m: {k: statistics.median(r[k] for r in rs) for k in ("mlp_ms_per_step", "loop_us_per_iter")}
        for m, rs in results.items()
    }
    losses = {m: {r["final_loss"] for r in rs} for m, rs in results.items()}
    sums = {m: {r["checksum"] for r in rs} for m, rs in results.items()}
    print(f"runs per mode: {runs} (alternating, fresh processes); medians")
    print("| workload | PyTorch caching allocator | rmm_torch_allocator (pool) | ratio |")
    print("| --- | --- | --- | --- |")
    for k, label in (("mlp_ms_per_step", "MLP train step (ms)"), ("loop_us_per_iter", "matmul+tanh loop (us/iter)")):
        c, r = med["caching"][k], med["rmm"][k]
        print(f"| {label} | {c:.3f} | {r:.3f} | {r / c:.2f} |")
    print("final losses:", losses, "identical:", losses["caching"] == losses["rmm"])
    print("loop checksums identical:", sums["caching"] == sums["rmm"])
    print("rmm statistics (last run): allocations", results["rmm"][-1].get("rmm_total_allocations"),
          "peak bytes", results["rmm"][-1].get("rmm_peak_bytes"))


if __name__ == "__main__":
    if sys.argv[1] == "table":
        table(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    else:
        run(sys.argv[1])
