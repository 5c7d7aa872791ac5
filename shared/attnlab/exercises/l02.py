"""Exercise checkers for lesson 02 (multi-head attention), and the words the lesson prints.

- ``check_split_heads(fn)``: ``fn(x (B, T, D), num_heads) -> (B, H, T, d_k)``
- ``check_merge_heads(fn)``: ``fn(x (B, H, T, d_k)) -> (B, T, D)``
- ``check_mha_size(fn)``:    ``fn(d_model, num_heads) -> (d_k, number of parameters)``

Each checker compares the student's function with ``attnlab.MultiHeadAttention`` on several
inputs, recognises the typical mistakes and prints a hint for the first one it meets.
The ``_diagnose_*`` functions return ``(ok, message key, fields)`` so the tests can see
which hint was chosen.
"""
from __future__ import annotations

import numbers
from typing import Callable

import torch

from ..i18n import register, t
from ..multihead import MultiHeadAttention
from ._common import call_student, run_check

# ---------------------------------------------------------------------------------------------
# Words printed by the lesson notebook (same code in both languages, text from here).
register({
    "l02.manual_out": {
        "vi": "tính tay từng bước = attnlab.MultiHeadAttention (đầu ra)",
        "zh": "逐步手算 = attnlab.MultiHeadAttention（输出）",
        "en": "step by step by hand = attnlab.MultiHeadAttention (output)",
    },
    "l02.manual_weights": {
        "vi": "tính tay từng bước = attnlab.MultiHeadAttention (trọng số chú ý của từng đầu)",
        "zh": "逐步手算 = attnlab.MultiHeadAttention（每个头的注意力权重）",
        "en": "step by step by hand = attnlab.MultiHeadAttention (attention weights of each head)",
    },
    "l02.same_shape": {
        "vi": "cách tách sai cho tensor có cùng kích thước (B, H, T, d_k) — không có lỗi nào được báo",
        "zh": "错误的拆分得到形状完全相同的张量 (B, H, T, d_k) —— 不会报任何错",
        "en": "the wrong split gives a tensor of the same shape (B, H, T, d_k) — no error is raised",
    },
    "l02.wrong_differs": {
        "vi": "nhưng đầu ra của tầng chú ý thì khác hẳn",
        "zh": "但注意力层的输出完全不同",
        "en": "but the output of the attention layer is different",
    },
    "l02.causal": {
        "vi": "{name}: chỉ đổi token cuối, các vị trí 0..{last} đứng yên (thay đổi lớn nhất {drift:.2e})",
        "zh": "{name}：只改动最后一个词元，位置 0..{last} 纹丝不动（最大变化 {drift:.2e}）",
        "en": "{name}: changing only the last token leaves positions 0..{last} unchanged "
              "(largest change {drift:.2e})",
    },
    "l02.split_right": {"vi": "tách đúng", "zh": "正确拆分", "en": "right split"},
    "l02.split_wrong": {"vi": "tách sai", "zh": "错误拆分", "en": "wrong split"},
    "l02.split_line": {
        "vi": "{name}, {head}: {values}",
        "zh": "{name}，{head}：{values}",
        "en": "{name}, {head}: {values}",
    },
    "l02.concat_sum": {
        "vi": "W_o áp lên phần ghép = tổng đóng góp của từng đầu + độ lệch",
        "zh": "W_o 作用在拼接结果上 = 各个头的贡献之和 + 偏置",
        "en": "W_o applied to the concatenation = sum of each head's contribution + bias",
    },
    "l02.no_mask": {"vi": "không mặt nạ", "zh": "无掩码", "en": "no mask"},
    "l02.causal_mask": {"vi": "mặt nạ nhân quả", "zh": "因果掩码", "en": "causal mask"},
    "l02.torch_out": {
        "vi": "{mask}: đầu ra giống nn.MultiheadAttention",
        "zh": "{mask}：输出与 nn.MultiheadAttention 相同",
        "en": "{mask}: output equals nn.MultiheadAttention's",
    },
    "l02.torch_avg": {
        "vi": "{mask}: trọng số trung bình các đầu giống nn.MultiheadAttention",
        "zh": "{mask}：各头平均后的权重与 nn.MultiheadAttention 相同",
        "en": "{mask}: head-averaged weights equal nn.MultiheadAttention's",
    },
    "l02.torch_heads": {
        "vi": "{mask}: trọng số của từng đầu giống nn.MultiheadAttention",
        "zh": "{mask}：每个头的权重与 nn.MultiheadAttention 相同",
        "en": "{mask}: per-head weights equal nn.MultiheadAttention's",
    },
    "l02.contiguous_same": {
        "vi": ".contiguous().view(B, T, D) và .reshape(B, T, D) cho cùng một kết quả",
        "zh": ".contiguous().view(B, T, D) 与 .reshape(B, T, D) 结果相同",
        "en": ".contiguous().view(B, T, D) and .reshape(B, T, D) give the same result",
    },
    "l02.heads_title": {
        "vi": "Trọng số chú ý của {h} đầu (chưa huấn luyện)",
        "zh": "{h} 个头的注意力权重（未训练）",
        "en": "Attention weights of {h} heads (untrained)",
    },
    "l02.avg_title": {
        "vi": "Trung bình của {h} đầu",
        "zh": "{h} 个头的平均",
        "en": "Average of the {h} heads",
    },
    "l02.forgot_nan": {
        "vi": "quên dấu ~: truy vấn cuối bị chặn mọi khóa, nên đầu ra ở vị trí cuối toàn là NaN",
        "zh": "忘了 ~：最后一个查询的所有键都被屏蔽，最后一个位置的输出全是 NaN",
        "en": "forgetting the ~: the last query has every key blocked, so the last output is all NaN",
    },
    "l02.params_row": {
        "vi": "h = {h}:  d_k = {d_k:>2},  số tham số = {n}",
        "zh": "h = {h}：d_k = {d_k:>2}，参数个数 = {n}",
        "en": "h = {h}:  d_k = {d_k:>2},  parameters = {n}",
    },
    "l02.params_same": {
        "vi": "số tham số như nhau với mọi h",
        "zh": "参数个数对所有 h 都相同",
        "en": "the parameter count is the same for every h",
    },
    "l02.params_formula": {
        "vi": "số tham số = 4·(d_model² + d_model)",
        "zh": "参数个数 = 4·(d_model² + d_model)",
        "en": "parameter count = 4·(d_model² + d_model)",
    },
    "l02.params_torch": {
        "vi": "nn.MultiheadAttention cũng có đúng chừng ấy tham số",
        "zh": "nn.MultiheadAttention 的参数个数也一样",
        "en": "nn.MultiheadAttention has exactly as many parameters",
    },
})

