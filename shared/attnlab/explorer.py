"""The attention explorer: one sentence, four masks, 1-8 heads, scaling on or off; or a trained model.

Three layers, each usable on its own:

* ``ExplorerState`` (a frozen dataclass) says what to show; ``compute(state)`` returns the
  tokens, the weights of every head, the mask and a note; ``render(state)`` draws them into
  a matplotlib Figure of fixed size. Pure functions, no widgets: unit-testable anywhere.
* ``plot_grid(...)``: the static figure, mask type x head (for GitHub, nbviewer, PDF).
* ``AttentionExplorer`` / ``explore(**defaults)``: core ipywidgets (7.7 and 8) around them.
  It maps the controls to a state and shows the figure as a PNG in an ``Image`` of fixed
  height. Bad input shows a one-line message in the UI language and keeps the last figure.

The weights are deterministic: each token has a seeded embedding (the same word always gets
the same vector), and the projections are seeded the same way for every head count, so
1 head and 8 heads use the same W_q, W_k split differently. W_q and W_k are drawn with
std 1/sqrt(d_model), so the scores q.k have variance about d_k, as in a trained model:
scaled by 1/sqrt(d_k) they are of order 1, unscaled the softmax saturates. There is no
positional encoding: two equal tokens get equal rows where the mask allows.

A model switch (``model``) chooses between these seeded random weights ("random") and the
tiny Transformer of lesson 07 trained to reverse digit sequences ("trained",
``attnlab.tiny.load_pretrained()``, loaded once). In trained mode the input is 1 to 8 digits
(``digits``), the figure shows the heads of one ``layer`` on the model's own tokens (the digits,
the separator, the reversed digits) and the mask, head count, padding and scaling do not apply:
the model fixes them (causal mask, its own heads, no padding, scaled). The attention of each
digit string is cached.

Mixed scripts are allowed: ``attnlab.tokenize`` splits Vietnamese/English on spaces and
makes every Chinese character a token; a note says so. Characters that no course font can
draw (emoji, ...) are refused with a message.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import html
import io
import unicodedata
import zlib
from typing import NamedTuple

import ipywidgets as widgets
import torch

from .attention import scaled_dot_product_attention
from .fonts import unsupported_chars, use_course_fonts
from .heatmap_grid import HeatmapCanvas, heatmap_grid, new_figure
from .i18n import LANGUAGES, get_language, register, t
from .masks import causal_mask, padding_mask
from .multihead import MultiHeadAttention
from . import plotting  # noqa: F401  (registers the "plot.*" messages used below)
from .text import is_cjk, tokenize
from . import tiny

D_MODEL = 64
HEAD_COUNTS = (1, 2, 4, 8)
MASK_TYPES = ("none", "padding", "causal", "causal+padding")
PAD_SIDES = ("right", "left")
MAX_TOKENS = 32
MAX_PAD = 16
PAD = "<pad>"
SEED = 0
ALL_HEADS = -1
FIG_SIZE = (9.0, 5.4)           # inches; the PNG is always FIG_SIZE * dpi pixels
DPI = {False: 80, True: 96}     # normal, large-font mode: 720 x 432 or 864 x 518 pixels
FONT_SCALE = {False: 1.0, True: 1.3}
LANGUAGE_NAMES = (("Tiếng Việt", "vi"), ("中文", "zh"), ("English", "en"))
MODELS = ("random", "trained")
TRAINED_CONFIG = tiny.TinyConfig()    # the checkpoint's size (compute checks it against the loaded model)
DIGIT_SEPARATORS = " \t,，、;"          # allowed between digits ("3 1 4", "3,1,4", "314", "３１４")
TRAINED_MASK = "causal"               # what the trained model uses, for its title

register({
    "explorer.sentence": {"vi": "Câu", "zh": "句子", "en": "Sentence"},
    "explorer.sentence_hint": {"vi": "Gõ một câu rồi nhấn Enter", "zh": "输入一句话，然后按回车",
                               "en": "Type a sentence and press Enter"},
    "explorer.mask": {"vi": "Mặt nạ", "zh": "掩码", "en": "Mask"},
    "explorer.mask.none": {"vi": "không có", "zh": "无", "en": "none"},
    "explorer.mask.padding": {"vi": "đệm", "zh": "填充", "en": "padding"},
    "explorer.mask.causal": {"vi": "nhân quả", "zh": "因果", "en": "causal"},
    "explorer.mask.causal+padding": {"vi": "nhân quả + đệm", "zh": "因果 + 填充", "en": "causal + padding"},
    "explorer.heads": {"vi": "Số đầu", "zh": "头数", "en": "Heads"},
    "explorer.show": {"vi": "Hiển thị", "zh": "显示", "en": "Show"},
    "explorer.all_heads": {"vi": "tất cả các đầu", "zh": "所有头", "en": "all heads"},
    "explorer.pad": {"vi": "Token đệm", "zh": "填充词元", "en": "Pad tokens"},
    "explorer.pad_side": {"vi": "Đệm bên", "zh": "填充在", "en": "Pad on"},
    "explorer.side.left": {"vi": "trái", "zh": "左侧", "en": "left"},
    "explorer.side.right": {"vi": "phải", "zh": "右侧", "en": "right"},
    "explorer.scaled": {"vi": "Chia cho √d_k", "zh": "除以 √d_k", "en": "Divide by √d_k"},
    "explorer.annotate": {"vi": "Ghi số lên ô", "zh": "标出权重数值", "en": "Show numbers"},
    "explorer.language": {"vi": "Ngôn ngữ", "zh": "语言", "en": "Language"},
    "explorer.large": {"vi": "Chữ lớn (máy chiếu)", "zh": "大字体（投影）", "en": "Large font (projector)"},
    "explorer.title": {"vi": "Mặt nạ: {mask} · {h} đầu, d_k = {d_k} · {scale}",
                       "zh": "掩码：{mask} · {h} 个头，d_k = {d_k} · {scale}",
                       "en": "Mask: {mask} · heads: {h}, d_k = {d_k} · {scale}"},
    "explorer.scaled_title": {"vi": "điểm số / √{d_k}", "zh": "分数 / √{d_k}", "en": "scores / √{d_k}"},
    "explorer.unscaled_title": {"vi": "KHÔNG chia cho √{d_k}", "zh": "未除以 √{d_k}",
                                "en": "NOT divided by √{d_k}"},
    "explorer.legend": {"vi": "Hàng: truy vấn, cột: khóa. Ô xám: bị mặt nạ che (trọng số 0).",
                        "zh": "行：查询，列：键。灰色格子：被掩码遮住（权重为 0）。",
                        "en": "Rows: queries, columns: keys. Grey cells: masked (weight 0)."},
    "explorer.note.empty_rows": {
        "vi": "{n} truy vấn (nhãn đỏ) không thấy khóa nào — đệm bên trái + mặt nạ nhân quả: "
              "trọng số của chúng đều bằng 0.",
        "zh": "有 {n} 个查询（红色标签）看不到任何键——左侧填充 + 因果掩码：它们的权重全部为 0。",
        "en": "{n} queries (red labels) see no key at all — left padding + causal mask: "
              "their weights are all 0."},
    "explorer.note.mixed": {
        "vi": "Câu trộn chữ Latinh và chữ Hán: từ Latinh tách theo dấu cách, mỗi chữ Hán là một token.",
        "zh": "句子混合了拉丁字母和汉字：拉丁文按空格切分，每个汉字是一个词元。",
        "en": "Latin and Chinese text mixed: Latin words split on spaces, each Chinese character is one token."},
    "explorer.note.no_pad": {"vi": "Không có token đệm: mặt nạ đệm không che gì.",
                             "zh": "没有填充词元：填充掩码什么也不遮。",
                             "en": "No pad tokens: the padding mask hides nothing."},
    "explorer.note.no_numbers": {"vi": "Ô quá nhỏ để ghi số: hãy chọn một đầu.",
                                 "zh": "格子太小，写不下数值：请只显示一个头。",
                                 "en": "Cells too small for numbers: show one head."},
    "explorer.error.empty": {"vi": "Hãy gõ một câu (ô câu đang trống).", "zh": "请输入一句话（现在是空的）。",
                             "en": "Type a sentence (it is empty)."},
    "explorer.error.chars": {"vi": "Không vẽ được ký tự: {chars} — hãy xóa chúng đi.",
                             "zh": "无法显示这些字符：{chars}——请删掉它们。",
                             "en": "These characters cannot be drawn: {chars} — please remove them."},
    "explorer.error.too_long": {"vi": "Câu có {n} token, tối đa là {max}.",
                                "zh": "句子有 {n} 个词元，最多只能有 {max} 个。",
                                "en": "The sentence has {n} tokens; at most {max} fit."},
    "explorer.error.too_long_pad": {
        "vi": "{n} token + {pad} token đệm = {total}, quá {max}: hãy bớt token đệm hoặc rút ngắn câu.",
        "zh": "{n} 个词元 + {pad} 个填充词元 = {total}，超过了 {max}：请减少填充或缩短句子。",
        "en": "{n} tokens + {pad} pad tokens = {total}, more than {max}: use fewer pad tokens or a shorter sentence."},
    "explorer.model": {"vi": "Mô hình", "zh": "模型", "en": "Model"},
    "explorer.model.random": {"vi": "trọng số ngẫu nhiên", "zh": "随机权重", "en": "random weights"},
    "explorer.model.trained": {"vi": "mô hình đã huấn luyện", "zh": "训练好的模型", "en": "trained model"},
    "explorer.layer": {"vi": "Tầng", "zh": "层", "en": "Layer"},
    "explorer.layer_option": {"vi": "tầng {i}", "zh": "第 {i} 层", "en": "layer {i}"},
    "explorer.digits": {"vi": "Chữ số", "zh": "数字", "en": "Digits"},
    "explorer.digits_hint": {"vi": "Gõ 1–8 chữ số, ví dụ 3 1 4 1 5 9, rồi nhấn Enter",
                             "zh": "输入 1–8 个数字，例如 3 1 4 1 5 9，然后按回车",
                             "en": "Type 1–8 digits, e.g. 3 1 4 1 5 9, and press Enter"},
    "explorer.trained_fixed": {
        "vi": "Mô hình đã huấn luyện tự quy định mặt nạ (nhân quả), {h} đầu, không đệm và phép chia cho √d_k, "
              "nên các nút điều khiển đó bị khóa.",
        "zh": "训练好的模型自己决定了掩码（因果）、{h} 个头、不填充、除以 √d_k，所以这些控件不可用。",
        "en": "The trained model fixes the mask (causal), {h} heads, no padding and the √d_k scaling, "
              "so those controls are locked."},
    "explorer.trained_title": {
        "vi": "Mô hình đã huấn luyện (đảo chuỗi số) · tầng {layer}/{layers} · {h} đầu, d_k = {d_k} · mặt nạ nhân quả",
        "zh": "训练好的模型（倒序数字）· 第 {layer}/{layers} 层 · {h} 个头，d_k = {d_k} · 因果掩码",
        "en": "Trained model (reverses digits) · layer {layer}/{layers} · heads: {h}, d_k = {d_k} · causal mask"},
    "explorer.note.trained": {
        "vi": "Các truy vấn sau dấu | tìm chữ số ở vị trí đối xứng với chúng: một đường chéo ngược.",
        "zh": "| 之后的查询去找与自己对称位置上的数字：一条反对角线。",
        "en": "The queries after | look for their mirror digit: an anti-diagonal."},
    "explorer.note.short": {
        "vi": "Mô hình được huấn luyện với {min}–{max} chữ số: với {n} chữ số, đường chéo ngược có thể mờ đi.",
        "zh": "模型是用 {min}–{max} 个数字训练的：只有 {n} 个数字时，反对角线可能不明显。",
        "en": "The model was trained on {min}–{max} digits: with {n}, the anti-diagonal may fade."},
    "explorer.error.digits_empty": {"vi": "Hãy gõ 1–{max} chữ số, ví dụ 3 1 4 1 5 9.",
                                    "zh": "请输入 1–{max} 个数字，例如 3 1 4 1 5 9。",
                                    "en": "Type 1–{max} digits, e.g. 3 1 4 1 5 9."},
    "explorer.error.digits_chars": {"vi": "Mô hình đã huấn luyện chỉ đọc chữ số 0–9, không đọc: {chars}",
                                    "zh": "训练好的模型只认数字 0–9，不认：{chars}",
                                    "en": "The trained model reads only the digits 0–9, not: {chars}"},
    "explorer.error.digits_count": {"vi": "{n} chữ số: mô hình chỉ đọc 1–{max} chữ số.",
                                    "zh": "{n} 个数字：模型只能读 1–{max} 个数字。",
                                    "en": "{n} digits: the model reads 1 to {max}."},
    "explorer.error.unexpected": {"vi": "Lỗi ngoài dự kiến ({kind}): {detail}", "zh": "意外错误（{kind}）：{detail}",
                                  "en": "Unexpected error ({kind}): {detail}"},
})


class InputError(ValueError):
    """Input the explorer cannot show; ``message`` is ready for the user, in the state's language."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclasses.dataclass(frozen=True)
