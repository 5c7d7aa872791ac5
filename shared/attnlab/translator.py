"""Lesson 08: a tiny encoder-decoder that writes numbers in words (Vietnamese or Chinese).

The task. The source is the digits of a number 0..99 999, the target its words
(``attnlab.numwords``)::

    source  1 0 5                 target  <s> một trăm linh năm </s>      (vi)
                                          <s> 一 百 零 五 </s>              (zh)

One model per language (``make_model(lang)``): each lesson trains only its own language inside
its time budget, the two vocabularies never compete for the same small model, and the heads of
a model have one job, which makes them easier to read.

Layout. Source ids: ``PAD = 0``, digit d -> d + 1, right-padded to the longest number of the
batch (``S`` ≤ 5). Target ids: ``PAD = 0``, ``BOS = 1``, ``EOS = 2``, then the words of
``numwords.VOCAB[lang]``; a row is ``BOS w_1 .. w_n EOS PAD ..``. Teacher forcing: the decoder
reads the target shifted right by one, ``tgt_in = tgt[:, :-1]`` (starting with BOS), and
predicts ``tgt_out = tgt[:, 1:]``; the loss skips PAD. Masks (bool, True = may attend):

- encoder self-attention: ``padding_mask(src)`` (B, 1, 1, S) — no query reads a padded digit;
- decoder self-attention: ``decoder_mask(tgt_in)`` (B, 1, T, T) — causal AND padding;
- cross-attention: ``padding_mask(src)`` (B, 1, 1, S) — target words never read padded digits.

Inference: greedy decoding (``generate``), with or without a KV cache. With the cache, each step
feeds only the newest token: its one query attends to the cached keys of every earlier position
and itself, all in its past, so the decoder self-attention needs no mask at all.

Held-out numbers come from ``HELDOUT_SEED`` (1 000 numbers of 3 to 5 digits) and are never in a
training batch. All 100 numbers below 100 are in training: they are the words of the language.

Main entry points: ``make_model``, ``train``, ``accuracy``, ``generate``, ``translate``,
``alignment_mass``, ``aligned_head``, ``attention_maps``, ``load_pretrained``.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
import pathlib
from typing import NamedTuple, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import numwords
from .attention import scaled_dot_product_attention
from .block import DecoderBlock, TransformerBlock
from .masks import decoder_mask, padding_mask
from .positional import PositionalEncoding
from .training import (  # noqa: F401  (num_parameters, default_device: part of this module's API)
    cpu_threads, default_device, device_of, num_parameters, one_cpu_thread, warmup_cosine,
)

PAD, BOS, EOS = 0, 1, 2
SRC_TOKENS = ("_",) + tuple("0123456789")            # source id -> label
MAX_DIGITS = 5

TRAIN_SEED = 0
HELDOUT_SEED = 1234
HELDOUT_SIZE = 1000
STEPS = 800
BATCH_SIZE = 64
LR = 3e-3
WARMUP = 100
WEIGHT_DECAY = 0.01

ACCURACY_THRESHOLD = 0.95
ALIGNMENT_THRESHOLD = 0.6

CHECKPOINT_DIR = pathlib.Path(__file__).resolve().parent / "checkpoints"


def target_tokens(lang: str) -> tuple[str, ...]:
    """Target id -> label: ``_``, ``<s>``, ``</s>``, then the words of ``lang``."""
    _check_lang(lang)
    return ("_", "<s>", "</s>") + numwords.VOCAB[lang]


def _check_lang(lang) -> None:
    if lang not in numwords.LANGUAGES:
        raise ValueError(f"lang must be one of {numwords.LANGUAGES}, got {lang!r}")


@dataclasses.dataclass(frozen=True)
class TranslatorConfig:
    lang: str = "vi"
    d_model: int = 64
    num_heads: int = 4
    enc_layers: int = 2
    dec_layers: int = 2
    d_ff: int = 128
    max_src: int = MAX_DIGITS
    max_tgt: int = 11           # BOS + up to 9 words + EOS

    @property
    def src_vocab(self) -> int:
        return len(SRC_TOKENS)

    @property
    def tgt_vocab(self) -> int:
        return len(target_tokens(self.lang))


# ----------------------------------------------------------------------------- data
_ROWS: dict[str, dict[int, tuple[list[int], list[int]]]] = {"vi": {}, "zh": {}}


def _row(n: int, lang: str) -> tuple[list[int], list[int]]:
    """(source ids, target ids BOS..EOS) of one number, computed once and kept."""
    rows = _ROWS[lang]
    if n not in rows:
        w = numwords.words(n, lang)
        vocab = _vocab_index(lang)
        rows[n] = [int(d) + 1 for d in w.digits], [BOS] + [vocab[x] for x in w.tokens] + [EOS]
    return rows[n]


@functools.lru_cache(maxsize=None)
def _vocab_index(lang: str) -> dict[str, int]:
    return {w: i for i, w in enumerate(target_tokens(lang))}


def encode(numbers: Sequence[int], lang: str) -> tuple[torch.Tensor, torch.Tensor]:
    """numbers -> (src (B, S), tgt (B, T+1)), right-padded to the longest row of the batch."""
    _check_lang(lang)
    rows = [_row(_check_number(n), lang) for n in numbers]
    S = max(len(r[0]) for r in rows)
    T = max(len(r[1]) for r in rows)
    src = torch.tensor([r[0] + [PAD] * (S - len(r[0])) for r in rows])
    tgt = torch.tensor([r[1] + [PAD] * (T - len(r[1])) for r in rows])
    return src, tgt


def encode_source(numbers: Sequence[int]) -> torch.Tensor:
    """numbers -> src (B, S) right-padded digit ids (no words needed)."""
    rows = [[int(d) + 1 for d in str(_check_number(n))] for n in numbers]
    S = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (S - len(r)) for r in rows])


def _check_number(n) -> int:
    if isinstance(n, bool) or (isinstance(n, torch.Tensor) and (n.dim() or n.is_floating_point())):
        raise TypeError(f"numbers must be ints, got {type(n).__name__}")
    try:
        n = operator.index(n)           # int, numpy/torch integer scalars
    except TypeError:
        raise TypeError(f"numbers must be ints, got {type(n).__name__}") from None
    if not 0 <= n <= numwords.MAX_NUMBER:
        raise ValueError(f"the model reads numbers 0..{numwords.MAX_NUMBER}, got {n}")
    return n


def draw_numbers(count: int, generator: torch.Generator, min_digits: int = 1,
                 max_digits: int = MAX_DIGITS) -> torch.Tensor:
    """(count,) numbers: a digit count uniform in min..max_digits, then a number uniform among those."""
    k = torch.randint(min_digits, max_digits + 1, (count,), generator=generator)
    low = torch.where(k == 1, 0, 10 ** (k - 1))
    high = 10 ** k                                                   # exclusive
    u = torch.rand(count, generator=generator, dtype=torch.float64)
    return (low + (u * (high - low)).long()).clamp(max=numwords.MAX_NUMBER)


@functools.lru_cache(maxsize=None)
def _heldout_numbers() -> torch.Tensor:
    g = torch.Generator().manual_seed(HELDOUT_SEED)
    seen: list[int] = []
    while len(seen) < HELDOUT_SIZE:
        for n in draw_numbers(HELDOUT_SIZE, g, min_digits=3).tolist():
            if n not in seen and len(seen) < HELDOUT_SIZE:
                seen.append(n)
    return torch.tensor(sorted(seen))


def heldout() -> list[int]:
    """The HELDOUT_SIZE held-out numbers (3 to 5 digits, from HELDOUT_SEED), sorted. Never trained on."""
    return _heldout_numbers().tolist()


@functools.lru_cache(maxsize=None)
def _heldout_flags() -> torch.Tensor:
    flags = torch.zeros(numwords.MAX_NUMBER + 1, dtype=torch.bool)
    flags[_heldout_numbers()] = True
    return flags


def is_heldout(numbers) -> torch.Tensor:
    """(B,) bool: which numbers are held out."""
    return _heldout_flags()[torch.as_tensor(numbers, dtype=torch.long)]


def training_numbers(batch_size: int = BATCH_SIZE, seed: int = TRAIN_SEED):
    """Endless seeded batches of numbers (CPU); a held-out number is redrawn."""
    g = torch.Generator().manual_seed(seed)
    while True:
        n = draw_numbers(batch_size, g)
        hit = is_heldout(n)
        while hit.any():
            n[hit] = draw_numbers(int(hit.sum()), g)
            hit = is_heldout(n)
        yield n


def shift_right(tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Target rows (B, L) -> decoder input (B, L-1) = the row shifted right (starts with BOS), and
    the words to predict (B, L-1) = tgt[:, 1:]."""
    return tgt[:, :-1], tgt[:, 1:]


