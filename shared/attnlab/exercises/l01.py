"""Lesson 01 (self-attention): the printed words of the notebooks and the exercise checkers.

Checkers: ``check_softmax(fn)``, ``check_attention(fn)``, ``check_dot_std(fn)``. Each runs the
student's function on several inputs, compares it with a reference, recognises the typical
mistakes (one hint each, in the current language, never the solution) and returns
True / False, or None while the exercise is not done yet.
"""
from __future__ import annotations

import math

import torch

from ..attention import scaled_dot_product_attention
from ..i18n import register, t
from ._common import call_student, run_check

__all__ = ["check_softmax", "check_attention", "check_dot_std"]

# --------------------------------------------------------------------------- notebook words
register({
    "l01.rnn_steps": {
        "vi": "RNN: {T} bước phải chạy lần lượt — bước sau phải chờ bước trước.",
        "zh": "RNN：{T} 个步骤必须依次执行——后一步要等前一步算完。",
        "en": "RNN: {T} steps that must run one after another — each waits for the previous one.",
    },
    "l01.attn_steps": {
        "vi": "Chú ý: 1 phép nhân ma trận ({T}×{d}) @ ({d}×{T}) cho cả {n} điểm số cùng lúc.",
        "zh": "注意力：1 次矩阵乘法 ({T}×{d}) @ ({d}×{T})，一次得到全部 {n} 个分数。",
        "en": "Attention: 1 matrix product ({T}×{d}) @ ({d}×{T}) gives all {n} scores at once.",
    },
    "l01.rnn_needs_previous": {
        "vi": "RNN: bỏ qua h₉ (bắt đầu từ vector 0) thì h₁₀ ra sai",
        "zh": "RNN：跳过 h₉（直接从零向量开始），h₁₀ 就算错了",
        "en": "RNN: skipping h₉ (starting from the zero vector) gives a wrong h₁₀",
    },
    "l01.attn_row_alone": {
        "vi": "chú ý: tính riêng hàng của vị trí thứ 10 vẫn ra đúng hàng đó của phép nhân đầy đủ",
        "zh": "注意力：单独计算第 10 个位置的那一行，结果与完整矩阵乘法中的那一行相同",
        "en": "attention: the row of position 10, computed alone, equals that row of the full product",
    },
    "l01.lookup_scores": {"vi": "điểm số      :", "zh": "分数        ：", "en": "scores       :"},
    "l01.lookup_weights": {"vi": "trọng số     :", "zh": "权重        ：", "en": "weights      :"},
    "l01.lookup_hard": {"vi": "tra cứu cứng :", "zh": "硬查找结果  ：", "en": "hard lookup  :"},
    "l01.lookup_soft": {"vi": "tra cứu mềm  :", "zh": "软查找结果  ：", "en": "soft lookup  :"},
    "l01.lookup_sharp": {
        "vi": "trọng số khi truy vấn lớn gấp 10 lần:",
        "zh": "查询放大 10 倍后的权重：",
        "en": "weights with a query 10 times larger:",
    },
    "l01.rows_sum_to_one": {
        "vi": "mỗi hàng trọng số chú ý cộng lại bằng 1",
        "zh": "注意力权重的每一行加起来都等于 1",
        "en": "every row of attention weights sums to 1",
    },
    "l01.row0_is_mix": {
        "vi": "hàng 0 của đầu ra = các hàng của V trộn theo trọng số của hàng 0",
        "zh": "输出第 0 行 = 按第 0 行的权重把 V 的各行混合起来",
        "en": "row 0 of the output = the rows of V mixed with the weights of row 0",
    },
    "l01.same_weights_attnlab": {
        "vi": "attnlab.scaled_dot_product_attention cho cùng trọng số chú ý",
        "zh": "attnlab.scaled_dot_product_attention 得到相同的注意力权重",
        "en": "attnlab.scaled_dot_product_attention gives the same attention weights",
    },
    "l01.same_out_attnlab": {
        "vi": "attnlab.scaled_dot_product_attention cho cùng đầu ra",
        "zh": "attnlab.scaled_dot_product_attention 得到相同的输出",
        "en": "attnlab.scaled_dot_product_attention gives the same output",
    },
    "l01.same_out_torch": {
        "vi": "torch.nn.functional.scaled_dot_product_attention cho cùng đầu ra",
        "zh": "torch.nn.functional.scaled_dot_product_attention 得到相同的输出",
        "en": "torch.nn.functional.scaled_dot_product_attention gives the same output",
    },
    "l01.sat_title": {
        "vi": "Trọng số lớn nhất của mỗi hàng, trung bình (chia đều: 1/8 = 0.125; one-hot: 1):",
        "zh": "每一行最大的权重（平均值；完全平均：1/8 = 0.125；one-hot：1）：",
        "en": "Largest weight of each row, on average (uniform: 1/8 = 0.125; one-hot: 1):",
    },
    "l01.fig_raw": {
        "vi": "Không chia √d_k (d_k = {d})",
        "zh": "不除以 √d_k（d_k = {d}）",
        "en": "Without √d_k (d_k = {d})",
    },
    "l01.fig_scaled": {
        "vi": "Chia cho √d_k (d_k = {d})",
        "zh": "除以 √d_k（d_k = {d}）",
        "en": "Divided by √d_k (d_k = {d})",
    },
})