class ExplorerState:
    """Everything the explorer shows. ``head`` is 0-based, or ALL_HEADS (-1) for all side by side.

    ``model``: "random" (seeded random weights on ``sentence``, with ``mask``, ``num_heads``,
    ``pad``, ``pad_side``, ``scaled``) or "trained" (the tiny reversal model on ``digits``, one
    ``layer``, counted from 1; those five fields are then ignored, ``head`` counts the trained
    model's heads). Each mode keeps its own input, so switching back finds the sentence again.
    """
    sentence: str = "The cat sat on the mat because it was tired"
    mask: str = "none"
    num_heads: int = 8
    head: int = ALL_HEADS
    pad: int = 2
    pad_side: str = "right"
    scaled: bool = True
    annotate: bool = False
    lang: str = "en"
    large: bool = False
    model: str = "random"
    digits: str = "3 1 4 1 5 9"
    layer: int = TRAINED_CONFIG.num_layers          # 1-based; the last layer shows the reversal best

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.mask not in MASK_TYPES:
            raise ValueError(f"mask must be one of {MASK_TYPES}, got {self.mask!r}")
        if self.num_heads not in HEAD_COUNTS:
            raise ValueError(f"num_heads must be one of {HEAD_COUNTS}, got {self.num_heads!r}")
        heads = self.heads
        if not (self.head == ALL_HEADS or 0 <= self.head < heads):
            raise ValueError(f"head must be -1 (all) or in 0..{heads - 1}, got {self.head!r}")
        if not (isinstance(self.layer, int) and 1 <= self.layer <= TRAINED_CONFIG.num_layers):
            raise ValueError(f"layer must be in 1..{TRAINED_CONFIG.num_layers}, got {self.layer!r}")
        if not (isinstance(self.pad, int) and 0 <= self.pad <= MAX_PAD):
            raise ValueError(f"pad must be an int in 0..{MAX_PAD}, got {self.pad!r}")
        if self.pad_side not in PAD_SIDES:
            raise ValueError(f"pad_side must be one of {PAD_SIDES}, got {self.pad_side!r}")
        if self.lang not in LANGUAGES:
            raise ValueError(f"lang must be one of {LANGUAGES}, got {self.lang!r}")

    def replace(self, **changes) -> "ExplorerState":
        return dataclasses.replace(self, **changes)

    @property
    def trained(self) -> bool:
        return self.model == "trained"

    @property
    def heads(self) -> int:
        """How many heads the figure has: ``num_heads``, or the trained model's."""
        return TRAINED_CONFIG.num_heads if self.trained else self.num_heads

    @property
    def text(self) -> str:
        """The input of the current mode: ``digits`` when trained, else ``sentence``."""
        return self.digits if self.trained else self.sentence


