"""Lesson 01's exercises, probe/judge, for the stand-in registry (see __init__)."""
from __future__ import annotations

import math

import torch

from ._common import call, tensor_of


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed) % (2 ** 63))


def _softmax_inputs(seed: int) -> list:
    g = _gen(seed)
    t, s = (int(v) for v in torch.randint(2, 9, (2,), generator=g))
    return [torch.randn(t, s + 1, generator=g) * 3, torch.randn(2, t, s, generator=g) * 3,
            torch.tensor([[1000.0, 999.0, 998.0], [3.0, 2.0, 1.0]])]


def probe_softmax(fn, *, seed: int) -> dict:
    outs = []
    for x in _softmax_inputs(seed):
        r = call(fn, x.clone())
        if "error" in r:
            return {"error": r["error"]}
        outs.append(tensor_of(r["value"]))
    return {"out": outs}


def _wrong(results: dict):
    err = results.get("error") if isinstance(results, dict) else None
    if isinstance(err, dict):
        return False, "error", {"type": str(err.get("type"))}
    return None


def judge_softmax(results, *, seed: int):
    bad = _wrong(results)
    if bad:
        return bad
    outs = results.get("out") if isinstance(results, dict) else None
    xs = _softmax_inputs(seed)
    if not isinstance(outs, list) or len(outs) != len(xs):
        return False, "missing", {}
    for x, got in zip(xs, outs):
        if not isinstance(got, torch.Tensor) or got.shape != x.shape or not torch.allclose(
                got.double(), torch.softmax(x.double(), -1), atol=1e-5):
            return False, "mismatch", {}
    return True, "ok", {}


def _attention_inputs(seed: int):
    g = _gen(seed + 1)
    t, s, d, dv = (int(v) for v in torch.randint(2, 9, (4,), generator=g))
    return torch.randn(2, t, d, generator=g), torch.randn(2, s, d, generator=g), torch.randn(2, s, dv, generator=g)


def probe_attention(fn, *, seed: int) -> dict:
    r = call(fn, *(x.clone() for x in _attention_inputs(seed)))
    if "error" in r:
        return {"error": r["error"]}
    v = r["value"]
    if not (isinstance(v, (tuple, list)) and len(v) == 2):
        return {"not_pair": True}
    return {"out": tensor_of(v[0]), "weights": tensor_of(v[1])}


def judge_attention(results, *, seed: int):
    bad = _wrong(results)
    if bad:
        return bad
    q, k, v = (x.double() for x in _attention_inputs(seed))
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1)
    out, got_w = results.get("out"), results.get("weights")
    for got, want in ((out, w @ v), (got_w, w)):
        if not isinstance(got, torch.Tensor) or got.shape != want.shape or not torch.allclose(got.double(), want, atol=1e-5):
            return False, "mismatch", {}
    return True, "ok", {}


def _std_cases(seed: int):
    g = _gen(seed + 2)
    return [(int(torch.randint(3, 300, (1,), generator=g)), float(torch.rand(1, generator=g)) * 2 + 0.3) for _ in range(4)]


def probe_dot_std(fn, *, seed: int) -> dict:
    values = []
    for d, s in _std_cases(seed):
        r = call(fn, d, s)
        if "error" in r:
            return {"error": r["error"]}
        try:
            values.append(float(r["value"]))
        except (TypeError, ValueError):
            return {"not_number": True}
    return {"values": values}


def judge_dot_std(results, *, seed: int):
    bad = _wrong(results)
    if bad:
        return bad
    values = results.get("values")
    cases = _std_cases(seed)
    if not isinstance(values, list) or len(values) != len(cases):
        return False, "missing", {}
    for got, (d, s) in zip(values, cases):
        if not isinstance(got, float) or not math.isclose(got, math.sqrt(d) * s * s, rel_tol=0.03):
            return False, "mismatch", {}
    return True, "ok", {}
