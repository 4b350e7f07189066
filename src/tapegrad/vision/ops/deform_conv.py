"""Deformable convolution (Dai et al. 2017; with ``mask``, "v2", Zhu et al. 2018): a convolution
whose kernel taps are displaced by learned per-position offsets (and, in v2, scaled by a learned
mask), the input read by bilinear interpolation at the displaced points.

Computed as torchvision's CPU kernel computes it: the displaced samples gathered into columns
("im2col"), one matrix product per weight group; the backward scatters the columns' gradient
back onto the pixels (each within one pixel of a sample, weight ``(1 - |dy|) (1 - |dx|)``),
and differentiates the bilinear interpolation with respect to the offsets.
"""

import math

import numpy as np

from ... import empty, nn, zeros
from ..._tensor import Tensor
from ...nn import init
from ...nn.modules.utils import _pair
from ...nn.parameter import Parameter
from ...ops._registry import defop


def _out_size(size: int, pad: int, dilation: int, kernel: int, stride: int) -> int:
    return (size + 2 * pad - (dilation * (kernel - 1) + 1)) // stride + 1


def _sample_points(offset: np.ndarray, channels: int, groups: int, kh: int, kw: int,
                   stride: tuple, pad: tuple, dilation: tuple) -> tuple:
    """The (B, C, kh, kw, oh, ow) coordinates each tap of each output position reads:
    ``(o * stride - pad) + k * dilation + offset``, the offset of the channel's group."""
    b, _, oh, ow = offset.shape
    T = offset.dtype.type
    off = offset.reshape(b, groups, kh, kw, 2, oh, ow)
    per_group = channels // groups
    base_y = (np.arange(oh) * stride[0] - pad[0])[None, :] + (np.arange(kh) * dilation[0])[:, None]
    base_x = (np.arange(ow) * stride[1] - pad[1])[None, :] + (np.arange(kw) * dilation[1])[:, None]
    y = base_y[:, None, :, None].astype(T) + off[:, :, :, :, 0]  # (B, G, kh, kw, oh, ow)
    x = base_x[None, :, None, :].astype(T) + off[:, :, :, :, 1]
    y = np.repeat(y, per_group, axis=1)  # (B, C, kh, kw, oh, ow)
    x = np.repeat(x, per_group, axis=1)
    return y, x


