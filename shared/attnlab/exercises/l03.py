"""Exercise checkers for lesson 03 (positional encoding), and the lesson's printed words.

* ``check_sinusoidal_encoding(fn)``: ``fn(max_len, d_model)`` -> the (max_len, d_model) sin/cos table.
* ``check_add_positional_encoding(fn)``: ``fn(x (B, T, D), pe (max_len, D))`` -> x + PE of the first T positions.
* ``check_predict_permuted_output(fn)``: ``fn(out (B, T, D), perm)`` -> the self-attention output of the
  permuted sentence, predicted from ``out`` alone (no positional encoding).

Each checker compares with the package (``attnlab.sinusoidal_encoding``, ``MultiHeadAttention``),
recognises the typical mistakes and prints a hint for them, never the solution.
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from ..i18n import register, t
from ..multihead import MultiHeadAttention
from ..positional import sinusoidal_encoding
from ._common import NotDone, call_student, run_check

register({
    # ------------------------------------------------------------------ the lesson's printed words
    "l03.check.inputs_permuted": {
        "vi": "đầu vào của câu đảo = đầu vào của câu gốc, xếp lại theo perm",
        "zh": "倒装句的输入 = 原句的输入按 perm 重新排列",
        "en": "the swapped sentence's input = the original input, reordered by perm",
    },
    "l03.check.outputs_permuted": {
        "vi": "đầu ra của câu đảo = đầu ra của câu gốc, xếp lại theo đúng perm đó",
        "zh": "倒装句的输出 = 原句的输出按同一个 perm 重新排列",
        "en": "the swapped sentence's output = the original output, reordered by the same perm",
    },
    "l03.check.weights_permuted": {
        "vi": "trọng số chú ý của câu đảo = trọng số của câu gốc, đảo cả hàng lẫn cột",
        "zh": "倒装句的注意力权重 = 原句的权重，行和列都按 perm 重排",
        "en": "the swapped sentence's attention weights = the original ones, rows and columns reordered",
    },
    "l03.check.mean_same": {
        "vi": "trung bình các vector đầu ra (một «vector của cả câu») giống hệt nhau ở hai câu",
        "zh": "两句输出向量的平均值（一个“整句向量”）完全相同",
        "en": "the mean of the output vectors (a 'sentence vector') is identical for both sentences",
    },
    "l03.msg.word_vector": {
        "vi": "«{word}» ở vị trí {pos}: {values} ...",
        "zh": "「{word}」在位置 {pos}：{values} ……",
        "en": "'{word}' at position {pos}: {values} ...",
    },
    "l03.msg.middle": {
        "vi": "«{word}» đứng ở vị trí 1 trong cả hai câu; đầu ra của nó ở hai câu lệch nhau "
              "{before:.2f} khi không có, {after:.2f} khi có mã hóa vị trí",
        "zh": "「{word}」在两句中都位于位置 1；它在两句中的输出相差："
              "无位置编码时 {before:.2f}，有位置编码时 {after:.2f}",
        "en": "'{word}' sits at position 1 in both sentences; its outputs differ by "
              "{before:.2f} without and {after:.2f} with positional encoding",
    },
    "l03.check.not_permuted": {
        "vi": "có mã hóa vị trí: đầu ra của hai câu KHÔNG còn là hoán vị của nhau",
        "zh": "加上位置编码后：两句的输出不再是彼此的重新排列",
        "en": "with positional encoding: the two outputs are NO LONGER a permutation of each other",
    },
    "l03.msg.difference": {
        "vi": "sai lệch lớn nhất giữa out[:, perm] và đầu ra của câu đảo: {diff:.2f}",
        "zh": "out[:, perm] 与倒装句输出之间的最大偏差：{diff:.2f}",
        "en": "largest difference between out[:, perm] and the swapped sentence's output: {diff:.2f}",
    },
    "l03.check.rotation": {
        "vi": "PE(p + {k}) = R({k}) · PE(p) với mọi p, trên cặp cột ({c0}, {c1})",
        "zh": "对所有 p 都有 PE(p + {k}) = R({k}) · PE(p)（第 {c0}、{c1} 列这一对）",
        "en": "PE(p + {k}) = R({k}) · PE(p) for every p, on the column pair ({c0}, {c1})",
    },
    "l03.check.dot_offset": {
        "vi": "PE(p) · PE(p + k) chỉ phụ thuộc vào k (mỗi đường chéo của ma trận là hằng số)",
        "zh": "PE(p) · PE(p + k) 只取决于 k（矩阵的每条对角线都是常数）",
        "en": "PE(p) · PE(p + k) depends on k only (every diagonal of the matrix is constant)",
    },
    "l03.check.dot_formula": {
        "vi": "PE(p) · PE(p + k) = Σ_i cos(ω_i k)",
        "zh": "PE(p) · PE(p + k) = Σ_i cos(ω_i k)",
        "en": "PE(p) · PE(p + k) = Σ_i cos(ω_i k)",
    },
    "l03.plot.position": {"vi": "vị trí {name}", "zh": "位置 {name}", "en": "position {name}"},
    "l03.plot.dimension": {"vi": "chiều (cột của bảng)", "zh": "维度（表的列）", "en": "dimension (table column)"},
    "l03.plot.pe_table": {
        "vi": "Mã hóa vị trí sin/cos ({max_len} vị trí × {d_model} chiều)",
        "zh": "正弦/余弦位置编码（{max_len} 个位置 × {d_model} 维）",
        "en": "Sinusoidal positional encoding ({max_len} positions × {d_model} dimensions)",
    },
    "l03.plot.columns": {
        "vi": "Vài cột của bảng: mỗi cặp là một sóng với bước sóng riêng",
        "zh": "表中的几列：每一对都是一条波长各不相同的波",
        "en": "A few columns: each pair is one wave with its own wavelength",
    },
    "l03.plot.column": {"vi": "cột {j}", "zh": "第 {j} 列", "en": "column {j}"},
    "l03.plot.no_pe": {"vi": "{sentence} — không mã hóa vị trí", "zh": "{sentence}（无位置编码）",
                       "en": "{sentence} — no positional encoding"},
    "l03.plot.with_pe": {"vi": "{sentence} — có mã hóa vị trí", "zh": "{sentence}（有位置编码）",
                         "en": "{sentence} — with positional encoding"},
    "l03.plot.similarity": {"vi": "PE(p) · PE(q) với mọi cặp vị trí", "zh": "所有位置对的 PE(p) · PE(q)",
                            "en": "PE(p) · PE(q) for every pair of positions"},
    "l03.plot.offset": {"vi": "khoảng cách k", "zh": "偏移 k", "en": "offset k"},
    "l03.plot.by_offset": {"vi": "PE(p) · PE(p + k) theo khoảng cách k", "zh": "PE(p) · PE(p + k) 随偏移 k 的变化",
                           "en": "PE(p) · PE(p + k) against the offset k"},
    "l03.plot.start": {"vi": "bắt đầu từ p = {p}", "zh": "从 p = {p} 开始", "en": "starting at p = {p}"},
    "l03.msg.learned": {
        "vi": "bảng vị trí học được kiểu GPT-2: {shape}, {n} tham số; bảng sin/cos: 0 tham số",
        "zh": "GPT-2 式可学习位置表：{shape}，{n} 个参数；正弦/余弦表：0 个参数",
        "en": "a GPT-2 style learned position table: {shape}, {n} parameters; the sin/cos table: 0",
    },
    # ------------------------------------------------------------------ exercise names
    "l03.ex.sinusoidal": {"vi": "bảng mã hóa vị trí sin/cos", "zh": "正弦/余弦位置编码表",
                          "en": "the sinusoidal encoding table"},
    "l03.ex.add_pe": {"vi": "cộng mã hóa vị trí vào vector nhúng", "zh": "把位置编码加到嵌入上",
                      "en": "adding the positional encoding to the embeddings"},
    "l03.ex.predict": {"vi": "dự đoán đầu ra của câu bị hoán vị", "zh": "预测重排后句子的输出",
                       "en": "predicting the output of a permuted sentence"},
    # ------------------------------------------------------------------ exercise 1: sinusoidal table
    "l03.ok.sinusoidal": {
        "vi": "Bảng của bạn khớp với attnlab.sinusoidal_encoding ở {n} kích thước khác nhau.",
        "zh": "你的表在 {n} 种不同尺寸下都与 attnlab.sinusoidal_encoding 一致。",
        "en": "Your table matches attnlab.sinusoidal_encoding for {n} different sizes.",
    },
    "l03.hint.not_tensor": {
        "vi": "Hàm cần trả về một torch.Tensor, nhưng lại trả về {kind}.",
        "zh": "函数应当返回 torch.Tensor，但返回的是 {kind}。",
        "en": "The function must return a torch.Tensor, but it returned {kind}.",
    },
    "l03.hint.pe_orientation": {
        "vi": "Bảng bị đổi chiều hàng và cột: với max_len={max_len}, d_model={d_model} bạn trả về kích thước {got}. "
              "Mỗi HÀNG là một vị trí, mỗi CỘT là một chiều: kích thước phải là (max_len, d_model).",
        "zh": "表的方向反了：max_len={max_len}、d_model={d_model} 时你返回的形状是 {got}。"
              "每一行是一个位置，每一列是一个维度：形状应为 (max_len, d_model)。",
        "en": "The table is turned sideways: for max_len={max_len}, d_model={d_model} you returned shape {got}. "
              "Each ROW is a position, each COLUMN a dimension: the shape must be (max_len, d_model).",
    },
    "l03.hint.shape": {
        "vi": "Kích thước chưa đúng: cần {want}, bạn trả về {got}.",
        "zh": "形状不对：应为 {want}，你返回的是 {got}。",
        "en": "Wrong shape: expected {want}, you returned {got}.",
    },
    "l03.hint.pe_nonfinite": {
        "vi": "Bảng có NaN hoặc vô cùng. Có phải bạn chia cho 2i/d_model (bằng 0 khi i = 0)? "
              "Mẫu số phải là 10000 mũ 2i/d_model.",
        "zh": "表里出现了 NaN 或无穷大。是不是除以了 2i/d_model（i = 0 时它等于 0）？"
              "分母应该是 10000 的 2i/d_model 次方。",
        "en": "The table has NaN or infinity. Did you divide by 2i/d_model (which is 0 for i = 0)? "
              "The divisor is 10000 to the power 2i/d_model.",
    },
    "l03.hint.pe_sin_cos": {
        "vi": "sin và cos bị đổi chỗ: cột chẵn (0, 2, 4, ...) là sin, cột lẻ (1, 3, 5, ...) là cos. "
              "Nhìn hàng pos = 0: cột chẵn phải bằng 0, cột lẻ bằng 1.",
        "zh": "sin 和 cos 放反了：偶数列（0, 2, 4, ...）是 sin，奇数列（1, 3, 5, ...）是 cos。"
              "看 pos = 0 这一行：偶数列应为 0，奇数列应为 1。",
        "en": "sin and cos are swapped: even columns (0, 2, 4, ...) hold sin, odd columns (1, 3, 5, ...) cos. "
              "Look at row pos = 0: even columns must be 0, odd columns 1.",
    },
    "l03.hint.pe_exponent_i": {
        "vi": "Các cột dao động quá chậm: số mũ của bạn là i/d_model (i = số thứ tự của cặp). "
              "Công thức dùng 2i/d_model — tức là chỉ số của cột chẵn chia cho d_model.",
        "zh": "各列振荡得太慢：你的指数是 i/d_model（i 是第几对）。"
              "公式里是 2i/d_model —— 也就是偶数列的列号除以 d_model。",
        "en": "The columns oscillate too slowly: your exponent is i/d_model (i = the pair number). "
              "The formula uses 2i/d_model — the index of the even column divided by d_model.",
    },
    "l03.hint.pe_exponent_odd": {
        "vi": "Cột sin đúng nhưng cột cos sai tần số: bạn dùng chỉ số của chính cột lẻ (2i + 1) trong số mũ. "
              "Cột 2i và cột 2i + 1 là một cặp và dùng CHUNG một tần số, với số mũ 2i/d_model.",
        "zh": "sin 列是对的，cos 列的频率却错了：你在指数里用了奇数列自己的列号 (2i + 1)。"
              "第 2i 列和第 2i + 1 列是一对，共用同一个频率，指数是 2i/d_model。",
        "en": "The sin columns are right but the cos columns have the wrong frequency: you used the odd "
              "column's own index (2i + 1) in the exponent. Columns 2i and 2i + 1 are a pair and SHARE "
              "one frequency, with exponent 2i/d_model.",
    },
    "l03.hint.pe_integer": {
        "vi": "Mọi cặp cột đều có cùng một tần số: số mũ 2i/d_model đã bị làm tròn thành 0. "
              "Có phải bạn dùng phép chia nguyên (//) hoặc tensor số nguyên? Hãy tính bằng số thực.",
        "zh": "每一对列的频率都一样：指数 2i/d_model 被取整成了 0。"
              "是不是用了整除（//）或整数张量？请用浮点数计算。",
        "en": "Every column pair has the same frequency: the exponent 2i/d_model was rounded to 0. "
              "Did you use integer division (//) or an integer tensor? Compute in floating point.",
    },
    "l03.hint.pe_base": {
        "vi": "Dạng sin/cos và số mũ đều đúng, nhưng cơ số không phải 10000 (bảng của bạn khớp với cơ số {base}). "
              "Nếu dùng exp/log: 10000^(-2i/d) = exp(-2i · ln(10000) / d) — đừng quên ln(10000).",
        "zh": "sin/cos 的排布和指数都对，但底数不是 10000（你的表对应底数 {base}）。"
              "如果用 exp/log 写法：10000^(-2i/d) = exp(-2i · ln(10000) / d) —— 别漏了 ln(10000)。",
        "en": "The sin/cos layout and the exponent are right, but the base is not 10000 (your table matches "
              "base {base}). With exp/log: 10000^(-2i/d) = exp(-2i · ln(10000) / d) — do not forget ln(10000).",
    },
    "l03.hint.pe_frequencies": {
        "vi": "Cặp cột đầu tiên (sin pos, cos pos) đã đúng, nhưng các cặp sau sai tần số. "
              "Kiểm tra lại: pos chia cho 10000 mũ 2i/d_model (chia, không phải nhân).",
        "zh": "第一对列（sin pos, cos pos）是对的，后面各对的频率却不对。"
              "再检查一下：pos 除以 10000 的 2i/d_model 次方（是除，不是乘）。",
        "en": "The first column pair (sin pos, cos pos) is right, but the later pairs have wrong frequencies. "
              "Check: pos divided by 10000 to the power 2i/d_model (divided, not multiplied).",
    },
    "l03.hint.pe_values": {
        "vi": "Kích thước đúng nhưng giá trị sai, lần đầu ở PE[{pos}, {col}] (max_len={max_len}, d_model={d_model}). "
              "Đối chiếu lại từng phần của công thức.",
        "zh": "形状对了但数值不对，第一个出错的是 PE[{pos}, {col}]（max_len={max_len}，d_model={d_model}）。"
              "请逐项对照公式。",
        "en": "Right shape, wrong values, first at PE[{pos}, {col}] (max_len={max_len}, d_model={d_model}). "
              "Compare each part of the formula again.",
    },
    # ------------------------------------------------------------------ exercise 2: adding the table
    "l03.ok.add_pe": {
        "vi": "Mỗi token nhận đúng hàng của bảng ứng với vị trí của nó, và x ban đầu không bị sửa.",
        "zh": "每个词元都加上了与其位置对应的那一行，而且原来的 x 没有被改动。",
        "en": "Every token gets the table row of its own position, and the original x is left untouched.",
    },
    "l03.hint.add_slice": {
        "vi": "Bảng có {max_len} hàng nhưng câu chỉ có T = {T} token, nên phép cộng không khớp kích thước. "
              "Chỉ lấy T hàng đầu tiên của bảng (T = x.shape[1]) rồi mới cộng.",
        "zh": "表有 {max_len} 行，句子却只有 T = {T} 个词元，所以相加时形状对不上。"
              "先取表的前 T 行（T = x.shape[1]），再相加。",
        "en": "The table has {max_len} rows but the sentence only T = {T} tokens, so the shapes do not match. "
              "Take the first T rows of the table (T = x.shape[1]) before adding.",
    },
    "l03.hint.add_concat": {
        "vi": "Kết quả có kích thước {got} thay vì {want}: có vẻ bạn đã ghép nối (concatenate) bảng vào vector nhúng. "
              "Mã hóa vị trí được CỘNG vào, để số chiều d_model giữ nguyên.",
        "zh": "结果的形状是 {got} 而不是 {want}：看起来你把表拼接（concatenate）到了嵌入上。"
              "位置编码是加上去的，这样维度 d_model 保持不变。",
        "en": "The result has shape {got} instead of {want}: it looks like you concatenated the table to the "
              "embeddings. The encoding is ADDED, so the width d_model stays the same.",
    },
    "l03.hint.add_batch": {
        "vi": "Mọi token nhận cùng một hàng của bảng: bạn đã cắt bảng theo x.shape[0] (kích thước lô). "
              "Độ dài câu là x.shape[1].",
        "zh": "所有词元都加上了同一行：你按 x.shape[0]（批大小）截取了表。句子长度是 x.shape[1]。",
        "en": "Every token got the same table row: you sliced the table with x.shape[0] (the batch size). "
              "The sentence length is x.shape[1].",
    },
    "l03.hint.add_offset": {
        "vi": "Các token nhận nhầm hàng của bảng: token thứ t (đếm từ 0) phải nhận hàng t, tức là T hàng ĐẦU TIÊN.",
        "zh": "词元加错了行：第 t 个词元（从 0 数起）应当加上第 t 行，也就是表的前 T 行。",
        "en": "The tokens got the wrong rows: token t (counting from 0) takes row t, i.e. the FIRST T rows.",
    },
    "l03.hint.add_inplace": {
        "vi": "Kết quả đúng, nhưng hàm đã sửa luôn tensor x được truyền vào (phép cộng tại chỗ như x += ...). "
              "Người gọi vẫn cần vector nhúng gốc: hãy trả về một tensor mới.",
        "zh": "结果是对的，但函数改动了传进来的 x（原地相加，例如 x += ...）。调用者还需要原来的嵌入：请返回一个新张量。",
        "en": "The result is right, but the function modified the x it was given (an in-place add such as "
              "x += ...). The caller still needs the original embeddings: return a new tensor.",
    },
    "l03.hint.add_values": {
        "vi": "Kích thước đúng nhưng giá trị sai: mỗi vector phải bằng vector nhúng của token cộng với hàng "
              "của bảng ứng với vị trí token đó — không nhân, không bỏ bớt phần nào.",
        "zh": "形状对了但数值不对：每个向量应当等于该词元的嵌入加上其位置对应的那一行 —— 不要乘，也不要漏掉任何一项。",
        "en": "Right shape, wrong values: each vector must be the token's embedding plus the table row of its "
              "position — nothing multiplied, nothing left out.",
    },
    # ------------------------------------------------------------------ exercise 3: predicting a permutation
    "l03.ok.predict": {
        "vi": "Không cần chạy lại mô hình: tự chú ý chỉ xếp lại cùng các vector, f(x[:, perm]) = f(x)[:, perm]. "
              "Còn khi có mã hóa vị trí, cùng dự đoán đó lệch tới {diff:.2f}.",
        "zh": "根本不用再跑一遍模型：自注意力只是把同样的向量重新排列，f(x[:, perm]) = f(x)[:, perm]。"
              "而加上位置编码后，同样的预测会偏差 {diff:.2f}。",
        "en": "No need to run the model again: self-attention only reorders the same vectors, "
              "f(x[:, perm]) = f(x)[:, perm]. With positional encoding the same prediction is off by {diff:.2f}.",
    },
    "l03.hint.predict_same": {
        "vi": "Bạn trả về đầu ra theo thứ tự cũ. Tập hợp các vector thì giống nhau, nhưng mỗi vector đi theo "
              "từ của nó: từ nào chuyển sang vị trí mới thì vector của nó cũng chuyển theo.",
        "zh": "你返回的输出还是原来的顺序。向量的集合确实不变，但每个向量跟着自己的词走：词移到哪里，它的向量就移到哪里。",
        "en": "You returned the output in the old order. The set of vectors is the same, but each vector "
              "travels with its word: wherever a word moves, its vector moves too.",
    },
    "l03.hint.predict_inverse": {
        "vi": "Bạn áp dụng hoán vị ngược. Ở đây vị trí j của câu mới chứa token ở vị trí perm[j] của câu gốc "
              "(x_new = x[:, perm]). Với [2, 1, 0] hai cách trùng nhau, nhưng với hoán vị khác thì không.",
        "zh": "你用的是逆排列。这里新句子第 j 个位置放的是原句第 perm[j] 个词元（x_new = x[:, perm]）。"
              "对 [2, 1, 0] 来说两者恰好相同，换一个排列就不同了。",
        "en": "You applied the inverse permutation. Here position j of the new sentence holds the token at "
              "position perm[j] of the original (x_new = x[:, perm]). For [2, 1, 0] both agree, not in general.",
    },
    "l03.hint.predict_flip": {
        "vi": "Đảo ngược câu chỉ đúng với hoán vị [2, 1, 0]. Hãy dùng chính perm được truyền vào.",
        "zh": "把句子倒过来只对 [2, 1, 0] 这个排列成立。请使用传进来的 perm 本身。",
        "en": "Reversing the sentence only works for the permutation [2, 1, 0]. Use the perm you are given.",
    },
    "l03.hint.predict_axis": {
        "vi": "Bạn hoán vị nhầm chiều. out có kích thước (B, T, D): các token nằm ở chiều 1, "
              "không phải chiều lô (0) hay chiều đặc trưng (cuối).",
        "zh": "你在错误的维度上做了重排。out 的形状是 (B, T, D)：词元在第 1 维，不是批维（第 0 维）也不是特征维（最后一维）。",
        "en": "You permuted the wrong dimension. out has shape (B, T, D): tokens live on dimension 1, "
              "not the batch (0) or the feature (last) dimension.",
    },
    "l03.hint.predict_values": {
        "vi": "Kích thước đúng nhưng dự đoán sai. Gợi ý: không cần tính gì mới, chỉ cần sắp xếp lại các hàng của out.",
        "zh": "形状对了但预测不对。提示：不需要算任何新东西，只要把 out 的各行重新排列。",
        "en": "Right shape, wrong prediction. Hint: nothing new needs computing, only a reordering of out's rows.",
    },
})

_TOL = 1e-4  # students may build the table in float32


def _kind(obj) -> str:
    return type(obj).__name__


def _shape(t: torch.Tensor) -> str:
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = _TOL) -> bool:
    return a.shape == b.shape and bool(((a.double() - b.double()).abs() <= tol).all())


def _as_tensor(result):
    if isinstance(result, torch.Tensor):
        return result.detach()
    try:
        import numpy as np
        if isinstance(result, np.ndarray):
            return torch.from_numpy(result)
    except ImportError:  # pragma: no cover
        pass
    return None


# ---------------------------------------------------------------------------------------------
# Exercise 1: the sinusoidal table
# ---------------------------------------------------------------------------------------------
_PE_CASES = ((12, 8), (50, 16), (7, 32), (33, 6))     # (max_len, d_model), never square


def _pe_variant(max_len: int, d_model: int, *, exponent: str = "2i", base: float = 10000.0,
                swap: bool = False) -> torch.Tensor:
    """The table with one deliberate mistake, to recognise what a student wrote.

    exponent: "2i" (right), "i" (pair number), "column" (odd columns use 2i+1), "zero" (integer division).
    """
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    pair = torch.arange(d_model // 2, dtype=torch.float64)
    even = {"2i": 2 * pair, "i": pair, "column": 2 * pair, "zero": 0 * pair}[exponent] / d_model
    odd = (2 * pair + 1) / d_model if exponent == "column" else even
    sin, cos = torch.sin(pos / base ** even), torch.cos(pos / base ** odd)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = (cos, sin) if swap else (sin, cos)
    return pe


_PE_MISTAKES = (
    ({"swap": True}, "l03.hint.pe_sin_cos"),
    ({"exponent": "i"}, "l03.hint.pe_exponent_i"),
    ({"exponent": "column"}, "l03.hint.pe_exponent_odd"),
    ({"exponent": "zero"}, "l03.hint.pe_integer"),
)


def _pe_bases(d_model: int):
    return ((math.e, "e"), (10.0, "10"), (100.0, "100"), (1000.0, "1000"), (float(d_model), "d_model"),
            (1e5, "100000"))


def _diagnose_pe(pe: torch.Tensor, max_len: int, d_model: int) -> str:
    for kwargs, hint in _PE_MISTAKES:
        if _close(pe, _pe_variant(max_len, d_model, **kwargs)):
            return t(hint)
    for base, name in _pe_bases(d_model):
        if _close(pe, _pe_variant(max_len, d_model, base=base)):
            return t("l03.hint.pe_base", base=name)
    pos = torch.arange(max_len, dtype=torch.float64)
    first = pe[:, :2].double()
    if _close(first, torch.stack([torch.cos(pos), torch.sin(pos)], 1)):
        return t("l03.hint.pe_sin_cos")
    if _close(first, torch.stack([torch.sin(pos), torch.cos(pos)], 1)):
        return t("l03.hint.pe_frequencies")
    ref = sinusoidal_encoding(max_len, d_model, dtype=torch.float64)
    bad = ((pe.double() - ref).abs() > _TOL).nonzero()[0].tolist()
    return t("l03.hint.pe_values", pos=bad[0], col=bad[1], max_len=max_len, d_model=d_model)


def check_sinusoidal_encoding(fn: Callable, lang: str | None = None) -> bool | None:
    """``fn(max_len, d_model)`` must return the (max_len, d_model) sinusoidal table."""
    def check():
        for max_len, d_model in _PE_CASES:
            result = call_student(fn, max_len, d_model)
            pe = _as_tensor(result)
            if pe is None:
                return False, t("l03.hint.not_tensor", kind=_kind(result))
            if tuple(pe.shape) == (d_model, max_len):
                return False, t("l03.hint.pe_orientation", max_len=max_len, d_model=d_model, got=_shape(pe))
            if tuple(pe.shape) != (max_len, d_model):
                return False, t("l03.hint.shape", want=f"({max_len}, {d_model})", got=_shape(pe))
            pe = pe.double()
            if not torch.isfinite(pe).all():
                return False, t("l03.hint.pe_nonfinite")
            if not _close(pe, sinusoidal_encoding(max_len, d_model, dtype=torch.float64)):
                return False, _diagnose_pe(pe, max_len, d_model)
        return True, t("l03.ok.sinusoidal", n=len(_PE_CASES))
    return run_check("l03.ex.sinusoidal", check, lang)


# ---------------------------------------------------------------------------------------------
# Exercise 2: adding the table to the embeddings
# ---------------------------------------------------------------------------------------------
_ADD_CASES = ((1, 7, 8, 16), (2, 5, 8, 16), (3, 16, 8, 16), (2, 1, 4, 10))   # (B, T, D, max_len)


def _seeded_randn(seed: int, *shape: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


def _diagnose_add(out: torch.Tensor, x: torch.Tensor, pe: torch.Tensor) -> str:
    B, T, D = x.shape
    if out.shape != x.shape:
        if out.dim() == 3 and (out.shape[-1] == 2 * D or out.shape[1] == T + pe.shape[0]):
            return t("l03.hint.add_concat", got=_shape(out), want=_shape(x))
        return t("l03.hint.shape", want=_shape(x), got=_shape(out))
    if B < T and _close(out, x + pe[:B]):
        return t("l03.hint.add_batch")
    for rows in (pe[1:T + 1], pe[pe.shape[0] - T:]):
        if rows.shape[0] == T and _close(out, x + rows):
            return t("l03.hint.add_offset")
    return t("l03.hint.add_values")


def check_add_positional_encoding(fn: Callable, lang: str | None = None) -> bool | None:
    """``fn(x (B, T, D), pe (max_len, D))`` must return x + pe[:T] as a new tensor."""
    def check():
        for n, (B, T, D, max_len) in enumerate(_ADD_CASES):
            x = _seeded_randn(100 + n, B, T, D)
            pe = sinusoidal_encoding(max_len, D)
            x_given, pe_given = x.clone(), pe.clone()
            try:
                result = call_student(fn, x_given, pe_given)
            except RuntimeError as e:
                if T != max_len and "size" in str(e):
                    return False, t("l03.hint.add_slice", max_len=max_len, T=T)
                raise
            out = _as_tensor(result)
            if out is None:
                return False, t("l03.hint.not_tensor", kind=_kind(result))
            if not _close(out, x + pe[:T], 1e-5):
                return False, _diagnose_add(out, x, pe)
            if not torch.equal(x_given, x):
                return False, t("l03.hint.add_inplace")
        return True, t("l03.ok.add_pe")
    return run_check("l03.ex.add_pe", check, lang)


# ---------------------------------------------------------------------------------------------
# Exercise 3: predicting the output of a permuted sentence
# ---------------------------------------------------------------------------------------------
_PREDICT_CASES = ((2, 5, [3, 0, 4, 1, 2]), (1, 3, [1, 2, 0]), (3, 4, [2, 3, 1, 0]))  # (B, T, perm)
_PREDICT_D, _PREDICT_H = 16, 4


def _attention_model(seed: int) -> MultiHeadAttention:
    with torch.random.fork_rng(devices=[]):        # leave the caller's random state alone
        torch.manual_seed(seed)
        return MultiHeadAttention(_PREDICT_D, _PREDICT_H).eval()


def _diagnose_predict(pred: torch.Tensor, out: torch.Tensor, perm: list[int]) -> str:
    wrong_axis = [out[..., perm]] + ([out[perm]] if out.shape[0] >= len(perm) else [])
    if any(_close(pred, c, 1e-5) for c in wrong_axis):
        return t("l03.hint.predict_axis")
    if pred.shape != out.shape:
        return t("l03.hint.shape", want=_shape(out), got=_shape(pred))
    inverse = torch.argsort(torch.tensor(perm)).tolist()
    candidates = (
        (out, "l03.hint.predict_same"),
        (out[:, inverse], "l03.hint.predict_inverse"),
        (out.flip(1), "l03.hint.predict_flip"),
    )
    for candidate, hint in candidates:
        if _close(pred, candidate, 1e-5):
            return t(hint)
    return t("l03.hint.predict_values")


def check_predict_permuted_output(fn: Callable, lang: str | None = None) -> bool | None:
    """``fn(out, perm)``: from self-attention's output ``out`` (B, T, D) for x, predict its output for
    ``x[:, perm]`` (no positional encoding) without running the model."""
    def check():
        pe_miss = 0.0
        for n, (B, T, perm) in enumerate(_PREDICT_CASES):
            mha = _attention_model(300 + n)
            x = _seeded_randn(200 + n, B, T, _PREDICT_D)
            with torch.no_grad():
                out, _ = mha(x)
                truth, _ = mha(x[:, perm])
                pos = sinusoidal_encoding(T, _PREDICT_D)
                out_pe, _ = mha(x + pos)
                truth_pe, _ = mha(x[:, perm] + pos)
            try:
                result = call_student(fn, out.clone(), list(perm))
            except IndexError:
                return False, t("l03.hint.predict_axis")
            pred = _as_tensor(result)
            if pred is None:
                return False, t("l03.hint.not_tensor", kind=_kind(result))
            if not _close(pred, truth, 1e-5):
                return False, _diagnose_predict(pred, out, perm)
            # The same prediction, once positions are encoded: how far off is it?
            pred_pe = _as_tensor(call_student(fn, out_pe.clone(), list(perm)))
            pe_miss = max(pe_miss, (pred_pe.double() - truth_pe.double()).abs().max().item())
        return True, t("l03.ok.predict", diff=pe_miss)
    return run_check("l03.ex.predict", check, lang)


__all__ = ["check_sinusoidal_encoding", "check_add_positional_encoding", "check_predict_permuted_output",
           "NotDone"]
