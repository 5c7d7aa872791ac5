"""A tiny decoder-only Transformer that learns to reverse a sequence of digits (lesson 07).

The task. A sequence of 6 to 8 random digits, a separator, then the same digits reversed::

    3 1 4 1 5 9 | 9 5 1 4 1 3

The model reads left to right under a causal mask and predicts the next token. Before the
separator the digits are random, so nothing there can be predicted; after it every token is
determined: the output at step k is the source digit k places before the separator. The digits
are random, so the only way to find it is by *position*, which is what attention does: the
query of output position i (i = 0 at the separator) looks at source position n - 1 - i. In the
block of the attention matrix where the queries are the target positions and the keys the
source positions, a trained model draws an anti-diagonal.

Layout of one example of length n (ids ``0..9`` are digits, ``SEP`` the separator, ``PAD``
fills the row up to ``2 * max_len + 1`` tokens)::

    index   0 ... n-1   n     n+1 ... 2n    2n+1 ...
    token   s_1 ... s_n SEP   s_n ... s_1   PAD ...

``inputs = ids[:, :-1]`` and ``targets = ids[:, 1:]``: the model at input position t predicts
``targets[:, t] = ids[:, t + 1]``. The loss counts only the positions whose target is a reversed
digit, t = n .. 2n - 1 (``loss_mask``). Right padding needs no padding mask: under the causal
mask no real token can see the padding that follows it, and the loss skips the padding.

Held-out sequences come from their own seed (``HELDOUT_SEED``) and the training batches never
contain one of them (``training_batches`` redraws any row that is in the held-out set).

Main entry points: ``make_model``, ``train``, ``accuracy``, ``antidiagonal_mass``,
``reversal_head``, ``attention_for``, ``load_pretrained``.
"""
from __future__ import annotations

import dataclasses
import pathlib
from typing import Iterator, NamedTuple, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

from .block import TransformerBlock
from .masks import causal_mask
from .positional import PositionalEncoding
from .training import (  # noqa: F401  (num_parameters, default_device: part of this module's API)
    cpu_threads, default_device, device_of, eval_mode, num_parameters, one_cpu_thread, warmup_cosine,
)

# ----------------------------------------------------------------------------- the vocabulary
SEP, PAD = 10, 11
TOKENS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "|", "_")   # label of each token id
VOCAB_SIZE = len(TOKENS)

# ----------------------------------------------------------------------------- the recipe
TRAIN_SEED = 0            # model initialisation and training batches
HELDOUT_SEED = 1234       # the held-out sequences: another seed, and excluded from training
HELDOUT_SIZE = 1000
STEPS = 800
BATCH_SIZE = 32
LR = 5e-3
WARMUP = 80               # steps of linear warm-up, then a cosine decay to zero
WEIGHT_DECAY = 0.01

CHEAT_STEPS = 300         # lesson 07 trains a model without the causal mask this long

ACCURACY_THRESHOLD = 0.95         # held-out sequences reversed exactly (greedy decoding)
ANTI_DIAGONAL_THRESHOLD = 0.5     # attention mass of the best head on the mirror position

CHECKPOINT = pathlib.Path(__file__).resolve().parent / "checkpoints" / "tiny_reversal.pt"


@dataclasses.dataclass(frozen=True)
class TinyConfig:
    """Size of the model and of the task."""
    d_model: int = 32
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 128
    min_len: int = 6
    max_len: int = 8
    vocab_size: int = VOCAB_SIZE

    @property
    def context(self) -> int:
        """Input length: a full row has 2 * max_len + 1 tokens, the model reads all but the last."""
        return 2 * self.max_len


# ----------------------------------------------------------------------------- data
def encode(digits: Sequence[int]) -> list[int]:
    """[3, 1, 4] -> [3, 1, 4, SEP, 4, 1, 3]: the digits, the separator, the digits reversed."""
    digits = [int(d) for d in digits]
    if not digits or any(not 0 <= d <= 9 for d in digits):
        raise ValueError(f"expected a non-empty sequence of digits 0-9, got {digits!r}")
    return digits + [SEP] + digits[::-1]


def to_text(ids) -> str:
    """Token ids -> '3 1 4 | 4 1 3' (padding left out)."""
    return " ".join(TOKENS[i] for i in torch.as_tensor(ids).tolist() if i != PAD)


