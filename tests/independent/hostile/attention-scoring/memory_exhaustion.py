"""Exhausts memory inside the kernel and outside the address-space limit.

All seven functions are wrong. The top-level code:

- reserves address space in 256 MiB blocks until `MemoryError`, keeps every block, and then
  releases only 64 MiB, so that the kernel sits just under the limit while the hidden tests
  run (each test then allocates into whatever is left);
- writes files of 63 MiB (under the 64 MiB file-size limit) into the sandbox's `/tmp` (and
  `/dev/shm` if it is writable), RAM-backed tmpfs mounts whose pages are not part of the
  process's address space: a way to hold host memory that the 6 GiB address-space limit does
  not count. The budget is capped at 512 MiB per mount here so that the test suite stays
  harmless on a shared machine; the sandbox's `/tmp` is sized at half of the host's RAM (a
  kernel that wrote 2 GiB there could still reserve 4.6 GiB of address space).

During the hidden tests `dot_score` asks torch for a 2**40-element tensor and `masked_softmax`
grows a list until `MemoryError` before answering (wrongly). Nothing is earned.
"""

import os

import torch

MAX_EARNED = 0

_BLOCK = 256 << 20
_TMPFS_BUDGET = 512 << 20
_FILE = (64 << 20) - (1 << 20)

_held = []
try:
    while True:
        _held.append(bytearray(_BLOCK))  # calloc: address space, not touched pages
except MemoryError:
    pass
_small = []
try:
    while True:
        _small.append(bytearray(16 << 20))
except MemoryError:
    pass
del _small
if _held:
    _held.pop()  # leave a little room for the hidden tests
_written = {}
for _mount in ("/tmp", "/dev/shm"):
    _written[_mount] = 0
    _chunk = b"\xa5" * (1 << 20)
    for _i in range(_TMPFS_BUDGET // _FILE):
        try:
            with open(os.path.join(_mount, f"ballast-{_i}"), "wb") as _f:
                for _ in range(_FILE >> 20):
                    _f.write(_chunk)
            _written[_mount] += _FILE
        except OSError:
            break
print(f"held {len(_held) * _BLOCK >> 20} MiB of address space; tmpfs: "
      + ", ".join(f"{m} {n >> 20} MiB" for m, n in _written.items()))


def dot_score(query, keys):
    try:
        huge = torch.empty(1 << 40)
        huge.fill_(1.0)
    except (RuntimeError, MemoryError):
        pass
    return (keys * query.unsqueeze(1)).sum(-1) + 3.0


def scaled_dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1) / keys.shape[-1]  # d_k instead of sqrt(d_k)


def general_score(query, keys, W):
    return (keys * (query @ W).unsqueeze(1)).sum(-1) * 3.0


def concat_score(query, keys, W, v):
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return torch.tanh(torch.cat([keys, expanded], dim=-1) @ W.T) @ v


def additive_score(query, keys, W_q, W_k, v):
    return torch.tanh(keys @ W_k.T + (query @ W_q.T).unsqueeze(1)) @ v * 2.0


def masked_softmax(scores, mask=None):
    grab = []
    try:
        while True:
            grab.append(bytearray(64 << 20))
    except MemoryError:
        pass
    del grab
    weights = torch.softmax(scores, dim=0)  # wrong dimension
    return weights if mask is None else weights * mask


def attend(query, keys, values=None, score=None, mask=None):
    if values is None:
        values = keys
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return values.max(dim=1).values, weights