# ----------------------------------------------------------------------------- the model
class Translator(nn.Module):
    """Encoder-decoder Transformer from the package's blocks (pre-LN, no dropout).

    ``forward(src (B, S), tgt_in (B, T), need_weights=False)`` returns ``(logits (B, T, V),
    weights)`` where ``weights`` is a dict ``{"enc_self": [(B, H, S, S)], "dec_self": [(B, H, T, T)],
    "cross": [(B, H, T, S)]}`` (one tensor per layer) if asked for, else None.

    ``cross_padding`` and ``causal`` switch the source padding mask of the cross-attention and the
    causal part of the decoder mask; they stay True except in the tests and the lesson's
    experiments that show what goes wrong without them.
    """

    def __init__(self, config: TranslatorConfig | None = None):
        super().__init__()
        c = self.config = config or TranslatorConfig()
        _check_lang(c.lang)
        self.cross_padding = True
        self.causal = True
        self.src_embed = nn.Embedding(c.src_vocab, c.d_model)
        self.tgt_embed = nn.Embedding(c.tgt_vocab, c.d_model)
        self.pos = PositionalEncoding(c.d_model, max_len=max(c.max_src, c.max_tgt))
        self.encoder = nn.ModuleList(
            TransformerBlock(c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=True)
            for _ in range(c.enc_layers))
        self.decoder = nn.ModuleList(
            DecoderBlock(c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=True)
            for _ in range(c.dec_layers))
        self.enc_norm = nn.LayerNorm(c.d_model)
        self.dec_norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.tgt_vocab)

    @property
    def lang(self) -> str:
        return self.config.lang

    def encode(self, src: torch.Tensor, need_weights: bool = False):
        """src (B, S) -> memory (B, S, D) and the encoder self-attention weights per layer."""
        mask = padding_mask(src, PAD)                                          # (B, 1, 1, S)
        x = self.pos(self.src_embed(src))                                      # (B, S, D)
        weights = []
        for block in self.encoder:
            x, w = block(x, mask=mask, need_weights=need_weights)
            weights.append(w)                                                  # (B, H, S, S)
        return self.enc_norm(x), weights

    def memory_mask(self, src: torch.Tensor) -> torch.Tensor | None:
        """(B, 1, 1, S): the cross-attention mask, False on padded digits (None if switched off)."""
        return padding_mask(src, PAD) if self.cross_padding else None

    def self_mask(self, tgt_in: torch.Tensor) -> torch.Tensor:
        """(B, 1, T, T): causal AND padding (padding only, if ``causal`` is switched off)."""
        if self.causal:
            return decoder_mask(tgt_in, PAD)
        T = tgt_in.shape[1]
        return padding_mask(tgt_in, PAD).expand(-1, 1, T, T)

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src: torch.Tensor,
               need_weights: bool = False):
        """tgt_in (B, T) -> logits (B, T, V), decoder self weights and cross weights per layer."""
        x = self.pos(self.tgt_embed(tgt_in))                                   # (B, T, D)
        self_mask, mem_mask = self.self_mask(tgt_in), self.memory_mask(src)
        w_self, w_cross = [], []
        for block in self.decoder:
            x, ws, wc = block(x, memory, self_mask=self_mask, memory_mask=mem_mask, need_weights=need_weights)
            w_self.append(ws)                                                  # (B, H, T, T)
            w_cross.append(wc)                                                 # (B, H, T, S)
        return self.head(self.dec_norm(x)), w_self, w_cross

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, need_weights: bool = False):
        memory, w_enc = self.encode(src, need_weights)
        logits, w_self, w_cross = self.decode(tgt_in, memory, src, need_weights)
        weights = {"enc_self": w_enc, "dec_self": w_self, "cross": w_cross} if need_weights else None
        return logits, weights


