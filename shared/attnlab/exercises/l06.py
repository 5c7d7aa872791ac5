"""Exercise checkers for lesson 06 (encoder, decoder, GPT), and the words the lesson prints.

- ``check_block_params(fn)``: ``fn(d_model, num_heads, d_ff)`` -> parameters of one TransformerBlock.
- ``check_masks(fn)``: ``fn(src_ids, tgt_ids, pad_id)`` -> (encoder, decoder, cross-attention) masks
  in their full shapes (B, 1, S, S), (B, 1, T, T), (B, 1, T, S).
- ``check_greedy_step(fn)``: ``fn(model, ids, max_len)`` -> ids with one greedily chosen token appended.
"""
from __future__ import annotations

import functools
import numbers

import torch
import torch.nn as nn

from ..block import TransformerBlock
from ..i18n import register, t
from ..masks import causal_mask, decoder_mask, padding_mask
from ._common import call_student, run_check

register({
    # ---------------------------------------------------------------- printed by the lesson
    "l06.fig.masks": {
        "vi": "Ai được nhìn ai? (sáng = được chú ý, tối = bị che)",
        "zh": "谁能看见谁？（亮 = 可以关注，暗 = 被遮住）",
        "en": "Who may see whom? (bright = may attend, dark = masked)",
    },
    "l06.fig.enc": {
        "vi": "Bộ mã hóa: mặt nạ đệm",
        "zh": "编码器：填充掩码",
        "en": "Encoder: padding mask",
    },
    "l06.fig.dec": {
        "vi": "Bộ giải mã: mặt nạ nhân quả",
        "zh": "解码器：因果掩码",
        "en": "Decoder: causal mask",
    },
    "l06.fig.cross": {
        "vi": "Chú ý chéo: T × S",
        "zh": "交叉注意力：T × S",
        "en": "Cross-attention: T × S",
    },
    "l06.fig.cross_weights": {
        "vi": "Chú ý chéo, đầu 1 — trọng số NGẪU NHIÊN, chưa huấn luyện",
        "zh": "交叉注意力，第 1 个头 —— 随机权重，尚未训练",
        "en": "Cross-attention, head 1 — RANDOM weights, not trained",
    },
    "l06.check.enc_pad": {
        "vi": "bộ mã hóa: các khóa là token đệm nhận trọng số 0",
        "zh": "编码器：填充位置的键权重为 0",
        "en": "encoder: padding keys get weight 0",
    },
    "l06.check.enc_both_sides": {
        "vi": "bộ mã hóa: token đầu tiên cũng chú ý tới các token đứng sau nó",
        "zh": "编码器：第一个词元也会关注它后面的词元",
        "en": "encoder: the first token also attends to the tokens after it",
    },
    "l06.check.cross_pad": {
        "vi": "chú ý chéo: các token đệm của câu nguồn nhận trọng số 0",
        "zh": "交叉注意力：源句的填充位置权重为 0",
        "en": "cross-attention: padding tokens of the source get weight 0",
    },
    "l06.check.parallel": {
        "vi": "có mặt nạ nhân quả: logit tính một lượt trên cả câu = logit tính trên từng tiền tố",
        "zh": "有因果掩码：整句一次算出的 logits = 逐个前缀算出的 logits",
        "en": "with the causal mask: logits from one pass over the sentence = logits from each prefix",
    },
    "l06.check.unmasked": {
        "vi": "không có mặt nạ: hai cách tính cho kết quả khác nhau",
        "zh": "不加掩码：两种算法的结果不一样",
        "en": "without a mask: the two ways give different results",
    },
    "l06.check.greedy_parallel": {
        "vi": "một lượt chạy song song dự đoán lại đúng từng token vừa sinh",
        "zh": "一次并行计算就能复现刚才逐个生成的每个词元",
        "en": "one parallel pass predicts exactly the tokens just generated",
    },
    "l06.check.gpt2": {
        "vi": "khớp đúng số tham số của GPT-2 small bản phát hành: 124,439,808",
        "zh": "与发布的 GPT-2 small 参数量完全一致：124,439,808",
        "en": "matches the released GPT-2 small exactly: 124,439,808 parameters",
    },
    "l06.gen.prompt": {
        "vi": "prompt:        {text}",
        "zh": "提示（prompt）：{text}",
        "en": "prompt:        {text}",
    },
    "l06.gen.output": {
        "vi": "sinh tham lam: {text}",
        "zh": "贪心生成：    {text}",
        "en": "greedy output: {text}",
    },
    "l06.count.total": {
        "vi": "tổng cộng: {n:,} tham số",
        "zh": "合计：{n:,} 个参数",
        "en": "total: {n:,} parameters",
    },
    "l06.count.untied": {
        "vi": "nếu lớp đầu ra KHÔNG dùng chung ma trận với vector nhúng: thêm {n:,} tham số",
        "zh": "如果输出层不与嵌入共享矩阵：还要再多 {n:,} 个参数",
        "en": "if the output layer did NOT share the embedding matrix: {n:,} more parameters",
    },
    "l06.count.base": {
        "vi": "bài báo ghi 65M; ta đếm được ít hơn {gap:.1f}M ({pct:.0f}%)",
        "zh": "论文写的是 65M；我们数出来的少了 {gap:.1f}M（{pct:.0f}%）",
        "en": "the paper says 65M; our count is {gap:.1f}M ({pct:.0f}%) lower",
    },
    # ---------------------------------------------------------------- exercise names
    "l06.ex.params": {
        "vi": "Đếm tham số của một khối", "zh": "数一个块的参数", "en": "Count the parameters of a block",
    },
    "l06.ex.masks": {
        "vi": "Ba mặt nạ của mô hình mã hóa–giải mã", "zh": "编码器–解码器的三个掩码",
        "en": "The three masks of an encoder-decoder",
    },
    "l06.ex.greedy": {
        "vi": "Một bước sinh tham lam", "zh": "贪心生成的一步", "en": "One greedy generation step",
    },
    # ---------------------------------------------------------------- exercise 1: parameters
    "l06.params.ok": {
        "vi": "Công thức của bạn khớp với attnlab.TransformerBlock trên {n} cấu hình khác nhau.",
        "zh": "你的公式在 {n} 组不同的配置上都与 attnlab.TransformerBlock 一致。",
        "en": "Your formula matches attnlab.TransformerBlock on {n} different configurations.",
    },
    "l06.params.not_int": {
        "vi": "Hàm cần trả về một số nguyên (số tham số), nhưng lại trả về {kind}.",
        "zh": "函数应该返回一个整数（参数个数），但返回的是 {kind}。",
        "en": "The function must return an integer (a number of parameters), but it returned {kind}.",
    },
    "l06.params.no_bias": {
        "vi": "Bạn quên các độ lệch (bias): mỗi nn.Linear(n_in, n_out) có thêm n_out tham số bên cạnh n_in·n_out trọng số.",
        "zh": "你漏掉了偏置（bias）：每个 nn.Linear(n_in, n_out) 除了 n_in·n_out 个权重，还有 n_out 个偏置。",
        "en": "You forgot the biases: every nn.Linear(n_in, n_out) has n_out biases besides its n_in·n_out weights.",
    },
    "l06.params.no_bias_no_norm": {
        "vi": "Bạn chỉ đếm các ma trận trọng số: còn thiếu độ lệch (bias) của mỗi nn.Linear và tham số của hai lớp chuẩn hóa tầng (LayerNorm).",
        "zh": "你只数了权重矩阵：还缺每个 nn.Linear 的偏置，以及两个层归一化（LayerNorm）的参数。",
        "en": "You counted only the weight matrices: the biases of each nn.Linear and the two LayerNorms are missing.",
    },
    "l06.params.no_norm": {
        "vi": "Bạn quên hai lớp chuẩn hóa tầng: mỗi nn.LayerNorm(d_model) có 2·d_model tham số (γ và β).",
        "zh": "你漏掉了两个层归一化：每个 nn.LayerNorm(d_model) 有 2·d_model 个参数（γ 和 β）。",
        "en": "You forgot the two LayerNorms: each nn.LayerNorm(d_model) has 2·d_model parameters (γ and β).",
    },
    "l06.params.norm_half": {
        "vi": "Chuẩn hóa tầng có HAI vector tham số, γ (nhân) và β (cộng), mỗi vector d_model phần tử — bạn mới đếm một.",
        "zh": "层归一化有两个参数向量：γ（缩放）和 β（平移），各有 d_model 个元素——你只数了一个。",
        "en": "LayerNorm has TWO parameter vectors, γ (scale) and β (shift), d_model entries each — you counted one.",
    },
    "l06.params.dff": {
        "vi": "Xem lại mạng truyền thẳng: hai lớp nn.Linear, d_model → d_ff rồi d_ff → d_model; độ lệch của lớp đầu có d_ff phần tử, của lớp sau có d_model. Dùng d_ff được cho, đừng giả sử d_ff = 4·d_model.",
        "zh": "再看看前馈网络：两个 nn.Linear，d_model → d_ff，再 d_ff → d_model；第一层的偏置有 d_ff 个，第二层的有 d_model 个。请使用给定的 d_ff，不要假设 d_ff = 4·d_model。",
        "en": "Check the feed-forward network: two nn.Linear layers, d_model → d_ff then d_ff → d_model; the first bias has d_ff entries, the second d_model. Use the given d_ff, do not assume d_ff = 4·d_model.",
    },
    "l06.params.per_head": {
        "vi": "Số đầu không làm thay đổi số tham số: các đầu chia nhau d_model chiều (d_k = d_model / num_heads), nên q_proj, k_proj, v_proj, out_proj vẫn chỉ là bốn lớp nn.Linear(d_model, d_model).",
        "zh": "头的个数不会改变参数量：各个头平分 d_model 维（d_k = d_model / num_heads），所以 q_proj、k_proj、v_proj、out_proj 仍然只是四个 nn.Linear(d_model, d_model)。",
        "en": "The number of heads does not change the count: the heads share d_model dimensions (d_k = d_model / num_heads), so q_proj, k_proj, v_proj, out_proj are still four nn.Linear(d_model, d_model).",
    },
    "l06.params.proj": {
        "vi": "Chú ý đa đầu có BỐN phép chiếu: truy vấn, khóa, giá trị và phép chiếu đầu ra out_proj.",
        "zh": "多头注意力有四个投影：查询、键、值，还有输出投影 out_proj。",
        "en": "Multi-head attention has FOUR projections: query, key, value and the output projection out_proj.",
    },
    "l06.params.off": {
        "vi": "Với d_model={d_model}, num_heads={num_heads}, d_ff={d_ff} kết quả của bạn {direction}. Đếm lần lượt: chú ý đa đầu (4 lớp nn.Linear), mạng truyền thẳng (2 lớp nn.Linear), 2 lớp nn.LayerNorm.",
        "zh": "当 d_model={d_model}、num_heads={num_heads}、d_ff={d_ff} 时，你的结果{direction}。逐项数一数：多头注意力（4 个 nn.Linear）、前馈网络（2 个 nn.Linear）、2 个 nn.LayerNorm。",
        "en": "For d_model={d_model}, num_heads={num_heads}, d_ff={d_ff} your result is {direction}. Count piece by piece: multi-head attention (4 nn.Linear), feed-forward network (2 nn.Linear), 2 nn.LayerNorm.",
    },
    "l06.too_small": {"vi": "quá nhỏ", "zh": "偏小", "en": "too small"},
    "l06.too_large": {"vi": "quá lớn", "zh": "偏大", "en": "too large"},
    # ---------------------------------------------------------------- exercise 2: masks
    "l06.masks.ok": {
        "vi": "Cả ba mặt nạ đều đúng, kể cả khi T ≠ S, có đệm ở cả hai phía và pad_id ≠ 0.",
        "zh": "三个掩码全对，包括 T ≠ S、两边都有填充以及 pad_id ≠ 0 的情况。",
        "en": "All three masks are right, including T ≠ S, padding on both sides and pad_id ≠ 0.",
    },
    "l06.masks.name.enc": {"vi": "mặt nạ bộ mã hóa", "zh": "编码器掩码", "en": "the encoder mask"},
    "l06.masks.name.dec": {"vi": "mặt nạ tự chú ý của bộ giải mã", "zh": "解码器自注意力掩码",
                           "en": "the decoder self-attention mask"},
    "l06.masks.name.cross": {"vi": "mặt nạ chú ý chéo", "zh": "交叉注意力掩码", "en": "the cross-attention mask"},
    "l06.masks.not_three": {
        "vi": "Hàm cần trả về ba mặt nạ theo thứ tự: (bộ mã hóa, tự chú ý của bộ giải mã, chú ý chéo).",
        "zh": "函数应按顺序返回三个掩码：（编码器，解码器自注意力，交叉注意力）。",
        "en": "The function must return three masks, in order: (encoder, decoder self-attention, cross-attention).",
    },
    "l06.masks.not_bool": {
        "vi": "{name} phải là tensor kiểu torch.bool (True = được chú ý), nhưng lại có kiểu {dtype}.",
        "zh": "{name}应该是 torch.bool 张量（True = 可以关注），但它的类型是 {dtype}。",
        "en": "{name} must be a torch.bool tensor (True = may attend), but its dtype is {dtype}.",
    },
    "l06.masks.cross_shape": {
        "vi": "{name} bị đảo chiều: hàng là truy vấn (T token đích), cột là khóa (S token nguồn), nên hình dạng phải là (B, 1, T, S), không phải (B, 1, S, T).",
        "zh": "{name}的方向反了：行是查询（T 个目标词元），列是键（S 个源词元），所以形状应为 (B, 1, T, S)，而不是 (B, 1, S, T)。",
        "en": "{name} is transposed: rows are queries (T target tokens), columns are keys (S source tokens), so its shape is (B, 1, T, S), not (B, 1, S, T).",
    },
    "l06.masks.expand": {
        "vi": "{name} có hình dạng {got}: tuy broadcast được, nhưng bài tập yêu cầu hình dạng đầy đủ {want} để dễ nhìn — hãy dùng .expand(...).",
        "zh": "{name}的形状是 {got}：虽然可以广播，但本练习要求完整形状 {want}，方便查看——请用 .expand(...)。",
        "en": "{name} has shape {got}: it broadcasts, but the exercise asks for the full shape {want} so it can be inspected — use .expand(...).",
    },
    "l06.masks.shape": {
        "vi": "{name} có hình dạng {got}, nhưng cần {want} (B câu, 1 cho mọi đầu, hàng = truy vấn, cột = khóa).",
        "zh": "{name}的形状是 {got}，应该是 {want}（B 个句子，1 表示所有头共用，行 = 查询，列 = 键）。",
        "en": "{name} has shape {got}, but it should be {want} (B sentences, 1 for all heads, rows = queries, columns = keys).",
    },
    "l06.masks.inverted": {
        "vi": "{name} bị đảo ngược: quy ước của khóa học là True = ĐƯỢC chú ý, False = bị che.",
        "zh": "{name}正好取反了：本课程的约定是 True = 可以关注，False = 被遮住。",
        "en": "{name} is inverted: the course convention is True = MAY attend, False = masked.",
    },
    "l06.masks.enc_causal": {
        "vi": "Bộ mã hóa không dùng mặt nạ nhân quả: nó đọc cả câu nguồn cùng lúc, mỗi token được nhìn cả hai phía (như BERT). Chỉ che các token đệm.",
        "zh": "编码器不用因果掩码：它一次读完整个源句，每个词元都能看两边（就像 BERT）。只需遮住填充位置。",
        "en": "The encoder does not use a causal mask: it reads the whole source at once, every token sees both sides (like BERT). Mask only the padding.",
    },
    "l06.masks.no_pad": {
        "vi": "{name} chưa che các token đệm của {side}: token đệm không được làm khóa cho ai cả.",
        "zh": "{name}没有遮住{side}的填充词元：填充位置不能作为任何人的键。",
        "en": "{name} does not mask the padding of {side}: a padding token must not be a key for anyone.",
    },
    "l06.masks.side.src": {"vi": "câu nguồn", "zh": "源句", "en": "the source"},
    "l06.masks.side.tgt": {"vi": "câu đích", "zh": "目标句", "en": "the target"},
    "l06.masks.pad_rows": {
        "vi": "{name} che HÀNG của token đệm (truy vấn) thay vì CỘT (khóa). Mặt nạ đệm che khóa: không ai được nhìn vào token đệm.",
        "zh": "{name}遮住的是填充词元所在的行（查询），而不是列（键）。填充掩码遮的是键：谁都不能看填充位置。",
        "en": "{name} masks the ROWS of padding tokens (queries) instead of the COLUMNS (keys). A padding mask hides keys: nobody may look at a padding token.",
    },
    "l06.masks.pad_rows_too": {
        "vi": "{name} che cả HÀNG của token đệm: khi đó truy vấn là token đệm không được nhìn ai cả (cả hàng toàn False). Mặt nạ đệm chỉ che khóa (cột); đầu ra ở vị trí đệm đằng nào cũng bị bỏ qua.",
        "zh": "{name}把填充词元所在的行也遮住了：这样作为查询的填充词元谁也看不见（整行全是 False）。填充掩码只遮键（列）；填充位置的输出反正会被忽略。",
        "en": "{name} also masks the ROWS of padding tokens: a padding query then sees nothing (a row of all False). A padding mask hides only keys (columns); the outputs at padding positions are ignored anyway.",
    },
    "l06.masks.dec_no_causal": {
        "vi": "Tự chú ý của bộ giải mã cần mặt nạ nhân quả: token thứ i chỉ được nhìn các token 0..i, không được nhìn trước tương lai.",
        "zh": "解码器的自注意力需要因果掩码：第 i 个词元只能看 0..i，不能偷看未来。",
        "en": "Decoder self-attention needs the causal mask: token i may see tokens 0..i only, never the future.",
    },
    "l06.masks.dec_upper": {
        "vi": "Tam giác bị ngược: hàng i (truy vấn) được nhìn các cột 0..i (khóa), tức là tam giác DƯỚI (torch.tril).",
        "zh": "三角方向反了：第 i 行（查询）可以看第 0..i 列（键），也就是下三角（torch.tril）。",
        "en": "Wrong triangle: row i (query) may see columns 0..i (keys), the LOWER triangle (torch.tril).",
    },
    "l06.masks.dec_diag": {
        "vi": "Mỗi token phải được nhìn chính nó: đường chéo của mặt nạ nhân quả là True.",
        "zh": "每个词元都要能看见自己：因果掩码的对角线是 True。",
        "en": "Every token must see itself: the diagonal of the causal mask is True.",
    },
    "l06.masks.cross_causal": {
        "vi": "Chú ý chéo không dùng mặt nạ nhân quả: câu nguồn đã có đủ từ đầu, mỗi token đích được nhìn toàn bộ câu nguồn (trừ token đệm).",
        "zh": "交叉注意力不用因果掩码：源句从一开始就是完整的，每个目标词元都可以看整个源句（填充位置除外）。",
        "en": "Cross-attention does not use a causal mask: the source is complete from the start, every target token may see the whole source (except its padding).",
    },
    "l06.masks.cross_tgt_pad": {
        "vi": "Trong chú ý chéo, khóa là các token của câu NGUỒN: hãy che đệm của câu nguồn (src_ids), không phải của câu đích.",
        "zh": "交叉注意力里，键是源句的词元：要遮的是源句（src_ids）的填充，而不是目标句的。",
        "en": "In cross-attention the keys are the SOURCE tokens: mask the source's padding (src_ids), not the target's.",
    },
    "l06.masks.pad_id": {
        "vi": "Hãy dùng tham số pad_id thay vì cố định số 0: có bộ từ vựng đặt token đệm ở mã khác.",
        "zh": "请使用参数 pad_id，不要写死 0：有的词表把填充词元放在别的编号上。",
        "en": "Use the pad_id argument instead of a fixed 0: some vocabularies put the padding token at another id.",
    },
    "l06.masks.wrong": {
        "vi": "{name} chưa đúng ở một số vị trí. Tự hỏi: hàng là ai (truy vấn), cột là ai (khóa), có cần che tương lai không, và token đệm nằm ở phía nào?",
        "zh": "{name}有些位置不对。想一想：行是谁（查询），列是谁（键），要不要遮住未来，填充词元在哪一边？",
        "en": "{name} is wrong in some positions. Ask: who are the rows (queries), who are the columns (keys), must the future be hidden, and on which side is the padding?",
    },
    # ---------------------------------------------------------------- exercise 3: greedy step
    "l06.greedy.ok": {
        "vi": "Đúng cho một lô nhiều câu, cho câu ngắn hơn và dài hơn max_len.",
        "zh": "对多个句子组成的批次、比 max_len 短和比 max_len 长的序列都正确。",
        "en": "Right for a batch of sequences, shorter and longer than max_len.",
    },
    "l06.greedy.not_tensor": {
        "vi": "Hàm cần trả về một tensor mã token (B, T+1), nhưng lại trả về {kind}.",
        "zh": "函数应返回一个词元编号张量 (B, T+1)，但返回的是 {kind}。",
        "en": "The function must return a tensor of token ids (B, T+1), but it returned {kind}.",
    },
    "l06.greedy.no_append": {
        "vi": "Bạn trả về mỗi token mới. Hãy nối nó vào cuối dãy cũ: kết quả có hình dạng (B, T+1).",
        "zh": "你只返回了新词元。要把它接在原序列的末尾：结果的形状是 (B, T+1)。",
        "en": "You returned only the new token. Append it to the sequence: the result has shape (B, T+1).",
    },
    "l06.greedy.shape": {
        "vi": "Kết quả có hình dạng {got}, cần {want}. Logit có hình dạng (B, T, V): lấy vị trí cuối [:, -1, :] rồi argmax theo trục từ vựng (trục cuối) để mỗi câu được đúng một token, rồi nối theo trục thời gian (dim=1).",
        "zh": "结果的形状是 {got}，应该是 {want}。logits 的形状是 (B, T, V)：取最后一个位置 [:, -1, :]，沿词表维（最后一维）做 argmax，每个句子得到一个词元，再沿时间维（dim=1）拼接。",
        "en": "The result has shape {got}, it should be {want}. Logits are (B, T, V): take the last position [:, -1, :], argmax over the vocabulary (last axis) to get one token per sequence, then concatenate along time (dim=1).",
    },
    "l06.greedy.cat": {
        "vi": "torch.cat báo lỗi vì hai tensor không khớp hình dạng. Token mới phải có hình dạng (B, 1): lấy logits[:, -1, :] (B, V), argmax theo trục từ vựng (trục cuối) với keepdim=True.",
        "zh": "torch.cat 报错了，因为两个张量的形状对不上。新词元的形状应为 (B, 1)：取 logits[:, -1, :]（形状 (B, V)），沿词表维（最后一维）做 argmax，并设 keepdim=True。",
        "en": "torch.cat failed because the two tensors' shapes do not fit. The new token must be (B, 1): take logits[:, -1, :] (B, V) and argmax over the vocabulary (last axis) with keepdim=True.",
    },
    "l06.greedy.values": {
        "vi": "Bạn nối GIÁ TRỊ lớn nhất của logit chứ không phải VỊ TRÍ của nó: token tiếp theo là chỉ số, hãy dùng argmax (hoặc .max(...).indices).",
        "zh": "你拼接的是 logits 的最大值，而不是它的位置：下一个词元是下标，请用 argmax（或 .max(...).indices）。",
        "en": "You appended the largest logit VALUE, not its position: the next token is an index, use argmax (or .max(...).indices).",
    },
    "l06.greedy.first": {
        "vi": "Bạn lấy logit ở vị trí ĐẦU TIÊN. Token tiếp theo được dự đoán ở vị trí CUỐI CÙNG, nơi mô hình đã đọc hết cả dãy: logits[:, -1, :].",
        "zh": "你用的是第一个位置的 logits。下一个词元由最后一个位置预测，那里模型已经读完了整个序列：logits[:, -1, :]。",
        "en": "You used the logits of the FIRST position. The next token is predicted at the LAST position, where the model has read the whole sequence: logits[:, -1, :].",
    },
    "l06.greedy.no_crop": {
        "vi": "Dãy dài hơn max_len nên mô hình báo lỗi (nó chỉ có max_len vector vị trí). Chỉ đưa vào mô hình max_len token CUỐI: ids[:, -max_len:].",
        "zh": "序列比 max_len 长，模型报错了（它只有 max_len 个位置向量）。只把最后 max_len 个词元送进模型：ids[:, -max_len:]。",
        "en": "The sequence is longer than max_len, so the model failed (it has only max_len position vectors). Feed the model only the LAST max_len tokens: ids[:, -max_len:].",
    },
    "l06.greedy.crop_front": {
        "vi": "Bạn giữ max_len token ĐẦU và bỏ phần cuối — mà phần cuối mới là ngữ cảnh gần nhất. Hãy giữ max_len token CUỐI.",
        "zh": "你保留了前 max_len 个词元、丢掉了结尾——可结尾才是最近的上下文。请保留最后 max_len 个词元。",
        "en": "You kept the FIRST max_len tokens and dropped the end — the end is the most recent context. Keep the LAST max_len tokens.",
    },
    "l06.greedy.crop_return": {
        "vi": "Chỉ phần đưa vào mô hình mới bị cắt; kết quả trả về vẫn là TOÀN BỘ dãy cũ cộng token mới, hình dạng (B, T+1).",
        "zh": "只有送进模型的部分需要截断；返回的仍是完整的原序列加上新词元，形状 (B, T+1)。",
        "en": "Only what you feed the model is cropped; return the WHOLE sequence plus the new token, shape (B, T+1).",
    },
    "l06.greedy.changed": {
        "vi": "Các token cũ phải giữ nguyên: chỉ thêm một token vào cuối.",
        "zh": "原来的词元必须保持不变：只在末尾添一个新词元。",
        "en": "The old tokens must stay as they are: only add one token at the end.",
    },
    "l06.greedy.wrong": {
        "vi": "Token được thêm chưa phải token có logit lớn nhất ở vị trí cuối (với ids có hình dạng {shape}).",
        "zh": "添上的词元不是最后一个位置 logits 最大的那个（ids 形状为 {shape} 时）。",
        "en": "The appended token is not the one with the largest logit at the last position (for ids of shape {shape}).",
    },
})


