"""Exercise checkers for lesson 07 (training a tiny Transformer), and the words the lesson prints.

- ``check_loss_mask(fn)``:  ``fn(inputs (B, T), targets (B, T)) -> (B, T)`` bool, True where the
  loss counts: the target is a reversed digit (from the separator on, padding excluded).
- ``check_forward(fn, model)``: ``fn(model, ids (B, T)) -> logits (B, T, vocab)``, the model's
  forward pass written by hand, with the causal mask. The checker hands ``fn`` a copy of the
  model whose own mask is off (``causal=False``), so the mask must come from ``fn``, and it
  tests for leaks: changing a later token must not change an earlier prediction.
- ``check_reversal_head(model, answer)``: ``answer = (layer, head)`` counted from 1 as in the
  figure titles; right if that head puts at least ``ANTI_DIAGONAL_THRESHOLD`` of its weight on
  the mirror position.

Each checker recognises the typical mistakes and prints a hint for the first one it meets,
never the solution. The ``_diagnose_*`` functions return ``(ok, message key, fields)`` so the
tests can see which hint was chosen.
"""
from __future__ import annotations

import copy
import numbers

import torch

from .. import tiny
from ..i18n import register, t
from ..masks import causal_mask
from ._common import NotDone, call_student, run_check

# ---------------------------------------------------------------------------------------------
# Words printed by the lesson notebook (same code in both languages, text from here).
register({
    "l07.params": {
        "vi": "Số tham số: {n}",
        "zh": "参数量：{n}",
        "en": "Parameters: {n}",
    },
    "l07.check.mask_count": {
        "vi": "trên cả {count} chuỗi của tập kiểm tra, mặt nạ loss chọn đúng n vị trí mỗi hàng (n = số chữ số)",
        "zh": "在留出集全部 {count} 条序列上，loss 掩码每行恰好选中 n 个位置（n = 数字个数）",
        "en": "on all {count} held-out sequences the loss mask picks exactly n positions per row (n = number of digits)",
    },
    "l07.check.disjoint": {
        "vi": "không chuỗi nào trong {count} chuỗi huấn luyện nằm trong tập kiểm tra",
        "zh": "{count} 条训练序列中没有一条出现在留出集里",
        "en": "none of the {count} training sequences is in the held-out set",
    },
    "l07.fig.before": {
        "vi": "TRƯỚC khi huấn luyện: trọng số chú ý của mọi tầng, mọi đầu",
        "zh": "训练之前：每一层、每个头的注意力权重",
        "en": "BEFORE training: attention weights of every layer and head",
    },
    "l07.fig.after": {
        "vi": "SAU khi huấn luyện: trọng số chú ý của mọi tầng, mọi đầu",
        "zh": "训练之后：每一层、每个头的注意力权重",
        "en": "AFTER training: attention weights of every layer and head",
    },
    "l07.fig.layer_head": {
        "vi": "tầng {layer} · đầu {head}",
        "zh": "第 {layer} 层 · 第 {head} 个头",
        "en": "layer {layer} · head {head}",
    },
    "l07.layer": {"vi": "tầng {i}", "zh": "第 {i} 层", "en": "layer {i}"},
    "l07.check.untrained_acc": {
        "vi": "trước khi huấn luyện: độ chính xác trên tập kiểm tra dưới 5% (mô hình chỉ đoán mò)",
        "zh": "训练之前：留出集准确率低于 5%（模型只是在瞎猜）",
        "en": "before training: held-out accuracy below 5% (the model is guessing)",
    },
    "l07.check.untrained_mass": {
        "vi": "trước khi huấn luyện: không đầu nào đặt tới 20% trọng số lên vị trí đối xứng",
        "zh": "训练之前：没有哪个头把 20% 以上的权重放在镜像位置上",
        "en": "before training: no head puts even 20% of its weight on the mirror position",
    },
    "l07.fig.step": {"vi": "bước huấn luyện", "zh": "训练步数", "en": "training step"},
    "l07.fig.loss": {
        "vi": "Loss trên các vị trí mục tiêu",
        "zh": "目标位置上的 loss",
        "en": "Loss on the target positions",
    },
    "l07.fig.guess": {
        "vi": "đoán mò 1 trong 10 chữ số: ln 10 ≈ 2.30",
        "zh": "在 10 个数字里瞎猜：ln 10 ≈ 2.30",
        "en": "guessing 1 of 10 digits: ln 10 ≈ 2.30",
    },
    "l07.check.loss": {
        "vi": "loss trung bình của 50 bước cuối < 0.05",
        "zh": "最后 50 步的平均 loss < 0.05",
        "en": "mean loss of the last 50 steps < 0.05",
    },
    "l07.check.accuracy": {
        "vi": "độ chính xác trên {count} chuỗi của tập kiểm tra (chưa từng gặp khi huấn luyện; "
              "giải mã tham lam, phải đúng toàn bộ phần đảo ngược) ≥ {pct}%",
        "zh": "留出集 {count} 条序列（训练中从未见过；贪心解码，整段倒序必须完全正确）上的准确率 ≥ {pct}%",
        "en": "accuracy on {count} held-out sequences (never seen in training; greedy decoding, "
              "the whole reversed part must match) ≥ {pct}%",
    },
    "l07.check.example": {
        "vi": "mô hình đảo {src} thành {out}",
        "zh": "模型把 {src} 倒序为 {out}",
        "en": "the model turns {src} into {out}",
    },
    "l07.fig.mass": {
        "vi": "Trọng số trung bình trên vị trí đối xứng",
        "zh": "镜像位置上的平均权重",
        "en": "Average weight on the mirror position",
    },
    "l07.fig.mass_before": {"vi": "trước huấn luyện", "zh": "训练前", "en": "before training"},
    "l07.fig.mass_after": {"vi": "sau huấn luyện", "zh": "训练后", "en": "after training"},
    "l07.fig.layers_axis": {"vi": "tầng", "zh": "层", "en": "layer"},
    "l07.fig.heads_axis": {"vi": "đầu", "zh": "头", "en": "head"},
    "l07.check.antidiag": {
        "vi": "đầu mạnh nhất đặt ≥ {pct}% trọng số lên vị trí đối xứng (chú ý dàn đều thì chỉ khoảng 10%)",
        "zh": "最强的那个头把 ≥ {pct}% 的权重放在镜像位置上（均匀分配注意力只有约 10%）",
        "en": "the strongest head puts ≥ {pct}% of its weight on the mirror position (uniform attention: about 10%)",
    },
    "l07.fig.ideal": {
        "vi": "Mẫu lý tưởng: truy vấn t → khóa 2n−1−t",
        "zh": "理想模式：查询 t → 键 2n−1−t",
        "en": "Ideal pattern: query t → key 2n−1−t",
    },
    "l07.fig.best_before": {
        "vi": "Tầng {layer} · đầu {head}, TRƯỚC huấn luyện",
        "zh": "第 {layer} 层 · 第 {head} 个头，训练前",
        "en": "Layer {layer} · head {head}, BEFORE training",
    },
    "l07.fig.best_after": {
        "vi": "Tầng {layer} · đầu {head}, SAU huấn luyện",
        "zh": "第 {layer} 层 · 第 {head} 个头，训练后",
        "en": "Layer {layer} · head {head}, AFTER training",
    },
    "l07.fig.lengths": {
        "vi": "Tầng {layer} · đầu {head} với ba độ dài khác nhau",
        "zh": "第 {layer} 层 · 第 {head} 个头，三种不同长度",
        "en": "Layer {layer} · head {head} on three different lengths",
    },
    "l07.check.cheat_teacher": {
        "vi": "mô hình KHÔNG mặt nạ, chấm kiểu teacher forcing: độ chính xác ≥ {pct}% — trông như hoàn hảo",
        "zh": "没有掩码的模型，用教师强制评估：准确率 ≥ {pct}% —— 看上去完美无缺",
        "en": "model WITHOUT a mask, teacher-forced: accuracy ≥ {pct}% — it looks perfect",
    },
    "l07.check.cheat_greedy": {
        "vi": "cùng mô hình đó tự sinh đáp án (giải mã tham lam): độ chính xác ≤ {pct}%",
        "zh": "同一个模型自己生成答案（贪心解码）：准确率 ≤ {pct}%",
        "en": "the same model writing its own answer (greedy decoding): accuracy ≤ {pct}%",
    },
    "l07.check.cheat_peek": {
        "vi": "mô hình không mặt nạ: có đầu đặt ≥ {pct}% trọng số lên token NGAY SAU — chính là đáp án",
        "zh": "没有掩码的模型：有头把 ≥ {pct}% 的权重放在紧随其后的词元上——那正是答案",
        "en": "model without a mask: a head puts ≥ {pct}% of its weight on the NEXT token — the answer itself",
    },
    "l07.check.causal_peek": {
        "vi": "mô hình có mặt nạ nhân quả: trọng số lên token ngay sau bằng đúng 0, ở mọi tầng và mọi đầu",
        "zh": "有因果掩码的模型：放在下一个词元上的权重在每一层、每个头里都恰好为 0",
        "en": "model with the causal mask: the weight on the next token is exactly 0 in every layer and head",
    },
    "l07.check.causal_same": {
        "vi": "mô hình có mặt nạ nhân quả: teacher forcing và giải mã tham lam cho cùng một độ chính xác",
        "zh": "有因果掩码的模型：教师强制与贪心解码的准确率完全相同",
        "en": "model with the causal mask: teacher forcing and greedy decoding give the same accuracy",
    },
    "l07.fig.cheater": {
        "vi": "Mô hình KHÔNG có mặt nạ nhân quả, tầng {layer}: sau dấu '|', truy vấn nhìn token kế tiếp",
        "zh": "没有因果掩码的模型，第 {layer} 层：'|' 之后，查询盯着下一个词元",
        "en": "Model WITHOUT the causal mask, layer {layer}: after '|', the queries look at the next token",
    },
    "l07.check.pretrained": {
        "vi": "checkpoint có sẵn (attnlab.tiny.load_pretrained()): độ chính xác trên tập kiểm tra ≥ {pct}%",
        "zh": "现成的检查点（attnlab.tiny.load_pretrained()）：留出集准确率 ≥ {pct}%",
        "en": "the saved checkpoint (attnlab.tiny.load_pretrained()): held-out accuracy ≥ {pct}%",
    },
})