# ---------------------------------------------------------------------------------------------
# Exercise names, verdicts and hints.
register({
    "l02.ex.split_heads": {"vi": "split_heads", "zh": "split_heads", "en": "split_heads"},
    "l02.ex.merge_heads": {"vi": "merge_heads", "zh": "merge_heads", "en": "merge_heads"},
    "l02.ex.mha_size": {"vi": "mha_size", "zh": "mha_size", "en": "mha_size"},
    "l02.ok.split": {
        "vi": "Mỗi đầu nhận một khối d_k đặc trưng liền nhau, ở mọi vị trí, và thứ tự vị trí được giữ nguyên.",
        "zh": "每个头拿到一段连续的 d_k 个特征，覆盖所有位置，位置顺序保持不变。",
        "en": "Each head gets one contiguous block of d_k features at every position, positions in order.",
    },
    "l02.ok.merge": {
        "vi": "Các đầu được ghép lại cạnh nhau: đầu 1, rồi đầu 2, ... — đúng phép nghịch đảo của split_heads.",
        "zh": "各个头并排拼回去：先第 1 个头，再第 2 个头……正好是 split_heads 的逆操作。",
        "en": "The heads sit side by side again: head 1, then head 2, ... — exactly the inverse of split_heads.",
    },
    "l02.ok.size": {
        "vi": "Số tham số không phụ thuộc vào h: các đầu chỉ chia nhau bốn ma trận d_model × d_model.",
        "zh": "参数个数与 h 无关：各个头只是瓜分同样的四个 d_model × d_model 矩阵。",
        "en": "The count does not depend on h: the heads only share out four d_model × d_model matrices.",
    },
    "l02.hint.shape": {
        "vi": "Với x có kích thước {inp}, kết quả phải có kích thước {expected}, nhưng hàm trả về {got}.",
        "zh": "输入 x 的形状是 {inp} 时，结果应为 {expected}，但函数返回了 {got}。",
        "en": "For x of shape {inp} the result must have shape {expected}, but your function returned {got}.",
    },
    "l02.hint.not_tensor": {
        "vi": "Hàm phải trả về một torch.Tensor, nhưng lại trả về {got}.",
        "zh": "函数应返回 torch.Tensor，却返回了 {got}。",
        "en": "The function must return a torch.Tensor, but it returned {got}.",
    },
    "l02.hint.split_forgot_transpose": {
        "vi": "Kích thước {got} là (B, T, H, d_k): bạn đã tách D thành H × d_k, còn thiếu một bước — "
              "đưa trục đầu lên trước trục vị trí để có (B, H, T, d_k).",
        "zh": "形状 {got} 是 (B, T, H, d_k)：D 已经拆成 H × d_k 了，还差一步 —— "
              "把“头”这一维移到“位置”之前，得到 (B, H, T, d_k)。",
        "en": "Shape {got} is (B, T, H, d_k): you split D into H × d_k but one step is missing — "
              "move the head axis in front of the position axis to get (B, H, T, d_k).",
    },
    "l02.hint.split_no_transpose": {
        "vi": "Kích thước đúng nhưng giá trị sai: có vẻ bạn view/reshape thẳng sang (B, H, T, d_k). "
              "Trong bộ nhớ, mỗi hàng của x là D đặc trưng của MỘT vị trí, nên cắt thẳng như vậy sẽ "
              "trộn lẫn vị trí với đầu. Hãy tách D trước (B, T, H, d_k), rồi mới đổi chỗ hai trục T và H.",
        "zh": "形状对了，数值不对：看起来你直接 view/reshape 成了 (B, H, T, d_k)。"
              "在内存里，x 的每一行是某一个位置的 D 个特征，这样直接切会把位置和头混在一起。"
              "应先拆 D 得到 (B, T, H, d_k)，再交换 T 和 H 两个轴。",
        "en": "Right shape, wrong values: it looks like you viewed/reshaped straight to (B, H, T, d_k). "
              "In memory each row of x holds the D features of ONE position, so cutting it that way mixes "
              "positions with heads. Split D first, (B, T, H, d_k), then swap the T and H axes.",
    },
    "l02.hint.split_interleaved": {
        "vi": "Kích thước đúng nhưng các đầu bị xen kẽ: đầu 1 đang lấy các đặc trưng 0, H, 2H, ... "
              "Mỗi đầu phải nhận một khối d_k đặc trưng LIỀN NHAU: đầu 1 lấy 0..d_k−1, đầu 2 lấy d_k..2d_k−1, ... "
              "Hãy xem lại thứ tự hai trục H và d_k khi bạn tách D.",
        "zh": "形状对了，但各个头是交错取的：第 1 个头拿到的是特征 0, H, 2H, ……"
              "每个头应拿到一段连续的 d_k 个特征：第 1 个头是 0..d_k−1，第 2 个头是 d_k..2d_k−1，……"
              "检查一下拆分 D 时 H 和 d_k 两个轴的先后顺序。",
        "en": "Right shape, but the heads are interleaved: head 1 takes features 0, H, 2H, ... "
              "Each head must get a CONTIGUOUS block of d_k features: head 1 takes 0..d_k−1, head 2 takes "
              "d_k..2d_k−1, ... Check the order of the H and d_k axes when you split D.",
    },
    "l02.hint.wrong_dk": {
        "vi": "Trục cuối có {got} phần tử, nhưng mỗi đầu phải có d_k = d_model / h = {d_k} đặc trưng "
              "(ở đây d_model = {d_model}, h = {h}).",
        "zh": "最后一维有 {got} 个元素，但每个头应有 d_k = d_model / h = {d_k} 个特征"
              "（这里 d_model = {d_model}，h = {h}）。",
        "en": "The last axis has {got} entries, but each head must have d_k = d_model / h = {d_k} features "
              "(here d_model = {d_model}, h = {h}).",
    },
    "l02.hint.float_size": {
        "vi": "Trong Python, phép chia / luôn cho số thực (12 / 3 = 4.0), mà view/reshape chỉ nhận số nguyên. "
              "Hãy dùng phép chia nguyên //.",
        "zh": "在 Python 里 / 总是得到浮点数（12 / 3 = 4.0），而 view/reshape 只接受整数。请用整除 //。",
        "en": "In Python / always gives a float (12 / 3 = 4.0), and view/reshape only accept ints. Use //.",
    },
    "l02.hint.bad_sizes": {
        "vi": "Các kích thước bạn đưa cho view/reshape không khớp với số phần tử của tensor ({message}). "
              "Đừng gõ cứng con số: hãy lấy B, T, D từ x.shape và tính d_k từ chúng.",
        "zh": "传给 view/reshape 的尺寸与张量的元素个数对不上（{message}）。"
              "不要把数字写死：从 x.shape 取出 B、T、D，再由它们算出 d_k。",
        "en": "The sizes you gave view/reshape do not match the tensor's number of elements ({message}). "
              "Do not hard-code numbers: take B, T, D from x.shape and compute d_k from them.",
    },
    "l02.hint.merge_no_transpose": {
        "vi": "Kích thước đúng nhưng giá trị sai: có vẻ bạn view/reshape thẳng (B, H, T, d_k) về (B, T, D). "
              "Khi đó một \"vị trí\" của kết quả được ghép từ các hàng của cùng một đầu, tức là trộn lẫn vị trí "
              "với đầu. Hãy đưa trục T về cạnh B trước (B, T, H, d_k), rồi mới gộp H và d_k.",
        "zh": "形状对了，数值不对：看起来你直接把 (B, H, T, d_k) view/reshape 成了 (B, T, D)。"
              "这样结果里的一个“位置”是由同一个头的好几行拼成的，位置和头混在了一起。"
              "应先把 T 轴挪到 B 旁边得到 (B, T, H, d_k)，再合并 H 和 d_k。",
        "en": "Right shape, wrong values: it looks like you viewed/reshaped (B, H, T, d_k) straight to (B, T, D). "
              "Then one \"position\" of the result is built from rows of a single head, mixing positions "
              "with heads. Move the T axis next to B first, (B, T, H, d_k), then merge H and d_k.",
    },
    "l02.hint.merge_view": {
        "vi": "Sau transpose, tensor không còn nằm liền mạch trong bộ nhớ, nên .view báo lỗi. "
              "Hãy gọi .contiguous() trước .view, hoặc dùng .reshape (nó tự sao chép khi cần).",
        "zh": "transpose 之后张量在内存中不再连续，所以 .view 会报错。"
              "先调用 .contiguous() 再 .view，或者直接用 .reshape（需要时它会自动复制）。",
        "en": "After a transpose the tensor is no longer contiguous in memory, so .view fails. "
              "Call .contiguous() before .view, or use .reshape (it copies when it has to).",
    },
    "l02.hint.merge_interleaved": {
        "vi": "Kích thước đúng nhưng các đầu bị ghép xen kẽ từng đặc trưng một. Phép ghép phải đặt trọn "
              "d_k đặc trưng của đầu 1, rồi trọn d_k đặc trưng của đầu 2, ... — ngược lại đúng với split_heads. "
              "Hãy xem lại thứ tự các trục trước khi gộp.",
        "zh": "形状对了，但各个头是按特征交错拼起来的。拼接应先放第 1 个头的全部 d_k 个特征，"
              "再放第 2 个头的全部 d_k 个特征，……正好是 split_heads 的逆操作。检查合并前各轴的顺序。",
        "en": "Right shape, but the heads are interleaved feature by feature. The concatenation must put all "
              "d_k features of head 1, then all d_k features of head 2, ... — the exact inverse of split_heads. "
              "Check the order of the axes before you merge.",
    },
    "l02.hint.values": {
        "vi": "Kích thước đúng nhưng giá trị sai (x có kích thước {inp}). Hãy kiểm tra trên một tensor nhỏ "
              "như torch.arange(24).view(1, 3, 8) để xem từng phần tử đi về đâu.",
        "zh": "形状对了，数值不对（x 的形状为 {inp}）。用一个小张量试试，比如 "
              "torch.arange(24).view(1, 3, 8)，看看每个元素跑到了哪里。",
        "en": "Right shape, wrong values (x of shape {inp}). Try a small tensor such as "
              "torch.arange(24).view(1, 3, 8) and follow where each entry goes.",
    },
    "l02.hint.size_format": {
        "vi": "Hàm phải trả về một cặp (d_k, số tham số) gồm hai số nguyên, nhưng lại trả về {got}.",
        "zh": "函数应返回一对整数 (d_k, 参数个数)，却返回了 {got}。",
        "en": "The function must return a pair of ints (d_k, number of parameters), but it returned {got}.",
    },
    "l02.hint.size_int": {
        "vi": "Với d_model = {d_model}, h = {h}: hàm trả về {got}, nhưng d_k và số tham số phải là số nguyên. "
              "Phép chia / cho số thực; hãy dùng //.",
        "zh": "d_model = {d_model}，h = {h} 时函数返回 {got}，但 d_k 和参数个数都应是整数。/ 得到浮点数，请用 //。",
        "en": "For d_model = {d_model}, h = {h} you returned {got}, but d_k and the count must be ints. "
              "/ gives a float; use //.",
    },
    "l02.hint.size_dk": {
        "vi": "Với d_model = {d_model}, h = {h}: d_k = {got} chưa đúng. Các đầu chia đều d_model cho nhau.",
        "zh": "d_model = {d_model}，h = {h} 时 d_k = {got} 不对。各个头平分 d_model。",
        "en": "For d_model = {d_model}, h = {h}: d_k = {got} is wrong. The heads share d_model equally.",
    },
    "l02.hint.size_scales_h": {
        "vi": "Với d_model = {d_model}, h = {h}: số tham số của bạn tăng theo h. Thêm đầu không thêm tham số: "
              "h đầu chỉ chia nhau các ma trận W_q, W_k, W_v (mỗi đầu một lát d_k cột), còn W_o vẫn là một ma trận.",
        "zh": "d_model = {d_model}，h = {h} 时你的参数个数随 h 增长。增加头并不增加参数："
              "h 个头只是瓜分 W_q、W_k、W_v（每个头一片 d_k 列），W_o 仍是一个矩阵。",
        "en": "For d_model = {d_model}, h = {h} your count grows with h. More heads do not add parameters: "
              "the h heads only share out W_q, W_k, W_v (a slice of d_k columns each), and W_o is still one matrix.",
    },
    "l02.hint.size_no_bias": {
        "vi": "Với d_model = {d_model}, h = {h}: thiếu các độ lệch (bias). Mỗi nn.Linear(d_model, d_model) "
              "có cả ma trận trọng số lẫn một vector độ lệch.",
        "zh": "d_model = {d_model}，h = {h} 时漏掉了偏置（bias）。每个 nn.Linear(d_model, d_model) "
              "除了权重矩阵还有一个偏置向量。",
        "en": "For d_model = {d_model}, h = {h}: the biases are missing. Each nn.Linear(d_model, d_model) "
              "has a weight matrix and a bias vector.",
    },
    "l02.hint.size_no_wo": {
        "vi": "Với d_model = {d_model}, h = {h}: có vẻ bạn chỉ đếm W_q, W_k, W_v. Đừng quên phép chiếu đầu ra W_o.",
        "zh": "d_model = {d_model}，h = {h} 时看起来你只数了 W_q、W_k、W_v。别忘了输出投影 W_o。",
        "en": "For d_model = {d_model}, h = {h} you seem to count only W_q, W_k, W_v. Do not forget the output "
              "projection W_o.",
    },
    "l02.hint.size_count": {
        "vi": "Với d_model = {d_model}, h = {h}: số tham số {got} chưa đúng. Hãy đối chiếu với "
              "sum(p.numel() for p in attnlab.MultiHeadAttention(d_model, h).parameters()).",
        "zh": "d_model = {d_model}，h = {h} 时参数个数 {got} 不对。可以对照 "
              "sum(p.numel() for p in attnlab.MultiHeadAttention(d_model, h).parameters())。",
        "en": "For d_model = {d_model}, h = {h} the count {got} is wrong. Compare with "
              "sum(p.numel() for p in attnlab.MultiHeadAttention(d_model, h).parameters()).",
    },
    "l02.hint.size_divisible": {
        "vi": "Với d_model = {d_model}, h = {h}: d_model không chia hết cho h nên không thể chia đều cho các đầu. "
              "Hàm phải raise ValueError thay vì trả về một kết quả.",
        "zh": "d_model = {d_model}，h = {h} 时 d_model 不能被 h 整除，无法平分给各个头。"
              "函数应 raise ValueError，而不是返回结果。",
        "en": "For d_model = {d_model}, h = {h}, d_model is not divisible by h, so it cannot be shared equally. "
              "The function must raise ValueError instead of returning a result.",
    },
    "l02.hint.size_assert": {
        "vi": "Với d_model = {d_model}, h = {h}: hãy raise ValueError(...) thay vì assert "
              "(Python bỏ qua mọi assert khi chạy với -O).",
        "zh": "d_model = {d_model}，h = {h} 时请用 raise ValueError(...)，不要用 assert"
              "（用 -O 运行 Python 时所有 assert 都会被跳过）。",
        "en": "For d_model = {d_model}, h = {h}: raise ValueError(...) rather than assert "
              "(Python skips every assert when run with -O).",
    },
})

