"""Exercise checkers for lesson 04 (attention masks), and the words the lesson prints.

- ``check_causal_mask(fn)``:  ``fn(T) -> (1, 1, T, T)`` bool, True = may attend (lower triangle)
- ``check_padding_mask(fn)``: ``fn(token_ids (B, S), pad_id) -> (B, 1, 1, S)`` bool, False on padding
- ``check_decoder_mask(fn)``: ``fn(token_ids (B, T), pad_id) -> (B, 1, T, T)`` = causal AND padding
- ``check_mha_mask(fn)``:     ``fn(mask (B, 1, T, S), num_heads) -> (B * num_heads, T, S)`` bool,
  True = BLOCKED: the ``attn_mask`` that ``nn.MultiheadAttention`` expects.

Each checker compares the student's function with ``attnlab.masks`` on several inputs,
recognises the typical mistakes and prints a hint for the first one it meets. The
``_diagnose_*`` functions return ``(ok, message key, fields)`` so the tests can see which
hint was chosen.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn as nn

from ..i18n import register, t
from ..masks import causal_mask, decoder_mask, padding_mask
from ..multihead import MultiHeadAttention
from ._common import call_student, run_check

# ---------------------------------------------------------------------------------------------
# Words printed by the lesson notebook (same code in both languages, text from here).
register({
    "l04.scenario.gpt": {
        "vi": "Tình huống 1 — huấn luyện kiểu GPT (bộ giải mã): mặt nạ nhân quả & mặt nạ đệm",
        "zh": "场景 1 —— GPT 式训练（解码器）：因果掩码 & 填充掩码",
        "en": "Situation 1 — GPT-style training (decoder): causal mask & padding mask",
    },
    "l04.scenario.bert": {
        "vi": "Tình huống 2 — huấn luyện kiểu BERT (bộ mã hóa): chỉ mặt nạ đệm",
        "zh": "场景 2 —— BERT 式训练（编码器）：只用填充掩码",
        "en": "Situation 2 — BERT-style training (encoder): padding mask only",
    },
    "l04.scenario.infer": {
        "vi": "Tình huống 3 — suy luận một câu, không có đệm: mask=None",
        "zh": "场景 3 —— 推理，单条输入、没有填充：mask=None",
        "en": "Situation 3 — inference on one sequence without padding: mask=None",
    },
    "l04.check.seed_matrix": {
        "vi": "mặt nạ của câu 1 = tam giác dưới, hai cột đệm bị che từ trên xuống dưới",
        "zh": "句子 1 的掩码 = 下三角，两个填充列整列被屏蔽",
        "en": "the mask of sentence 1 = lower triangle, both padding columns blocked top to bottom",
    },
    "l04.check.no_future": {
        "vi": "không truy vấn nào đặt trọng số lên khóa ở tương lai",
        "zh": "没有任何查询把权重放在未来的键上",
        "en": "no query puts weight on a future key",
    },
    "l04.check.no_padding": {
        "vi": "hai cột đệm của câu 1 có trọng số 0 ở mọi đầu",
        "zh": "句子 1 的两个填充列在每个头里权重都是 0",
        "en": "the two padding columns of sentence 1 get weight 0 in every head",
    },
    "l04.check.rows_sum": {
        "vi": "mỗi hàng trọng số chú ý vẫn có tổng bằng 1",
        "zh": "每一行注意力权重之和仍为 1",
        "en": "every row of attention weights still sums to 1",
    },
    "l04.check.decode_step": {
        "vi": "một bước giải mã (1 truy vấn, 8 khóa): mask=None cho cùng đầu ra với mặt nạ nhân quả",
        "zh": "一步解码（1 个查询，8 个键）：mask=None 与因果掩码的输出相同",
        "en": "one decoding step (1 query, 8 keys): mask=None gives the same output as the causal mask",
    },
    "l04.check.fp32_1e9": {
        "vi": "float32: điền -1e9 hay -inf cho cùng trọng số chú ý",
        "zh": "float32：填 -1e9 和填 -inf 得到相同的注意力权重",
        "en": "float32: filling -1e9 or -inf gives the same attention weights",
    },
    "l04.check.fp16_fill": {
        "vi": "float16, masked_fill({fill}): trọng số khớp với bản float32",
        "zh": "float16，masked_fill({fill})：权重与 float32 版本一致",
        "en": "float16, masked_fill({fill}): the weights match the float32 ones",
    },
    "l04.nan_rows": {
        "vi": "Hàng nào có NaN (câu 1, đầu 1; 1 = có NaN):",
        "zh": "哪些行出现了 NaN（句子 1，第 1 个头；1 = 有 NaN）：",
        "en": "Which rows contain NaN (sentence 1, head 1; 1 = NaN):",
    },
    "l04.naive_nan": {
        "vi": "Cách viết ngây thơ — loss là NaN: {loss}; gradient của q, k, v có NaN: {grad}",
        "zh": "朴素写法 —— loss 是 NaN：{loss}；q、k、v 的梯度里有 NaN：{grad}",
        "en": "Naive code — the loss is NaN: {loss}; the gradients of q, k, v contain NaN: {grad}",
    },
    "l04.check.zero_rows": {
        "vi": "attnlab: hai hàng không thấy khóa nào có trọng số 0 và đầu ra 0",
        "zh": "attnlab：看不到任何键的两行，权重和输出都是 0",
        "en": "attnlab: the two rows that see no key get zero weights and a zero output",
    },
    "l04.check.grad_finite": {
        "vi": "attnlab: loss và gradient không có NaN",
        "zh": "attnlab：loss 和梯度里都没有 NaN",
        "en": "attnlab: no NaN in the loss or the gradient",
    },
    "l04.check.same_as_torch": {
        "vi": "attnlab = F.scaled_dot_product_attention, kể cả ở các hàng bị che hết",
        "zh": "attnlab 与 F.scaled_dot_product_attention 一致，包括被完全屏蔽的行",
        "en": "attnlab = F.scaled_dot_product_attention, fully masked rows included",
    },
    "l04.finfo_row": {
        "vi": "Với torch.finfo(dtype).min, hàng 1 (bị che hết) chia đều trọng số:",
        "zh": "用 torch.finfo(dtype).min 时，第 1 行（被完全屏蔽）把权重平均分配：",
        "en": "With torch.finfo(dtype).min, row 1 (fully masked) spreads its weight evenly:",
    },
    "l04.check.torch_mha": {
        "vi": "cùng trọng số: attnlab.MultiHeadAttention(mask) = nn.MultiheadAttention(~mask)",
        "zh": "相同参数下：attnlab.MultiHeadAttention(mask) = nn.MultiheadAttention(~mask)",
        "en": "same weights: attnlab.MultiHeadAttention(mask) = nn.MultiheadAttention(~mask)",
    },
    "l04.check.unchanged_differs": {
        "vi": "quên đảo (truyền nguyên mask cho nn.MultiheadAttention) thì đầu ra khác hẳn",
        "zh": "忘了取反（把 mask 原样传给 nn.MultiheadAttention），输出就完全不同",
        "en": "forgetting to invert (passing the mask unchanged to nn.MultiheadAttention) changes the output",
    },
    "l04.plot.none": {"vi": "Không mặt nạ", "zh": "无掩码", "en": "No mask"},
    "l04.plot.padding": {"vi": "Mặt nạ đệm", "zh": "填充掩码", "en": "Padding mask"},
    "l04.plot.causal": {"vi": "Mặt nạ nhân quả", "zh": "因果掩码", "en": "Causal mask"},
    "l04.plot.decoder": {"vi": "Nhân quả & đệm", "zh": "因果 & 填充", "en": "Causal & padding"},
    "l04.plot.heads": {
        "vi": "Câu 1, mặt nạ nhân quả & đệm: trọng số chú ý của từng đầu",
        "zh": "句子 1，因果 & 填充掩码：每个头的注意力权重",
        "en": "Sentence 1, causal & padding mask: attention weights of each head",
    },
})

# ---------------------------------------------------------------------------------------------
# Exercise names, verdicts and hints.
register({
    "l04.ex.causal": {"vi": "my_causal_mask", "zh": "my_causal_mask", "en": "my_causal_mask"},
    "l04.ex.padding": {"vi": "my_padding_mask", "zh": "my_padding_mask", "en": "my_padding_mask"},
    "l04.ex.decoder": {"vi": "my_decoder_mask", "zh": "my_decoder_mask", "en": "my_decoder_mask"},
    "l04.ex.mha": {"vi": "my_mha_mask", "zh": "my_mha_mask", "en": "my_mha_mask"},
    "l04.ok.causal": {
        "vi": "Tam giác dưới kể cả đường chéo, kiểu bool, kích thước (1, 1, T, T): truy vấn i thấy các khóa 0..i.",
        "zh": "包含对角线的下三角，bool 类型，形状 (1, 1, T, T)：查询 i 能看到键 0..i。",
        "en": "Lower triangle with its diagonal, bool, shape (1, 1, T, T): query i sees keys 0..i.",
    },
    "l04.ok.padding": {
        "vi": "Kích thước (B, 1, 1, S), False đúng ở các khóa đệm, với mọi pad_id.",
        "zh": "形状 (B, 1, 1, S)，恰好在填充的键上为 False，任何 pad_id 都对。",
        "en": "Shape (B, 1, 1, S), False exactly on the padding keys, for any pad_id.",
    },
    "l04.ok.decoder": {
        "vi": "Nhân quả AND đệm, kích thước (B, 1, T, T): không tương lai, không đệm — kể cả khi đệm bên trái.",
        "zh": "因果 AND 填充，形状 (B, 1, T, T)：看不到未来，也看不到填充 —— 左侧填充也没问题。",
        "en": "Causal AND padding, shape (B, 1, T, T): no future, no padding — left padding included.",
    },
    "l04.ok.mha": {
        "vi": "nn.MultiheadAttention với mặt nạ của bạn cho cùng đầu ra với attnlab.MultiHeadAttention "
              "với mặt nạ của khóa học.",
        "zh": "nn.MultiheadAttention 用你的掩码，与 attnlab.MultiHeadAttention 用课程的掩码，输出相同。",
        "en": "nn.MultiheadAttention with your mask gives the same output as attnlab.MultiHeadAttention "
              "with the course mask.",
    },
    "l04.hint.not_tensor": {
        "vi": "Hàm phải trả về một torch.Tensor, nhưng lại trả về {got}.",
        "zh": "函数应返回 torch.Tensor，却返回了 {got}。",
        "en": "The function must return a torch.Tensor, but it returned {got}.",
    },
    "l04.hint.shape": {
        "vi": "Với {case}, mặt nạ phải có kích thước {expected}, nhưng hàm trả về {got}.",
        "zh": "对于 {case}，掩码的形状应为 {expected}，但函数返回了 {got}。",
        "en": "For {case} the mask must have shape {expected}, but your function returned {got}.",
    },
    "l04.hint.dtype": {
        "vi": "Giá trị đã đúng, nhưng kiểu dữ liệu là {got}. Mặt nạ của khóa học là torch.bool "
              "(True = được phép chú ý): masked_fill chỉ nhận mặt nạ bool, `~` trên tensor số nguyên là "
              "phép NOT từng bit (~1 = -2), còn mặt nạ float thì PyTorch cộng thẳng vào điểm số.",
        "zh": "数值对了，但 dtype 是 {got}。课程的掩码是 torch.bool（True = 允许关注）："
              "masked_fill 只接受 bool 掩码；对整数张量做 `~` 是按位取反（~1 = -2）；"
              "而 float 掩码会被 PyTorch 直接加到分数上。",
        "en": "The values are right, but the dtype is {got}. The course's masks are torch.bool "
              "(True = may attend): masked_fill only takes bool masks, `~` on an integer tensor is a "
              "bitwise NOT (~1 = -2), and PyTorch adds a float mask to the scores.",
    },
    "l04.hint.additive": {
        "vi": "Đây là mặt nạ float dạng cộng (0 / -inf), kiểu mà nn.Transformer dùng. Bài tập này cần dạng "
              "của khóa học: torch.bool, True = được phép chú ý.",
        "zh": "这是加法形式的 float 掩码（0 / -inf），也就是 nn.Transformer 用的那种。"
              "本练习要的是课程的形式：torch.bool，True = 允许关注。",
        "en": "This is an additive float mask (0 / -inf), the kind nn.Transformer uses. This exercise wants "
              "the course's form: torch.bool, True = may attend.",
    },
    # causal mask
    "l04.hint.causal_2d": {
        "vi": "Ma trận (T, T) vẫn broadcast được, nhưng bài tập yêu cầu (1, 1, T, T) như attnlab.causal_mask: "
              "hai chiều 1 phía trước dành cho batch và đầu, để mọi mặt nạ đều xếp thẳng hàng với điểm số "
              "(B, H, T, S).",
        "zh": "(T, T) 矩阵虽然也能广播，但本练习要求和 attnlab.causal_mask 一样的 (1, 1, T, T)："
              "前面两个 1 留给 batch 和头，这样所有掩码都和分数 (B, H, T, S) 对齐。",
        "en": "A (T, T) matrix would broadcast, but the exercise asks for (1, 1, T, T) like attnlab.causal_mask: "
              "the two leading 1s stand for the batch and the heads, so every mask lines up with the scores "
              "(B, H, T, S).",
    },
    "l04.hint.causal_inverted": {
        "vi": "Mặt nạ của bạn bị đảo ngược hoàn toàn: True đang đánh dấu chỗ bị che. Trong khóa học này "
              "True = được phép chú ý, nên truy vấn i phải có True ở các khóa 0..i.",
        "zh": "你的掩码整个反了：True 标出的是要屏蔽的位置。本课程里 True = 允许关注，"
              "所以查询 i 应该在键 0..i 上为 True。",
        "en": "Your mask is exactly inverted: True marks the positions to block. In this course True = may "
              "attend, so query i must be True on keys 0..i.",
    },
    "l04.hint.causal_upper": {
        "vi": "Mặt nạ của bạn là tam giác TRÊN: truy vấn i thấy chính nó và các khóa TƯƠNG LAI i..T-1, "
              "còn quá khứ thì không. Mặt nạ nhân quả giữ tam giác dưới (torch.tril, không phải torch.triu).",
        "zh": "你的掩码是上三角：查询 i 能看到自己和未来的键 i..T-1，却看不到过去。"
              "因果掩码保留的是下三角（torch.tril，不是 torch.triu）。",
        "en": "Your mask is UPPER triangular: query i sees itself and the FUTURE keys i..T-1, but not the past. "
              "A causal mask keeps the lower triangle (torch.tril, not torch.triu).",
    },
    "l04.hint.causal_no_diag": {
        "vi": "Thiếu đường chéo: mỗi token phải được chú ý tới chính nó (khóa j = i). Không có đường chéo, "
              "truy vấn 0 không thấy khóa nào và hàng softmax của nó thành NaN.",
        "zh": "缺了对角线：每个词元都必须能关注它自己（键 j = i）。没有对角线，"
              "查询 0 一个键都看不到，它那一行 softmax 就成了 NaN。",
        "en": "The diagonal is missing: every token must be able to attend to itself (key j = i). Without it "
              "query 0 sees no key at all and its softmax row becomes NaN.",
    },
    "l04.hint.causal_future": {
        "vi": "Với T = {T}, truy vấn {i} đang thấy khóa {j} ở tương lai (j > i). Chỉ các khóa j ≤ i được phép.",
        "zh": "T = {T} 时，查询 {i} 能看到未来的键 {j}（j > i）。只允许 j ≤ i 的键。",
        "en": "For T = {T}, query {i} can see the future key {j} (j > i). Only keys j ≤ i are allowed.",
    },
    "l04.hint.causal_past": {
        "vi": "Với T = {T}, truy vấn {i} bị che khỏi khóa {j}, dù j ≤ i: quá khứ (và chính nó) phải luôn thấy được.",
        "zh": "T = {T} 时，查询 {i} 被挡住了键 {j}，可是 j ≤ i：过去（以及它自己）应该始终可见。",
        "en": "For T = {T}, query {i} is blocked from key {j} although j ≤ i: the past (and itself) must stay visible.",
    },
    # padding mask
    "l04.hint.pad_2d": {
        "vi": "Mặt nạ (B, S) xếp thẳng hàng với HAI CHIỀU CUỐI (T, S) của điểm số (B, H, T, S): chiều batch "
              "sẽ bị đem so với các truy vấn. Hãy chèn hai chiều 1 cho đầu và truy vấn: (B, 1, 1, S).",
        "zh": "(B, S) 的掩码会和分数 (B, H, T, S) 的最后两维 (T, S) 对齐：batch 维会被拿去和查询对齐。"
              "请为头和查询插入两个大小为 1 的维度：(B, 1, 1, S)。",
        "en": "A (B, S) mask lines up with the LAST two dimensions (T, S) of the scores (B, H, T, S): the batch "
              "would be matched against the queries. Insert two 1s for the heads and the queries: (B, 1, 1, S).",
    },
    "l04.hint.pad_rows": {
        "vi": "Mặt nạ (B, 1, S, 1) che các HÀNG (truy vấn). Token đệm phải bị giấu với tư cách là KHÓA, "
              "tức là các CỘT của ma trận điểm số: kích thước (B, 1, 1, S).",
        "zh": "(B, 1, S, 1) 的掩码屏蔽的是行（查询）。填充词元要作为键被藏起来，"
              "也就是分数矩阵的列：形状 (B, 1, 1, S)。",
        "en": "A (B, 1, S, 1) mask blocks ROWS (queries). Padding tokens must be hidden as KEYS, i.e. the "
              "COLUMNS of the score matrix: shape (B, 1, 1, S).",
    },
    "l04.hint.pad_inverted": {
        "vi": "Bị đảo ngược: mặt nạ của bạn là True ở vị trí đệm. Trong khóa học này True = được phép chú ý, "
              "nên token đệm phải là False.",
        "zh": "反了：你的掩码在填充位置上是 True。本课程里 True = 允许关注，所以填充词元应为 False。",
        "en": "Inverted: your mask is True on the padding. In this course True = may attend, so padding "
              "must be False.",
    },
    "l04.hint.pad_id": {
        "vi": "Với pad_id = {pad_id}, mặt nạ của bạn vẫn coi 0 là token đệm. Hãy dùng tham số pad_id thay vì "
              "gõ cứng một con số.",
        "zh": "pad_id = {pad_id} 时，你的掩码仍把 0 当作填充。请使用参数 pad_id，不要把数字写死。",
        "en": "With pad_id = {pad_id} your mask still treats 0 as the padding. Use the pad_id argument instead "
              "of a fixed number.",
    },
    "l04.hint.pad_values": {
        "vi": "Với token_ids = {ids} và pad_id = {pad_id}, một số vị trí chưa đúng: khóa j phải là True "
              "đúng khi token_ids[b, j] khác pad_id.",
        "zh": "token_ids = {ids}、pad_id = {pad_id} 时有些位置不对：当且仅当 token_ids[b, j] 不等于 pad_id 时，"
              "键 j 才为 True。",
        "en": "For token_ids = {ids} and pad_id = {pad_id} some positions are wrong: key j must be True "
              "exactly when token_ids[b, j] differs from pad_id.",
    },
    # decoder mask
    "l04.hint.dec_or": {
        "vi": "Bạn ghép hai mặt nạ bằng OR (|): khi đó một khóa được thấy nếu nó ở quá khứ HOẶC không phải "
              "đệm, nên truy vấn nhìn được cả token tương lai. Khóa chỉ được thấy khi CẢ HAI điều kiện cùng "
              "đúng: dùng AND (&).",
        "zh": "你用 OR（|）合并了两个掩码：这样一个键只要在过去或者不是填充就可见，"
              "于是查询能看到未来的词元。只有两个条件同时成立时键才可见：要用 AND（&）。",
        "en": "You combined the masks with OR (|): a key is then visible if it is in the past OR not padding, "
              "so queries see future tokens. A key may be attended only when BOTH hold: use AND (&).",
    },
    "l04.hint.dec_no_padding": {
        "vi": "Các khóa đệm vẫn nhìn thấy được: phần mặt nạ đệm bị thiếu hoặc không có tác dụng.",
        "zh": "填充的键仍然可见：填充掩码那一部分缺失了，或者没有起作用。",
        "en": "Padding keys are still visible: the padding part of the mask is missing or has no effect.",
    },
    "l04.hint.dec_no_causal": {
        "vi": "Truy vấn vẫn thấy khóa ở tương lai: phần mặt nạ nhân quả bị thiếu hoặc không có tác dụng.",
        "zh": "查询仍能看到未来的键：因果掩码那一部分缺失了，或者没有起作用。",
        "en": "Queries can still see future keys: the causal part of the mask is missing or has no effect.",
    },
    "l04.hint.dec_inverted": {
        "vi": "Bị đảo ngược: mặt nạ của bạn là True đúng ở những chỗ cần che. Trong khóa học này "
              "True = được phép chú ý.",
        "zh": "反了：你的掩码恰好在该屏蔽的位置上是 True。本课程里 True = 允许关注。",
        "en": "Inverted: your mask is True exactly where it should block. In this course True = may attend.",
    },
    "l04.hint.dec_no_head": {
        "vi": "Kích thước (B, T, T) thiếu chiều đầu: so với điểm số (B, H, T, S), chiều batch sẽ bị xếp vào "
              "chỗ của các đầu. Cần (B, 1, T, T).",
        "zh": "形状 (B, T, T) 少了头这一维：和分数 (B, H, T, S) 对齐时，batch 维会落到头的位置上。"
              "应为 (B, 1, T, T)。",
        "en": "Shape (B, T, T) has no head dimension: against the scores (B, H, T, S) the batch would line up "
              "with the heads. It must be (B, 1, T, T).",
    },
    "l04.hint.dec_values": {
        "vi": "Với token_ids = {ids} và pad_id = {pad_id}, một số vị trí chưa đúng: khóa j thấy được từ truy "
              "vấn i khi và chỉ khi j ≤ i VÀ token j không phải đệm.",
        "zh": "token_ids = {ids}、pad_id = {pad_id} 时有些位置不对：当且仅当 j ≤ i 并且词元 j 不是填充时，"
              "查询 i 才能看到键 j。",
        "en": "For token_ids = {ids} and pad_id = {pad_id} some positions are wrong: query i may see key j "
              "exactly when j ≤ i AND token j is not padding.",
    },
    # nn.MultiheadAttention mask
    "l04.hint.mha_not_inverted": {
        "vi": "Mặt nạ của bạn vẫn theo quy ước của khóa học. Với nn.MultiheadAttention, attn_mask kiểu bool "
              "nghĩa là True = BỊ CHE — ngược lại. Hãy đảo nó.",
        "zh": "你的掩码还是课程的约定。对 nn.MultiheadAttention 来说，bool 类型的 attn_mask 表示 "
              "True = 屏蔽 —— 正好相反。要取反。",
        "en": "Your mask still follows the course convention. For nn.MultiheadAttention a bool attn_mask "
              "means True = BLOCKED — the opposite. Invert it.",
    },
    "l04.hint.mha_4d": {
        "vi": "nn.MultiheadAttention chỉ nhận attn_mask 2 chiều (T, S) hoặc 3 chiều (B·num_heads, T, S); "
              "mặt nạ 4 chiều {got} bị từ chối. Cần {expected}.",
        "zh": "nn.MultiheadAttention 只接受二维 (T, S) 或三维 (B·num_heads, T, S) 的 attn_mask；"
              "四维掩码 {got} 会被拒绝。应为 {expected}。",
        "en": "nn.MultiheadAttention only takes a 2-D (T, S) or a 3-D (B·num_heads, T, S) attn_mask; the 4-D "
              "mask {got} is rejected. It must be {expected}.",
    },
    "l04.hint.mha_no_heads": {
        "vi": "Mặt nạ 3 chiều cần một ma trận (T, S) cho MỖI cặp (câu, đầu): chiều đầu tiên phải là "
              "B·num_heads = {bh}, của bạn là {got}.",
        "zh": "三维掩码需要为每一对（句子，头）各准备一个 (T, S) 矩阵：第一维应为 B·num_heads = {bh}，"
              "你的是 {got}。",
        "en": "A 3-D mask needs one (T, S) matrix for EACH (sentence, head) pair: the first dimension must be "
              "B·num_heads = {bh}, yours is {got}.",
    },
    "l04.hint.mha_order": {
        "vi": "Các ma trận đều đúng, nhưng sai thứ tự. nn.MultiheadAttention đọc chỉ số thứ nhất là b·num_heads + h "
              "(mọi đầu của câu 0, rồi mọi đầu của câu 1, ...); thứ tự của bạn là h·B + b.",
        "zh": "矩阵都对，顺序错了。nn.MultiheadAttention 把第一维的下标理解为 b·num_heads + h"
              "（先是句子 0 的所有头，再是句子 1 的所有头……）；你的顺序是 h·B + b。",
        "en": "The right matrices in the wrong order. nn.MultiheadAttention reads the first index as "
              "b·num_heads + h (every head of sentence 0, then every head of sentence 1, ...); yours is h·B + b.",
    },
    "l04.hint.mha_float": {
        "vi": "attn_mask kiểu float được CỘNG vào điểm số: các giá trị 0/1 chỉ dịch điểm số đi 1 chứ không che "
              "được gì. Hãy trả về mặt nạ bool (True = bị che).",
        "zh": "float 类型的 attn_mask 会被加到分数上：0/1 只是把分数平移 1，什么也挡不住。"
              "请返回 bool 掩码（True = 屏蔽）。",
        "en": "A float attn_mask is ADDED to the scores: 0/1 values only shift the scores by 1 and block "
              "nothing. Return a bool mask (True = blocked).",
    },
    "l04.hint.mha_dtype": {
        "vi": "Kiểu dữ liệu là {got}; bài tập cần torch.bool (True = bị che).",
        "zh": "dtype 是 {got}；本练习需要 torch.bool（True = 屏蔽）。",
        "en": "The dtype is {got}; the exercise wants torch.bool (True = blocked).",
    },
    "l04.hint.mha_values": {
        "vi": "Với mặt nạ kích thước {inp} và num_heads = {h}, một số vị trí chưa đúng. Ma trận thứ b·num_heads + h "
              "phải là mặt nạ của câu b, đã đảo (True = bị che).",
        "zh": "掩码形状为 {inp}、num_heads = {h} 时有些位置不对。第 b·num_heads + h 个矩阵"
              "应是句子 b 的掩码取反（True = 屏蔽）。",
        "en": "For a mask of shape {inp} and num_heads = {h} some positions are wrong. Matrix b·num_heads + h "
              "must be sentence b's mask, inverted (True = blocked).",
    },
})

Diagnosis = tuple[bool, str, dict]


def _shape(size) -> str:
    return "(" + ", ".join(str(s) for s in size) + ")"


def _verdict(diagnosis: Diagnosis, lang: str | None) -> tuple[bool, str]:
    ok, key, fields = diagnosis
    return ok, t(key, lang, **fields)


def _ids(token_ids: torch.Tensor) -> str:
    return str(token_ids.tolist())


def _is_additive(got: torch.Tensor) -> bool:
    """A float mask in the additive form: 0 where allowed, -inf (or a huge negative) where blocked."""
    return got.is_floating_point() and bool((got < -1e4).any()) and bool(((got == 0) | (got < -1e4)).all())


def _values(got: torch.Tensor) -> torch.Tensor:
    """The student's mask as bool (nonzero = True), whatever its dtype."""
    return got != 0