# ---------------------------------------------------------------------------------------------
# Exercise names, verdicts and hints.
register({
    "l07.ex.loss_mask": {"vi": "my_loss_mask", "zh": "my_loss_mask", "en": "my_loss_mask"},
    "l07.ex.forward": {"vi": "my_forward", "zh": "my_forward", "en": "my_forward"},
    "l07.ex.head": {"vi": "my_head", "zh": "my_head", "en": "my_head"},
    "l07.hint.not_tensor": {
        "vi": "Hàm phải trả về một torch.Tensor, nhưng lại trả về {got}.",
        "zh": "函数应返回 torch.Tensor，却返回了 {got}。",
        "en": "The function must return a torch.Tensor, but it returned {got}.",
    },
    # loss mask
    "l07.ok.loss_mask": {
        "vi": "Loss chỉ tính ở các vị trí từ dấu phân cách trở đi, bỏ phần đệm: đúng n vị trí cho một chuỗi "
              "n chữ số, với mọi độ dài.",
        "zh": "loss 只算从分隔符开始、不含填充的位置：n 个数字的序列恰好 n 个位置，任何长度都对。",
        "en": "The loss counts the positions from the separator on, padding excluded: exactly n positions for "
              "n digits, at every length.",
    },
    "l07.hint.mask_shape_full": {
        "vi": "Mặt nạ có kích thước {got} — bằng cả hàng đầy đủ. Loss được tính trên dự đoán của inputs = "
              "ids[:, :-1], nên mặt nạ phải có kích thước của inputs/targets: {expected}.",
        "zh": "掩码的形状是 {got}，和完整的一行一样长。loss 算在 inputs = ids[:, :-1] 的预测上，"
              "所以掩码要和 inputs/targets 同形：{expected}。",
        "en": "The mask has shape {got}, the length of the full row. The loss is computed on the predictions "
              "for inputs = ids[:, :-1], so the mask must have the shape of inputs/targets: {expected}.",
    },
    "l07.hint.mask_shape": {
        "vi": "Mặt nạ phải có kích thước {expected} (giống inputs và targets), nhưng hàm trả về {got}.",
        "zh": "掩码的形状应为 {expected}（与 inputs、targets 相同），但函数返回了 {got}。",
        "en": "The mask must have shape {expected} (like inputs and targets), but your function returned {got}.",
    },
    "l07.hint.mask_dtype": {
        "vi": "Kiểu dữ liệu là {got}; hãy trả về torch.bool: logits[mask] và targets[mask] chỉ chọn vị trí khi "
              "mask là bool (tensor số nguyên sẽ bị hiểu là chỉ số).",
        "zh": "dtype 是 {got}；请返回 torch.bool：只有 bool 掩码才能让 logits[mask]、targets[mask] 按位置挑选"
              "（整数张量会被当作下标）。",
        "en": "The dtype is {got}; return torch.bool: logits[mask] and targets[mask] select positions only with "
              "a bool mask (an integer tensor is read as indices).",
    },
    "l07.hint.mask_inverted": {
        "vi": "Mặt nạ bị đảo ngược: nó chọn các chữ số nguồn và phần đệm, bỏ qua đúng phần cần học. "
              "True phải nằm ở các vị trí có mục tiêu là chữ số đảo ngược.",
        "zh": "掩码反了：它选中了源数字和填充，恰好漏掉了要学的部分。True 应该落在目标是倒序数字的位置上。",
        "en": "The mask is inverted: it picks the source digits and the padding and skips exactly what must be "
              "learned. True belongs where the target is a reversed digit.",
    },
    "l07.hint.mask_all": {
        "vi": "Mặt nạ chọn mọi vị trí. Phần nguồn là chữ số ngẫu nhiên — không ai đoán trước được, loss ở đó "
              "kẹt quanh ln 10 ≈ 2.3 mãi — còn phần đệm thì chẳng có gì để học. Chỉ giữ các vị trí từ dấu "
              "phân cách trở đi, trừ phần đệm.",
        "zh": "掩码选中了所有位置。源部分是随机数字——谁也预测不了，那里的 loss 会一直卡在 ln 10 ≈ 2.3 左右——"
              "填充部分则根本没什么可学。只保留从分隔符开始、不含填充的位置。",
        "en": "The mask picks every position. The source digits are random — nobody can predict them, the loss "
              "there stays near ln 10 ≈ 2.3 forever — and the padding has nothing to learn. Keep only the "
              "positions from the separator on, without the padding.",
    },
    "l07.hint.mask_source": {
        "vi": "Mặt nạ có cả các vị trí trong phần nguồn (ví dụ hàng {b}, vị trí {pos}). Ở đó mục tiêu là một "
              "chữ số ngẫu nhiên, không học được: loss sẽ kẹt quanh ln 10 và che mất tín hiệu của phần đảo "
              "ngược. Chỉ tính từ dấu phân cách trở đi.",
        "zh": "掩码包含了源部分的位置（例如第 {b} 行、位置 {pos}）。那里的目标是随机数字，学不会：loss 会卡在 "
              "ln 10 附近，淹没倒序部分的信号。只从分隔符开始算。",
        "en": "The mask includes positions of the source (e.g. row {b}, position {pos}). Their target is a random "
              "digit that cannot be learned: the loss stays near ln 10 and drowns the signal of the reversed "
              "part. Count from the separator on.",
    },
    "l07.hint.mask_early": {
        "vi": "Lệch sớm một vị trí: mặt nạ có cả vị trí ngay TRƯỚC dấu phân cách (hàng {b}, vị trí {pos}), nơi "
              "mục tiêu là chính dấu phân cách. Độ dài n là ngẫu nhiên, nên mô hình không thể biết lúc nào phần "
              "nguồn kết thúc. Hãy tìm dấu phân cách trong inputs, không phải trong targets.",
        "zh": "早了一位：掩码包含分隔符之前的那个位置（第 {b} 行、位置 {pos}），它的目标正是分隔符本身。"
              "长度 n 是随机的，模型不可能知道源部分何时结束。请在 inputs 里找分隔符，而不是在 targets 里找。",
        "en": "One position too early: the mask includes the position just BEFORE the separator (row {b}, "
              "position {pos}), whose target is the separator itself. The length n is random, so the model "
              "cannot know when the source ends. Look for the separator in inputs, not in targets.",
    },
    "l07.hint.mask_late": {
        "vi": "Lệch muộn một vị trí: thiếu chính vị trí của dấu phân cách (hàng {b}, vị trí {pos}). Đầu vào "
              "'|' dự đoán chữ số đảo ngược ĐẦU TIÊN (chữ số nguồn cuối cùng), nên vị trí đó phải được tính.",
        "zh": "晚了一位：漏掉了分隔符本身的位置（第 {b} 行、位置 {pos}）。输入 '|' 预测的是倒序的第一个数字"
              "（也就是源部分的最后一个数字），这个位置必须算进去。",
        "en": "One position too late: the separator's own position is missing (row {b}, position {pos}). The "
              "input '|' predicts the FIRST reversed digit (the last source digit), so that position must count.",
    },
    "l07.hint.mask_padding": {
        "vi": "Mặt nạ có cả vị trí mà mục tiêu là token đệm (hàng {b}, vị trí {pos}). Sau chữ số cuối cùng "
              "chẳng còn gì để dự đoán: loại các vị trí có targets == PAD.",
        "zh": "掩码包含了目标是填充词元的位置（第 {b} 行、位置 {pos}）。最后一个数字之后就没有东西可预测了："
              "去掉 targets == PAD 的位置。",
        "en": "The mask includes a position whose target is padding (row {b}, position {pos}). After the last "
              "digit there is nothing to predict: drop the positions where targets == PAD.",
    },
    "l07.hint.mask_fixed": {
        "vi": "Mặt nạ giống hệt nhau ở mọi hàng, như thể vị trí của dấu phân cách cố định. Nhưng n thay đổi "
              "từ hàng này sang hàng khác (6, 7 hay 8 chữ số), nên dấu phân cách cũng dịch theo: hãy tìm nó "
              "trong inputs của từng hàng.",
        "zh": "每一行的掩码都一模一样，好像分隔符的位置是固定的。可是 n 每行都不同（6、7 或 8 个数字），"
              "分隔符也跟着移动：请在每一行的 inputs 里找它。",
        "en": "The mask is the same on every row, as if the separator had a fixed position. But n changes from "
              "row to row (6, 7 or 8 digits) and the separator moves with it: find it in each row's inputs.",
    },
    "l07.hint.mask_missing": {
        "vi": "Còn thiếu vị trí cần tính (hàng {b}, vị trí {pos}): mục tiêu ở đó là một chữ số đảo ngược.",
        "zh": "漏掉了应该计算的位置（第 {b} 行、位置 {pos}）：那里的目标是一个倒序数字。",
        "en": "A position that must count is missing (row {b}, position {pos}): its target is a reversed digit.",
    },
    # forward with the causal mask
    "l07.ok.forward": {
        "vi": "Cùng logits với mô hình, và không rò rỉ: đổi một token phía sau không làm đổi dự đoán nào phía trước.",
        "zh": "与模型的 logits 相同，而且没有泄漏：改动后面的词元不会改变前面任何一个预测。",
        "en": "Same logits as the model, and no leak: changing a later token changes no earlier prediction.",
    },
    "l07.hint.fwd_tuple": {
        "vi": "Hàm trả về một tuple; hãy trả về riêng logits, kích thước (B, T, vocab).",
        "zh": "函数返回了一个 tuple；请只返回 logits，形状 (B, T, vocab)。",
        "en": "Your function returned a tuple; return the logits alone, shape (B, T, vocab).",
    },
    "l07.hint.fwd_shape": {
        "vi": "Logits phải có kích thước {expected} (B, T, vocab), nhưng hàm trả về {got}.",
        "zh": "logits 的形状应为 {expected}（B, T, vocab），但函数返回了 {got}。",
        "en": "The logits must have shape {expected} (B, T, vocab), but your function returned {got}.",
    },
    "l07.hint.fwd_no_mask": {
        "vi": "Không có mặt nạ nhân quả: mỗi truy vấn thấy cả token phía sau — mà token ngay sau vị trí t "
              "chính là đáp án của nó. Khi huấn luyện kiểu teacher forcing, mô hình như vậy chép đáp án và trông "
              "hoàn hảo, nhưng lúc tự sinh thì đáp án chưa tồn tại nên nó sụp. (Lưu ý: bản sao mô hình mà bộ "
              "kiểm tra đưa cho bạn có causal=False, nên gọi thẳng model(ids) cũng rò rỉ: hãy tự tạo mặt nạ "
              "và truyền cho từng khối.)",
        "zh": "没有因果掩码：每个查询都能看到后面的词元——而位置 t 后面紧跟的那个词元正是它的答案。用教师强制训练时，"
              "这样的模型会照抄答案、看上去完美；可一旦自己生成，答案还不存在，它就垮了。（注意：检查器交给你的模型副本 "
              "causal=False，所以直接调用 model(ids) 也会泄漏：请自己构造掩码并传给每一个块。）",
        "en": "No causal mask: every query sees the later tokens — and the token right after position t is its "
              "answer. Trained with teacher forcing, such a model copies the answer and looks perfect, but when it "
              "writes on its own the answer does not exist yet and it collapses. (Note: the copy of the model the "
              "checker hands you has causal=False, so calling model(ids) leaks too: build the mask yourself and "
              "pass it to every block.)",
    },
    "l07.hint.fwd_inverted": {
        "vi": "Mặt nạ bị đảo: truy vấn đang thấy TƯƠNG LAI thay vì quá khứ. Trong khóa học, True = được phép "
              "chú ý, và mặt nạ nhân quả là tam giác dưới (attnlab.causal_mask(T)).",
        "zh": "掩码反了：查询看到的是未来而不是过去。本课程里 True = 允许关注，因果掩码是下三角"
              "（attnlab.causal_mask(T)）。",
        "en": "The mask is inverted: the queries see the FUTURE instead of the past. In this course True = may "
              "attend, and the causal mask is the lower triangle (attnlab.causal_mask(T)).",
    },
    "l07.hint.fwd_leak": {
        "vi": "Rò rỉ: đổi token ở vị trí {j} làm thay đổi dự đoán ở vị trí {pos} < {j}. Một truy vấn không được "
              "thấy khóa nào ở sau nó — mọi khối đều cần mặt nạ nhân quả.",
        "zh": "泄漏：改动位置 {j} 的词元，位置 {pos} < {j} 的预测也变了。查询不能看到它后面的任何键——"
              "每一个块都需要因果掩码。",
        "en": "Leak: changing the token at position {j} changed the prediction at position {pos} < {j}. A query "
              "must not see any key after it — every block needs the causal mask.",
    },
    "l07.hint.fwd_no_pos": {
        "vi": "Thiếu mã hóa vị trí: x phải là model.pos(model.embed(ids)). Không có vị trí, mô hình không biết "
              "token nào đứng ở đâu — mà bài toán đảo ngược chỉ dựa vào vị trí.",
        "zh": "缺了位置编码：x 应为 model.pos(model.embed(ids))。没有位置，模型不知道哪个词元在哪里——"
              "而倒序任务恰恰只靠位置。",
        "en": "The positional encoding is missing: x must be model.pos(model.embed(ids)). Without positions the "
              "model cannot tell where a token stands — and reversal is all about positions.",
    },
    "l07.hint.fwd_no_norm": {
        "vi": "Thiếu lớp chuẩn hóa tầng cuối cùng: logits = model.head(model.norm(x)). Khối pre-LN không chuẩn "
              "hóa đầu ra của chính nó, nên mô hình cần một LayerNorm trước lớp head.",
        "zh": "缺了最后的层归一化：logits = model.head(model.norm(x))。pre-LN 块不会归一化自己的输出，"
              "所以在 head 之前还需要一个 LayerNorm。",
        "en": "The final layer normalization is missing: logits = model.head(model.norm(x)). Pre-LN blocks do not "
              "normalise their own output, so the model needs one LayerNorm before the head.",
    },
    "l07.hint.fwd_values": {
        "vi": "Không rò rỉ, nhưng logits khác với mô hình (sai lệch lớn nhất {diff}). Thứ tự là: embed → pos → "
              "từng khối (với mặt nạ) → norm → head.",
        "zh": "没有泄漏，但 logits 与模型不同（最大偏差 {diff}）。顺序应为：embed → pos → 每个块（带掩码）→ norm → head。",
        "en": "No leak, but the logits differ from the model's (largest difference {diff}). The order is: embed → "
              "pos → every block (with the mask) → norm → head.",
    },
    # which head
    "l07.ok.head": {
        "vi": "Tầng {layer}, đầu {head} đặt khoảng {pct}% trọng số lên vị trí đối xứng: đó là một đầu đảo ngược.",
        "zh": "第 {layer} 层第 {head} 个头把约 {pct}% 的权重放在镜像位置上：它就是一个负责倒序的头。",
        "en": "Layer {layer}, head {head} puts about {pct}% of its weight on the mirror position: a reversal head.",
    },
    "l07.hint.head_format": {
        "vi": "Hãy trả lời bằng một cặp số nguyên (tầng, đầu), ví dụ (1, 3); nhận được {got}.",
        "zh": "请用一对整数（层, 头）作答，例如 (1, 3)；收到的是 {got}。",
        "en": "Answer with a pair of integers (layer, head), e.g. (1, 3); got {got}.",
    },
    "l07.hint.head_range": {
        "vi": "Mô hình có {layers} tầng và {heads} đầu mỗi tầng, đếm từ 1 như tiêu đề các hình; ({layer}, {head}) "
              "nằm ngoài phạm vi.",
        "zh": "模型有 {layers} 层、每层 {heads} 个头，和图标题一样从 1 开始数；({layer}, {head}) 超出了范围。",
        "en": "The model has {layers} layers of {heads} heads, counted from 1 as in the figure titles; "
              "({layer}, {head}) is out of range.",
    },
    "l07.hint.head_zero_based": {
        "vi": "Gần đúng rồi — nhưng tiêu đề các hình đếm từ 1, không phải từ 0 như chỉ số Python.",
        "zh": "差一点——图标题是从 1 开始数的，而不是像 Python 下标那样从 0 开始。",
        "en": "Almost — but the figure titles count from 1, not from 0 like Python indices.",
    },
    "l07.hint.head_layer": {
        "vi": "Không đầu nào của tầng {layer} vẽ được đường chéo phụ rõ nét. Hãy xem các hàng sau dấu '|' trong "
              "hình của tầng kia.",
        "zh": "第 {layer} 层没有哪个头画出清晰的反对角线。请看另一层图中 '|' 之后的那些行。",
        "en": "No head of layer {layer} draws a clear anti-diagonal. Look at the rows after '|' in the other "
              "layer's figures.",
    },
    "l07.hint.head_shifted": {
        "vi": "Nhìn kỹ đấy! Tầng {layer} · đầu {head} cũng vẽ một đường chéo phụ, nhưng lệch một cột sang phải: "
              "truy vấn t nhìn khóa 2n−t — bản gốc trong phần nguồn của chính token nó vừa đọc — chứ không phải "
              "khóa 2n−1−t chứa token nó phải viết. So hàng của dấu '|' ở hai đầu: đầu cần tìm nhìn chữ số nguồn "
              "cuối cùng, không phải chính dấu '|'.",
        "zh": "观察得很仔细！第 {layer} 层第 {head} 个头也画出了一条反对角线，但向右偏了一列：查询 t 看的是键 2n−t"
              "——它刚读到的那个词元在源部分里的原件——而不是存放它要写的词元的键 2n−1−t。对比两个头里 '|' "
              "那一行：要找的头看的是最后一个源数字，而不是 '|' 自己。",
        "en": "Good eye! Layer {layer} · head {head} draws an anti-diagonal too, but one column to the right: query t "
              "looks at key 2n−t — the source original of the token it has just read — not at key 2n−1−t, which "
              "holds the token it must write. Compare the row of '|' in both heads: the head you want looks at the "
              "last source digit, not at '|' itself.",
    },
    "l07.hint.head_other": {
        "vi": "Đúng tầng, nhưng tầng {layer} · đầu {head} chỉ đặt khoảng {pct}% trọng số lên vị trí đối xứng "
              "(cần ≥ {need}%). Hãy tìm ô sáng chạy từ góc dưới trái lên trong khối hàng sau '|'.",
        "zh": "层对了，但第 {layer} 层第 {head} 个头只把约 {pct}% 的权重放在镜像位置上（需要 ≥ {need}%）。"
              "请在 '|' 之后的那些行里，找从左下角往上延伸的亮格。",
        "en": "Right layer, but layer {layer} · head {head} puts only about {pct}% of its weight on the mirror "
              "position (≥ {need}% needed). Look for bright cells running up from the bottom left in the rows "
              "after '|'.",
    },
})


