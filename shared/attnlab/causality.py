"""The causality experiment: change only the last token; earlier positions must not move."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .block import TransformerBlock
from .course.i18n import t
from .masks import causal_mask


@dataclass(frozen=True)
class CausalityResult:
    earlier_drift: float      # max |change| at positions 0..T-2, with the mask
    last_drift: float         # max |change| at the last position, with the mask
    unmasked_drift: float     # max |change| at positions 0..T-2, without any mask
    seq_len: int
    tol: float = 1e-6

    @property
    def passed(self) -> bool:
        """Earlier positions did not move, the last one did, and without a mask they do move."""
        return self.earlier_drift < self.tol < self.last_drift and self.unmasked_drift > self.tol

    def report(self, lang: str | None = None) -> str:
        lines = [t("causality.title", lang), t("causality.changed", lang),
                 t("causality.earlier", lang, last=self.seq_len - 2, drift=self.earlier_drift),
                 t("causality.last", lang, drift=self.last_drift)]
        if self.earlier_drift >= self.tol:
            lines.append(t("causality.fail", lang))
        elif self.last_drift <= self.tol:
            lines.append(t("causality.fail_last", lang))
        else:
            lines.append(t("causality.pass", lang))
        lines.append(t("causality.unmasked", lang, drift=self.unmasked_drift))
        ok = self.unmasked_drift > self.tol
        lines.append(t("causality.unmasked_ok" if ok else "causality.unmasked_bad", lang))
        return "\n".join(lines)


def _max_change(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


def causality_check(block: torch.nn.Module | None = None, mask: torch.Tensor | None = None, *,
                    seed: int = 42, d_model: int = 64, num_heads: int = 8, d_ff: int = 256,
                    batch_size: int = 2, seq_len: int = 10, verbose: bool = True,
                    lang: str | None = None) -> CausalityResult:
    """Run seed 000's experiment on ``block`` (default: a fresh TransformerBlock built after
    ``torch.manual_seed(seed)``) with ``mask`` (default: ``causal_mask(seq_len)``; a (T, T) mask
    is used as (1, 1, T, T)). The seed is applied inside ``torch.random.fork_rng``: the global
    random state is the same after the call as before.

    The block is called as ``block(x, mask=...)`` and may return a tensor or a tuple whose
    first item is the output. Prints a report in ``lang`` unless ``verbose=False``.
    """
    with torch.random.fork_rng(devices=[]):        # seeded, and the caller's RNG is left alone
        torch.manual_seed(seed)
        if block is None:
            block = TransformerBlock(d_model=d_model, num_heads=num_heads, d_ff=d_ff)
        x = torch.randn(batch_size, seq_len, d_model)
        new_last = torch.randn(batch_size, d_model)
    param = next(block.parameters(), None)
    device = param.device if param is not None else torch.device("cpu")
    dtype = param.dtype if param is not None else torch.float32
    if mask is None:
        mask = causal_mask(seq_len, device=device)                        # (1, 1, T, T)
    elif isinstance(mask, torch.Tensor) and mask.dim() == 2:
        mask = mask[None, None]                                           # (T, T) -> (1, 1, T, T)
    x = x.to(device, dtype)
    x_changed = x.clone()
    x_changed[:, -1, :] = new_last.to(device, dtype)                     # rewrite the LAST token

    def run(inp, m):
        out = block(inp, mask=m)
        return out[0] if isinstance(out, tuple) else out

    was_training = block.training
    block.eval()  # no dropout: the experiment must be deterministic
    try:
        with torch.no_grad():
            out, out_changed = run(x, mask), run(x_changed, mask)
            free, free_changed = run(x, None), run(x_changed, None)
    finally:
        block.train(was_training)
    result = CausalityResult(
        earlier_drift=_max_change(out[:, :-1], out_changed[:, :-1]),
        last_drift=_max_change(out[:, -1], out_changed[:, -1]),
        unmasked_drift=_max_change(free[:, :-1], free_changed[:, :-1]),
        seq_len=seq_len,
    )
    if verbose:
        print(result.report(lang))
    return result