def _first(mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(v) for v in mask.nonzero()[0].tolist())


# ---------------------------------------------------------------------------------- causal mask
_T_CASES = (4, 1, 7, 2, 5)


def _diagnose_causal_mask(fn: Callable) -> Diagnosis:
    for T in _T_CASES:
        expected = causal_mask(T)                                          # (1, 1, T, T)
        got = call_student(fn, T)
        if not isinstance(got, torch.Tensor):
            return False, "l04.hint.not_tensor", {"got": type(got).__name__}
        if got.shape != expected.shape:
            if got.shape == (T, T):
                return False, "l04.hint.causal_2d", {}
            return False, "l04.hint.shape", {"case": f"T = {T}", "expected": _shape(expected.shape),
                                             "got": _shape(got.shape)}
        if _is_additive(got):
            return False, "l04.hint.additive", {}
        m = _values(got)
        if not torch.equal(m, expected):
            if torch.equal(m, ~expected):
                return False, "l04.hint.causal_inverted", {}
            if torch.equal(m, expected.transpose(-2, -1)):
                return False, "l04.hint.causal_upper", {}
            if torch.equal(m, torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)[None, None]):
                return False, "l04.hint.causal_no_diag", {}
            future = m & ~expected
            if future.any():
                _, _, i, j = _first(future)
                return False, "l04.hint.causal_future", {"T": T, "i": i, "j": j}
            _, _, i, j = _first(expected & ~m)
            return False, "l04.hint.causal_past", {"T": T, "i": i, "j": j}
        if got.dtype != torch.bool:
            return False, "l04.hint.dtype", {"got": str(got.dtype)}
    return True, "l04.ok.causal", {}