Diagnosis = tuple[bool, str, dict]

# (B, T, D, H): batch > 1, T != H and d_k != H, so that every typical mistake shows.
_CASES = ((2, 5, 12, 3), (1, 4, 8, 2), (3, 7, 16, 4), (2, 3, 6, 6), (2, 6, 8, 1))


def _reference(D: int, H: int) -> MultiHeadAttention:
    """The package's layer, built without touching the notebook's random state."""
    with torch.random.fork_rng(devices=[]):
        return MultiHeadAttention(D, H)


def _inputs(B: int, T: int, D: int, seed: int) -> torch.Tensor:
    return torch.randn(B, T, D, generator=torch.Generator().manual_seed(seed))


def _shape(size) -> str:
    return "(" + ", ".join(str(s) for s in size) + ")"


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=1e-6, rtol=0)


def _call(fn: Callable, *args) -> tuple[object, Diagnosis | None]:
    """(the student's result, None), or (None, hint) for a typical view/reshape error."""
    try:
        return call_student(fn, *args), None
    except (TypeError, RuntimeError) as e:
        msg = str(e).splitlines()[0] if str(e) else ""
        if isinstance(e, TypeError) and "float" in msg:
            return None, (False, "l02.hint.float_size", {})
        if isinstance(e, RuntimeError) and "is invalid for input of size" in msg:
            return None, (False, "l02.hint.bad_sizes", {"message": msg})
        if isinstance(e, RuntimeError) and "view size is not compatible" in msg:
            return None, (False, "l02.hint.merge_view", {})
        raise