def make_model(lang: str = "vi", seed: int = TRAIN_SEED, config: TranslatorConfig | None = None) -> Translator:
    """A freshly initialised model for ``lang``; the same seed gives the same weights."""
    _check_lang(lang)
    config = dataclasses.replace(config or TranslatorConfig(), lang=lang)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Translator(config)


# ----------------------------------------------------------------------------- training
def lr_at(step: int, steps: int = STEPS, lr: float = LR, warmup: int = WARMUP) -> float:
    """Linear warm-up, then a cosine decay to 0."""
    return warmup_cosine(step, steps, lr, warmup)


def train(model: Translator, steps: int = STEPS, batch_size: int = BATCH_SIZE, lr: float = LR,
          seed: int = TRAIN_SEED, device=None, progress: bool = False, warmup: int = WARMUP,
          weight_decay: float = WEIGHT_DECAY, threads: int | None = 1) -> list[float]:
    """Train in place with teacher forcing and AdamW on seeded batches; returns the loss of every step.

    ``device``: CUDA when present by default; batches are drawn on the CPU from ``seed`` either way.
    ``progress``: a text progress bar (off by default, so a stored notebook never holds a
    half-finished one). ``threads``: CPU threads for torch during training (see ``cpu_threads``).
    """
    device = torch.device(device) if device is not None else default_device()
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    numbers = training_numbers(batch_size, seed)
    history = []
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=steps, desc="train", leave=True)
    with cpu_threads(threads):
        for step in range(steps):
            for group in optimizer.param_groups:
                group["lr"] = lr_at(step, steps, lr, warmup)
            src, tgt = encode(next(numbers).tolist(), model.lang)
            src, tgt = src.to(device), tgt.to(device)
            tgt_in, tgt_out = shift_right(tgt)                             # teacher forcing
            logits, _ = model(src, tgt_in)                                 # (B, T, V)
            loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            history.append(loss.item())
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    model.eval()
    return history