class Result(NamedTuple):
    tokens: list[str]            # T tokens, padding included
    weights: torch.Tensor        # (H, T, T), every head
    mask: torch.Tensor           # (T, T) bool, True = may attend
    message: str                 # a note for the user ("" if none)


# ----------------------------------------------------------------------------- model

@functools.lru_cache(maxsize=None)
def _model(num_heads: int) -> MultiHeadAttention:
    """Seeded projections, the same W_q, W_k, W_v for every head count; eval mode, cached."""
    with torch.random.fork_rng(devices=[]):          # leave the caller's RNG alone
        torch.manual_seed(SEED)
        mha = MultiHeadAttention(D_MODEL, num_heads).eval()
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for proj in (mha.q_proj, mha.k_proj, mha.v_proj):
            proj.weight.normal_(0.0, D_MODEL ** -0.5, generator=g)
            proj.bias.zero_()
    return mha


@functools.lru_cache(maxsize=4096)
def _embedding(token: str) -> torch.Tensor:
    """A unit-variance vector seeded by the token's text (stable across runs and machines)."""
    g = torch.Generator().manual_seed(zlib.crc32(token.encode("utf-8")))
    return torch.randn(D_MODEL, generator=g)


@functools.lru_cache(maxsize=None)
def _trained_model() -> tiny.TinyTransformer:
    """The tiny reversal model of lesson 07, loaded once, on the CPU, in eval mode."""
    model = tiny.load_pretrained()
    c = model.config
    if (c.num_heads, c.num_layers, c.max_len) != (TRAINED_CONFIG.num_heads, TRAINED_CONFIG.num_layers,
                                                   TRAINED_CONFIG.max_len):
        raise RuntimeError(f"the checkpoint's model {c} is not the expected {TRAINED_CONFIG}")
    return model