def _check_tensor(got, x: torch.Tensor, expected: torch.Tensor) -> Diagnosis | None:
    if not isinstance(got, torch.Tensor):
        return False, "l02.hint.not_tensor", {"got": type(got).__name__}
    if got.shape != expected.shape:
        return False, "l02.hint.shape", {"inp": _shape(x.shape), "expected": _shape(expected.shape),
                                         "got": _shape(got.shape)}
    return None


def _verdict(diagnosis: Diagnosis, lang: str | None) -> tuple[bool, str]:
    ok, key, fields = diagnosis
    return ok, t(key, lang, **fields)


# ------------------------------------------------------------------------------- split_heads
def _diagnose_split_heads(fn: Callable) -> Diagnosis:
    for i, (B, T, D, H) in enumerate(_CASES):
        d_k = D // H
        x = _inputs(B, T, D, seed=100 + i)
        expected = _reference(D, H).split_heads(x)                     # (B, H, T, d_k)
        got, hint = _call(fn, x.clone(), H)
        if hint:
            return hint
        if isinstance(got, torch.Tensor) and got.shape != expected.shape:
            if got.shape == (B, T, H, d_k):
                return False, "l02.hint.split_forgot_transpose", {"got": _shape(got.shape)}
            if got.dim() == 4 and got.shape[-1] != d_k:
                return False, "l02.hint.wrong_dk", {"got": got.shape[-1], "d_k": d_k, "d_model": D, "h": H}
        hint = _check_tensor(got, x, expected)
        if hint:
            return hint
        if _same(got, expected):
            continue
        if _same(got, x.reshape(B, H, T, d_k)):
            return False, "l02.hint.split_no_transpose", {}
        if _same(got, x.reshape(B, T, d_k, H).permute(0, 3, 1, 2)):
            return False, "l02.hint.split_interleaved", {}
        return False, "l02.hint.values", {"inp": _shape(x.shape)}
    return True, "l02.ok.split", {}


