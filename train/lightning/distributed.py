"""Helpers for runs on several processes (DDP and friends); no-ops in a single process."""

from __future__ import annotations

import torch.distributed as dist


def gather_objects(objects: list) -> list:
    """Every rank's ``objects`` concatenated in rank order (all ranks get the whole list), so
    epoch-end metrics are those of the whole split; the list itself in a single process."""
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        parts = [None] * dist.get_world_size()
        dist.all_gather_object(parts, objects)
        return [o for part in parts for o in part]
    return objects
