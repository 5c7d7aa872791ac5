"""Exercise checkers for lesson 05 (the Transformer block), and the words the lesson prints.

* ``check_post_ln_block(fn)``: ``fn(x, attn, ffn, norm1, norm2)`` is a post-LN block.
* ``check_pre_ln_block(fn)``: the same, pre-LN.
* ``check_masks(leaky_mask, safe_mask)``: ``leaky_mask(T)`` must fail the causality
  experiment, ``safe_mask(T)`` must pass it and be the causal mask.

The block checkers build an ``attnlab.TransformerBlock`` (dropout off, LayerNorms with
random, different gains and biases), hand its sublayers to the student's function and
compare with the block's own output; a wrong answer is matched against the typical
mistakes, each with its own hint.
"""
from __future__ import annotations

from typing import Callable

import torch

from ..block import TransformerBlock
from ..causality import causality_check
from ..i18n import register, t
from ..masks import causal_mask
from ._common import call_student, run_check

TOL = 1e-5

register({
    # ---------------------------------------------------------------- printed by the lesson
    "l05.params": {"vi": "số tham số: FFN {ffn}, chú ý đa đầu {attn}",
                   "zh": "参数量：FFN {ffn}，多头注意力 {attn}",
                   "en": "parameters: FFN {ffn}, multi-head attention {attn}"},
    "l05.ffn_matches": {"vi": "linear1 → ReLU → linear2 tính tay khớp với ffn(x)",
                        "zh": "手算 linear1 → ReLU → linear2 与 ffn(x) 一致",
                        "en": "linear1 → ReLU → linear2 by hand matches ffn(x)"},
    "l05.ffn_positionwise": {"vi": "FFN trên riêng token 3 = hàng 3 của FFN trên cả câu",
                             "zh": "单独对第 3 个词元做 FFN = 对整句做 FFN 后的第 3 行",
                             "en": "FFN of token 3 alone = row 3 of the FFN of the whole sentence"},
    "l05.res_row": {"vi": "L = {depth:>2}:  không có kết nối tắt {plain:.2e}   có kết nối tắt {res:.2e}",
                    "zh": "L = {depth:>2}：  无残差连接 {plain:.2e}   有残差连接 {res:.2e}",
                    "en": "L = {depth:>2}:  no residual {plain:.2e}   residual {res:.2e}"},
    "l05.ln_row": {"vi": "token {i}: trước LN trung bình {m0:+.4f}, độ lệch chuẩn {s0:.4f}"
                         "  →  sau LN trung bình {m1:+.4f}, độ lệch chuẩn {s1:.4f}",
                   "zh": "词元 {i}：LN 前均值 {m0:+.4f}、标准差 {s0:.4f}"
                         "  →  LN 后均值 {m1:+.4f}、标准差 {s1:.4f}",
                   "en": "token {i}: before LN mean {m0:+.4f}, std {s0:.4f}"
                         "  →  after LN mean {m1:+.4f}, std {s1:.4f}"},
    "l05.ln_manual": {"vi": "công thức tự viết (trung bình trên dim=-1) khớp với nn.LayerNorm",
                      "zh": "自己写的公式（在 dim=-1 上求均值）与 nn.LayerNorm 一致",
                      "en": "the formula by hand (mean over dim=-1) matches nn.LayerNorm"},
    "l05.drop_train": {"vi": "train(): các giá trị xuất hiện {values} — phần tử bị xóa thành 0, "
                             "phần còn lại nhân với 1/(1 − p) = 2",
                       "zh": "train()：出现的值 {values} —— 被丢弃的元素变成 0，其余乘以 1/(1 − p) = 2",
                       "en": "train(): values seen {values} — dropped elements become 0, "
                             "the rest are multiplied by 1/(1 − p) = 2"},
    "l05.drop_eval": {"vi": "eval(): dropout không làm gì, đầu ra = đầu vào",
                      "zh": "eval()：dropout 什么也不做，输出 = 输入",
                      "en": "eval(): dropout does nothing, output = input"},
    "l05.fresh_train": {"vi": "một khối vừa tạo đang ở chế độ train() (block.training là True)",
                        "zh": "刚创建的块处于 train() 模式（block.training 为 True）",
                        "en": "a freshly built block is in train() mode (block.training is True)"},
    "l05.train_differs": {"vi": "train(): cùng một đầu vào, hai lần chạy cho hai kết quả khác nhau",
                          "zh": "train()：同一个输入跑两次，结果不同",
                          "en": "train(): the same input twice gives two different outputs"},
    "l05.eval_same": {"vi": "eval(): hai lần chạy cho kết quả giống hệt nhau",
                      "zh": "eval()：跑两次，结果完全相同",
                      "en": "eval(): two runs give identical outputs"},
    "l05.pre_identity": {"vi": "pre-LN: khối có tầng con bằng 0 trả lại đúng đầu vào",
                         "zh": "pre-LN：子层输出为 0 的块原样返回输入",
                         "en": "pre-LN: a block whose sublayers output 0 returns its input unchanged"},
    "l05.post_not_identity": {"vi": "post-LN: khối có tầng con bằng 0 vẫn biến đổi đầu vào",
                              "zh": "post-LN：子层输出为 0 的块仍然改变了输入",
                              "en": "post-LN: a block whose sublayers output 0 still changes its input"},
    "l05.std_row": {"vi": "độ lệch chuẩn: đầu vào {x:.2f} · sau khối post-LN {post:.2f} · sau khối pre-LN {pre:.2f}",
                    "zh": "标准差：输入 {x:.2f} · 经过 post-LN 块 {post:.2f} · 经过 pre-LN 块 {pre:.2f}",
                    "en": "std: input {x:.2f} · after the post-LN block {post:.2f} · after the pre-LN block {pre:.2f}"},
    "l05.depth_row": {"vi": "N = {n:>2}: chuẩn gradient của khối cuối  post-LN {post:.2f}   pre-LN {pre:.2f}",
                      "zh": "N = {n:>2}：最后一个块的梯度范数  post-LN {post:.2f}   pre-LN {pre:.2f}",
                      "en": "N = {n:>2}: gradient norm of the last block  post-LN {post:.2f}   pre-LN {pre:.2f}"},
    "l05.fig.block": {"vi": "khối thứ", "zh": "第几个块", "en": "block"},
    "l05.fig.grad": {"vi": "chuẩn gradient của khối", "zh": "块的梯度范数", "en": "gradient norm of the block"},
    "l05.fig.std": {"vi": "độ lệch chuẩn của luồng chính", "zh": "残差流的标准差",
                    "en": "std of the residual stream"},
    "l05.fig.grad_title": {"vi": "Gradient lúc khởi tạo, N = {n} khối", "zh": "初始化时的梯度，N = {n} 个块",
                           "en": "Gradients at init, N = {n} blocks"},
    "l05.fig.std_title": {"vi": "Độ lớn của luồng chính sau mỗi khối", "zh": "每个块之后残差流的大小",
                          "en": "Scale of the residual stream after each block"},
    "l05.torch_params": {"vi": "cùng số tham số với nn.TransformerEncoderLayer",
                         "zh": "与 nn.TransformerEncoderLayer 的参数量相同",
                         "en": "same number of parameters as nn.TransformerEncoderLayer"},
    "l05.vs_torch": {"vi": "{variant}: attnlab.TransformerBlock = nn.TransformerEncoderLayer",
                     "zh": "{variant}：attnlab.TransformerBlock = nn.TransformerEncoderLayer",
                     "en": "{variant}: attnlab.TransformerBlock = nn.TransformerEncoderLayer"},
    "l05.mask_ours": {"vi": "attnlab (True = được nhìn):", "zh": "attnlab（True = 可以看）：",
                      "en": "attnlab (True = may attend):"},
    "l05.mask_torch": {"vi": "PyTorch src_mask (True = bị chặn):", "zh": "PyTorch src_mask（True = 被屏蔽）：",
                       "en": "PyTorch src_mask (True = blocked):"},
    "l05.shape_row": {"vi": "đầu vào {x} · mặt nạ {m} · đầu ra {y} · đầu ra khi quên mặt nạ {y0}",
                      "zh": "输入 {x} · 掩码 {m} · 输出 {y} · 忘了掩码时的输出 {y0}",
                      "en": "input {x} · mask {m} · output {y} · output without the mask {y0}"},
    "l05.shapes_equal": {"vi": "có mặt nạ hay không, kích thước đầu ra đều giống hệt đầu vào",
                         "zh": "无论有没有掩码，输出的形状都和输入一模一样",
                         "en": "with or without the mask, the output has exactly the input's shape"},
    "l05.train_false_alarm": {"vi": "train(): vị trí 0..8 vẫn đổi dù mặt nạ đúng — thủ phạm là dropout",
                              "zh": "train()：掩码没问题，位置 0..8 却变了 —— 罪魁祸首是 dropout",
                              "en": "train(): positions 0..8 move although the mask is right — dropout did it"},
    "l05.future_zero": {"vi": "ở mọi đầu, trọng số chú ý lên các token tương lai đúng bằng 0",
                        "zh": "每个头对未来词元的注意力权重都恰好为 0",
                        "en": "in every head, the attention weights on future tokens are exactly 0"},
    "l05.rows_sum": {"vi": "mỗi hàng trọng số có tổng bằng 1", "zh": "每一行权重之和为 1",
                     "en": "every row of weights sums to 1"},
    "l05.heads_title": {"vi": "Trọng số chú ý của khối (mặt nạ nhân quả), từng đầu",
                        "zh": "块内各个头的注意力权重（因果掩码）",
                        "en": "The block's attention weights per head (causal mask)"},
    # ---------------------------------------------------------------- exercises
    "l05.ex.post_ln": {"vi": "khối post-LN", "zh": "post-LN 块", "en": "post-LN block"},
    "l05.ex.pre_ln": {"vi": "khối pre-LN", "zh": "pre-LN 块", "en": "pre-LN block"},
    "l05.ex.masks": {"vi": "mặt nạ rò rỉ và mặt nạ an toàn", "zh": "泄露的掩码与安全的掩码",
                     "en": "a leaky mask and a safe mask"},
    "l05.ok.post_ln": {
        "vi": "Khối của bạn khớp với attnlab.TransformerBlock(norm_first=False) trên {n} đầu vào.",
        "zh": "你的块在 {n} 组输入上都与 attnlab.TransformerBlock(norm_first=False) 一致。",
        "en": "Your block matches attnlab.TransformerBlock(norm_first=False) on {n} inputs."},
    "l05.ok.pre_ln": {
        "vi": "Khối của bạn khớp với attnlab.TransformerBlock(norm_first=True) trên {n} đầu vào.",
        "zh": "你的块在 {n} 组输入上都与 attnlab.TransformerBlock(norm_first=True) 一致。",
        "en": "Your block matches attnlab.TransformerBlock(norm_first=True) on {n} inputs."},
    "l05.ok.masks": {
        "vi": "Mặt nạ rò rỉ làm các vị trí trước đổi tới {leak:.4f}; mặt nạ an toàn giữ chúng đứng yên "
              "({safe:.2e}). Phép thử phân biệt được hai mặt nạ — kích thước thì không.",
        "zh": "泄露的掩码让前面的位置变化了 {leak:.4f}；安全的掩码让它们纹丝不动（{safe:.2e}）。"
              "这个实验能区分两个掩码——形状却不能。",
        "en": "The leaky mask moved earlier positions by {leak:.4f}; the safe mask kept them still "
              "({safe:.2e}). The experiment tells the two apart — the shapes cannot."},
    "l05.hint.not_tensor": {
        "vi": "Hàm cần trả về một tensor (B, T, D), nhưng lại trả về {got}.",
        "zh": "函数应当返回一个 (B, T, D) 张量，却返回了 {got}。",
        "en": "The function must return a (B, T, D) tensor, but returned {got}."},
    "l05.hint.shape": {
        "vi": "Kích thước sai: cần {expected}, nhận được {got}. Khối Transformer không đổi kích thước đầu vào.",
        "zh": "形状不对：应为 {expected}，得到 {got}。Transformer 块不改变输入的形状。",
        "en": "Wrong shape: expected {expected}, got {got}. A Transformer block keeps its input's shape."},
    "l05.hint.post_is_pre": {
        "vi": "Bạn chuẩn hóa TRƯỚC khi cộng kết nối tắt — đó là pre-LN. Post-LN cộng trước: "
              "x + Sublayer(x), rồi mới đưa cả tổng qua LayerNorm.",
        "zh": "你在残差相加之前就做了归一化——那是 pre-LN。post-LN 要先相加 x + Sublayer(x)，"
              "再把整个和送进 LayerNorm。",
        "en": "You normalise BEFORE the residual add — that is pre-LN. Post-LN adds first, "
              "x + Sublayer(x), then puts the whole sum through LayerNorm."},
    "l05.hint.norm_branch": {
        "vi": "Bạn chỉ chuẩn hóa đầu ra của tầng con rồi mới cộng với x. Trong post-LN, LayerNorm "
              "áp lên cả tổng x + Sublayer(x), tức là lên chính luồng chính.",
        "zh": "你只对子层的输出做了归一化，再与 x 相加。post-LN 的 LayerNorm 作用在整个和 "
              "x + Sublayer(x) 上，也就是残差流本身。",
        "en": "You normalise only the sublayer's output and then add x. In post-LN, LayerNorm acts "
              "on the whole sum x + Sublayer(x), the residual stream itself."},
    "l05.hint.no_residual": {
        "vi": "Thiếu kết nối tắt: ít nhất một tầng con thay thế hẳn đầu vào của nó. Mỗi tầng con phải "
              "được CỘNG vào luồng chính: x + Sublayer(...).",
        "zh": "缺了残差连接：至少有一个子层直接取代了它的输入。每个子层的结果都要"
              "“加”回残差流：x + Sublayer(...)。",
        "en": "A residual connection is missing: at least one sublayer replaces its input. Each "
              "sublayer's result must be ADDED to the stream: x + Sublayer(...)."},
    "l05.hint.post.ln_once": {
        "vi": "Chỉ có một LayerNorm được dùng. Post-LN chuẩn hóa sau MỖI tầng con: norm1 sau chú ý, "
              "norm2 sau FFN.",
        "zh": "只用了一个 LayerNorm。post-LN 在每个子层之后都要归一化：注意力之后用 norm1，FFN 之后用 norm2。",
        "en": "Only one LayerNorm is applied. Post-LN normalises after EACH sublayer: norm1 after "
              "attention, norm2 after the FFN."},
    "l05.hint.pre.ln_once": {
        "vi": "Chỉ có một LayerNorm được dùng. Pre-LN chuẩn hóa đầu vào của MỖI tầng con: norm1 trước "
              "chú ý, norm2 trước FFN.",
        "zh": "只用了一个 LayerNorm。pre-LN 要对每个子层的输入做归一化：注意力之前用 norm1，FFN 之前用 norm2。",
        "en": "Only one LayerNorm is applied. Pre-LN normalises the input of EACH sublayer: norm1 before "
              "attention, norm2 before the FFN."},
    "l05.hint.norms_mixed": {
        "vi": "Các LayerNorm bị dùng nhầm chỗ: norm1 thuộc về tầng chú ý, norm2 thuộc về FFN "
              "(hai lớp có γ, β riêng, không dùng chung).",
        "zh": "LayerNorm 用错了位置：norm1 属于注意力子层，norm2 属于 FFN（两者各有自己的 γ、β，不能共用）。",
        "en": "The LayerNorms are in the wrong places: norm1 belongs to attention, norm2 to the FFN "
              "(each has its own γ, β; they are not shared)."},
    "l05.hint.ffn_input": {
        "vi": "Tầng con thứ hai phải làm việc trên kết quả của tầng thứ nhất: cả đầu vào của FFN lẫn "
              "phần được cộng tắt đều là kết quả đó, không phải x ban đầu.",
        "zh": "第二个子层要在第一个子层的结果上工作：FFN 的输入和残差相加的那一项都是这个结果，而不是最初的 x。",
        "en": "The second sublayer works on the first one's result: both the FFN's input and the "
              "residual it is added to are that result, not the original x."},
    "l05.hint.pre_is_post": {
        "vi": "Đây là post-LN (chuẩn hóa sau khi cộng). Pre-LN chuẩn hóa ĐẦU VÀO của tầng con: "
              "x + Sublayer(LN(x)).",
        "zh": "这是 post-LN（相加之后再归一化）。pre-LN 归一化的是子层的输入：x + Sublayer(LN(x))。",
        "en": "This is post-LN (normalise after the add). Pre-LN normalises the sublayer's INPUT: "
              "x + Sublayer(LN(x))."},
    "l05.hint.pre.norm_stream": {
        "vi": "Bạn đã chuẩn hóa bản thân luồng chính (ghi đè x bằng LN(x)) rồi mới cộng. Trong pre-LN chỉ "
              "đầu vào của tầng con được chuẩn hóa; phần cộng tắt vẫn là x nguyên vẹn.",
        "zh": "你把残差流本身归一化了（用 LN(x) 覆盖了 x），然后才相加。pre-LN 只归一化子层的输入；"
              "残差相加的那一项仍是原封不动的 x。",
        "en": "You normalised the residual stream itself (overwrote x with LN(x)) before adding. In "
              "pre-LN only the sublayer's input is normalised; the residual term is the untouched x."},
    "l05.hint.generic_block": {
        "vi": "Kết quả lệch tới {diff:.2e} so với khối chuẩn. Viết lại từng bước theo công thức trong bài, "
              "mỗi tầng con một dòng.",
        "zh": "结果与标准块相差 {diff:.2e}。按课文中的公式一步一步重写，每个子层一行。",
        "en": "The result is off by {diff:.2e} from the reference block. Rewrite it step by step from "
              "the lesson's formula, one line per sublayer."},
    "l05.hint.mask_type": {
        "vi": "{which}(T) phải trả về một tensor kiểu bool (True = được nhìn), nhưng lại là {got}.",
        "zh": "{which}(T) 应返回 bool 类型的张量（True = 可以看），却得到了 {got}。",
        "en": "{which}(T) must return a bool tensor (True = may attend), got {got}."},
    "l05.hint.mask_shape": {
        "vi": "{which}({T}) có kích thước {got}; cần (T, T) = ({T}, {T}) hoặc (1, 1, {T}, {T}).",
        "zh": "{which}({T}) 的形状是 {got}；应为 (T, T) = ({T}, {T}) 或 (1, 1, {T}, {T})。",
        "en": "{which}({T}) has shape {got}; expected (T, T) = ({T}, {T}) or (1, 1, {T}, {T})."},
    "l05.hint.leaky_is_safe": {
        "vi": "leaky_mask không rò rỉ: với T = {T}, các vị trí trước không hề đổi. Hãy để ít nhất một "
              "vị trí được nhìn thấy một token đứng SAU nó.",
        "zh": "leaky_mask 并没有泄露：T = {T} 时前面的位置完全没变。至少让一个位置能看到它后面的词元。",
        "en": "leaky_mask does not leak: with T = {T} the earlier positions did not move. Let at least "
              "one position see a token AFTER it."},
    "l05.hint.safe_upper": {
        "vi": "safe_mask là tam giác TRÊN: hàng i đang được nhìn các khóa i..T−1, tức là tương lai. "
              "Mặt nạ nhân quả là tam giác dưới: hàng i nhìn các khóa 0..i.",
        "zh": "safe_mask 是上三角：第 i 行看的是键 i..T−1，也就是未来。因果掩码是下三角：第 i 行看键 0..i。",
        "en": "safe_mask is UPPER triangular: row i sees keys i..T−1, the future. The causal mask is "
              "lower triangular: row i sees keys 0..i."},
    "l05.hint.safe_inverted": {
        "vi": "safe_mask bị đảo quy ước: True đang đánh dấu chỗ bị chặn (quy ước của PyTorch). "
              "Trong attnlab, True = được nhìn.",
        "zh": "safe_mask 的约定反了：True 标记的是被屏蔽的位置（那是 PyTorch 的约定）。在 attnlab 中 True = 可以看。",
        "en": "safe_mask has the convention reversed: True marks blocked places (PyTorch's convention). "
              "In attnlab, True = may attend."},
    "l05.hint.safe_leaks": {
        "vi": "safe_mask rò rỉ: với T = {T}, đổi token cuối làm các vị trí trước đổi tới {drift:.4f}. "
              "Hàng i không được nhìn bất kỳ khóa j > i nào.",
        "zh": "safe_mask 泄露了：T = {T} 时，改动最后一个词元让前面的位置变化了 {drift:.4f}。"
              "第 i 行不能看任何 j > i 的键。",
        "en": "safe_mask leaks: with T = {T}, changing the last token moved earlier positions by "
              "{drift:.4f}. Row i must not see any key j > i."},
    "l05.hint.safe_no_diagonal": {
        "vi": "safe_mask không rò rỉ nhưng che cả đường chéo: token không được nhìn chính nó, và token "
              "đầu tiên chẳng nhìn được gì. Mặt nạ nhân quả cho hàng i nhìn các khóa 0..i, tính cả i.",
        "zh": "safe_mask 没有泄露，但把对角线也遮住了：词元看不到自己，第一个词元什么都看不到。"
              "因果掩码让第 i 行看键 0..i，包括 i 本身。",
        "en": "safe_mask does not leak but hides the diagonal too: a token cannot see itself and the "
              "first token sees nothing. The causal mask lets row i see keys 0..i, i included."},
    "l05.hint.safe_too_strict": {
        "vi": "safe_mask không rò rỉ nhưng che quá nhiều: có vị trí không được nhìn một token ở quá khứ. "
              "Mặt nạ nhân quả chỉ che tương lai, hàng i nhìn mọi khóa 0..i.",
        "zh": "safe_mask 没有泄露，但遮得太多：有的位置看不到过去的词元。因果掩码只遮未来，第 i 行能看所有键 0..i。",
        "en": "safe_mask does not leak but hides too much: some position cannot see a past token. "
              "The causal mask hides only the future; row i sees every key 0..i."},
})