def check_split_heads(fn: Callable, lang: str | None = None) -> bool | None:
    """Check ``fn(x (B, T, D), num_heads) -> (B, H, T, d_k)``, as MultiHeadAttention.split_heads."""
    return run_check("l02.ex.split_heads", lambda: _verdict(_diagnose_split_heads(fn), lang), lang)


# ------------------------------------------------------------------------------- merge_heads
def _diagnose_merge_heads(fn: Callable) -> Diagnosis:
    for i, (B, T, D, H) in enumerate(_CASES):
        d_k = D // H
        x = _inputs(B, T, D, seed=200 + i).view(B, H, T, d_k)                 # contiguous (B, H, T, d_k)
        expected = _reference(D, H).merge_heads(x)                     # (B, T, D)
        got, hint = _call(fn, x.clone())
        hint = hint or _check_tensor(got, x, expected)
        if hint:
            return hint
        if _same(got, expected):
            continue
        if _same(got, x.reshape(B, T, D)):
            return False, "l02.hint.merge_no_transpose", {}
        if _same(got, x.permute(0, 2, 3, 1).reshape(B, T, D)):
            return False, "l02.hint.merge_interleaved", {}
        return False, "l02.hint.values", {"inp": _shape(x.shape)}
    return True, "l02.ok.merge", {}


