"""The peak GPU memory a run of ours states in its summary line, the same for every framework the runner launches:
allocated and reserved bytes, each the largest over the ranks, in GiB (read back by runner.logs.stated_peak_memory
into result.peak_memory)."""

from __future__ import annotations


def peak_memory(allocated_bytes: float, reserved_bytes: float) -> dict:
    """{"allocated_gib", "reserved_gib", "ranks"}: this rank's peaks, the largest over every rank where a process group
    is up (an all-reduce: every rank must call it)."""
    import torch
    import torch.distributed as dist

    peaks = torch.tensor([allocated_bytes, reserved_bytes], dtype=torch.float64, device="cuda")
    ranks = dist.get_world_size() if dist.is_initialized() else 1
    if ranks > 1:
        dist.all_reduce(peaks, op=dist.ReduceOp.MAX)
    return {"allocated_gib": round(float(peaks[0]) / 2**30, 3), "reserved_gib": round(float(peaks[1]) / 2**30, 3),
            "ranks": ranks}


def this_run() -> dict:
    """The process's peaks as torch's allocator counts them since start (or its last reset), over every rank."""
    import torch

    return peak_memory(torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved())