# ------------------------------------------------------------------------- the block exercises

def _make_block(norm_first: bool, seed: int, d_model: int = 16, num_heads: int = 4, d_ff: int = 32):
    """A TransformerBlock without dropout, whose two LayerNorms have distinct random γ, β."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)                     # the caller keeps the global state (fork_rng)
    block = TransformerBlock(d_model, num_heads, d_ff, dropout=0.0, norm_first=norm_first).eval()
    with torch.no_grad():
        for norm in (block.norm1, block.norm2):
            norm.weight.copy_(1.0 + 0.5 * torch.randn(d_model, generator=g))
            norm.bias.copy_(0.5 * torch.randn(d_model, generator=g))
    return block


def _sublayers(block):
    """What the student's function receives: attn(h) (causal mask inside), ffn, norm1, norm2."""
    def attn(h):
        return block.attention(h, mask=causal_mask(h.shape[1], device=h.device), need_weights=False)[0]
    return attn, block.feed_forward, block.norm1, block.norm2


def _cases():
    """(seed, B, T) and an input scale/shift far from LayerNorm's output, so the variants differ."""
    return [(0, 2, 5), (1, 1, 7), (2, 3, 4)]


# Typical mistakes, as functions of (x, A, F, N1, N2), grouped by the hint they deserve.
_POST_MISTAKES = {
    "l05.hint.post_is_pre": [
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(x + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(N1(x) + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(h) + F(N2(h)))(N1(x) + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(h) + F(h))(N1(x) + A(x)),
    ],
    "l05.hint.norm_branch": [
        lambda x, A, F, N1, N2: (lambda h: h + N2(F(h)))(x + N1(A(x))),
    ],
    "l05.hint.no_residual": [
        lambda x, A, F, N1, N2: N2(F(N1(A(x)))),
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(h)))(N1(A(x))),
        lambda x, A, F, N1, N2: N2(F(N1(x + A(x)))),
    ],
    "l05.hint.post.ln_once": [
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(h)))(x + A(x)),
        lambda x, A, F, N1, N2: (lambda h: N1(h + F(h)))(x + A(x)),
        lambda x, A, F, N1, N2: (lambda h: h + F(h))(N1(x + A(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(h))(N2(x + A(x))),
    ],
    "l05.hint.norms_mixed": [
        lambda x, A, F, N1, N2: (lambda h: N1(h + F(h)))(N1(x + A(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(h)))(N2(x + A(x))),
        lambda x, A, F, N1, N2: (lambda h: N1(h + F(h)))(N2(x + A(x))),
    ],
    "l05.hint.ffn_input": [
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(x)))(N1(x + A(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(x + F(h)))(N1(x + A(x))),
    ],
}

_PRE_MISTAKES = {
    "l05.hint.pre_is_post": [
        lambda x, A, F, N1, N2: (lambda h: N2(h + F(h)))(N1(x + A(x))),
    ],
    "l05.hint.pre.norm_stream": [
        lambda x, A, F, N1, N2: (lambda h: (lambda g: g + F(g))(N2(h)))((lambda n: n + A(n))(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(N1(x) + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: N2(h) + F(N2(h)))(x + A(N1(x))),
    ],
    "l05.hint.no_residual": [
        lambda x, A, F, N1, N2: F(N2(A(N1(x)))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(A(N1(x))),
        lambda x, A, F, N1, N2: F(N2(x + A(N1(x)))),
    ],
    "l05.hint.pre.ln_once": [
        lambda x, A, F, N1, N2: (lambda h: h + F(h))(x + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(x + A(x)),
        lambda x, A, F, N1, N2: (lambda h: h + F(N1(h)))(x + A(x)),
    ],
    "l05.hint.norms_mixed": [
        lambda x, A, F, N1, N2: (lambda h: h + F(N1(h)))(x + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(h)))(x + A(N2(x))),
        lambda x, A, F, N1, N2: (lambda h: h + F(N1(h)))(x + A(N2(x))),
    ],
    "l05.hint.ffn_input": [
        lambda x, A, F, N1, N2: (lambda h: h + F(N2(x)))(x + A(N1(x))),
        lambda x, A, F, N1, N2: (lambda h: x + F(N2(h)))(x + A(N1(x))),
    ],
}


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a.detach().double() - b.detach().double()).abs().max().item()


def _diagnose_block(fn: Callable, norm_first: bool, mistakes: dict) -> tuple[bool, str, dict]:
    """Run ``fn`` on several inputs; (True, ok key, fields) or (False, hint key, fields).

    Raises NotDone (through call_student) while the TODO is untouched.
    """
    runs = []                                                   # (student output, sublayers, x)
    worst = 0.0
    for seed, B, T in _cases():
        block = _make_block(norm_first, seed)
        g = torch.Generator().manual_seed(100 + seed)
        x = 2.0 * torch.randn(B, T, block.norm1.normalized_shape[0], generator=g) + 0.5
        subs = _sublayers(block)
        with torch.no_grad():
            expected, _ = block(x, mask=causal_mask(T))
            got = call_student(fn, x.clone(), *subs)
        if not isinstance(got, torch.Tensor):
            return False, "l05.hint.not_tensor", {"got": type(got).__name__}
        if got.shape != expected.shape:
            return False, "l05.hint.shape", {"expected": tuple(expected.shape), "got": tuple(got.shape)}
        worst = max(worst, _max_diff(got, expected))
        runs.append((got, subs, x))
    if worst <= TOL:
        return True, "l05.ok.pre_ln" if norm_first else "l05.ok.post_ln", {"n": len(runs)}
    for key, variants in mistakes.items():
        for variant in variants:
            with torch.no_grad():
                if all(_max_diff(got, variant(x, *subs)) <= TOL for got, subs, x in runs):
                    return False, key, {}
    return False, "l05.hint.generic_block", {"diff": worst}


def diagnose_post_ln_block(fn: Callable) -> tuple[bool, str, dict]:
    """(verdict, message key, fields) for a post-LN block ``fn(x, attn, ffn, norm1, norm2)``."""
    return _diagnose_block(fn, False, _POST_MISTAKES)


def diagnose_pre_ln_block(fn: Callable) -> tuple[bool, str, dict]:
    """(verdict, message key, fields) for a pre-LN block ``fn(x, attn, ffn, norm1, norm2)``."""
    return _diagnose_block(fn, True, _PRE_MISTAKES)


def _checker(diagnose: Callable, lang: str | None):
    def check():
        with torch.random.fork_rng(devices=[]):   # leave the notebook's random state alone
            ok, key, fields = diagnose()
        return ok, t(key, lang, **fields)
    return check


def check_post_ln_block(fn: Callable, lang: str | None = None) -> bool | None:
    """Exercise 1: ``fn(x, attn, ffn, norm1, norm2)`` must compute the post-LN block
    x = LN1(x + attn(x)); x = LN2(x + ffn(x)). Prints the verdict; True/False/None."""
    return run_check("l05.ex.post_ln", _checker(lambda: diagnose_post_ln_block(fn), lang), lang)


def check_pre_ln_block(fn: Callable, lang: str | None = None) -> bool | None:
    """Exercise 2: ``fn(x, attn, ffn, norm1, norm2)`` must compute the pre-LN block
    x = x + attn(LN1(x)); x = x + ffn(LN2(x)). Prints the verdict; True/False/None."""
    return run_check("l05.ex.pre_ln", _checker(lambda: diagnose_pre_ln_block(fn), lang), lang)


# ------------------------------------------------------------------------- the mask exercise

def _student_mask(fn: Callable, which: str, T: int):
    """The student's mask for length T, or (None, hint key, fields) if it is not a usable mask."""
    m = call_student(fn, T)
    if not isinstance(m, torch.Tensor) or m.dtype != torch.bool:
        got = f"{type(m).__name__}" if not isinstance(m, torch.Tensor) else f"dtype {m.dtype}"
        return None, "l05.hint.mask_type", {"which": which, "got": got}
    if tuple(m.shape) not in ((T, T), (1, T, T), (1, 1, T, T)):
        return None, "l05.hint.mask_shape", {"which": which, "T": T, "got": tuple(m.shape)}
    return m.reshape(T, T), None, None


def diagnose_masks(leaky_mask: Callable, safe_mask: Callable) -> tuple[bool, str, dict]:
    """(verdict, message key, fields) for the pair of masks, checked for T = 10 and T = 6 with
    the causality experiment of seed 000 (``attnlab.causality_check``)."""
    leaks, safes = [], []
    for T in (10, 6):
        leaky, key, fields = _student_mask(leaky_mask, "leaky_mask", T)
        if leaky is None:
            return False, key, fields
        safe, key, fields = _student_mask(safe_mask, "safe_mask", T)
        if safe is None:
            return False, key, fields
        reference = causal_mask(T)[0, 0]
        r_leaky = causality_check(mask=leaky, seq_len=T, verbose=False)
        r_safe = causality_check(mask=safe, seq_len=T, verbose=False)
        if r_leaky.earlier_drift < r_leaky.tol:
            return False, "l05.hint.leaky_is_safe", {"T": T}
        if r_safe.earlier_drift >= r_safe.tol:
            if torch.equal(safe, ~reference):
                return False, "l05.hint.safe_inverted", {}
            if torch.equal(safe, reference.T):
                return False, "l05.hint.safe_upper", {}
            return False, "l05.hint.safe_leaks", {"T": T, "drift": r_safe.earlier_drift}
        if not torch.equal(safe, reference):
            if not safe.diagonal().all():
                return False, "l05.hint.safe_no_diagonal", {}
            return False, "l05.hint.safe_too_strict", {}
        leaks.append(r_leaky.earlier_drift)
        safes.append(r_safe.earlier_drift)
    return True, "l05.ok.masks", {"leak": leaks[0], "safe": safes[0]}


def check_masks(leaky_mask: Callable, safe_mask: Callable, lang: str | None = None) -> bool | None:
    """Exercise 3: ``leaky_mask(T)`` must fail the causality experiment and ``safe_mask(T)``
    must pass it (and be the causal mask). Prints the verdict; True/False/None."""
    return run_check("l05.ex.masks", _checker(lambda: diagnose_masks(leaky_mask, safe_mask), lang), lang)