# ============================================================== exercise 1: parameter count

PARAM_CONFIGS = ((64, 8, 256), (512, 8, 2048), (768, 12, 3072), (10, 2, 7), (48, 6, 100))


@functools.lru_cache(maxsize=None)
def true_block_params(d_model: int, num_heads: int, d_ff: int) -> int:
    """Parameters of attnlab.TransformerBlock, counted on the meta device (no memory used)."""
    with torch.device("meta"):
        block = TransformerBlock(d_model, num_heads, d_ff)
    return sum(p.numel() for p in block.parameters())


def _lin(n_in: int, n_out: int, bias: bool = True) -> int:
    return n_in * n_out + (n_out if bias else 0)


# Typical wrong formulas -> hint key. A student's function that agrees with one of them on every
# configuration gets that hint. (d, h, f) = (d_model, num_heads, d_ff).
PARAM_MISTAKES = (
    ("l06.params.no_bias_no_norm", lambda d, h, f: 4 * d * d + 2 * d * f),
    ("l06.params.no_bias", lambda d, h, f: 4 * d * d + 2 * d * f + 4 * d),
    ("l06.params.no_norm", lambda d, h, f: 4 * _lin(d, d) + _lin(d, f) + _lin(f, d)),
    ("l06.params.norm_half", lambda d, h, f: 4 * _lin(d, d) + _lin(d, f) + _lin(f, d) + 2 * d),
    ("l06.params.dff", lambda d, h, f: 4 * _lin(d, d) + _lin(d, 4 * d) + _lin(4 * d, d) + 4 * d),
    ("l06.params.dff", lambda d, h, f: 4 * _lin(d, d) + _lin(d, f) + 4 * d),
    ("l06.params.dff", lambda d, h, f: 4 * _lin(d, d) + 2 * _lin(d, f) + 4 * d),
    ("l06.params.dff", lambda d, h, f: 4 * _lin(d, d) + 2 * d * f + 2 * d + 4 * d),
    ("l06.params.per_head", lambda d, h, f: 4 * h * _lin(d, d) + _lin(d, f) + _lin(f, d) + 4 * d),
    ("l06.params.per_head", lambda d, h, f: 4 * h * d * d + 4 * d + _lin(d, f) + _lin(f, d) + 4 * d),
    ("l06.params.proj", lambda d, h, f: 3 * _lin(d, d) + _lin(d, f) + _lin(f, d) + 4 * d),
)