# --------------------------------------------------------------------------- exercise words
register({
    "l01.ex.softmax": {"vi": "tự viết softmax", "zh": "自己写 softmax", "en": "softmax from scratch"},
    "l01.ex.attention": {
        "vi": "tự viết scaled dot-product attention",
        "zh": "自己写缩放点积注意力",
        "en": "scaled dot-product attention from scratch",
    },
    "l01.ex.dot_std": {
        "vi": "dự đoán độ lệch chuẩn của q·k",
        "zh": "预测 q·k 的标准差",
        "en": "predict the standard deviation of q·k",
    },
    # softmax
    "l01.softmax.ok": {
        "vi": "Khớp torch.softmax trên tensor 2 và 3 chiều, và vẫn ổn định khi điểm số rất lớn.",
        "zh": "在二维、三维张量上都与 torch.softmax 一致，分数很大时也保持数值稳定。",
        "en": "Matches torch.softmax on 2-D and 3-D tensors and stays stable for very large scores.",
    },
    "l01.softmax.not_tensor": {
        "vi": "Hàm cần trả về một tensor cùng kích thước với đầu vào, nhưng lại trả về {got}.",
        "zh": "函数应返回与输入形状相同的张量，但返回的是 {got}。",
        "en": "Return a tensor of the same shape as the input; got {got}.",
    },
    "l01.softmax.shape": {
        "vi": "Đầu vào có kích thước {want} nhưng đầu ra lại là {got}: softmax không làm đổi kích thước.",
        "zh": "输入形状是 {want}，输出却是 {got}：softmax 不改变形状。",
        "en": "The input has shape {want} but the output has {got}: softmax keeps the shape.",
    },
    "l01.softmax.overflow": {
        "vi": "Với điểm số lớn như [1000, 999, 998] kết quả ra nan: exp(1000) tràn số thành inf, "
              "và inf/inf = nan. Mẹo: trừ cùng một hằng số khỏi cả hàng thì softmax không đổi — "
              "hãy trừ giá trị lớn nhất của mỗi hàng trước khi lấy exp.",
        "zh": "分数很大时（比如 [1000, 999, 998]）结果变成了 nan：exp(1000) 溢出成 inf，而 inf/inf = nan。"
              "提示：整行减去同一个常数，softmax 的结果不变——先减去每一行的最大值，再取 exp。",
        "en": "With large scores such as [1000, 999, 998] you get nan: exp(1000) overflows to inf and "
              "inf/inf = nan. Tip: subtracting the same constant from a whole row leaves softmax "
              "unchanged — subtract each row's maximum before taking exp.",
    },
    "l01.softmax.global_max": {
        "vi": "Bạn trừ đi MỘT giá trị lớn nhất của cả tensor: hàng có điểm số nhỏ hơn nhiều thì exp ra "
              "toàn 0, rồi 0/0 = nan. Hãy trừ giá trị lớn nhất của TỪNG hàng (dim=-1, keepdim=True).",
        "zh": "你减去的是整个张量唯一的最大值：分数小得多的那一行取 exp 后全是 0，于是 0/0 = nan。"
              "应该减去每一行各自的最大值（dim=-1, keepdim=True）。",
        "en": "You subtracted ONE maximum for the whole tensor: a row with much smaller scores becomes all "
              "zeros after exp, and 0/0 = nan. Subtract the maximum of EACH row (dim=-1, keepdim=True).",
    },
    "l01.softmax.axis": {
        "vi": "Bạn chuẩn hóa theo sai chiều: mỗi HÀNG (chiều cuối, dim=-1) phải cộng lại bằng 1, "
              "nhưng ở kết quả của bạn lại là một chiều khác (hoặc cả tensor) cộng lại bằng 1.",
        "zh": "归一化的维度不对：应该是每一行（最后一维，dim=-1）加起来等于 1，"
              "而你的结果是别的维度（或整个张量）加起来等于 1。",
        "en": "You normalised over the wrong axis: each ROW (the last dimension, dim=-1) must sum to 1, "
              "but in your result another dimension (or the whole tensor) does.",
    },
    "l01.softmax.normalize": {
        "vi": "Mới có exp, chưa chia cho tổng: các hàng chưa cộng lại bằng 1.",
        "zh": "只做了 exp，还没有除以总和：每一行加起来还不等于 1。",
        "en": "You took exp but did not divide by the sum: the rows do not sum to 1.",
    },
    "l01.softmax.keepdim": {
        "vi": "Giá trị lớn nhất (hoặc tổng) của mỗi hàng bị trừ/chia theo sai hướng: x.max(dim=-1) làm mất "
              "chiều cuối, nên khi broadcast nó khớp với các CỘT chứ không phải các hàng. Thêm keepdim=True.",
        "zh": "每一行的最大值（或总和）被按错误的方向减去/除掉了：x.max(dim=-1) 去掉了最后一维，"
              "广播时对齐的是列而不是行。请加上 keepdim=True。",
        "en": "Each row's maximum (or sum) is subtracted/divided along the wrong direction: x.max(dim=-1) "
              "drops the last dimension, so broadcasting lines it up with the COLUMNS. Add keepdim=True.",
    },
    "l01.softmax.max_values": {
        "vi": "x.max(dim=...) trả về một cặp (values, indices), không phải một tensor: hãy lấy .values.",
        "zh": "x.max(dim=...) 返回的是 (values, indices) 二元组，不是张量：请取 .values。",
        "en": "x.max(dim=...) returns a pair (values, indices), not a tensor: take .values.",
    },
    "l01.softmax.mismatch": {
        "vi": "Kết quả khác torch.softmax(x, dim=-1) (sai lệch lớn nhất {diff:.1e}). "
              "Mọi phần tử phải dương và mỗi hàng phải cộng lại bằng 1.",
        "zh": "结果与 torch.softmax(x, dim=-1) 不一致（最大偏差 {diff:.1e}）。每个元素都应为正，每一行的和应为 1。",
        "en": "The result differs from torch.softmax(x, dim=-1) (largest difference {diff:.1e}). "
              "Every entry must be positive and every row must sum to 1.",
    },
    # attention
    "l01.attn.ok": {
        "vi": "Khớp attnlab.scaled_dot_product_attention với ma trận 2 chiều, khi T ≠ S, "
              "và với đầu vào theo lô (B, H, T, d_k).",
        "zh": "在二维矩阵、T ≠ S 以及批量输入 (B, H, T, d_k) 上都与 attnlab.scaled_dot_product_attention 一致。",
        "en": "Matches attnlab.scaled_dot_product_attention on 2-D matrices, with T ≠ S, "
              "and on batched inputs (B, H, T, d_k).",
    },
    "l01.attn.return_pair": {
        "vi": "Hàm cần trả về một cặp (out, weights): đầu ra và ma trận trọng số chú ý.",
        "zh": "函数应返回一个二元组 (out, weights)：输出和注意力权重矩阵。",
        "en": "Return a pair (out, weights): the output and the matrix of attention weights.",
    },
    "l01.attn.weights_shape": {
        "vi": "weights có kích thước {got}, nhưng phải là {want} = (…, T, S): mỗi truy vấn một hàng, mỗi khóa một cột.",
        "zh": "weights 的形状是 {got}，应该是 {want} = (…, T, S)：每个查询一行，每个键一列。",
        "en": "weights has shape {got} but must be {want} = (…, T, S): one row per query, one column per key.",
    },
    "l01.attn.out_shape": {
        "vi": "out có kích thước {got}, nhưng phải là {want} = (…, T, d_v): mỗi truy vấn một vector đầu ra.",
        "zh": "out 的形状是 {got}，应该是 {want} = (…, T, d_v)：每个查询一个输出向量。",
        "en": "out has shape {got} but must be {want} = (…, T, d_v): one output vector per query.",
    },
    "l01.attn.no_scale": {
        "vi": "Trọng số quá «nhọn»: bạn quên chia điểm số cho √d_k.",
        "zh": "权重太「尖」了：你忘了把分数除以 √d_k。",
        "en": "The weights are too peaked: you forgot to divide the scores by √d_k.",
    },
    "l01.attn.scale_dk": {
        "vi": "Bạn chia điểm số cho d_k; phải chia cho căn bậc hai của nó, √d_k.",
        "zh": "你把分数除以了 d_k；应该除以它的平方根 √d_k。",
        "en": "You divided the scores by d_k; divide by its square root, √d_k.",
    },
    "l01.attn.which_dk": {
        "vi": "Bạn chia cho căn của một kích thước khác: d_k là chiều cuối của q và k (q.shape[-1]), "
              "không phải số truy vấn T, số khóa S hay d_v.",
        "zh": "你除以的是别的维度的平方根：d_k 是 q 和 k 的最后一维（q.shape[-1]），"
              "不是查询数 T、键数 S，也不是 d_v。",
        "en": "You divided by the square root of another size: d_k is the last dimension of q and k "
              "(q.shape[-1]), not the number of queries T, of keys S, nor d_v.",
    },
    "l01.attn.softmax_dim": {
        "vi": "Softmax đang chạy theo chiều truy vấn (dim=-2): các CỘT cộng lại bằng 1 thay vì các hàng. "
              "Mỗi truy vấn chia sự chú ý của mình cho các khóa, nên softmax phải theo chiều khóa (dim=-1).",
        "zh": "softmax 作用在了查询这一维（dim=-2）上：变成每一列加起来等于 1，而不是每一行。"
              "每个查询把自己的注意力分给各个键，所以 softmax 应该沿键的那一维（dim=-1）。",
        "en": "The softmax runs over the queries (dim=-2): the COLUMNS sum to 1 instead of the rows. "
              "Each query shares its attention among the keys, so the softmax goes over the keys (dim=-1).",
    },
    "l01.attn.no_v": {
        "vi": "out chính là ma trận trọng số: bạn quên bước cuối — nhân trọng số với V.",
        "zh": "out 就是权重矩阵本身：你漏了最后一步——用权重乘以 V。",
        "en": "out is the weight matrix itself: you forgot the last step — multiplying the weights by V.",
    },
    "l01.attn.transpose_q": {
        "vi": "Bạn chuyển vị Q thay vì K: điểm số là Q Kᵀ, kích thước (T, d_k) @ (d_k, S) → (T, S).",
        "zh": "你转置的是 Q 而不是 K：分数是 Q Kᵀ，形状为 (T, d_k) @ (d_k, S) → (T, S)。",
        "en": "You transposed Q instead of K: the scores are Q Kᵀ, shapes (T, d_k) @ (d_k, S) → (T, S).",
    },
    "l01.attn.order": {
        "vi": "Bạn tính K Qᵀ: hàng ứng với khóa, cột ứng với truy vấn. Điểm số phải là Q Kᵀ, "
              "mỗi truy vấn một hàng.",
        "zh": "你算的是 K Qᵀ：行对应键，列对应查询。分数应该是 Q Kᵀ，每个查询一行。",
        "en": "You computed K Qᵀ: rows are keys and columns are queries. The scores are Q Kᵀ, "
              "one row per query.",
    },
    "l01.attn.weights_not_softmax": {
        "vi": "out đã đúng nhưng weights thì chưa: hãy trả về trọng số SAU softmax (mỗi hàng cộng lại bằng 1).",
        "zh": "out 已经对了，但 weights 不对：请返回 softmax 之后的权重（每一行加起来等于 1）。",
        "en": "out is right but weights is not: return the weights AFTER the softmax (each row sums to 1).",
    },
    "l01.attn.cross": {
        "vi": "Chạy đúng khi T = S nhưng hỏng khi số truy vấn T khác số khóa S ({error}). "
              "Xem lại các kích thước bạn dùng: T chỉ đến từ q, S từ k và v.",
        "zh": "T = S 时没问题，但查询数 T 与键数 S 不同时就不对了（{error}）。"
              "检查一下用到的形状：T 只来自 q，S 来自 k 和 v。",
        "en": "Works when T = S but not when the number of queries T differs from the number of keys S "
              "({error}). Check the sizes you use: T comes from q only, S from k and v.",
    },
    "l01.attn.batched": {
        "vi": "Chạy đúng với ma trận 2 chiều nhưng hỏng với đầu vào theo lô (B, H, T, d_k) ({error}): "
              "hãy chuyển vị hai chiều CUỐI của K, k.transpose(-2, -1), thay vì k.T hay k.transpose(0, 1).",
        "zh": "二维矩阵没问题，但批量输入 (B, H, T, d_k) 就不对了（{error}）："
              "请用 k.transpose(-2, -1) 转置 K 的最后两维，而不是 k.T 或 k.transpose(0, 1)。",
        "en": "Works on 2-D matrices but not on batched inputs (B, H, T, d_k) ({error}): transpose the LAST "
              "two dimensions of K, k.transpose(-2, -1), not k.T or k.transpose(0, 1).",
    },
    "l01.attn.wrong_values": {
        "vi": "sai giá trị", "zh": "数值不对", "en": "wrong values",
    },
    "l01.attn.mismatch": {
        "vi": "Kết quả khác attnlab.scaled_dot_product_attention (sai lệch lớn nhất {diff:.1e}). "
              "Xem lại từng bước ở mục 3.",
        "zh": "结果与 attnlab.scaled_dot_product_attention 不一致（最大偏差 {diff:.1e}）。请对照第 3 节逐步检查。",
        "en": "The result differs from attnlab.scaled_dot_product_attention (largest difference {diff:.1e}). "
              "Go through the steps of section 3 again.",
    },
    # std of q·k
    "l01.std.ok": {
        "vi": "Khớp với độ lệch chuẩn đo được trên 20 000 cặp (q, k) ngẫu nhiên cho mỗi trường hợp.",
        "zh": "与每种情况下 20 000 对随机 (q, k) 实测的标准差一致。",
        "en": "Matches the standard deviation measured on 20 000 random (q, k) pairs for each case.",
    },
    "l01.std.number": {
        "vi": "Hàm cần trả về một con số (float), nhưng lại trả về {got}.",
        "zh": "函数应返回一个数（float），但返回的是 {got}。",
        "en": "Return a number (a float); got {got}.",
    },
    "l01.std.variance": {
        "vi": "Đó là phương sai của q·k, chưa phải độ lệch chuẩn: còn thiếu một phép lấy căn.",
        "zh": "这是 q·k 的方差，还不是标准差：还差一次开平方。",
        "en": "That is the variance of q·k, not its standard deviation: a square root is missing.",
    },
    "l01.std.scale": {
        "vi": "Đó là hệ số ta nhân vào điểm số (1/√d_k), không phải độ lệch chuẩn của q·k. "
              "Khi d_k tăng, độ lệch chuẩn của q·k tăng hay giảm?",
        "zh": "这是乘到分数上的缩放系数（1/√d_k），不是 q·k 的标准差。d_k 变大时，q·k 的标准差是变大还是变小？",
        "en": "That is the factor we multiply the scores by (1/√d_k), not the standard deviation of q·k. "
              "Does the spread of q·k grow or shrink as d_k grows?",
    },
    "l01.std.one": {
        "vi": "Mỗi tích q_i·k_i có thể có độ lệch chuẩn cố định, nhưng q·k là TỔNG của d_k tích độc lập "
              "như vậy — và phương sai của tổng các biến độc lập thì cộng dồn.",
        "zh": "单个乘积 q_i·k_i 的标准差也许是固定的，但 q·k 是 d_k 个这样独立乘积的和——独立变量之和的方差会累加。",
        "en": "Each product q_i·k_i may have a fixed spread, but q·k is the SUM of d_k independent such "
              "products — and the variances of independent terms add up.",
    },
    "l01.std.sigma_missing": {
        "vi": "Đúng khi sigma = 1, nhưng bạn bỏ quên sigma: nếu mỗi thành phần của q và k có độ lệch chuẩn "
              "sigma thì mỗi tích q_i·k_i có phương sai bao nhiêu?",
        "zh": "sigma = 1 时是对的，但你把 sigma 忘了：如果 q 和 k 的每个分量的标准差都是 sigma，"
              "那么每个乘积 q_i·k_i 的方差是多少？",
        "en": "Right for sigma = 1, but sigma is missing: if every component of q and k has standard "
              "deviation sigma, what is the variance of each product q_i·k_i?",
    },
    "l01.std.sigma_once": {
        "vi": "Gần đúng rồi: sigma xuất hiện hai lần — ở q và ở k. Phương sai của q_i·k_i là "
              "E[q_i²]·E[k_i²], mỗi thừa số góp một sigma².",
        "zh": "差一点：sigma 出现了两次——q 里一次，k 里一次。q_i·k_i 的方差是 E[q_i²]·E[k_i²]，每个因子各贡献一个 sigma²。",
        "en": "Almost: sigma appears twice — once in q and once in k. The variance of q_i·k_i is "
              "E[q_i²]·E[k_i²], and each factor contributes sigma².",
    },
    "l01.std.mismatch": {
        "vi": "Chưa khớp với độ lệch chuẩn đo được: với d_k = {d_k}, sigma = {sigma} bạn trả về {got:.4g}. "
              "Gợi ý: phương sai của tổng các biến độc lập bằng tổng các phương sai.",
        "zh": "与实测的标准差不符：d_k = {d_k}、sigma = {sigma} 时你返回的是 {got:.4g}。"
              "提示：独立变量之和的方差等于各自方差之和。",
        "en": "Does not match the measured standard deviation: for d_k = {d_k}, sigma = {sigma} you return "
              "{got:.4g}. Hint: the variance of a sum of independent terms is the sum of their variances.",
    },
})