def _group_mask(mask: np.ndarray, use_mask: bool, channels: int, groups: int, kh: int,
                kw: int, like: np.ndarray) -> np.ndarray:
    """The mask value of each (B, C, kh, kw, oh, ow) tap (1 without a mask)."""
    if not use_mask:
        return np.ones((), dtype=like.dtype)
    b, _, oh, ow = mask.shape
    m = mask.reshape(b, groups, kh, kw, oh, ow)
    return np.repeat(m, channels // groups, axis=1)


def _gather(planes: np.ndarray, rows: np.ndarray, cols: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """planes (B, C, H, W) read at integer (rows, cols) of shape (B, C, ...), 0 where not ok."""
    b, c, h, w = planes.shape
    flat = np.where(ok, rows * w + cols, 0).reshape(b, c, -1)
    values = np.take_along_axis(planes.reshape(b, c, h * w), flat, axis=2).reshape(rows.shape)
    return np.where(ok, values, planes.dtype.type(0))


def _bilinear(planes: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Bilinear interpolation, 0 outside (-1, size) and for neighbours off the map:
    ``w1 v1 + w2 v2 + w3 v3 + w4 v4`` with ``w = (1 - ly or ly) * (1 - lx or lx)``."""
    _, _, height, width = planes.shape
    T = planes.dtype.type
    inside = ~((y <= -1) | (height <= y) | (x <= -1) | (width <= x))
    y0 = np.floor(y).astype(np.int64)
    x0 = np.floor(x).astype(np.int64)
    y1, x1 = y0 + 1, x0 + 1
    ly = y - y0.astype(y.dtype)
    lx = x - x0.astype(x.dtype)
    hy = T(1) - ly
    hx = T(1) - lx
    v1 = _gather(planes, y0, x0, inside & (y0 >= 0) & (x0 >= 0))
    v2 = _gather(planes, y0, x1, inside & (y0 >= 0) & (x1 <= width - 1))
    v3 = _gather(planes, y1, x0, inside & (y1 <= height - 1) & (x0 >= 0))
    v4 = _gather(planes, y1, x1, inside & (y1 <= height - 1) & (x1 <= width - 1))
    val = hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4
    return np.where(inside, val, T(0))


def _columns(input: np.ndarray, offset: np.ndarray, mask: np.ndarray, kh: int, kw: int,
             stride: tuple, pad: tuple, dilation: tuple, groups: int,
             use_mask: bool) -> np.ndarray:
    """im2col of the displaced taps: (B, C, kh, kw, oh, ow), masked."""
    channels = input.shape[1]
    y, x = _sample_points(offset, channels, groups, kh, kw, stride, pad, dilation)
    m = _group_mask(mask, use_mask, channels, groups, kh, kw, input)
    return m * _bilinear(input, y, x)


def _grouped_matmul(weight: np.ndarray, cols: np.ndarray, groups: int) -> np.ndarray:
    """out[b, o, p] = sum over the group's (c, i, j) of weight[o, c, i, j] cols[b, c, i, j, p]."""
    b = cols.shape[0]
    cout = weight.shape[0]
    w = weight.reshape(groups, cout // groups, -1)
    c = cols.reshape(b, groups, w.shape[2], -1)
    return np.matmul(w[None], c).reshape(b, cout, -1)


@defop("torchvision.deform_conv2d",
       node="GeneratedBackwardFor_torchvision_deform_conv2d_defaultBackward", save="all")
def _deform_conv2d_kernel(input: np.ndarray, weight: np.ndarray, offset: np.ndarray,
                          mask: np.ndarray, bias: np.ndarray, *, stride: tuple, pad: tuple,
                          dilation: tuple, weight_groups: int, offset_groups: int,
                          use_mask: bool) -> np.ndarray:
    # out = W (*) bilinear(input at the displaced taps) * mask + bias, group by group
    b, _, h, w = input.shape
    cout, _, kh, kw = weight.shape
    oh = _out_size(h, pad[0], dilation[0], kh, stride[0])
    ow = _out_size(w, pad[1], dilation[1], kw, stride[1])
    if b == 0:
        return np.zeros((0, cout, oh, ow), dtype=input.dtype)
    cols = _columns(input, offset, mask, kh, kw, stride, pad, dilation, offset_groups, use_mask)
    out = _grouped_matmul(weight, cols, weight_groups).reshape(b, cout, oh, ow)
    return out + bias.reshape(1, cout, 1, 1)


@_deform_conv2d_kernel.backward
def deform_conv2d_kernel_backward(ctx, grad: Tensor) -> tuple:
    saved = ctx.saved
    grads = _deform_conv2d_backward_kernel(grad, *saved, **ctx.params)
    return tuple(grads)


@defop("torchvision._deform_conv2d_backward",
       node="GeneratedBackwardFor_torchvision__deform_conv2d_backward_defaultBackward",
       outputs=5)
def _deform_conv2d_backward_kernel(grad: np.ndarray, input: np.ndarray, weight: np.ndarray,
                                   offset: np.ndarray, mask: np.ndarray, bias: np.ndarray, *,
                                   stride: tuple, pad: tuple, dilation: tuple,
                                   weight_groups: int, offset_groups: int,
                                   use_mask: bool) -> tuple:
    b, channels, height, width = input.shape
    cout, _, kh, kw = weight.shape
    oh, ow = grad.shape[2], grad.shape[3]
    T = input.dtype.type
    grad_input = np.zeros_like(input)
    grad_offset = np.zeros_like(offset)
    grad_mask = np.zeros_like(mask)
    grad_bias = np.ones_like(bias) * grad.sum(axis=(0, 2, 3))
    if b == 0:
        return grad_input, np.zeros_like(weight), grad_offset, grad_mask, grad_bias

    # the columns' gradient: W^T grad, group by group -> (B, C, kh, kw, oh, ow)
    g = grad.reshape(b, weight_groups, cout // weight_groups, oh * ow)
    wg = weight.reshape(weight_groups, cout // weight_groups, -1)
    col_grad = np.matmul(wg.transpose(0, 2, 1)[None], g).reshape(b, channels, kh, kw, oh, ow)

    y, x = _sample_points(offset, channels, offset_groups, kh, kw, stride, pad, dilation)
    m = _group_mask(mask, use_mask, channels, offset_groups, kh, kw, input)

    # the offsets: d bilinear / dy and / dx (each pixel's difference across the sample's cell)
    y0 = np.floor(y).astype(np.int64)
    x0 = np.floor(x).astype(np.int64)
    y1, x1 = y0 + 1, x0 + 1
    ok_y0 = (y0 >= 0) & (y0 < height)
    ok_y1 = (y1 >= 0) & (y1 < height)
    ok_x0 = (x0 >= 0) & (x0 < width)
    ok_x1 = (x1 >= 0) & (x1 < width)
    v_yx = _gather(input, y0, x0, ok_y0 & ok_x0)
    v_yX = _gather(input, y0, x1, ok_y0 & ok_x1)
    v_Yx = _gather(input, y1, x0, ok_y1 & ok_x0)
    v_YX = _gather(input, y1, x1, ok_y1 & ok_x1)
    dx = x - x0.astype(x.dtype)
    dy = y - y0.astype(y.dtype)
    weight_y = dx * (v_YX - v_yX) + (T(1) - dx) * (v_Yx - v_yx)
    weight_x = dy * (v_YX - v_Yx) + (T(1) - dy) * (v_yX - v_yx)
    per_group = channels // offset_groups
    shape = (b, offset_groups, per_group, kh, kw, oh, ow)
    gy = (m * weight_y * col_grad).reshape(shape).sum(axis=2)  # over the group's channels
    gx = (m * weight_x * col_grad).reshape(shape).sum(axis=2)
    grad_offset = np.stack([gy, gx], axis=4).reshape(offset.shape).astype(offset.dtype)
    if use_mask:
        sampled = _bilinear(input, y, x)
        grad_mask = (col_grad * sampled).reshape(shape).sum(axis=2).reshape(
            mask.shape).astype(mask.dtype)

    # the input: each tap's gradient onto the pixels within one pixel of its point
    flat_grad = np.zeros(grad_input.size, dtype=input.dtype)
    yi = y.astype(np.int64)  # truncation, as the kernel's int(y)
    xi = x.astype(np.int64)
    base = (np.arange(b)[:, None] * channels + np.arange(channels)[None, :])[..., None, None,
                                                                              None, None]
    for ddy in (-1, 0, 1):
        for ddx in (-1, 0, 1):
            yp = yi + ddy
            xp = xi + ddx
            ady = np.abs(y - yp.astype(y.dtype))
            adx = np.abs(x - xp.astype(x.dtype))
            hit = ((0 <= yp) & (yp < height) & (0 <= xp) & (xp < width) & (ady < 1) & (adx < 1))
            w = (T(1) - ady) * (T(1) - adx)
            contrib = m * w * col_grad
            target = (base * height + yp) * width + xp
            np.add.at(flat_grad, target[hit], contrib[hit])
    grad_input = flat_grad.reshape(input.shape)

    # the weight: grad (x) columns^T, group by group, summed over the batch
    cols = _columns(input, offset, mask, kh, kw, stride, pad, dilation, offset_groups, use_mask)
    c = cols.reshape(b, weight_groups, -1, oh * ow)
    grad_weight = np.matmul(g, c.transpose(0, 1, 3, 2)).sum(axis=0).reshape(weight.shape)
    return grad_input, grad_weight.astype(weight.dtype), grad_offset, grad_mask, grad_bias


@_deform_conv2d_backward_kernel.backward
def deform_conv2d_backward_kernel_backward(ctx, grads: list) -> tuple:
    raise RuntimeError("double backwards on deform_conv2d not supported")


def deform_conv2d(input: Tensor, offset: Tensor, weight: Tensor, bias: Tensor | None = None,
                  stride: tuple[int, int] = (1, 1), padding: tuple[int, int] = (0, 0),
                  dilation: tuple[int, int] = (1, 1), mask: Tensor | None = None) -> Tensor:
    """Deformable convolution: ``input`` (B, C, H, W), ``offset`` (B, 2 * G * kh * kw, oh, ow)
    the (dy, dx) displacement of each tap at each output position (G offset groups of
    channels), ``weight`` (O, C / groups, kh, kw), ``mask`` (B, G * kh * kw, oh, ow) scaling
    each tap (v2; none: v1)."""
    out_channels = weight.shape[0]
    use_mask = mask is not None
    if mask is None:
        mask = zeros((input.shape[0], 1), device=input.device, dtype=input.dtype)
    if bias is None:
        bias = zeros(out_channels, device=input.device, dtype=input.dtype)
    stride_h, stride_w = _pair(stride)
    pad_h, pad_w = _pair(padding)
    dil_h, dil_w = _pair(dilation)
    weights_h, weights_w = weight.shape[-2:]
    _, n_in_channels, _, _ = input.shape
    n_offset_grps = offset.shape[1] // (2 * weights_h * weights_w)
    n_weight_grps = n_in_channels // weight.shape[1]
    if n_offset_grps == 0:
        raise RuntimeError(
            "the shape of the offset tensor at dimension 1 is not valid. It should be a multiple "
            "of 2 * weight.size[2] * weight.size[3].\n"
            f"Got offset.shape[1]={offset.shape[1]}, while 2 * weight.size[2] * weight.size[3]="
            f"{2 * weights_h * weights_w}")
    _check_deform_args(input, weight, offset, mask, bias, (stride_h, stride_w), (pad_h, pad_w),
                       (dil_h, dil_w), n_weight_grps, n_offset_grps, use_mask)
    return _deform_conv2d_kernel(input, weight, offset, mask, bias, stride=(stride_h, stride_w),
                                 pad=(pad_h, pad_w), dilation=(dil_h, dil_w),
                                 weight_groups=n_weight_grps, offset_groups=n_offset_grps,
                                 use_mask=use_mask)


def _check_deform_args(input: Tensor, weight: Tensor, offset: Tensor, mask: Tensor,
                       bias: Tensor, stride: tuple, pad: tuple, dilation: tuple,
                       weight_groups: int, offset_groups: int, use_mask: bool) -> None:
    """The kernel's checks, in its order, with its messages."""

    def check(condition: bool, message: str) -> None:
        if not condition:
            raise RuntimeError(message)

    def expected(expr: str) -> str:
        return (f"Expected {expr} to be true, but got false.  (Could this error message be "
                "improved?  If so, please report an enhancement request to PyTorch.)")

    check(input.dim() == 4, expected("input_c.ndimension() == 4"))
    check(offset.dim() == 4, expected("offset_c.ndimension() == 4"))
    check(not use_mask or mask.dim() == 4, expected("!use_mask || mask_c.ndimension() == 4"))
    check(weight.dim() == 4, expected("weight_c.ndimension() == 4"))
    _, _, in_h, in_w = input.shape
    weight_h, weight_w = weight.shape[2], weight.shape[3]
    out_h = _out_size(in_h, pad[0], dilation[0], weight_h, stride[0])
    out_w = _out_size(in_w, pad[1], dilation[1], weight_w, stride[1])
    check(weight_h > 0 and weight_w > 0, f"weight_h: {weight_h} weight_w: {weight_w}")
    check(stride[0] > 0 and stride[1] > 0, f"stride_h: {stride[0]} stride_w: {stride[1]}")
    check(pad[0] >= 0 and pad[1] >= 0, f"pad_h: {pad[0]} pad_w: {pad[1]}")
    check(dilation[0] > 0 and dilation[1] > 0,
          f"dilation_h: {dilation[0]} dilation_w: {dilation[1]}")
    check(weight.shape[1] * weight_groups == input.shape[1],
          expected("weight_c.size(1) * n_weight_grps == input_c.size(1)"))
    check(weight.shape[0] % weight_groups == 0,
          expected("weight_c.size(0) % n_weight_grps == 0"))
    taps = weight_h * weight_w
    check(offset.shape[1] == offset_groups * 2 * taps,
          f"offset.shape[1] is not valid: got: {offset.shape[1]} expected: "
          f"{offset_groups * 2 * taps}")
    check(not use_mask or mask.shape[1] == offset_groups * taps,
          f"mask.shape[1] is not valid: got: {mask.shape[1]} expected: {offset_groups * taps}")
    check(input.shape[1] % offset_groups == 0,
          expected("input_c.size(1) % n_offset_grps == 0"))
    check(offset.shape[0] == input.shape[0], "invalid batch size of offset")
    check(offset.shape[2] == out_h and offset.shape[3] == out_w,
          f"offset output dims: ({offset.shape[2]}, {offset.shape[3]}) - computed output dims: "
          f"({out_h}, {out_w})")
    check(mask.shape[0] == input.shape[0], "invalid batch size of mask")
    if use_mask and not (mask.shape[2] == out_h and mask.shape[3] == out_w):
        raise RuntimeError(f"mask output dims: ({mask.shape[2]}, {mask.shape[3]}) - computed "
                           f"output dims: ({out_h}, {out_w})")
    check(out_h > 0 and out_w > 0,
          f"Calculated output size too small - out_h: {out_h} out_w: {out_w}")
    names = {"float32": "Float", "float64": "Double", "float16": "Half"}
    kind = str(input.dtype).split(".")[-1]
    if kind not in names:
        raise NotImplementedError(f'"deformable_im2col" not implemented for '
                                  f"'{kind.capitalize()}'")
    for t in (offset, mask, weight, bias):
        if t.dtype != input.dtype:
            other = names.get(str(t.dtype).split(".")[-1], str(t.dtype))
            raise RuntimeError(f"expected scalar type {names[kind]} but found {other}")


class DeformConv2d(nn.Module):
    """``deform_conv2d`` as a layer; ``forward(input, offset, mask=None)``. Its weight and bias
    are initialized as ``Conv2d``'s."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = True):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        self.weight = Parameter(empty(out_channels, in_channels // groups, self.kernel_size[0],
                                      self.kernel_size[1]))
        if bias:
            self.bias = Parameter(empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor, offset: Tensor, mask: Tensor | None = None) -> Tensor:
        return deform_conv2d(input, offset, self.weight, self.bias, stride=self.stride,
                             padding=self.padding, dilation=self.dilation, mask=mask)

    def __repr__(self) -> str:
        s = (f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, "
             f"kernel_size={self.kernel_size}, stride={self.stride}")
        s += f", padding={self.padding}" if self.padding != (0, 0) else ""
        s += f", dilation={self.dilation}" if self.dilation != (1, 1) else ""
        s += f", groups={self.groups}" if self.groups != 1 else ""
        s += ", bias=False" if self.bias is None else ""
        return s + ")"