def _shape(x) -> str:
    return "(" + ", ".join(str(n) for n in x) + ")"


def _first(mask: torch.Tensor) -> dict:
    """Row and position of the first True of a (B, T) mask."""
    b, pos = (int(i) for i in mask.nonzero()[0])
    return {"b": b, "pos": pos}


# ------------------------------------------------------------------------------------ loss mask
def _loss_mask_cases() -> list[torch.Tensor]:
    """Full rows: the lesson's held-out rows, every length 1..8 (no padding at n = 8), a shorter context."""
    return [
        tiny.heldout()[:64],
        tiny.make_batch(64, torch.Generator().manual_seed(1), tiny.TinyConfig(min_len=1, max_len=8)),
        tiny.make_batch(32, torch.Generator().manual_seed(2), tiny.TinyConfig(min_len=2, max_len=5)),
    ]


def _diagnose_loss_mask(fn):
    for ids in _loss_mask_cases():
        inputs, targets = tiny.split(ids)
        got = call_student(fn, inputs.clone(), targets.clone())
        if not isinstance(got, torch.Tensor):
            return False, "l07.hint.not_tensor", {"got": type(got).__name__}
        got = got.detach().cpu()
        B, T = inputs.shape
        if tuple(got.shape) != (B, T):
            key = "l07.hint.mask_shape_full" if tuple(got.shape) == tuple(ids.shape) else "l07.hint.mask_shape"
            return False, key, {"got": _shape(got.shape), "expected": _shape((B, T))}
        if got.dtype != torch.bool:
            return False, "l07.hint.mask_dtype", {"got": str(got.dtype)}
        want = tiny.loss_mask(inputs, targets)
        if torch.equal(got, want):
            continue
        n = tiny.lengths(ids)[:, None]                       # (B, 1)
        pos = torch.arange(T)[None]                          # (1, T)
        source, sep_pred, first, pad = pos < n - 1, pos == n - 1, pos == n, pos >= 2 * n
        extra, missing = got & ~want, want & ~got
        if torch.equal(got, ~want):
            return False, "l07.hint.mask_inverted", {}
        if (extra & source).any() and (extra & pad).any() and not missing.any():
            return False, "l07.hint.mask_all", {}
        if (got == got[:1]).all() and not (want == want[:1]).all():
            return False, "l07.hint.mask_fixed", {}
        if (extra & source).any():
            return False, "l07.hint.mask_source", _first(extra & source)
        if (extra & sep_pred).any():
            return False, "l07.hint.mask_early", _first(extra & sep_pred)
        if (missing & first).any():
            return False, "l07.hint.mask_late", _first(missing & first)
        if (extra & pad).any():
            return False, "l07.hint.mask_padding", _first(extra & pad)
        return False, "l07.hint.mask_missing", _first(missing)
    return True, "l07.ok.loss_mask", {}