# --------------------------------------------------------------------------- helpers
def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _close(a, b, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    """Same shape and all values close (NaN never counts as close)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
        return False
    return bool(torch.allclose(a.detach().double(), b.detach().double(), rtol=rtol, atol=atol))


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    d = (a.detach().double() - b.detach().double()).abs()
    return float(d.nan_to_num(nan=float("inf")).max()) if d.numel() else 0.0


def _shape(x: torch.Tensor) -> str:
    return "(" + ", ".join(str(s) for s in x.shape) + ")"


def _type_name(x) -> str:
    return type(x).__name__


# --------------------------------------------------------------------------- exercise 1: softmax
def _softmax_cases() -> list[torch.Tensor]:
    g = _gen(101)
    return [
        torch.randn(3, 5, generator=g) * 2,          # 2-D, not square: a missing keepdim fails loudly
        torch.randn(2, 4, 6, generator=g) * 2,       # 3-D: "the last dimension", not dim=1
        torch.randn(4, 4, generator=g) * 2,          # square: a missing keepdim fails silently
        torch.tensor([[1000.0, 999.0, 998.0],        # overflow without the max trick
                      [3.0, 2.0, 1.0]]),             # underflow with one max for the whole tensor
    ]


def _softmax_error_hint(err: Exception) -> str | None:
    msg = str(err)
    if isinstance(err, TypeError) and "return_types.max" in msg:
        return t("l01.softmax.max_values")
    if isinstance(err, RuntimeError) and "must match the size of tensor" in msg:
        return t("l01.softmax.keepdim")
    return None


def _softmax_problem(x: torch.Tensor, got) -> str | None:
    """None if ``got`` is softmax(x, dim=-1); otherwise the hint for the most likely mistake."""
    expected = torch.softmax(x, dim=-1)
    if not isinstance(got, torch.Tensor):
        return t("l01.softmax.not_tensor", got=_type_name(got))
    if got.shape != x.shape:
        return t("l01.softmax.shape", want=_shape(x), got=_shape(got))
    if _close(got, expected, rtol=1e-4, atol=1e-6):
        return None
    got_d = got.detach().double()
    if not torch.isfinite(got_d).all():
        # Which rows broke? The row holding the global maximum overflows without the max trick;
        # rows far below the global maximum underflow to 0/0 when one max serves the whole tensor.
        bad_rows = ~torch.isfinite(got_d).all(dim=-1)
        top_rows = x.amax(dim=-1) == x.max()
        return t("l01.softmax.overflow" if (bad_rows & top_rows).any() else "l01.softmax.global_max")
    for d in range(x.dim() - 1):
        if _close(got, torch.softmax(x, dim=d)):
            return t("l01.softmax.axis")
    if (got_d >= 0).all() and abs(float(got_d.sum()) - 1.0) < 1e-4:
        return t("l01.softmax.axis")                               # normalised over everything
    row_max = x.amax(dim=-1, keepdim=True)
    if _close(got, torch.exp(x)) or _close(got, torch.exp(x - row_max)):
        return t("l01.softmax.normalize")
    if x.dim() == 2 and x.shape[0] == x.shape[1]:                  # broadcasting the wrong way
        m = x.amax(dim=-1)                                         # (T,) lines up with the columns
        e_bad, e_ok = torch.exp(x - m), torch.exp(x - row_max)
        candidates = (e_bad / e_bad.sum(dim=-1, keepdim=True), e_bad / e_bad.sum(dim=-1),
                      e_ok / e_ok.sum(dim=-1), torch.exp(x) / torch.exp(x).sum(dim=-1))
        if any(_close(got, c) for c in candidates):
            return t("l01.softmax.keepdim")
    return t("l01.softmax.mismatch", diff=_max_diff(got, expected))


def check_softmax(fn, lang: str | None = None) -> bool | None:
    """Exercise 1: ``fn(x)`` must return the softmax of ``x`` over its last dimension, stable for large scores."""
    def check():
        for x in _softmax_cases():
            try:
                got = call_student(fn, x.clone())
            except (TypeError, RuntimeError) as err:
                hint = _softmax_error_hint(err)
                if hint is None or isinstance(err, NotImplementedError):
                    raise
                return False, hint
            problem = _softmax_problem(x, got)
            if problem:
                return False, problem
        return True, t("l01.softmax.ok")
    return run_check("l01.ex.softmax", check, lang)


# --------------------------------------------------------------------------- exercise 2: attention
def _attention_cases() -> list[tuple[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]]:
    g = _gen(102)
    rn = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    return [
        # T = S = d_k = d_v: every shape fits, so a transposed Q gives wrong values, not an error.
        ("square", (rn(4, 4), rn(4, 4), rn(4, 4))),
        # T = 3 queries, S = 5 keys, d_k = 8, d_v = 6: every size different.
        ("cross", (rn(3, 8), rn(5, 8), rn(5, 6))),
        # batched (B, H, T, d) inputs.
        ("batched", (rn(2, 3, 4, 8), rn(2, 3, 5, 8), rn(2, 3, 5, 6))),
    ]


def _attend(scores: torch.Tensor, v: torch.Tensor, dim: int = -1):
    w = torch.softmax(scores, dim=dim)
    return w @ v, w


def _attention_variants(q, k, v) -> list[tuple[str, tuple[torch.Tensor, torch.Tensor]]]:
    """(hint key, (out, weights)) for each typical mistake that runs on these shapes."""
    d_k = q.shape[-1]
    raw = q @ k.transpose(-2, -1)
    variants = [
        ("l01.attn.no_scale", _attend(raw, v)),
        ("l01.attn.scale_dk", _attend(raw / d_k, v)),
        ("l01.attn.softmax_dim", _attend(raw / math.sqrt(d_k), v, dim=-2)),
    ]
    for size in {q.shape[-2], k.shape[-2], v.shape[-1]} - {d_k}:
        variants.append(("l01.attn.which_dk", _attend(raw / math.sqrt(size), v)))
    for key, scores in (("l01.attn.transpose_q", lambda: q.transpose(-2, -1) @ k),
                        ("l01.attn.order", lambda: k @ q.transpose(-2, -1))):
        try:
            variants.append((key, _attend(scores() / math.sqrt(d_k), v)))
        except RuntimeError:                                       # shapes do not fit: it would have raised
            pass
    return variants


def _attention_problem(case: str, q, k, v, result) -> str | None:
    if not (isinstance(result, (tuple, list)) and len(result) == 2
            and all(isinstance(r, torch.Tensor) for r in result)):
        return t("l01.attn.return_pair")
    out, w = result
    ref_out, ref_w = scaled_dot_product_attention(q, k, v)
    if _close(out, ref_out) and _close(w, ref_w):
        return None
    variants = _attention_variants(q, k, v)
    # Mistakes in the scores or the softmax show in the weights (and in out).
    if not _close(w, ref_w):
        for key, (v_out, v_w) in variants:
            if _close(w, v_w) or _close(out, v_out):
                return t(key)
        if _close(out, ref_out):
            return t("l01.attn.weights_not_softmax")
        if w.shape != ref_w.shape:
            return t("l01.attn.weights_shape", got=_shape(w), want=_shape(ref_w))
    # The weights are right (or unrecognisably wrong): look at the output.
    if _close(out, w) or _close(out, ref_w):
        return t("l01.attn.no_v")
    if out.shape != ref_out.shape:
        return t("l01.attn.out_shape", got=_shape(out), want=_shape(ref_out))
    if case == "batched":
        return t("l01.attn.batched", error=t("l01.attn.wrong_values"))
    return t("l01.attn.mismatch", diff=_max_diff(out, ref_out))


def check_attention(fn, lang: str | None = None) -> bool | None:
    """Exercise 2: ``fn(q, k, v)`` must return ``(out, weights)`` like attnlab.scaled_dot_product_attention."""
    def check():
        for case, (q, k, v) in _attention_cases():
            try:
                result = call_student(fn, q.clone(), k.clone(), v.clone())
            except (RuntimeError, ValueError, TypeError, IndexError) as err:
                if isinstance(err, NotImplementedError) or case == "square":
                    raise                                          # run_check reports it as it is
                key = "l01.attn.cross" if case == "cross" else "l01.attn.batched"
                return False, t(key, error=type(err).__name__)
            problem = _attention_problem(case, q, k, v, result)
            if problem:
                return False, problem
        return True, t("l01.attn.ok")
    return run_check("l01.ex.attention", check, lang)


# --------------------------------------------------------------------------- exercise 3: std of q·k
_STD_CASES = ((4, 1.0), (64, 1.0), (256, 1.0), (16, 0.5), (64, 2.0), (9, 1.5))


def _measured_std(d_k: int, sigma: float, n: int = 20_000, seed: int = 103) -> float:
    g = _gen(seed)
    q = torch.randn(n, d_k, generator=g, dtype=torch.float64) * sigma
    k = torch.randn(n, d_k, generator=g, dtype=torch.float64) * sigma
    return float((q * k).sum(dim=-1).std())


def check_dot_std(fn, lang: str | None = None) -> bool | None:
    """Exercise 3: ``fn(d_k, sigma)`` must predict the standard deviation of q·k when every
    component of q and k is independent with mean 0 and standard deviation sigma."""
    def check():
        got = []
        for d_k, sigma in _STD_CASES:
            r = call_student(fn, d_k, sigma)
            try:
                value = float(r)
            except (TypeError, ValueError, RuntimeError):
                return False, t("l01.std.number", got=_type_name(r))
            got.append(value)

        def matches(formula) -> bool:
            return all(math.isclose(g, formula(d, s), rel_tol=0.03) for g, (d, s) in zip(got, _STD_CASES))

        mistakes = (
            ("l01.std.variance", lambda d, s: d * s ** 4),
            ("l01.std.variance", lambda d, s: d * s ** 2),
            ("l01.std.variance", lambda d, s: float(d)),
            ("l01.std.scale", lambda d, s: 1 / math.sqrt(d)),
            ("l01.std.one", lambda d, s: s ** 2),
            ("l01.std.one", lambda d, s: 1.0),
            ("l01.std.sigma_missing", lambda d, s: math.sqrt(d)),
            ("l01.std.sigma_once", lambda d, s: s * math.sqrt(d)),
        )
        for value, (d_k, sigma) in zip(got, _STD_CASES):
            if not math.isclose(value, _measured_std(d_k, sigma), rel_tol=0.03):
                for key, formula in mistakes:
                    if matches(formula):
                        return False, t(key)
                return False, t("l01.std.mismatch", d_k=d_k, sigma=sigma, got=value)
        return True, t("l01.std.ok")
    return run_check("l01.ex.dot_std", check, lang)