@functools.lru_cache(maxsize=512)
def _trained_attention(digits: tuple[int, ...]) -> tuple[tuple[str, ...], torch.Tensor]:
    """(tokens, weights (layers, H, T, T)) of the trained model for one digit sequence, cached."""
    tokens, weights = tiny.attention_for(_trained_model(), digits)
    return tuple(tokens), torch.stack(weights)


# ----------------------------------------------------------------------------- pure functions

def parse_digits(state: ExplorerState) -> tuple[int, ...]:
    """``state.digits`` -> the digits (1 to 8 of them), or InputError with a message in ``state.lang``.

    Digits may be written together ("314159") or apart ("3 1 4", "3,1,4"); full-width digits count.
    """
    lang, n_max = state.lang, TRAINED_CONFIG.max_len
    chars = [ch for ch in state.digits if ch not in DIGIT_SEPARATORS and not ch.isspace()]
    bad = [ch for ch in chars if not (ch.isdecimal() and unicodedata.decimal(ch, None) is not None)]
    if bad:
        shown = list(dict.fromkeys(bad))[:5]
        raise InputError(t("explorer.error.digits_chars", lang, chars=" ".join(shown)))
    if not chars:
        raise InputError(t("explorer.error.digits_empty", lang, max=n_max))
    if len(chars) > n_max:
        raise InputError(t("explorer.error.digits_count", lang, n=len(chars), max=n_max))
    return tuple(unicodedata.decimal(ch) for ch in chars)