def make_batch(batch_size: int, generator: torch.Generator, config: TinyConfig | None = None) -> torch.Tensor:
    """(batch_size, 2 * max_len + 1) rows 's_1..s_n SEP s_n..s_1 PAD..', n uniform in min_len..max_len."""
    c = config or TinyConfig()
    L = 2 * c.max_len + 1
    n = torch.randint(c.min_len, c.max_len + 1, (batch_size, 1), generator=generator)       # (B, 1)
    digits = torch.randint(0, 10, (batch_size, c.max_len), generator=generator)             # (B, max_len)
    j = torch.arange(L)[None]                                                               # (1, L)
    source = torch.where(j < n, j, 2 * n - j).clamp(0, c.max_len - 1)   # which digit goes at index j
    ids = digits.gather(1, source)
    ids = torch.where(j == n, SEP, ids)
    return torch.where(j > 2 * n, PAD, ids)                                                 # (B, L)


def _codes(ids: torch.Tensor) -> torch.Tensor:
    """One int64 per row; equal rows get equal codes (a polynomial hash modulo 2^31 - 1)."""
    code = torch.zeros(ids.shape[0], dtype=torch.int64)
    for col in ids.cpu().long().unbind(1):
        code = (code * VOCAB_SIZE + col) % 2147483647
    return code


_HELDOUT: dict[TinyConfig, tuple[torch.Tensor, torch.Tensor]] = {}     # config -> (rows, their codes)


def _heldout(config: TinyConfig | None) -> tuple[torch.Tensor, torch.Tensor]:
    c = config or TinyConfig()
    if c not in _HELDOUT:
        rows = make_batch(HELDOUT_SIZE, torch.Generator().manual_seed(HELDOUT_SEED), c)
        _HELDOUT[c] = rows, _codes(rows)
    return _HELDOUT[c]


def heldout(config: TinyConfig | None = None) -> torch.Tensor:
    """The HELDOUT_SIZE held-out rows (B, 2 * max_len + 1), drawn from HELDOUT_SEED. Never trained on."""
    return _heldout(config)[0].clone()


def is_heldout(ids: torch.Tensor, config: TinyConfig | None = None) -> torch.Tensor:
    """(B,) bool: which rows of ``ids`` are in the held-out set."""
    return torch.isin(_codes(ids), _heldout(config)[1])


def training_batches(batch_size: int = BATCH_SIZE, seed: int = TRAIN_SEED,
                     config: TinyConfig | None = None) -> Iterator[torch.Tensor]:
    """Endless seeded batches on the CPU; a row that happens to be a held-out sequence is redrawn."""
    g = torch.Generator().manual_seed(seed)
    while True:
        ids = make_batch(batch_size, g, config)
        hit = is_heldout(ids, config)
        while hit.any():
            ids[hit] = make_batch(int(hit.sum()), g, config)
            hit = is_heldout(ids, config)
        yield ids