def check_causal_mask(fn: Callable, lang: str | None = None) -> bool | None:
    """Check ``fn(T) -> (1, 1, T, T)`` bool, True = may attend: query i sees keys 0..i."""
    return run_check("l04.ex.causal", lambda: _verdict(_diagnose_causal_mask(fn), lang), lang)


# ------------------------------------------------------------------------------- padding mask
# (token_ids, pad_id). The second case has B == S, so a (B, S) mask would even broadcast
# (wrongly); the pad_id = 1 cases contain real tokens with id 0.
_PAD_CASES = (
    ([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]], 0),
    ([[4, 9, 0], [6, 0, 0], [2, 5, 7]], 0),
    ([[0, 5, 1, 1], [7, 3, 0, 1]], 1),
    ([[8, 2, 6, 9, 9, 9]], 9),
    ([[0, 0, 3, 7, 2], [5, 1, 8, 4, 6]], 0),
)


def _diagnose_padding_mask(fn: Callable) -> Diagnosis:
    for ids, pad_id in _PAD_CASES:
        token_ids = torch.tensor(ids)
        B, S = token_ids.shape
        expected = padding_mask(token_ids, pad_id)                        # (B, 1, 1, S)
        got = call_student(fn, token_ids.clone(), pad_id)
        if not isinstance(got, torch.Tensor):
            return False, "l04.hint.not_tensor", {"got": type(got).__name__}
        if got.shape != expected.shape:
            if got.shape == (B, S):
                return False, "l04.hint.pad_2d", {}
            if got.shape == (B, 1, S, 1):
                return False, "l04.hint.pad_rows", {}
            return False, "l04.hint.shape", {"case": f"token_ids {_shape(token_ids.shape)}",
                                             "expected": _shape(expected.shape), "got": _shape(got.shape)}
        if _is_additive(got):
            return False, "l04.hint.additive", {}
        m = _values(got)
        if not torch.equal(m, expected):
            if torch.equal(m, ~expected):
                return False, "l04.hint.pad_inverted", {}
            if pad_id != 0 and torch.equal(m, padding_mask(token_ids, 0)):
                return False, "l04.hint.pad_id", {"pad_id": pad_id}
            return False, "l04.hint.pad_values", {"ids": _ids(token_ids), "pad_id": pad_id}
        if got.dtype != torch.bool:
            return False, "l04.hint.dtype", {"got": str(got.dtype)}
    return True, "l04.ok.padding", {}