# ----------------------------------------------------------------------------- decoding
class Generation(NamedTuple):
    tokens: torch.Tensor      # (B, n) generated ids, EOS included, PAD after it
    logits: torch.Tensor      # (B, n, V) the logits of every step
    products: dict            # query·key dot products computed: {"self": int, "cross": int}


@torch.no_grad()
def generate(model: Translator, src: torch.Tensor, max_len: int | None = None,
             use_cache: bool = False) -> Generation:
    """Greedy decoding of a batch ``src`` (B, S): append the argmax until every row has EOS.

    ``use_cache=False``: each step runs the decoder on the whole prefix (B, t) again and keeps the
    last position. ``use_cache=True``: each step feeds only the newest token; the keys and values
    of earlier positions come from a cache (``cached_step``). Same tokens, same logits (to float
    rounding). ``products`` counts the query·key dot products of the decoder's attention
    (all batch rows, heads and layers), from the shapes actually computed.
    """
    was_training = model.training
    model.eval()
    src = src.to(device_of(model))
    B, S = src.shape
    c = model.config
    H, L = c.num_heads, c.dec_layers
    max_len = max_len or c.max_tgt - 1
    memory, _ = model.encode(src)
    fed = torch.full((B, 1), BOS, dtype=torch.long, device=src.device)       # what the decoder reads
    out = []                                                                  # what it wrote (PAD after EOS)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    logits_all, products = [], {"self": 0, "cross": 0}
    cache = KVCache.start(model, memory, src) if use_cache else None
    for t in range(1, max_len + 1):
        if use_cache:
            step_logits = cached_step(model, fed[:, -1], cache)                  # (B, V)
            products["self"] += B * H * L * 1 * t
            products["cross"] += B * H * L * 1 * S
        else:
            logits, _, _ = model.decode(fed, memory, src)                         # (B, t, V)
            step_logits = logits[:, -1]
            products["self"] += B * H * L * t * t
            products["cross"] += B * H * L * t * S
        nxt = step_logits[:, EOS:].argmax(-1) + EOS           # (B,) the best word or EOS, never PAD/BOS
        logits_all.append(step_logits)
        # A finished row keeps being fed its own argmax (never PAD, which the uncached decoder would
        # mask), so both paths compute the same thing; its output after EOS is PAD.
        fed = torch.cat([fed, nxt[:, None]], dim=1)
        out.append(torch.where(done, PAD, nxt))
        done |= nxt == EOS
        if done.all():
            break
    model.train(was_training)
    return Generation(torch.stack(out, dim=1), torch.stack(logits_all, dim=1), products)