def split(ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Full rows (B, L) -> inputs (B, L-1) and targets (B, L-1): targets[:, t] = ids[:, t + 1]."""
    return ids[:, :-1], ids[:, 1:]


def loss_mask(inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(B, T) bool: True where the target is a reversed digit, i.e. from the separator on, not padding.

    The input at the separator predicts the first reversed digit; the source digits (random, so
    unpredictable) and the padding after the last digit do not count.
    """
    from_sep = torch.cumsum(inputs == SEP, dim=1) > 0          # the separator and everything after it
    return from_sep & (targets != PAD)


def lengths(ids: torch.Tensor) -> torch.Tensor:
    """(B,) number of source digits n of each row (= index of the separator)."""
    return (ids == SEP).int().argmax(dim=1)


# ----------------------------------------------------------------------------- the model
class TinyTransformer(nn.Module):
    """Decoder-only Transformer: token embedding + sinusoidal positions, pre-LN blocks, LayerNorm, head.

    ``forward(ids (B, T), need_weights=False)`` returns ``(logits (B, T, vocab), weights)`` where
    ``weights`` is a list with one (B, H, T, T) tensor per layer if asked for, else ``[]``.
    Every block gets ``causal_mask(T)``; with ``causal=False`` it gets ``mask=None`` (lesson 07
    trains such a model to show how it cheats).
    """

    def __init__(self, config: TinyConfig | None = None, causal: bool = True):
        super().__init__()
        c = self.config = config or TinyConfig()
        self.causal = causal
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = PositionalEncoding(c.d_model, max_len=c.context)
        self.blocks = nn.ModuleList(
            TransformerBlock(c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=True)
            for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size)

    def forward(self, ids: torch.Tensor, need_weights: bool = False):
        T = ids.shape[1]
        x = self.pos(self.embed(ids))                                          # (B, T, D)
        mask = causal_mask(T, device=ids.device) if self.causal else None      # (1, 1, T, T)
        weights = []
        for block in self.blocks:
            x, w = block(x, mask=mask, need_weights=need_weights)
            if need_weights:
                weights.append(w)                                              # (B, H, T, T)
        return self.head(self.norm(x)), weights                                # (B, T, vocab)


def make_model(seed: int = TRAIN_SEED, config: TinyConfig | None = None, causal: bool = True) -> TinyTransformer:
    """A freshly initialised model; the same seed gives the same weights, whatever ran before."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyTransformer(config, causal=causal)


# ----------------------------------------------------------------------------- training
def lr_at(step: int, steps: int = STEPS, lr: float = LR, warmup: int = WARMUP) -> float:
    """Linear warm-up for ``warmup`` steps, then a cosine decay from ``lr`` to 0."""
    return warmup_cosine(step, steps, lr, warmup)


def train(model: TinyTransformer, steps: int = STEPS, batch_size: int = BATCH_SIZE, lr: float = LR,
          seed: int = TRAIN_SEED, device=None, progress: bool = True, weight_decay: float = WEIGHT_DECAY,
          warmup: int = WARMUP, threads: int | None = 1) -> list[float]:
    """Train ``model`` in place with AdamW on seeded batches; returns the loss of every step.

    ``device`` defaults to CUDA when present, else the CPU; the batches are drawn on the CPU from
    ``seed`` either way, and the loop is the same. The model stays on ``device``.
    The loss is the cross-entropy on the target positions only (``loss_mask``).
    ``threads``: CPU threads for torch during training (see ``cpu_threads``; None: unchanged),
    restored afterwards. ``progress=False``: no progress bar at all. The model is left in eval
    mode, also when training is interrupted.
    """
    device = torch.device(device) if device is not None else default_device()
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    batches = training_batches(batch_size, seed, model.config)
    history = []
    bar = None
    if progress:
        from tqdm.auto import tqdm          # a widget in Jupyter, text elsewhere
        bar = tqdm(total=steps, desc="train", leave=True)
    try:
        with cpu_threads(threads):
            for step in range(steps):
                for group in optimizer.param_groups:
                    group["lr"] = lr_at(step, steps, lr, warmup)
                inputs, targets = split(next(batches).to(device))
                logits, _ = model(inputs)                                    # (B, T, vocab)
                mask = loss_mask(inputs, targets)                            # (B, T)
                loss = F.cross_entropy(logits[mask], targets[mask])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                history.append(loss.item())
                if bar is not None:
                    bar.update()
                    if step % 20 == 0 or step == steps - 1:
                        bar.set_postfix(loss=f"{history[-1]:.4f}")
    finally:
        if bar is not None:
            bar.close()
        model.eval()
    return history


# ----------------------------------------------------------------------------- evaluation
@torch.no_grad()
def greedy_reverse(model: TinyTransformer, ids: torch.Tensor) -> torch.Tensor:
    """Rows of one length n: feed 's_1..s_n SEP', append the argmax n times; returns (B, n) predictions."""
    n = int(lengths(ids[:1])[0])
    cur = ids[:, : n + 1]
    for _ in range(n):
        logits, _ = model(cur)
        cur = torch.cat([cur, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return cur[:, n + 1:]


@one_cpu_thread
@torch.no_grad()
def accuracy(model: TinyTransformer, ids: torch.Tensor | None = None, mode: str = "greedy") -> float:
    """Fraction of sequences whose whole reversed part is right (exact match), held-out rows by default.

    ``mode="greedy"``: the model writes its answer one token at a time, each prediction fed back in
    (what it would do for real). ``mode="teacher"``: one pass over the true rows, every position
    predicted from the true tokens before it (teacher forcing, as in training). Under a causal mask
    the two give the same exact-match accuracy; without one, teacher forcing lets the model read
    the answer.
    """
    if mode not in ("greedy", "teacher"):
        raise ValueError(f"mode must be 'greedy' or 'teacher', got {mode!r}")
    ids = (heldout(model.config) if ids is None else ids).to(device_of(model))
    n = lengths(ids)
    correct = 0
    with eval_mode(model):
        if mode == "teacher":
            inputs, targets = split(ids)
            logits, _ = model(inputs)
            right = (logits.argmax(-1) == targets) | ~loss_mask(inputs, targets)
            correct = int(right.all(dim=1).sum())
        else:
            for k in n.unique().tolist():
                rows = ids[n == k]
                correct += int((greedy_reverse(model, rows) == rows[:, k + 1: 2 * k + 1]).all(dim=1).sum())
    return correct / ids.shape[0]


@one_cpu_thread
@torch.no_grad()
def reverse_digits(model: TinyTransformer, digits: Sequence[int]) -> list[int]:
    """The model's greedy answer for one digit sequence."""
    ids = torch.tensor([encode(digits)], device=device_of(model))
    with eval_mode(model):
        return greedy_reverse(model, ids)[0].tolist()


def reversal_map(ids: torch.Tensor) -> torch.Tensor:
    """(B, T, T) bool over the inputs (T = L - 1): True at (query t, key 2n - 1 - t) for t = n .. 2n - 1.

    The position each target query must read: the anti-diagonal of the target x source block.
    """
    n = lengths(ids).to(ids.device)[:, None, None]                           # (B, 1, 1)
    T = ids.shape[1] - 1
    q = torch.arange(T, device=ids.device)[None, :, None]                   # (1, T, 1)
    k = torch.arange(T, device=ids.device)[None, None, :]                   # (1, 1, T)
    return (q >= n) & (q < 2 * n) & (q + k == 2 * n - 1)


@one_cpu_thread
@torch.no_grad()
def attention_weights(model: TinyTransformer, ids: torch.Tensor) -> list[torch.Tensor]:
    """Per layer, the (B, H, T, T) attention weights on the inputs of full rows ``ids``, on the CPU."""
    inputs, _ = split(ids.to(device_of(model)))
    with eval_mode(model):
        _, weights = model(inputs, need_weights=True)
    return [w.float().cpu() for w in weights]


def lookahead_map(ids: torch.Tensor) -> torch.Tensor:
    """(B, T, T) bool: True at (query t, key t + 1) for the target queries t = n .. 2n - 1.

    Key t + 1 holds exactly the token that query t must predict: a model without a causal
    mask can read its answer there.
    """
    n = lengths(ids).to(ids.device)[:, None, None]
    T = ids.shape[1] - 1
    q = torch.arange(T, device=ids.device)[None, :, None]
    k = torch.arange(T, device=ids.device)[None, None, :]
    return (q >= n) & (q < 2 * n) & (k == q + 1)


def attention_mass(model: TinyTransformer, where=reversal_map, ids: torch.Tensor | None = None) -> torch.Tensor:
    """(layers, heads): average weight that a target query puts on the keys marked by ``where(ids)``.

    ``where`` maps full rows (B, L) to a (B, T, T) bool map (``reversal_map``, ``lookahead_map``).
    Averaged over every marked (query, key) pair of every row, held-out rows by default.
    """
    ids = heldout(model.config) if ids is None else ids.cpu()
    R = where(ids)[:, None].float()                                          # (B, 1, T, T)
    return torch.stack([(w * R).sum(dim=(0, 2, 3)) / R.sum() for w in attention_weights(model, ids)])


def antidiagonal_mass(model: TinyTransformer, ids: torch.Tensor | None = None) -> torch.Tensor:
    """(layers, heads): average weight that a target query puts on its mirror key (1 = perfect reversal).

    Averaged over the target queries of every row (held-out rows by default). Uniform attention
    over the visible keys would give about 0.1.
    """
    return attention_mass(model, reversal_map, ids)


class HeadScore(NamedTuple):
    layer: int      # 1-based, as in the figure titles
    head: int       # 1-based
    mass: float


def reversal_head(model: TinyTransformer, ids: torch.Tensor | None = None) -> HeadScore:
    """The (layer, head), counted from 1, with the most attention mass on the anti-diagonal."""
    mass = antidiagonal_mass(model, ids)
    best = int(mass.argmax())
    layer, head = divmod(best, mass.shape[1])
    return HeadScore(layer + 1, head + 1, float(mass.flatten()[best]))


@torch.no_grad()
def attention_for(model: TinyTransformer, digits: Sequence[int]):
    """For the explorer: ``(tokens, [weights (H, T, T) per layer])`` for one digit sequence.

    The input is the full example minus its last token, 's_1..s_n | s_n..s_2' (the true answer,
    as in training), so row t of each matrix shows where position t looks to predict token t + 1.
    """
    digits = [int(d) for d in digits]
    n_max = model.config.max_len
    if not 1 <= len(digits) <= n_max:
        raise ValueError(f"the model reads 1 to {n_max} digits, got {len(digits)}")
    ids = torch.tensor([encode(digits)])
    tokens = [TOKENS[i] for i in ids[0, :-1].tolist()]
    return tokens, [w[0] for w in attention_weights(model, ids)]


# ----------------------------------------------------------------------------- checkpoint
def save_checkpoint(model: TinyTransformer, path=CHECKPOINT, **extra) -> pathlib.Path:
    """Save the float32 state_dict and the config (plain types, loadable with weights_only=True)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().float().cpu().clone() for k, v in model.state_dict().items()}
    torch.save({"config": dataclasses.asdict(model.config), "state_dict": state, **extra}, path)
    return path


def load_pretrained(path=CHECKPOINT, device=None) -> TinyTransformer:
    """The model trained by tools/train_tiny_checkpoint.py (same seed and recipe as ``train``), in eval mode."""
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model = TinyTransformer(TinyConfig(**ckpt["config"]))
    model.load_state_dict(ckpt["state_dict"])
    return model.to(device or "cpu").eval()