def check_padding_mask(fn: Callable, lang: str | None = None) -> bool | None:
    """Check ``fn(token_ids (B, S), pad_id) -> (B, 1, 1, S)`` bool, False exactly on padding."""
    return run_check("l04.ex.padding", lambda: _verdict(_diagnose_padding_mask(fn), lang), lang)


# ------------------------------------------------------------------------------- decoder mask
_DEC_CASES = (
    ([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]], 0),
    ([[0, 0, 3, 7, 2], [5, 1, 8, 4, 6]], 0),        # left padding
    ([[4, 9, 0], [6, 0, 0], [2, 5, 7]], 0),
    ([[0, 5, 1, 1], [7, 3, 0, 1]], 1),
    ([[8, 2, 6, 9, 9, 9]], 9),
)


def _diagnose_decoder_mask(fn: Callable) -> Diagnosis:
    for ids, pad_id in _DEC_CASES:
        token_ids = torch.tensor(ids)
        B, T = token_ids.shape
        expected = decoder_mask(token_ids, pad_id)                        # (B, 1, T, T)
        causal, padding = causal_mask(T), padding_mask(token_ids, pad_id)
        got = call_student(fn, token_ids.clone(), pad_id)
        if not isinstance(got, torch.Tensor):
            return False, "l04.hint.not_tensor", {"got": type(got).__name__}
        if got.shape != expected.shape:
            if got.shape == (B, T, T):
                return False, "l04.hint.dec_no_head", {}
            return False, "l04.hint.shape", {"case": f"token_ids {_shape(token_ids.shape)}",
                                             "expected": _shape(expected.shape), "got": _shape(got.shape)}
        if _is_additive(got):
            return False, "l04.hint.additive", {}
        m = _values(got)
        if not torch.equal(m, expected):
            if torch.equal(m, ~expected):
                return False, "l04.hint.dec_inverted", {}
            if torch.equal(m, (causal | padding).expand_as(m)):
                return False, "l04.hint.dec_or", {}
            if pad_id != 0 and torch.equal(m, decoder_mask(token_ids, 0)):
                return False, "l04.hint.pad_id", {"pad_id": pad_id}
            if torch.equal(m, causal & padding.transpose(-2, -1)):
                return False, "l04.hint.pad_rows", {}
            if (m & ~padding).any():
                return False, "l04.hint.dec_no_padding", {}
            if (m & ~causal).any():
                return False, "l04.hint.dec_no_causal", {}
            return False, "l04.hint.dec_values", {"ids": _ids(token_ids), "pad_id": pad_id}
        if got.dtype != torch.bool:
            return False, "l04.hint.dtype", {"got": str(got.dtype)}
    return True, "l04.ok.decoder", {}