class KVCache(NamedTuple):
    """Per decoder layer: self-attention keys/values so far (B, H, t, d_k), and the cross-attention
    keys/values of the source (B, H, S, d_k), computed once; the source padding mask (B, 1, 1, S)."""
    self_k: list
    self_v: list
    cross_k: list
    cross_v: list
    memory_mask: torch.Tensor | None
    position: list              # [t]: index of the next position

    @staticmethod
    def start(model: Translator, memory: torch.Tensor, src: torch.Tensor) -> "KVCache":
        cross_k, cross_v = [], []
        for block in model.decoder:
            a = block.cross_attention
            cross_k.append(a.split_heads(a.k_proj(memory)))                    # (B, H, S, d_k)
            cross_v.append(a.split_heads(a.v_proj(memory)))
        n = len(model.decoder)
        return KVCache([None] * n, [None] * n, cross_k, cross_v, model.memory_mask(src), [0])


def attend_step(q: torch.Tensor, k_cache, v_cache, k_new: torch.Tensor, v_new: torch.Tensor):
    """One decoding step of self-attention with a KV cache.

    q, k_new, v_new (B, H, 1, d_k): the newest position's query, key and value; k_cache, v_cache
    (B, H, t, d_k) or None. Appends the new key and value, then the one query attends to all t + 1
    keys with ``mask=None``: every key is at or before the query's position, so nothing needs
    masking. Returns ``(out (B, H, 1, d_k), weights (B, H, 1, t + 1), k (B, H, t+1, d_k), v)``.
    """
    k = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=2)       # (B, H, t+1, d_k)
    v = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=2)
    out, weights = scaled_dot_product_attention(q, k, v, mask=None)
    return out, weights, k, v


def cached_step(model: Translator, token: torch.Tensor, cache: KVCache, attend=attend_step) -> torch.Tensor:
    """Feed one token per row (B,) at position ``cache.position``; update ``cache``; return logits (B, V).

    Follows ``DecoderBlock.forward`` with ``norm_first=True`` (the model's setting), one position at a time.
    """
    t = cache.position[0]
    x = model.tgt_embed(token[:, None]) + model.pos.pe[t].to(model.head.weight.dtype)   # (B, 1, D)
    for i, block in enumerate(model.decoder):
        a = block.self_attention
        h = block.norm1(x)
        q, k_new, v_new = (a.split_heads(p(h)) for p in (a.q_proj, a.k_proj, a.v_proj))   # (B, H, 1, d_k)
        o, _, cache.self_k[i], cache.self_v[i] = attend(q, cache.self_k[i], cache.self_v[i], k_new, v_new)
        x = x + a.out_proj(a.merge_heads(o))
        c = block.cross_attention
        qc = c.split_heads(c.q_proj(block.norm2(x)))                             # (B, H, 1, d_k)
        oc, _ = scaled_dot_product_attention(qc, cache.cross_k[i], cache.cross_v[i], mask=cache.memory_mask)
        x = x + c.out_proj(c.merge_heads(oc))
        x = x + block.feed_forward(block.norm3(x))
    cache.position[0] = t + 1
    return model.head(model.dec_norm(x))[:, 0]                                  # (B, V)


def decode_ids(ids, lang: str) -> list[str]:
    """Target ids -> words, stopping at EOS (BOS and PAD left out)."""
    vocab = target_tokens(lang)
    words = []
    for i in torch.as_tensor(ids).tolist():
        if i == EOS:
            break
        if i not in (PAD, BOS):
            words.append(vocab[i])
    return words


@one_cpu_thread
def translate(model: Translator, numbers: Sequence[int] | int, use_cache: bool = True):
    """The model's words for one number (a list of words) or for a list of numbers (a list of lists)."""
    single = isinstance(numbers, int) and not isinstance(numbers, bool)
    nums = [numbers] if single else list(numbers)
    gen = generate(model, encode_source(nums), use_cache=use_cache)
    out = [decode_ids(row, model.lang) for row in gen.tokens]
    return out[0] if single else out


def join_words(words: Sequence[str], lang: str) -> str:
    return (" " if lang == "vi" else "").join(words)


