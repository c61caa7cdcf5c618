#!/usr/bin/env python3
"""The two ceilings of this GPU, measured (docs/gpu-campaign.md): device-memory bandwidth (a large
device-to-device copy, and an fp32 element-wise update of the shape ring-flash-attention's merge
has: read two fp32 tensors, write one) and bf16 matrix throughput (a large GEMM). Random inputs,
CUDA events, median of repeats after warm-up. Prints one JSON object."""
import json
import statistics

import torch


def median_ms(fn, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def main():
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    n = 1 << 28  # 1 GiB of fp32
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src))
    res["copy_bytes_per_s"] = 2 * 4 * n / (ms / 1e3)  # read + write
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(a)
    ms = median_ms(lambda: torch.add(a, b, out=out))
    res["add_fp32_bytes_per_s"] = 3 * 4 * n / (ms / 1e3)
    m = 8192
    x = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    ms = median_ms(lambda: x @ y)
    res["gemm_bf16_flop_per_s"] = 2 * m ** 3 / (ms / 1e3)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