def check_decoder_mask(fn: Callable, lang: str | None = None) -> bool | None:
    """Check ``fn(token_ids (B, T), pad_id) -> (B, 1, T, T)`` = causal AND padding."""
    return run_check("l04.ex.decoder", lambda: _verdict(_diagnose_decoder_mask(fn), lang), lang)


# ------------------------------------------------------------------- nn.MultiheadAttention mask
# (token_ids, num_heads): course decoder masks (B, 1, T, T) without fully masked rows
# (nn.MultiheadAttention's weights path turns those into NaN). B > 1 with different
# padding per sentence, so the order of the (sentence, head) matrices matters.
_MHA_CASES = (
    ([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]], 4),
    ([[4, 9, 0], [6, 0, 0], [2, 5, 7]], 2),
    ([[8, 2, 6, 0, 0, 0]], 3),
    ([[5, 0, 0, 0], [1, 2, 0, 0], [3, 4, 6, 0], [7, 8, 9, 1]], 2),
)


def _torch_mha_agrees(attn_mask: torch.Tensor, mask: torch.Tensor, num_heads: int) -> bool:
    """nn.MultiheadAttention with ``attn_mask`` = attnlab.MultiHeadAttention with ``mask``."""
    B, _, T, _ = mask.shape
    d_model = 4 * num_heads
    gen = torch.Generator().manual_seed(0)
    ours = MultiHeadAttention(d_model, num_heads).eval()
    theirs = nn.MultiheadAttention(d_model, num_heads, batch_first=True).eval()
    with torch.no_grad():
        for p in ours.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
        theirs.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        theirs.out_proj.weight.copy_(ours.out_proj.weight)
        theirs.out_proj.bias.copy_(ours.out_proj.bias)
        x = torch.randn(B, T, d_model, generator=gen)
        expected, _ = ours(x, mask=mask)
        got, _ = theirs(x, x, x, attn_mask=attn_mask, need_weights=False)
    return bool(torch.allclose(got, expected, atol=1e-5, rtol=0))