def compute_trained(state: ExplorerState) -> Result:
    """``compute`` in trained mode: the model's tokens, the weights of ``state.layer`` (H, T, T),
    its causal mask and a note."""
    digits = parse_digits(state)
    tokens, weights = _trained_attention(digits)
    if not 1 <= state.layer <= weights.shape[0]:
        raise ValueError(f"layer must be in 1..{weights.shape[0]}, got {state.layer}")
    T = len(tokens)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    notes = [t("explorer.note.trained", state.lang)]
    c = TRAINED_CONFIG
    if len(digits) < c.min_len:
        notes.append(t("explorer.note.short", state.lang, min=c.min_len, max=c.max_len, n=len(digits)))
    return Result(list(tokens), weights[state.layer - 1].clone(), mask, " ".join(notes))


def sentence_tokens(state: ExplorerState) -> list[str]:
    """The sentence's tokens, or InputError with a message in ``state.lang``."""
    lang = state.lang
    tokens = tokenize(state.sentence)
    if not tokens:
        raise InputError(t("explorer.error.empty", lang))
    bad = unsupported_chars(state.sentence)
    if bad:
        raise InputError(t("explorer.error.chars", lang, chars=" ".join(bad[:5])))
    if len(tokens) > MAX_TOKENS:
        raise InputError(t("explorer.error.too_long", lang, n=len(tokens), max=MAX_TOKENS))
    if len(tokens) + state.pad > MAX_TOKENS:
        raise InputError(t("explorer.error.too_long_pad", lang, n=len(tokens), pad=state.pad,
                           total=len(tokens) + state.pad, max=MAX_TOKENS))
    return tokens


def is_mixed(tokens: list[str]) -> bool:
    """Chinese characters and Latin-script words in one sentence."""
    han = any(is_cjk(tok[0]) for tok in tokens)
    latin = any(ch.isalpha() and not is_cjk(ch) for tok in tokens for ch in tok)
    return han and latin


def build_mask(kind: str, is_pad: torch.Tensor) -> torch.Tensor:
    """(T,) bool padding flags -> (T, T) bool mask of the given kind (True = may attend)."""
    T = is_pad.shape[0]
    ids = (~is_pad).long()[None]                                     # (1, T), pad id 0
    mask = torch.ones(T, T, dtype=torch.bool)
    if "padding" in kind:
        mask = mask & padding_mask(ids)[0, 0]                         # (1, T) -> (T, T)
    if "causal" in kind:
        mask = mask & causal_mask(T)[0, 0]
    return mask


def compute(state: ExplorerState) -> Result:
    """Tokens, per-head weights (H, T, T), mask (T, T) and a note; InputError for bad input."""
    if state.trained:
        return compute_trained(state)
    words = sentence_tokens(state)
    pads = [PAD] * state.pad
    tokens = pads + words if state.pad_side == "left" else words + pads
    mask = build_mask(state.mask, torch.tensor(pad_flags(state, len(tokens))))

    mha = _model(state.num_heads)
    x = torch.stack([_embedding(tok) for tok in tokens])[None]         # (1, T, D)
    with torch.no_grad():
        q = mha.split_heads(mha.q_proj(x))                            # (1, H, T, d_k)
        k = mha.split_heads(mha.k_proj(x))
        v = mha.split_heads(mha.v_proj(x))
        _, weights = scaled_dot_product_attention(q, k, v, mask=mask[None, None],
                                                  scale=None if state.scaled else 1.0)
    notes = []
    if empty_rows(mask):                      # left padding + causal: queries that see no key
        notes.append(t("explorer.note.empty_rows", state.lang, n=empty_rows(mask)))
    if "padding" in state.mask and state.pad == 0:
        notes.append(t("explorer.note.no_pad", state.lang))
    if is_mixed(words):
        notes.append(t("explorer.note.mixed", state.lang))
    return Result(tokens, weights[0], mask, " ".join(notes))


def empty_rows(mask: torch.Tensor) -> int:
    """How many queries may attend to no key at all (their weights are all zero)."""
    return int((~mask.any(-1)).sum())