def check_merge_heads(fn: Callable, lang: str | None = None) -> bool | None:
    """Check ``fn(x (B, H, T, d_k)) -> (B, T, D)``, as MultiHeadAttention.merge_heads."""
    return run_check("l02.ex.merge_heads", lambda: _verdict(_diagnose_merge_heads(fn), lang), lang)


# ---------------------------------------------------------------------------------- mha_size
_SIZE_CASES = ((64, 8), (512, 8), (12, 3), (64, 1), (30, 5), (8, 8))
_NOT_DIVISIBLE = ((10, 3), (64, 6))


def _number(v):
    """A Python number from an int/float or a one-element tensor; None otherwise."""
    if isinstance(v, torch.Tensor) and v.numel() == 1:
        v = v.item()
    return v if isinstance(v, numbers.Real) and not isinstance(v, bool) else None


def _diagnose_mha_size(fn: Callable) -> Diagnosis:
    for D, H in _SIZE_CASES:
        fields = {"d_model": D, "h": H}
        reference = _reference(D, H)
        d_k, n = reference.d_k, sum(p.numel() for p in reference.parameters())   # n = 4 (D^2 + D)
        got = call_student(fn, D, H)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return False, "l02.hint.size_format", {"got": repr(got)[:60]}
        got_dk, got_n = _number(got[0]), _number(got[1])
        if got_dk is None or got_n is None:
            return False, "l02.hint.size_format", {"got": repr(got)[:60]}
        if got_dk != d_k:
            return False, "l02.hint.size_dk", {**fields, "got": got_dk}
        if got_n != n:
            if H > 1 and got_n in (H * n, H * 4 * D * D):
                return False, "l02.hint.size_scales_h", fields
            if got_n == 4 * D * D:
                return False, "l02.hint.size_no_bias", fields
            if got_n in (3 * (D * D + D), 3 * D * D):
                return False, "l02.hint.size_no_wo", fields
            return False, "l02.hint.size_count", {**fields, "got": got_n}
        if not all(isinstance(v, numbers.Integral) for v in (got_dk, got_n)):
            return False, "l02.hint.size_int", {**fields, "got": repr(tuple(got))}
    for D, H in _NOT_DIVISIBLE:
        fields = {"d_model": D, "h": H}
        try:
            fn(D, H)
        except ValueError:
            continue
        except AssertionError:
            return False, "l02.hint.size_assert", fields
        return False, "l02.hint.size_divisible", fields
    return True, "l02.ok.size", {}


def check_mha_size(fn: Callable, lang: str | None = None) -> bool | None:
    """Check ``fn(d_model, num_heads) -> (d_k, number of parameters of MultiHeadAttention)``;
    ``fn`` must raise ValueError when d_model is not divisible by num_heads."""
    return run_check("l02.ex.mha_size", lambda: _verdict(_diagnose_mha_size(fn), lang), lang)
