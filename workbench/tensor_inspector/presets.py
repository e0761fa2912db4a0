"""Presets of the Tensor inspector: the rank ladder and the lesson's examples."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    shape: tuple[int, ...]
    ops: str = ""
    dtype: str = "float32"
    story: str = ""


PRESETS: dict[str, Preset] = {
    "Scalar: rank 0": Preset((), "", story="A single number: shape (), no strides."),
    "Vector: rank 1": Preset((5,), "", story="One dimension; stride (1,): neighbours in memory."),
    "Matrix: rank 2": Preset((4, 6), "", story="Row-major: one step down a column skips a row."),
    "3-D stack": Preset((2, 3, 4), "", story="Two 3x4 matrices stacked: stride (12, 4, 1)."),
    "4-D batch of images (N,C,H,W)": Preset((2, 3, 4, 4), "",
                                            story="N images, C channels, H x W pixels."),
    "5-D clip (N,T,C,H,W)": Preset((2, 3, 3, 4, 4), "", story="Video: T frames per clip."),
    "Images to vectors: (32,3,28,28).view(32,-1)": Preset(
        (32, 3, 28, 28), "view(32, -1)", story="What a linear layer needs: one row per image."),
    "Add a batch dim: (3,224,224).unsqueeze(0)": Preset(
        (3, 224, 224), "unsqueeze(0)", story="A model expects a batch: a size-1 dim in front."),
    "Drop a size-1 dim: (64,1).squeeze(-1)": Preset(
        (64, 1), "squeeze(-1)", story="Model outputs (64, 1) vs labels (64,): squeeze them."),
    "Heads: (B,Seq,Heads,Dim).transpose(1,2)": Preset(
        (2, 5, 4, 3), "transpose(1, 2)", story="Attention moves the head dim before the sequence."),
    "NCHW to NHWC: permute(0,2,3,1)": Preset(
        (2, 3, 4, 5), "permute(0, 2, 3, 1)", story="Channels last: same memory, strides reordered."),
    "flatten(start_dim=1) on (16,3,64,64)": Preset(
        (16, 3, 64, 64), "flatten(start_dim=1)", story="Keep the batch dim, merge the rest."),
    "transpose then view: the error": Preset(
        (4, 6), "t().view(-1)", story="t() is a view with strides (1, 6): view(-1) cannot walk it."),
    "...the fix: reshape": Preset((4, 6), "t().reshape(-1)",
                                  story="reshape copies into fresh row-major memory."),
    "...the fix: contiguous() then view": Preset(
        (4, 6), "t().contiguous().view(-1)", story="contiguous() makes the copy, view then works."),
    "expand: stride 0": Preset((3, 1), "expand(3, 4)",
                               story="Four columns, one storage element per row."),
    "Slicing: [:, 1:3] and [::2]": Preset((4, 6), "[:, 1:3][::2]",
                                         story="Slices are views: offset and strides change."),
    "No negative strides: [::-1]": Preset((4, 6), "[::-1]",
                                          story="NumPy allows it; PyTorch refuses."),
    "(64,128) in bfloat16: how many bytes?": Preset((64, 128), "", "bfloat16",
                                                    story="numel x itemsize = nbytes."),
    "Too big to allocate: (10000,10000,10000)": Preset(
        (10000, 10000, 10000), "permute(2, 0, 1)", story="4 TB: facts from the meta device only."),
}