def _grid_shape(n: int) -> tuple[int, int]:
    return (2, n // 2) if n >= 4 else (1, n)


def title(state: ExplorerState) -> str:
    if state.trained:
        c = TRAINED_CONFIG
        return t("explorer.trained_title", state.lang, layer=state.layer, layers=c.num_layers, h=c.num_heads,
                 d_k=c.d_model // c.num_heads)
    lang, d_k = state.lang, D_MODEL // state.num_heads
    scale = t("explorer.scaled_title" if state.scaled else "explorer.unscaled_title", lang, d_k=d_k)
    return t("explorer.title", lang, mask=t(f"explorer.mask.{state.mask}", lang), h=state.num_heads,
             d_k=d_k, scale=scale)


def new_canvas(large: bool = False) -> HeatmapCanvas:
    """A canvas of the explorer's fixed size, outside pyplot (nothing to close)."""
    return HeatmapCanvas(new_figure(*FIG_SIZE, dpi=DPI[large]))


def draw(state: ExplorerState, result: Result, canvas: HeatmapCanvas | None = None):
    """Draw a computed ``result`` into ``canvas`` (default: a new one; pass the previous one
    to redraw it in place). Returns (figure, note for the user)."""
    use_course_fonts()
    lang = state.lang
    heads = list(range(result.weights.shape[0])) if state.head == ALL_HEADS else [state.head]
    R, C = _grid_shape(len(heads))
    weights = result.weights[heads].reshape(R, C, *result.weights.shape[1:]).numpy()
    canvas = new_canvas(state.large) if canvas is None else canvas
    empty = empty_rows(result.mask)
    fits = canvas.draw(weights, result.mask.numpy(), result.tokens,
                       titles=[t("plot.head", lang, i=h + 1) for h in heads],
                       xlabel=t("plot.keys", lang), ylabel=t("plot.queries", lang), suptitle=title(state),
                       footnote=t("explorer.legend", lang),
                       warning=t("explorer.note.empty_rows", lang, n=empty) if empty else "",
                       muted=pad_flags(state, len(result.tokens)), annotate=state.annotate,
                       font_scale=FONT_SCALE[state.large])
    note = result.message
    if state.annotate and not fits:
        note = " ".join(filter(None, [note, t("explorer.note.no_numbers", lang)]))
    return canvas.fig, note


def pad_flags(state: ExplorerState, n: int) -> list[bool]:
    """Which of the ``n`` positions (padding included) are pad tokens (none in trained mode)."""
    if state.trained:
        return [False] * n
    return [i < state.pad if state.pad_side == "left" else i >= n - state.pad for i in range(n)]


def render(state: ExplorerState):
    """The explorer's figure for ``state`` (a matplotlib Figure, not registered with pyplot)."""
    return draw(state, compute(state))[0]


def to_png(fig) -> bytes:
    """The figure as PNG bytes, at its own dpi (fast compression: the bytes go to a browser)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def plot_grid(sentence: str | None = None, num_heads: int = 4, pad: int = 2, pad_side: str = "left",
              scaled: bool = True, lang: str | None = None):
    """The static figure: one row per mask type, one column per head. A pyplot Figure
    (end the cell with ``plt.show()``)."""
    import matplotlib.pyplot as plt

    use_course_fonts()
    lang = get_language() if lang is None else lang
    sentence = t("example.long", lang) if sentence is None else sentence
    states = [ExplorerState(sentence=sentence, mask=m, num_heads=num_heads, pad=pad, pad_side=pad_side,
                            scaled=scaled, lang=lang) for m in MASK_TYPES]
    results = [compute(s) for s in states]
    weights = torch.stack([r.weights for r in results]).numpy()          # (4, H, T, T)
    masks = torch.stack([r.mask for r in results])[:, None].numpy()       # (4, 1, T, T)
    tokens = results[0].tokens
    empty = max(empty_rows(r.mask) for r in results)
    d_k = D_MODEL // num_heads
    scale = t("explorer.scaled_title" if scaled else "explorer.unscaled_title", lang, d_k=d_k)
    fig = plt.figure(figsize=(1.6 + 2.0 * num_heads, 1.6 + 2.0 * len(MASK_TYPES)), dpi=80)
    heatmap_grid(fig, weights, masks, tokens,
                 titles=[t("plot.head", lang, i=h + 1) for _ in MASK_TYPES for h in range(num_heads)],
                 xlabel=t("plot.keys", lang), ylabel=[t(f"explorer.mask.{m}", lang) for m in MASK_TYPES],
                 suptitle=f"{t('explorer.mask', lang)} × {t('explorer.heads', lang)} · d_k = {d_k} · {scale}",
                 footnote=t("explorer.legend", lang), muted=pad_flags(states[0], len(tokens)),
                 warning=t("explorer.note.empty_rows", lang, n=empty) if empty else "")
    return fig


# ----------------------------------------------------------------------------- widgets

CONTROL_WIDTH = {False: "270px", True: "400px"}
LABEL_WIDTH = {False: "90px", True: "150px"}
LARGE_CLASS = "attnlab-projector"          # on the explorer in large-font mode (CSS below)
LARGE_CSS = """<style>
.attnlab-projector { --jp-widgets-font-size: 20px; --jp-widgets-inline-height: 36px; }
.attnlab-projector .widget-label, .attnlab-projector .widget-label-basic, .attnlab-projector .widget-readout,
.attnlab-projector select, .attnlab-projector input, .attnlab-projector .widget-html-content,
.attnlab-projector button { font-size: 20px !important; }
.attnlab-projector .widget-dropdown, .attnlab-projector .widget-text, .attnlab-projector .widget-checkbox,
.attnlab-projector .widget-hslider, .attnlab-projector select, .attnlab-projector input { min-height: 36px; }
</style>"""


class AttentionExplorer(widgets.VBox):
    """The explorer as one widget (display it, or put it last in a cell).

    ``controls`` maps each ``ExplorerState`` field to its widget; changing any of them (by
    hand or in code: ``explorer.controls["mask"].value = "causal"``) redraws the figure in
    ``image``. ``state`` is the state of the figure shown; ``message`` shows notes and errors.
    The text box ``controls["sentence"]`` holds the input of the current model: the sentence
    (random weights) or the digits (trained model); each model keeps its own text, so switching
    ``controls["model"]`` back and forth gives it back. In trained mode the controls that the
    model fixes are disabled and ``mode_note`` says why.
    """

    TRAINED_FIXED = ("mask", "num_heads", "pad", "pad_side", "scaled")   # disabled in trained mode

    def __init__(self, **defaults):
        lang = defaults.pop("lang", None) or get_language()
        sentence = defaults.pop("sentence", None)
        state = ExplorerState(sentence=t("example.long", lang) if sentence is None else sentence,
                              lang=lang, **defaults)
        self.state = state
        self._muted = False
        self._canvases: dict[bool, HeatmapCanvas] = {}     # one per size, redrawn in place
        self._texts = {"random": state.sentence, "trained": state.digits}     # the text of each model
        self.controls = {
            "model": widgets.Dropdown(options=MODELS, value=state.model),
            "layer": widgets.Dropdown(options=list(range(1, TRAINED_CONFIG.num_layers + 1)), value=state.layer),
            "sentence": widgets.Text(value=state.text, continuous_update=False),
            "mask": widgets.Dropdown(options=MASK_TYPES, value=state.mask),
            "num_heads": widgets.Dropdown(options=[(str(h), h) for h in HEAD_COUNTS], value=state.num_heads),
            "head": widgets.Dropdown(options=self._head_options(state.num_heads, lang), value=state.head),
            "pad": widgets.IntSlider(value=state.pad, min=0, max=MAX_PAD),
            "pad_side": widgets.Dropdown(options=PAD_SIDES, value=state.pad_side),
            "scaled": widgets.Checkbox(value=state.scaled),
            "annotate": widgets.Checkbox(value=state.annotate),
            "lang": widgets.Dropdown(options=LANGUAGE_NAMES, value=state.lang),
            "large": widgets.Checkbox(value=state.large),
        }
        c = self.controls
        self.message = widgets.HTML(layout=widgets.Layout(height="3em", overflow="hidden"))
        self.mode_note = widgets.HTML()               # why some controls are locked (trained mode only)
        self.image = widgets.Image(format="png", layout=widgets.Layout(object_fit="contain", max_width="100%"))
        css = widgets.HTML(value=LARGE_CSS, layout=widgets.Layout(display="none"))
        row = lambda names: widgets.HBox([c[name] for name in names], layout=widgets.Layout(flex_flow="row wrap"))
        rows = [["mask", "num_heads", "head"], ["pad", "pad_side"], ["scaled", "annotate"], ["lang", "large"]]
        super().__init__(children=[css, row(["model", "layer"]), c["sentence"]] + [row(names) for names in rows]
                         + [self.mode_note, self.message, self.image])
        self.add_class("attnlab-explorer")
        for name, control in c.items():               # CSS hooks for styling and browser tests
            control.add_class(f"attnlab-control-{name}")
        self.mode_note.add_class("attnlab-mode-note")
        self.image.add_class("attnlab-image")
        self._relabel()
        self._resize()
        for control in c.values():
            control.observe(self._on_change, names="value")
        self.update()

    def __repr__(self) -> str:        # the text/plain of the widget's output: short, no image bytes
        return f"{type(self).__name__}({self.state})"

    # --- control values -> state -> image

    def read_state(self) -> ExplorerState:
        """The state the controls describe (may hold bad input: ``compute`` will say so)."""
        values = {name: control.value for name, control in self.controls.items() if name != "sentence"}
        texts = {**self._texts, values["model"]: self.controls["sentence"].value}
        return ExplorerState(sentence=texts["random"], digits=texts["trained"], **values)

    def update(self) -> bool:
        """Redraw from the controls. On bad input, or any error, show a one-line message and
        keep the last good figure. Returns whether the figure was redrawn."""
        try:
            state = self.read_state()
            if state.large not in self._canvases:
                self._canvases[state.large] = new_canvas(state.large)
            canvas = self._canvases[state.large]
            _, note = draw(state, compute(state), canvas)
            png = canvas.png()
        except InputError as e:
            self._say(e.message, error=True)
            return False
        except Exception as e:  # never a traceback in the UI
            self._say_unexpected(e)
            return False
        self.state = state
        self.image.value = png
        self._say(note)
        return True

    def _on_change(self, change) -> None:
        if self._muted:
            return
        owner, c = change["owner"], self.controls
        try:
            if owner is c["sentence"]:
                self._texts[c["model"].value] = change["new"]
            if owner is c["model"]:
                with self._quiet():                   # each model gets its own text back
                    c["sentence"].value = self._texts[change["new"]]
            if owner is c["num_heads"] or owner is c["lang"] or owner is c["model"]:
                self._relabel()
            if owner is self.controls["large"]:
                self._resize()
        except Exception as e:  # never a traceback in the UI
            self._say_unexpected(e)
            return
        self.update()

    def _say_unexpected(self, error: Exception) -> None:
        detail = (str(error).strip().splitlines() or [""])[0][:160]
        self._say(t("explorer.error.unexpected", self.controls["lang"].value, kind=type(error).__name__,
                    detail=detail), error=True)

    def _say(self, text: str, error: bool = False) -> None:
        color = "#b00020" if error else "#444444"
        icon = "⚠ " if error else ("ℹ " if text else "")
        self.message.value = (f'<div class="attnlab-message" style="color:{color}; line-height:1.4">'
                              f'{icon}{html.escape(text)}</div>')

    # --- language and size

    @staticmethod
    def _head_options(num_heads: int, lang: str) -> list:
        return [(t("explorer.all_heads", lang), ALL_HEADS)] + [
            (t("plot.head", lang, i=h + 1), h) for h in range(num_heads)]

    @contextlib.contextmanager
    def _quiet(self):
        self._muted = True
        try:
            yield
        finally:
            self._muted = False

    def _relabel(self) -> None:
        """Every description and option label in the current UI language (values unchanged), and
        the controls that apply to the current model enabled, the others disabled."""
        c, lang = self.controls, self.controls["lang"].value
        trained = c["model"].value == "trained"
        for name, key in (("model", "model"), ("layer", "layer"), ("sentence", "digits" if trained else "sentence"),
                          ("mask", "mask"), ("num_heads", "heads"), ("head", "show"),
                          ("pad", "pad"), ("pad_side", "pad_side"), ("scaled", "scaled"),
                          ("annotate", "annotate"), ("lang", "language"), ("large", "large")):
            c[name].description = t(f"explorer.{key}", lang)
        c["sentence"].placeholder = t("explorer.digits_hint" if trained else "explorer.sentence_hint", lang)
        heads = TRAINED_CONFIG.num_heads if trained else c["num_heads"].value
        head = c["head"].value if c["head"].value < heads else ALL_HEADS
        options = {
            "model": [(t(f"explorer.model.{m}", lang), m) for m in MODELS],
            "layer": [(t("explorer.layer_option", lang, i=i), i) for i in range(1, TRAINED_CONFIG.num_layers + 1)],
            "mask": [(t(f"explorer.mask.{m}", lang), m) for m in MASK_TYPES],
            "pad_side": [(t(f"explorer.side.{s}", lang), s) for s in PAD_SIDES],
            "head": self._head_options(heads, lang),
        }
        with self._quiet():
            for name, opts in options.items():
                value = head if name == "head" else c[name].value
                c[name].options = opts
                c[name].value = value
        for name in self.TRAINED_FIXED:
            c[name].disabled = trained
        c["layer"].disabled = not trained
        note = t("explorer.trained_fixed", lang, h=TRAINED_CONFIG.num_heads) if trained else ""
        self.mode_note.value = (f'<div class="attnlab-note" style="color:#444444; line-height:1.4">'
                                f'🔒 {html.escape(note)}</div>' if note else "")
        self.mode_note.layout.display = "" if trained else "none"

    def _resize(self) -> None:
        """Large-font mode: wider controls, bigger labels (CSS class) and a bigger figure."""
        large = self.controls["large"].value
        for name, control in self.controls.items():
            control.style.description_width = LABEL_WIDTH[large]
            control.layout.margin = "2px 12px 2px 0"
            if name == "sentence":
                control.layout.width = "95%"
            elif not isinstance(control, widgets.Checkbox):
                control.layout.width = CONTROL_WIDTH[large]
        (self.add_class if large else self.remove_class)(LARGE_CLASS)
        w, h = (round(v * DPI[large]) for v in FIG_SIZE)
        self.image.layout.width, self.image.layout.height = f"{w}px", f"{h}px"


def explore(**defaults) -> AttentionExplorer:
    """The interactive explorer, e.g. ``attnlab.explore(mask="causal", num_heads=2)``, or the
    trained reversal model of lesson 07: ``attnlab.explore(model="trained", digits="3 1 4 1 5 9")``.

    Keyword arguments are ``ExplorerState`` fields; ``lang`` defaults to the current
    language and ``sentence`` to its example sentence. Put it last in a cell (or display it).
    """
    return AttentionExplorer(**defaults)