def _as_count(value):
    """An int from an int, an integral float or a one-element tensor; None otherwise."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            return None
        value = value.item()
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return int(value)
    return None


def check_block_params(fn, lang: str | None = None):
    """``fn(d_model, num_heads, d_ff)`` must return the parameter count of TransformerBlock(d_model, num_heads, d_ff)."""
    def check():
        answers = {}
        for cfg in PARAM_CONFIGS:
            raw = call_student(fn, *cfg)
            got = _as_count(raw)
            if got is None:
                return False, t("l06.params.not_int", lang, kind=type(raw).__name__)
            answers[cfg] = got
        wrong = [cfg for cfg in PARAM_CONFIGS if answers[cfg] != true_block_params(*cfg)]
        if not wrong:
            return True, t("l06.params.ok", lang, n=len(PARAM_CONFIGS))
        for key, formula in PARAM_MISTAKES:
            if all(answers[cfg] == formula(*cfg) for cfg in PARAM_CONFIGS):
                return False, t(key, lang)
        d, h, f = wrong[0]
        direction = "l06.too_small" if answers[wrong[0]] < true_block_params(d, h, f) else "l06.too_large"
        return False, t("l06.params.off", lang, d_model=d, num_heads=h, d_ff=f, direction=t(direction, lang))
    return run_check("l06.ex.params", check, lang)


# ============================================================== exercise 2: masks

# (src_ids, tgt_ids, pad_id): T != S, padding on both sides; a case with T > S and no padding;
# a case with pad_id = 1 and token id 0 used as a real token.
MASK_CASES = (
    (torch.tensor([[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]]), torch.tensor([[1, 8, 9, 0], [1, 2, 3, 4]]), 0),
    (torch.tensor([[4, 5, 6]]), torch.tensor([[1, 7, 8, 9, 2, 3]]), 0),
    (torch.tensor([[0, 3, 1, 1], [4, 0, 6, 7]]), torch.tensor([[5, 0, 1], [5, 6, 0]]), 1),
)


def reference_masks(src_ids: torch.Tensor, tgt_ids: torch.Tensor, pad_id: int = 0):
    """The three masks in full shape: encoder (B,1,S,S), decoder self (B,1,T,T), cross (B,1,T,S)."""
    B, S = src_ids.shape
    T = tgt_ids.shape[1]
    enc = padding_mask(src_ids, pad_id).expand(B, 1, S, S)
    dec = decoder_mask(tgt_ids, pad_id)
    cross = padding_mask(src_ids, pad_id).expand(B, 1, T, S)
    return enc, dec, cross


def _mask_mistakes(src, tgt, pad):
    """For each of the three masks: (hint key, extra fields, wrong mask) in full shape."""
    B, S = src.shape
    T = tgt.shape[1]
    src_keep, tgt_keep = src != pad, tgt != pad
    src_cols = lambda n: src_keep[:, None, None, :].expand(B, 1, n, S)             # noqa: E731
    tgt_cols = tgt_keep[:, None, None, :].expand(B, 1, T, T)
    src_rows = src_keep[:, None, :, None]
    tgt_rows = tgt_keep[:, None, :, None]
    causal_TT, causal_SS = causal_mask(T)[0, 0], causal_mask(S)[0, 0]
    causal_TS = torch.ones(T, S, dtype=torch.bool).tril()                            # top-left aligned
    causal_TS_br = torch.ones(T, S, dtype=torch.bool).tril(S - T)                    # bottom-right aligned
    all_ss = torch.ones(B, 1, S, S, dtype=torch.bool)
    all_tt = torch.ones(B, 1, T, T, dtype=torch.bool)
    all_ts = torch.ones(B, 1, T, S, dtype=torch.bool)
    upper = torch.ones(T, T, dtype=torch.bool).triu()
    strict = torch.ones(T, T, dtype=torch.bool).tril(-1)
    src0 = src != 0
    tgt0 = tgt != 0
    enc = [
        ("l06.masks.enc_causal", {}, src_cols(S) & causal_SS),
        ("l06.masks.enc_causal", {}, all_ss & causal_SS),
        ("l06.masks.pad_rows", {}, src_rows.expand(B, 1, S, S)),
        ("l06.masks.pad_rows_too", {}, src_rows & src_cols(S)),
        ("l06.masks.no_pad", {"side": "l06.masks.side.src"}, all_ss),
        ("l06.masks.pad_id", {}, src0[:, None, None, :].expand(B, 1, S, S)),
    ]
    dec = [
        ("l06.masks.dec_no_causal", {}, tgt_cols),
        ("l06.masks.no_pad", {"side": "l06.masks.side.tgt"}, all_tt & causal_TT),
        ("l06.masks.dec_upper", {}, tgt_cols & upper),
        ("l06.masks.dec_upper", {}, all_tt & upper),
        ("l06.masks.dec_diag", {}, tgt_cols & strict),
        ("l06.masks.dec_diag", {}, all_tt & strict),
        ("l06.masks.pad_rows", {}, tgt_rows & causal_TT),
        ("l06.masks.pad_rows_too", {}, tgt_rows & tgt_cols & causal_TT),
        ("l06.masks.dec_no_causal", {}, all_tt),
        ("l06.masks.pad_id", {}, causal_TT & tgt0[:, None, None, :]),
    ]
    cross = [
        ("l06.masks.cross_causal", {}, src_cols(T) & causal_TS),
        ("l06.masks.cross_causal", {}, src_cols(T) & causal_TS_br),
        ("l06.masks.cross_causal", {}, all_ts & causal_TS),
        ("l06.masks.cross_causal", {}, all_ts & causal_TS_br),
        ("l06.masks.cross_tgt_pad", {}, tgt_rows.expand(B, 1, T, S)),
        ("l06.masks.no_pad", {"side": "l06.masks.side.src"}, all_ts),
        ("l06.masks.pad_id", {}, src0[:, None, None, :].expand(B, 1, T, S)),
    ]
    return enc, dec, cross


def _diagnose_mask(name_key, got, want, mistakes, lang):
    """None if ``got`` equals ``want``; else the hint for the first matching mistake (or a generic one)."""
    name = t(name_key, lang)
    if not isinstance(got, torch.Tensor):
        return t("l06.masks.not_bool", lang, name=name, dtype=type(got).__name__)
    if got.dtype != torch.bool:
        return t("l06.masks.not_bool", lang, name=name, dtype=str(got.dtype).replace("torch.", ""))
    B, _, rows, cols = want.shape
    if tuple(got.shape) != tuple(want.shape):
        got_s = "(" + ", ".join(str(s) for s in got.shape) + ")"
        want_s = {"l06.masks.name.enc": "(B, 1, S, S)", "l06.masks.name.dec": "(B, 1, T, T)",
                  "l06.masks.name.cross": "(B, 1, T, S)"}[name_key]
        if name_key == "l06.masks.name.cross" and rows != cols and tuple(got.shape) == (B, 1, cols, rows):
            return t("l06.masks.cross_shape", lang, name=name)
        try:
            broadcasts = torch.broadcast_shapes(got.shape, want.shape) == want.shape
        except RuntimeError:
            broadcasts = False
        if broadcasts and got.dim() <= 4:
            return t("l06.masks.expand", lang, name=name, got=got_s, want=want_s)
        return t("l06.masks.shape", lang, name=name, got=got_s, want=want_s)
    got = got.cpu()
    if torch.equal(got, want):
        return None
    if torch.equal(got, ~want):
        return t("l06.masks.inverted", lang, name=name)
    for key, fields, wrong in mistakes:
        if wrong is not None and wrong.shape == want.shape and torch.equal(got, wrong) \
                and not torch.equal(wrong, want):
            return t(key, lang, name=name, **{k: t(v, lang) for k, v in fields.items()})
    return t("l06.masks.wrong", lang, name=name)


def check_masks(fn, lang: str | None = None):
    """``fn(src_ids (B, S), tgt_ids (B, T), pad_id)`` -> (encoder (B,1,S,S), decoder (B,1,T,T), cross (B,1,T,S))."""
    names = ("l06.masks.name.enc", "l06.masks.name.dec", "l06.masks.name.cross")

    def check():
        for src, tgt, pad in MASK_CASES:
            result = call_student(fn, src.clone(), tgt.clone(), pad)
            if not isinstance(result, (tuple, list)) or len(result) != 3:
                return False, t("l06.masks.not_three", lang)
            wants = reference_masks(src, tgt, pad)
            for name_key, got, want, mistakes in zip(names, result, wants, _mask_mistakes(src, tgt, pad)):
                hint = _diagnose_mask(name_key, got, want, mistakes, lang)
                if hint is not None:
                    return False, hint
        return True, t("l06.masks.ok", lang)
    return run_check("l06.ex.masks", check, lang)


# ============================================================== exercise 3: greedy step

class ContextTooLong(IndexError):
    """Raised by the checker's toy model when it gets more than max_len tokens."""


