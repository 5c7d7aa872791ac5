"""Copying attnlab's blocks into their PyTorch twins (nn.TransformerEncoderLayer / DecoderLayer)."""
import torch


@torch.no_grad()
def copy_ffn_norms(ours, ref, norms):
    """The feed-forward network and the named LayerNorms of a block, into the PyTorch layer ``ref``."""
    ref.linear1.load_state_dict(ours.feed_forward.linear1.state_dict())
    ref.linear2.load_state_dict(ours.feed_forward.linear2.state_dict())
    for name in norms:
        getattr(ref, name).load_state_dict(getattr(ours, name).state_dict())
