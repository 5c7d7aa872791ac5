"""The course glossary: one term per concept in each language (en / vi / zh).

``GLOSSARY[concept] = {"en": ..., "vi": ..., "zh": ...}``; ``AVOID`` lists wrong or
competing translations that the lessons must not use (e.g. "phím", a keyboard key).
"""
from __future__ import annotations

GLOSSARY: dict[str, dict[str, str]] = {
    "attention": {"en": "attention", "vi": "chú ý", "zh": "注意力"},
    "self_attention": {"en": "self-attention", "vi": "tự chú ý", "zh": "自注意力"},
    "query": {"en": "query", "vi": "truy vấn", "zh": "查询"},
    "key": {"en": "key", "vi": "khóa", "zh": "键"},
    "value": {"en": "value", "vi": "giá trị", "zh": "值"},
    "weights": {"en": "attention weights", "vi": "trọng số chú ý", "zh": "注意力权重"},
    "score": {"en": "score", "vi": "điểm số", "zh": "分数"},
    "head": {"en": "head", "vi": "đầu", "zh": "头"},
    "multi_head": {"en": "multi-head attention", "vi": "chú ý đa đầu", "zh": "多头注意力"},
    "mask": {"en": "mask", "vi": "mặt nạ", "zh": "掩码"},
    "causal_mask": {"en": "causal mask", "vi": "mặt nạ nhân quả", "zh": "因果掩码"},
    "padding": {"en": "padding", "vi": "đệm", "zh": "填充"},
    "positional_encoding": {"en": "positional encoding", "vi": "mã hóa vị trí", "zh": "位置编码"},
    "embedding": {"en": "embedding", "vi": "vector nhúng", "zh": "嵌入"},
    "residual": {"en": "residual connection", "vi": "kết nối tắt", "zh": "残差连接"},
    "layer_norm": {"en": "layer normalization", "vi": "chuẩn hóa tầng", "zh": "层归一化"},
    "feed_forward": {"en": "feed-forward network", "vi": "mạng truyền thẳng", "zh": "前馈网络"},
    "encoder": {"en": "encoder", "vi": "bộ mã hóa", "zh": "编码器"},
    "decoder": {"en": "decoder", "vi": "bộ giải mã", "zh": "解码器"},
    "cross_attention": {"en": "cross-attention", "vi": "chú ý chéo", "zh": "交叉注意力"},
    "softmax": {"en": "softmax", "vi": "softmax", "zh": "softmax"},
    "token": {"en": "token", "vi": "token", "zh": "词元"},
    "parameter": {"en": "parameter", "vi": "tham số", "zh": "参数"},
}

# Translations the lessons must not use, per language: {language: {wrong term: concept}}.
AVOID: dict[str, dict[str, str]] = {
    "vi": {"phím": "key", "chìa khóa": "key", "khoá": "key", "mã hoá": "positional_encoding",
           "chuẩn hoá": "layer_norm", "câu truy vấn": "query", "chú ý nhiều đầu": "multi_head"},
    "zh": {"钥匙": "key", "关键字": "key", "遮罩": "mask", "蒙版": "mask", "询问": "query",
           "位置编码器": "positional_encoding", "多頭": "multi_head",
           "注意力機制": "attention", "因果遮罩": "causal_mask"},
}


def term(concept: str, lang: str) -> str:
    return GLOSSARY[concept][lang]