@one_cpu_thread
@torch.no_grad()
def accuracy(model: Translator, numbers: Sequence[int] | None = None, batch_size: int = 500) -> float:
    """Exact-match accuracy of greedy decoding (with the KV cache), held-out numbers by default."""
    numbers = heldout() if numbers is None else list(numbers)
    right = 0
    for i in range(0, len(numbers), batch_size):
        chunk = numbers[i: i + batch_size]
        src, tgt = encode(chunk, model.lang)
        gen = generate(model, src, use_cache=True)
        for row, truth in zip(gen.tokens.cpu(), tgt):
            right += decode_ids(row, model.lang) == decode_ids(truth, model.lang)
    return right / len(numbers)


# ----------------------------------------------------------------------------- alignment
def alignment_map(numbers: Sequence[int], lang: str) -> torch.Tensor:
    """(B, T, S) float: 1 at (word j, its source digit) for every word of every number, 0 elsewhere
    (rows of EOS and padding are all 0). T, S as in ``encode`` (T = target length - 1)."""
    src, tgt = encode(numbers, lang)
    R = torch.zeros(len(numbers), tgt.shape[1] - 1, src.shape[1])
    for b, n in enumerate(numbers):
        for j, s in enumerate(numwords.words(int(n), lang).align):
            R[b, j, s] = 1.0
    return R


@one_cpu_thread
@torch.no_grad()
def cross_attention(model: Translator, numbers: Sequence[int]) -> list[torch.Tensor]:
    """Teacher-forced cross-attention weights per decoder layer, (B, H, T, S) on the CPU."""
    was_training = model.training
    model.eval()
    src, tgt = encode(numbers, model.lang)
    tgt_in, _ = shift_right(tgt)
    dev = device_of(model)
    _, w = model(src.to(dev), tgt_in.to(dev), need_weights=True)
    model.train(was_training)
    return [x.float().cpu() for x in w["cross"]]


def alignment_mass(model: Translator, numbers: Sequence[int] | None = None) -> torch.Tensor:
    """(layers, heads): the average cross-attention weight that the query predicting a word puts on
    that word's aligned source digit (``numwords``), over every word of every number (held-out
    numbers by default). 1 = perfectly aligned; uniform attention gives 1/S on average."""
    numbers = heldout() if numbers is None else list(numbers)
    R = alignment_map(numbers, model.lang)[:, None]                            # (B, 1, T, S)
    return torch.stack([(w * R).sum(dim=(0, 2, 3)) / R.sum() for w in cross_attention(model, numbers)])


def uniform_mass(lang: str, numbers: Sequence[int] | None = None) -> float:
    """What attention spread evenly over the real digits would score: 1/S averaged over every word."""
    numbers = heldout() if numbers is None else list(numbers)
    per_word = [1 / len(w.digits) for w in (numwords.words(int(n), lang) for n in numbers) for _ in w.tokens]
    return sum(per_word) / len(per_word)


# Words whose form needs a source digit besides their aligned one (numwords' context_digits).
CONTEXT_WORDS = {"vi": ("mốt", "tư", "lăm", "linh"), "zh": ("零",)}
# The same words in groups whose extra context differs (the tens digit; a later non-zero digit).
CONTEXT_GROUPS = {"vi": (("mốt", "tư", "lăm"), ("linh",)), "zh": (("零",),)}


def context_mass(model: Translator, numbers: Sequence[int] | None = None,
                 words: Sequence[str] | None = None) -> tuple[torch.Tensor, int]:
    """For the words of ``CONTEXT_WORDS[lang]`` (mốt, linh, 零, …; or only ``words``): the average
    cross-attention weight that the query predicting the word puts on the OTHER digits that decide its
    form (not its aligned digit), per (layer, head); and how many such words the numbers contain
    (held-out by default)."""
    numbers = heldout() if numbers is None else list(numbers)
    chosen = CONTEXT_WORDS[model.lang] if words is None else tuple(words)
    if not set(chosen) <= set(CONTEXT_WORDS[model.lang]):
        raise ValueError(f"words must be among {CONTEXT_WORDS[model.lang]}, got {tuple(words)}")
    src, tgt = encode(numbers, model.lang)
    R = torch.zeros(len(numbers), tgt.shape[1] - 1, src.shape[1])
    count = 0
    for b, n in enumerate(numbers):
        w = numwords.words(int(n), model.lang)
        for j, (word, a, ctx) in enumerate(zip(w.tokens, w.align, w.context_digits)):
            if word in chosen:
                count += 1
                for c in ctx:
                    if c != a:
                        R[b, j, c] = 1.0
    weights = cross_attention(model, numbers)
    rows = R.amax(-1)[:, None]                                                  # (B, 1, T): the words counted
    mass = torch.stack([(w * R[:, None]).sum(-1).mul(rows).sum(dim=(0, 2)) / max(count, 1) for w in weights])
    return mass, count