def check_loss_mask(fn, lang: str | None = None):
    """``fn(inputs (B, T), targets (B, T)) -> (B, T)`` bool: where the loss counts."""
    def check():
        ok, key, fields = _diagnose_loss_mask(fn)
        return ok, t(key, lang, **fields)
    return run_check("l07.ex.loss_mask", check, lang)


# -------------------------------------------------------------------------------------- forward
def _manual_forward(model, ids, mask, positions: bool = True, final_norm: bool = True) -> torch.Tensor:
    x = model.embed(ids)
    if positions:
        x = model.pos(x)
    for block in model.blocks:
        x, _ = block(x, mask=mask)
    return model.head(model.norm(x) if final_norm else x)


def _leak(fn, probe, inputs, j: int):
    """Change the token at position j; return the first (row, position < j) whose logits moved, or None."""
    changed = inputs.clone()
    changed[:, j] = (changed[:, j] + 1) % 10
    with torch.no_grad():
        a = call_student(fn, probe, inputs.clone())
        b = call_student(fn, probe, changed)
    moved = ((a[:, :j] - b[:, :j]).abs().amax(-1) > 1e-5)        # (B, j)
    return _first(moved) if moved.any() else None


def _diagnose_forward(fn, model):
    ref = copy.deepcopy(model).cpu().float().eval()
    ref.causal = True
    probe = copy.deepcopy(ref)
    probe.causal = False                 # the student's function must bring its own mask
    inputs, _ = tiny.split(tiny.heldout(ref.config)[:16])
    B, T = inputs.shape
    real = inputs != tiny.PAD            # compare where there is a real token (padding rows are free)
    with torch.no_grad():
        got = call_student(fn, probe, inputs.clone())
        want, _ = ref(inputs)
    if isinstance(got, tuple):
        return False, "l07.hint.fwd_tuple", {}
    if not isinstance(got, torch.Tensor):
        return False, "l07.hint.not_tensor", {"got": type(got).__name__}
    got = got.detach().float().cpu()
    expected = (B, T, ref.config.vocab_size)
    if tuple(got.shape) != expected:
        return False, "l07.hint.fwd_shape", {"got": _shape(got.shape), "expected": _shape(expected)}

    def close(other):
        return torch.allclose(got[real], other[real], atol=1e-4, rtol=1e-4)

    if close(want):
        leak = _leak(fn, probe, inputs, j=T // 2)
        if leak is None:
            return True, "l07.ok.forward", {}
        return False, "l07.hint.fwd_leak", {"j": T // 2, **leak}
    causal = causal_mask(T)
    with torch.no_grad():
        if close(_manual_forward(ref, inputs, None)):
            return False, "l07.hint.fwd_no_mask", {}
        if close(_manual_forward(ref, inputs, ~causal)) or close(_manual_forward(ref, inputs, causal.transpose(-2, -1))):
            return False, "l07.hint.fwd_inverted", {}
        leak = _leak(fn, probe, inputs, j=T // 2)
        if leak is not None:
            return False, "l07.hint.fwd_leak", {"j": T // 2, **leak}
        if close(_manual_forward(ref, inputs, causal, positions=False)):
            return False, "l07.hint.fwd_no_pos", {}
        if close(_manual_forward(ref, inputs, causal, final_norm=False)):
            return False, "l07.hint.fwd_no_norm", {}
    diff = (got[real] - want[real]).abs().max().item()
    return False, "l07.hint.fwd_values", {"diff": f"{diff:.2g}"}


def check_forward(fn, model, lang: str | None = None):
    """``fn(model, ids (B, T)) -> logits (B, T, vocab)``: the forward pass by hand, causal mask included."""
    def check():
        ok, key, fields = _diagnose_forward(fn, model)
        return ok, t(key, lang, **fields)
    return run_check("l07.ex.forward", check, lang)


# ------------------------------------------------------------------------------------ which head
def echo_map(ids: torch.Tensor) -> torch.Tensor:
    """(B, T, T) bool: True at (query t, key 2n - t) for t = n .. 2n - 1: the anti-diagonal shifted one
    column right, where each target query finds the source original of its own input token."""
    n = tiny.lengths(ids)[:, None, None]
    T = ids.shape[1] - 1
    q = torch.arange(T)[None, :, None]
    k = torch.arange(T)[None, None, :]
    return (q >= n) & (q < 2 * n) & (q + k == 2 * n)


def _diagnose_reversal_head(model, answer):
    if answer is None or answer is Ellipsis:
        raise NotDone
    if (not isinstance(answer, (tuple, list)) or len(answer) != 2
            or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in answer)):
        return False, "l07.hint.head_format", {"got": repr(answer)}
    layer, head = (int(v) for v in answer)
    L, H = model.config.num_layers, model.config.num_heads
    mass = tiny.antidiagonal_mass(model)                              # (L, H)
    need = tiny.ANTI_DIAGONAL_THRESHOLD

    def good(l, h):
        return 1 <= l <= L and 1 <= h <= H and float(mass[l - 1, h - 1]) >= need

    if not (1 <= layer <= L and 1 <= head <= H):
        if 0 in (layer, head) and good(layer + 1, head + 1):        # Python indices, counted from 0
            return False, "l07.hint.head_zero_based", {}
        return False, "l07.hint.head_range", {"layers": L, "heads": H, "layer": layer, "head": head}
    pct = round(100 * float(mass[layer - 1, head - 1]))
    if good(layer, head):
        return True, "l07.ok.head", {"layer": layer, "head": head, "pct": pct}
    if float(tiny.attention_mass(model, echo_map)[layer - 1, head - 1]) >= need:
        return False, "l07.hint.head_shifted", {"layer": layer, "head": head}
    if float(mass[layer - 1].max()) < need:
        return False, "l07.hint.head_layer", {"layer": layer}
    return False, "l07.hint.head_other", {"layer": layer, "head": head, "pct": pct, "need": round(100 * need)}


def check_reversal_head(model, answer, lang: str | None = None):
    """``answer = (layer, head)``, counted from 1: a head whose weight sits on the mirror position."""
    def check():
        ok, key, fields = _diagnose_reversal_head(model, answer)
        return ok, t(key, lang, **fields)
    return run_check("l07.ex.head", check, lang)