class ToyLM(nn.Module):
    """A fixed toy language model for the checker: logits[b, t] = table[ids[b, t]] + pos[t].

    Like TinyGPT it returns (B, T, V) logits and has only ``max_len`` positions.
    """

    def __init__(self, vocab_size: int = 11, max_len: int = 6, seed: int = 6):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("table", torch.randn(vocab_size, vocab_size, generator=g))
        self.register_buffer("pos", torch.randn(max_len, vocab_size, generator=g))
        self.max_len = max_len

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        T = ids.shape[1]
        if T > self.max_len:
            raise ContextTooLong(f"sequence of {T} tokens, but the model has only max_len={self.max_len} positions")
        return self.table[ids] + self.pos[:T]                                        # (B, T, V)


# One sequence (B=1 first, so an argmax over the wrong axis shows up as a wrong shape, not a crash),
# a batch of 2 shorter than max_len=6, a batch of 2 longer (must crop), a single-token prompt.
GREEDY_CASES = (
    torch.tensor([[7, 2, 5]]),
    torch.tensor([[3, 1, 4, 1], [5, 9, 2, 6]]),
    torch.tensor([[2, 7, 1, 8, 2, 8, 1, 8, 2], [3, 1, 4, 1, 5, 9, 2, 6, 5]]),
    torch.tensor([[7]]),
)
GREEDY_MAX_LEN = 6