class HeadScore(NamedTuple):
    layer: int      # 1-based
    head: int       # 1-based
    mass: float


def aligned_head(model: Translator, numbers: Sequence[int] | None = None, layer: int | None = -1) -> HeadScore:
    """The head (counted from 1) with the most attention mass on the aligned digit, in the last
    decoder layer by default (``layer=None``: any layer)."""
    mass = alignment_mass(model, numbers)
    if layer is not None:
        li = range(mass.shape[0])[layer]
        h = int(mass[li].argmax())
        return HeadScore(li + 1, h + 1, float(mass[li, h]))
    best = int(mass.argmax())
    li, h = divmod(best, mass.shape[1])
    return HeadScore(li + 1, h + 1, float(mass.flatten()[best]))


# ----------------------------------------------------------------------------- for the explorer
@dataclasses.dataclass
class TranslatorMaps:
    """Attention of one number through the model. ``tgt_tokens`` are the decoder's inputs
    (``<s>`` then the model's own words), ``out_tokens`` what each of those positions predicts."""
    src_tokens: list[str]          # S source digits
    tgt_tokens: list[str]          # T decoder inputs
    out_tokens: list[str]          # T predicted words (the last is </s>)
    enc_self: list[torch.Tensor]   # per encoder layer (H, S, S)
    dec_self: list[torch.Tensor]   # per decoder layer (H, T, T)
    cross: list[torch.Tensor]      # per decoder layer (H, T, S)


@one_cpu_thread
@torch.no_grad()
def attention_maps(model: Translator, number: int, words: Sequence[str] | None = None) -> TranslatorMaps:
    """The model translates ``number`` (greedy); then one teacher-forced pass over ``<s>`` + its
    words gives every attention map. ``words``: feed these words instead of the model's own."""
    n = _check_number(number)
    lang = model.lang
    was_training = model.training
    model.eval()
    src = encode_source([n]).to(device_of(model))
    if words is None:
        words = translate(model, n)
    vocab = {w: i for i, w in enumerate(target_tokens(lang))}
    unknown = [w for w in words if w not in vocab]
    if unknown:
        raise ValueError(f"words not in the {lang} vocabulary: {unknown}")
    ids = [BOS] + [vocab[w] for w in words]
    tgt_in = torch.tensor([ids], device=src.device)
    logits, w = model(src, tgt_in, need_weights=True)
    model.train(was_training)
    labels = target_tokens(lang)
    return TranslatorMaps(
        src_tokens=list(str(n)),
        tgt_tokens=[labels[i] for i in ids],
        out_tokens=list(words) + ["</s>"],
        enc_self=[x[0].float().cpu() for x in w["enc_self"]],
        dec_self=[x[0].float().cpu() for x in w["dec_self"]],
        cross=[x[0].float().cpu() for x in w["cross"]],
    )


# ----------------------------------------------------------------------------- checkpoints
def checkpoint_path(lang: str) -> pathlib.Path:
    _check_lang(lang)
    return CHECKPOINT_DIR / f"translator_{lang}.pt"


def save_checkpoint(model: Translator, path=None, **extra) -> pathlib.Path:
    """float16 weights (the file stays small; loaded back as float32) and the config."""
    path = pathlib.Path(path or checkpoint_path(model.lang))
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().half().clone() for k, v in model.state_dict().items()}
    torch.save({"config": dataclasses.asdict(model.config), "state_dict": state, **extra}, path)
    return path


def load_pretrained(lang: str = "vi", path=None, device=None) -> Translator:
    """The model of ``lang`` trained by tools/train_translator_checkpoint.py, in eval mode."""
    _check_lang(lang)
    ckpt = torch.load(path or checkpoint_path(lang), map_location="cpu", weights_only=True)
    model = Translator(TranslatorConfig(**ckpt["config"]))
    model.load_state_dict({k: v.float() for k, v in ckpt["state_dict"].items()})
    return model.to(device or "cpu").eval()