def _diagnose_mha_mask(fn: Callable) -> Diagnosis:
    for ids, H in _MHA_CASES:
        mask = decoder_mask(torch.tensor(ids))                            # (B, 1, T, T), True = may attend
        B, _, T, S = mask.shape
        expected = (~mask).expand(B, H, T, S).reshape(B * H, T, S)       # True = blocked, index b*H + h
        got = call_student(fn, mask.clone(), H)
        if not isinstance(got, torch.Tensor):
            return False, "l04.hint.not_tensor", {"got": type(got).__name__}
        if got.shape != expected.shape:
            if got.dim() == 4:
                return False, "l04.hint.mha_4d", {"got": _shape(got.shape), "expected": _shape(expected.shape)}
            if got.dim() == 3 and got.shape[1:] == (T, S):
                return False, "l04.hint.mha_no_heads", {"bh": B * H, "got": got.shape[0]}
            return False, "l04.hint.shape", {"case": f"mask {_shape(mask.shape)}, num_heads = {H}",
                                             "expected": _shape(expected.shape), "got": _shape(got.shape)}
        if got.is_floating_point():
            return False, "l04.hint.mha_float", {}
        if got.dtype != torch.bool:
            return False, "l04.hint.mha_dtype", {"got": str(got.dtype)}
        if not torch.equal(got, expected):
            head_major = (~mask[:, 0]).repeat(H, 1, 1)                   # index h*B + b
            if torch.equal(got, ~expected) or torch.equal(got, ~head_major):
                return False, "l04.hint.mha_not_inverted", {}
            if torch.equal(got, head_major):
                return False, "l04.hint.mha_order", {}
            return False, "l04.hint.mha_values", {"inp": _shape(mask.shape), "h": H}
        if not _torch_mha_agrees(got, mask, H):                          # equal masks: cannot happen
            return False, "l04.hint.mha_values", {"inp": _shape(mask.shape), "h": H}
    return True, "l04.ok.mha", {}


def check_mha_mask(fn: Callable, lang: str | None = None) -> bool | None:
    """Check ``fn(mask (B, 1, T, S), num_heads) -> (B * num_heads, T, S)`` bool, True = blocked:
    a course mask turned into the ``attn_mask`` of ``nn.MultiheadAttention``."""
    return run_check("l04.ex.mha", lambda: _verdict(_diagnose_mha_mask(fn), lang), lang)