def reference_greedy_step(model, ids, max_len):
    with torch.no_grad():
        logits = model(ids[:, -max_len:])
    return torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)


def check_greedy_step(fn, lang: str | None = None):
    """``fn(model, ids (B, T), max_len)`` -> (B, T+1): ids plus the argmax of the last position's logits."""
    model = ToyLM(max_len=GREEDY_MAX_LEN)

    def check():
        for ids in GREEDY_CASES:
            B, T = ids.shape
            try:
                got = call_student(fn, model, ids.clone(), GREEDY_MAX_LEN)
            except ContextTooLong:
                return False, t("l06.greedy.no_crop", lang)
            except RuntimeError as e:       # torch.cat of tensors whose shapes do not fit together
                if "must match" in str(e) or "same number of dimensions" in str(e):
                    return False, t("l06.greedy.cat", lang)
                raise
            if not isinstance(got, torch.Tensor):
                return False, t("l06.greedy.not_tensor", lang, kind=type(got).__name__)
            got = got.detach().cpu()
            with torch.no_grad():
                logits = model(ids[:, -GREEDY_MAX_LEN:])
                first = logits[:, 0].argmax(-1)
                front = model(ids[:, :GREEDY_MAX_LEN])[:, -1].argmax(-1)
            want = reference_greedy_step(model, ids, GREEDY_MAX_LEN)
            if got.is_floating_point():
                return False, t("l06.greedy.values", lang)
            if tuple(got.shape) in ((B, 1), (B,)):
                return False, t("l06.greedy.no_append", lang)
            if T > GREEDY_MAX_LEN and tuple(got.shape) == (B, GREEDY_MAX_LEN + 1):
                return False, t("l06.greedy.crop_return", lang)
            if tuple(got.shape) != (B, T + 1):
                shape = lambda s: "(" + ", ".join(str(n) for n in s) + ")"                  # noqa: E731
                return False, t("l06.greedy.shape", lang, got=shape(got.shape), want=shape((B, T + 1)))
            if not torch.equal(got[:, :T], ids):
                return False, t("l06.greedy.changed", lang)
            new = got[:, -1]
            if torch.equal(new, want[:, -1]):
                continue
            if torch.equal(new, first):
                return False, t("l06.greedy.first", lang)
            if T > GREEDY_MAX_LEN and torch.equal(new, front):
                return False, t("l06.greedy.crop_front", lang)
            return False, t("l06.greedy.wrong", lang, shape="(" + ", ".join(str(n) for n in ids.shape) + ")")
        return True, t("l06.greedy.ok", lang)
    return run_check("l06.ex.greedy", check, lang)
