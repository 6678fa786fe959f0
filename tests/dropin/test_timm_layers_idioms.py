"""timm-style building blocks written in plain torch (DropPath, LayerScale, LayerNorm2d, ConvNeXt, SE/ECA, MBConv, ViT
with qk-norm and pos-embed resampling, Swin shifted windows, MLP-Mixer, weight-standardized conv, init helpers)
against torch: weights copied through numpy, outputs and input/parameter gradients compared."""
import collections.abc
import math
from functools import partial

import numpy as np
import pytest
import torch

import ember


def _blocks(lib):
    nn, F = lib.nn, lib.nn.functional

    def to_2tuple(x):
        return tuple(x) if isinstance(x, collections.abc.Iterable) else (x, x)

    def drop_path(x, drop_prob=0., training=False, scale_by_keep=True):
        if drop_prob == 0. or not training:
            return x
        keep_prob = 1 - drop_prob
        random_tensor = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep_prob)
        if keep_prob > 0.0 and scale_by_keep:
            random_tensor.div_(keep_prob)
        return x * random_tensor

    class DropPath(nn.Module):
        def __init__(self, drop_prob=0., scale_by_keep=True):
            super().__init__()
            self.drop_prob, self.scale_by_keep = drop_prob, scale_by_keep

        def forward(self, x):
            return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

        def extra_repr(self):
            return f'drop_prob={round(self.drop_prob, 3):0.3f}'

    class LayerScale(nn.Module):
        def __init__(self, dim, init_values=1e-5, inplace=False):
            super().__init__()
            self.inplace = inplace
            self.gamma = nn.Parameter(init_values * lib.ones(dim))

        def forward(self, x):
            return x.mul_(self.gamma) if self.inplace else x * self.gamma

    class LayerNorm2d(nn.LayerNorm):
        def forward(self, x):
            x = F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps)
            return x.permute(0, 3, 1, 2)

    class Mlp(nn.Module):
        def __init__(self, dim, hidden, act_layer=nn.GELU, use_conv=False):
            super().__init__()
            layer = partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear
            self.fc1, self.act, self.fc2 = layer(dim, hidden), act_layer(), layer(hidden, dim)
            self.drop = nn.Dropout(0.)

        def forward(self, x):
            return self.drop(self.fc2(self.act(self.fc1(x))))

    class ConvNeXtBlock(nn.Module):
        def __init__(self, dim, ls_init_value=0.5, conv_mlp=False):
            super().__init__()
            self.conv_dw = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
            self.use_conv_mlp = conv_mlp
            self.norm = LayerNorm2d(dim, eps=1e-6) if conv_mlp else nn.LayerNorm(dim, eps=1e-6)
            self.mlp = Mlp(dim, 4 * dim, use_conv=conv_mlp)
            self.gamma = nn.Parameter(ls_init_value * lib.ones(dim))
            self.drop_path = nn.Identity()

        def forward(self, x):
            shortcut = x
            x = self.conv_dw(x)
            if self.use_conv_mlp:
                x = self.mlp(self.norm(x))
            else:
                x = self.mlp(self.norm(x.permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
            return self.drop_path(x.mul(self.gamma.reshape(1, -1, 1, 1))) + shortcut

    class SqueezeExcite(nn.Module):
        def __init__(self, chs, rd_ratio=0.25):
            super().__init__()
            rd = max(1, int(chs * rd_ratio))
            self.conv_reduce, self.act1 = nn.Conv2d(chs, rd, 1), nn.SiLU(inplace=True)
            self.conv_expand, self.gate = nn.Conv2d(rd, chs, 1), nn.Sigmoid()

        def forward(self, x):
            x_se = self.conv_expand(self.act1(self.conv_reduce(x.mean((2, 3), keepdim=True))))
            return x * self.gate(x_se)

    class EcaModule(nn.Module):
        def __init__(self, channels, gamma=2, beta=1):
            super().__init__()
            t = int(abs(math.log(channels, 2) + beta) / gamma)
            k = max(t if t % 2 else t + 1, 3)
            self.conv = nn.Conv1d(1, 1, kernel_size=k, padding=(k - 1) // 2, bias=False)

        def forward(self, x):
            y = self.conv(x.mean((2, 3)).view(x.shape[0], 1, -1))
            return x * y.view(x.shape[0], -1, 1, 1).sigmoid().expand_as(x)

    class InvertedResidual(nn.Module):
        def __init__(self, in_chs, out_chs, k=3, stride=1, exp=4):
            super().__init__()
            mid = in_chs * exp
            self.has_skip = in_chs == out_chs and stride == 1
            self.conv_pw, self.bn1, self.act1 = nn.Conv2d(in_chs, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU(True)
            self.conv_dw = nn.Conv2d(mid, mid, k, stride, padding=k // 2, groups=mid, bias=False)
            self.bn2, self.act2 = nn.BatchNorm2d(mid), nn.SiLU(inplace=True)
            self.se = SqueezeExcite(mid, rd_ratio=0.25 / exp)
            self.conv_pwl, self.bn3 = nn.Conv2d(mid, out_chs, 1, bias=False), nn.BatchNorm2d(out_chs)

        def forward(self, x):
            shortcut = x
            x = self.act2(self.bn2(self.conv_dw(self.act1(self.bn1(self.conv_pw(x))))))
            x = self.bn3(self.conv_pwl(self.se(x)))
            return x + shortcut if self.has_skip else x

    class StdConv2d(nn.Conv2d):
        def forward(self, x):
            weight = F.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None, training=True,
                                  momentum=0., eps=1e-6).reshape_as(self.weight)
            return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    class PatchEmbed(nn.Module):
        def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=32, flatten=True, strict_img_size=True):
            super().__init__()
            self.img_size = to_2tuple(img_size)
            self.grid_size = tuple(s // patch_size for s in self.img_size)
            self.num_patches = self.grid_size[0] * self.grid_size[1]
            self.flatten, self.strict_img_size = flatten, strict_img_size
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

        def forward(self, x):
            B, C, H, W = x.shape
            if self.strict_img_size:
                lib._assert(H == self.img_size[0], f"Input height ({H}) doesn't match model ({self.img_size[0]}).")
            x = self.proj(x)
            return x.flatten(2).transpose(1, 2) if self.flatten else x

    class Attention(nn.Module):
        fused_attn: lib.jit.Final[bool]

        def __init__(self, dim, num_heads=4, qkv_bias=True, qk_norm=False, fused=True):
            super().__init__()
            self.num_heads, self.head_dim = num_heads, dim // num_heads
            self.scale, self.fused_attn = self.head_dim ** -0.5, fused
            self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
            self.q_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
            self.k_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
            self.attn_drop, self.proj = nn.Dropout(0.), nn.Linear(dim, dim)

        def forward(self, x):
            B, N, C = x.shape
            q, k, v = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
            q, k = self.q_norm(q), self.k_norm(k)
            if self.fused_attn:
                x = F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop.p if self.training else 0.)
            else:
                x = self.attn_drop((q * self.scale @ k.transpose(-2, -1)).softmax(dim=-1)) @ v
            return self.proj(x.transpose(1, 2).reshape(B, N, C))

    class Block(nn.Module):
        def __init__(self, dim, num_heads, qk_norm=False, init_values=None, fused=True):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn = Attention(dim, num_heads, qk_norm=qk_norm, fused=fused)
            self.ls1 = LayerScale(dim, init_values) if init_values else nn.Identity()
            self.ls2 = LayerScale(dim, init_values) if init_values else nn.Identity()
            self.mlp = Mlp(dim, 4 * dim, act_layer=partial(nn.GELU, approximate='tanh'))
            self.drop_path1, self.drop_path2 = DropPath(0.), nn.Identity()

        def forward(self, x):
            x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
            return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))

    def resample_abs_pos_embed(posemb, new_size, num_prefix_tokens=1, interpolation='bicubic', antialias=True):
        hw = int(math.sqrt(posemb.shape[1] - num_prefix_tokens))
        posemb_prefix, posemb = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
        embed_dim, orig_dtype = posemb.shape[-1], posemb.dtype
        posemb = posemb.float().reshape(1, hw, hw, -1).permute(0, 3, 1, 2)
        posemb = F.interpolate(posemb, size=new_size, mode=interpolation, antialias=antialias)
        posemb = posemb.permute(0, 2, 3, 1).reshape(1, -1, embed_dim).to(orig_dtype)
        return lib.cat([posemb_prefix, posemb], dim=1)

    def checkpoint_seq(functions, x, every=1):
        def run_function(start, end, functions):
            def forward(_x):
                for j in range(start, end + 1):
                    _x = functions[j](_x)
                return _x
            return forward
        functions = list(functions.children())
        for start in range(0, len(functions), every):
            end = min(start + every - 1, len(functions) - 1)
            x = lib.utils.checkpoint.checkpoint(run_function(start, end, functions), x, use_reentrant=False)
        return x

    class VisionTransformer(nn.Module):
        def __init__(self, embed_dim=32, depth=2, qk_norm=False, init_values=None, reg_tokens=0, global_pool='token',
                     fused=True, dynamic_img_size=False):
            super().__init__()
            self.num_prefix_tokens, self.global_pool = 1 + reg_tokens, global_pool
            self.grad_checkpointing, self.dynamic_img_size = False, dynamic_img_size
            self.patch_embed = PatchEmbed(embed_dim=embed_dim, flatten=not dynamic_img_size,
                                          strict_img_size=not dynamic_img_size)
            self.cls_token = nn.Parameter(lib.randn(1, 1, embed_dim) * .02)
            self.reg_token = nn.Parameter(lib.randn(1, reg_tokens, embed_dim) * .02) if reg_tokens else None
            self.pos_embed = nn.Parameter(lib.randn(1, self.patch_embed.num_patches + 1, embed_dim) * .02)
            self.blocks = nn.Sequential(*[Block(embed_dim, 4, qk_norm, init_values, fused) for _ in range(depth)])
            self.norm, self.head = nn.LayerNorm(embed_dim, eps=1e-6), nn.Linear(embed_dim, 10)

        @lib.jit.ignore
        def no_weight_decay(self):
            return {'pos_embed', 'cls_token'}

        @lib.jit.ignore
        def set_grad_checkpointing(self, enable=True):
            self.grad_checkpointing = enable

        def forward_features(self, x):
            x = self.patch_embed(x)
            pos_embed = self.pos_embed
            if self.dynamic_img_size:
                B, C, H, W = x.shape
                pos_embed = resample_abs_pos_embed(self.pos_embed, (H, W), antialias=False)
                x = x.permute(0, 2, 3, 1).reshape(B, -1, C)
            x = lib.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + pos_embed
            if self.reg_token is not None:
                x = lib.cat([x[:, :1], self.reg_token.expand(x.shape[0], -1, -1), x[:, 1:]], dim=1)
            if self.grad_checkpointing and not lib.jit.is_scripting():
                x = checkpoint_seq(self.blocks, x)
            else:
                x = self.blocks(x)
            return self.norm(x)

        def forward(self, x):
            x = self.forward_features(x)
            x = x[:, self.num_prefix_tokens:].mean(dim=1) if self.global_pool == 'avg' else x[:, 0]
            return self.head(x)

    def window_partition(x, ws):
        B, H, W, C = x.shape
        x = x.view(B, H // ws[0], ws[0], W // ws[1], ws[1], C)
        return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws[0], ws[1], C)

    def window_reverse(windows, ws, H, W):
        x = windows.view(-1, H // ws[0], W // ws[1], ws[0], ws[1], windows.shape[-1])
        return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, H, W, windows.shape[-1])

    def get_relative_position_index(win_h, win_w):
        coords = lib.stack(lib.meshgrid(lib.arange(win_h), lib.arange(win_w), indexing='ij'))
        coords_flatten = lib.flatten(coords, 1)
        relative_coords = (coords_flatten[:, :, None] - coords_flatten[:, None, :]).permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += win_h - 1
        relative_coords[:, :, 1] += win_w - 1
        relative_coords[:, :, 0] *= 2 * win_w - 1
        return relative_coords.sum(-1)

    class WindowAttention(nn.Module):
        def __init__(self, dim, num_heads, ws):
            super().__init__()
            self.num_heads, self.window_area, self.scale = num_heads, ws[0] * ws[1], (dim // num_heads) ** -0.5
            self.relative_position_bias_table = nn.Parameter(lib.randn((2 * ws[0] - 1) * (2 * ws[1] - 1), num_heads))
            self.register_buffer("relative_position_index", get_relative_position_index(*ws), persistent=False)
            self.qkv, self.proj, self.softmax = nn.Linear(dim, dim * 3), nn.Linear(dim, dim), nn.Softmax(dim=-1)

        def forward(self, x, mask=None):
            B_, N, C = x.shape
            q, k, v = self.qkv(x).reshape(B_, N, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
            attn = (q * self.scale) @ k.transpose(-2, -1)
            bias = self.relative_position_bias_table[self.relative_position_index.view(-1)]
            attn = attn + bias.view(self.window_area, self.window_area, -1).permute(2, 0, 1).contiguous().unsqueeze(0)
            if mask is not None:
                num_win = mask.shape[0]
                attn = attn.view(-1, num_win, self.num_heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
                attn = attn.view(-1, self.num_heads, N, N)
            x = (self.softmax(attn) @ v).transpose(1, 2).reshape(B_, N, -1)
            return self.proj(x)

    class SwinTransformerBlock(nn.Module):
        def __init__(self, dim, input_resolution, num_heads=2, window_size=4, shift_size=0):
            super().__init__()
            self.window_size, self.shift_size = to_2tuple(window_size), to_2tuple(shift_size)
            self.window_area = self.window_size[0] * self.window_size[1]
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn = WindowAttention(dim, num_heads, self.window_size)
            self.mlp = Mlp(dim, 4 * dim)
            attn_mask = None
            if any(self.shift_size):
                H, W = input_resolution
                img_mask, cnt = lib.zeros((1, H, W, 1)), 0
                ws, ss = self.window_size, self.shift_size
                for h in ((0, -ws[0]), (-ws[0], -ss[0]), (-ss[0], None)):
                    for w in ((0, -ws[1]), (-ws[1], -ss[1]), (-ss[1], None)):
                        img_mask[:, h[0]:h[1], w[0]:w[1], :] = cnt
                        cnt += 1
                mask_windows = window_partition(img_mask, ws).view(-1, self.window_area)
                attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
                attn_mask = attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, 0.0)
            self.register_buffer("attn_mask", attn_mask, persistent=False)

        def _attn(self, x):
            B, H, W, C = x.shape
            if any(self.shift_size):
                x = lib.roll(x, shifts=(-self.shift_size[0], -self.shift_size[1]), dims=(1, 2))
            x = F.pad(x, (0, 0, 0, (-W) % self.window_size[1], 0, (-H) % self.window_size[0]))
            _, Hp, Wp, _ = x.shape
            windows = self.attn(window_partition(x, self.window_size).view(-1, self.window_area, C), self.attn_mask)
            x = window_reverse(windows.view(-1, *self.window_size, C), self.window_size, Hp, Wp)
            x = x[:, :H, :W, :].contiguous()
            return lib.roll(x, shifts=self.shift_size, dims=(1, 2)) if any(self.shift_size) else x

        def forward(self, x):
            B, H, W, C = x.shape
            x = (x + self._attn(self.norm1(x))).reshape(B, -1, C)
            return (x + self.mlp(self.norm2(x))).reshape(B, H, W, C)

    class PatchMerging(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm, self.reduction = nn.LayerNorm(4 * dim), nn.Linear(4 * dim, 2 * dim, bias=False)

        def forward(self, x):
            B, H, W, C = x.shape
            x = x.reshape(B, H // 2, 2, W // 2, 2, C).permute(0, 1, 3, 4, 2, 5).flatten(3)
            return self.reduction(self.norm(x))

    class MixerBlock(nn.Module):
        def __init__(self, dim, seq_len):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
            self.mlp_tokens, self.mlp_channels = Mlp(seq_len, dim // 2), Mlp(dim, 4 * dim)

        def forward(self, x):
            x = x + self.mlp_tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
            return x + self.mlp_channels(self.norm2(x))

    return dict(locals())


T, E = _blocks(torch), _blocks(ember)


def _np(t):
    return t.detach().float().numpy()


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _run_pair(ctor, shape, train=False, channels_last=False, rtol=1e-5, atol=1e-5):
    """Builds the block in both, copies torch's weights, compares output, input grad, parameter grads, buffers."""
    torch.manual_seed(0)
    mt, me = ctor(T), ctor(E)
    me.load_state_dict({k: ember.tensor(v.numpy()) for k, v in mt.state_dict().items()})
    mt.train(train), me.train(train)
    x, out = _rand(shape), []
    for lib, m in ((torch, mt), (ember, me)):
        xt = lib.tensor(x)
        if channels_last:
            xt = xt.contiguous(memory_format=lib.channels_last)
        xt.requires_grad_()
        y = m(xt)
        y.backward(lib.tensor(_rand(tuple(y.shape), 1)))
        out.append((y, xt.grad, dict(m.named_parameters()), dict(m.named_buffers())))
    (yt, gt, pt, bt), (ye, ge, pe, be) = out
    assert ye.dtype == ember.float32 and tuple(ye.shape) == tuple(yt.shape)
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=rtol, atol=atol)
    np.testing.assert_allclose(_np(ge), _np(gt), rtol=10 * rtol, atol=10 * atol)
    assert pe.keys() == pt.keys() and be.keys() == bt.keys()
    for k, p in pt.items():
        np.testing.assert_allclose(_np(pe[k].grad), _np(p.grad), rtol=10 * rtol, atol=10 * atol, err_msg=k)
    for k, b in bt.items():
        assert str(be[k].dtype).split('.')[-1] == str(b.dtype).split('.')[-1], k
        np.testing.assert_allclose(_np(be[k]), _np(b), rtol=rtol, atol=atol, err_msg=k)
    return ye, yt


def test_drop_path_statistics_scale_by_keep_and_eval():
    x = ember.ones(20000, 3, 2, requires_grad=True)
    ember.manual_seed(0)
    y = E['drop_path'](x, 0.25, True, True)
    per = y[:, 0, 0].detach().numpy()
    assert bool((y == y[:, :1, :1]).all())  # one draw per sample, broadcast over the rest
    np.testing.assert_allclose(np.unique(per), [0.0, 1 / 0.75], rtol=1e-6)
    assert abs((per == 0).mean() - 0.25) < 0.02
    y.backward(ember.ones_like(y))
    np.testing.assert_allclose(x.grad[:, 0, 0].numpy(), per, rtol=1e-6)
    assert set(E['drop_path'](ember.ones(500, 2), 0.5, True, False).flatten().tolist()) == {0.0, 1.0}
    assert bool((E['drop_path'](ember.ones(8, 2), 1.0, True) == 0).all())
    m = E['DropPath'](0.5).eval()
    inp = ember.randn(4, 3)
    assert m(inp) is inp and repr(m) == repr(T['DropPath'](0.5)) == 'DropPath(drop_prob=0.500)'


def test_layer_scale_inplace_gradient_and_leaf_error():
    res = []
    for lib, B in ((torch, T), (ember, E)):
        m = B['LayerScale'](4, 0.5, inplace=True)
        x = lib.tensor(_rand((2, 4)), requires_grad=True)
        m(x * 1).backward(lib.tensor(_rand((2, 4), 1)))
        res.append((x.grad, m.gamma.grad))
        with pytest.raises(RuntimeError, match="leaf Variable"):
            m(lib.ones(2, 4, requires_grad=True))
    for a, b in zip(*res):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)


@pytest.mark.parametrize("channels_last", [False, True])
def test_layernorm2d_matches_channels_first_statistics(channels_last):
    ye, yt = _run_pair(lambda B: B['LayerNorm2d'](6), (2, 6, 5, 4), channels_last=channels_last)
    assert ye.stride() == yt.stride()
    x = ember.tensor(_rand((2, 6, 5, 4)))  # the same normalization written with var_mean over channels
    s, u = ember.var_mean(x, dim=1, unbiased=False, keepdim=True)
    np.testing.assert_allclose(((x - u) * ember.rsqrt(s + 1e-5)).numpy(), ye.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("conv_mlp", [False, True])
@pytest.mark.parametrize("channels_last", [False, True])
def test_convnext_block(conv_mlp, channels_last):
    ye, yt = _run_pair(lambda B: B['ConvNeXtBlock'](8, conv_mlp=conv_mlp), (2, 8, 9, 9), channels_last=channels_last)
    if channels_last:
        assert ye.stride() == yt.stride() == (648, 1, 72, 8)


@pytest.mark.parametrize("make", [lambda B: B['SqueezeExcite'](8), lambda B: B['EcaModule'](16)])
def test_channel_attention(make):
    _run_pair(make, (2, 16, 5, 5) if make(E).__class__.__name__ == 'EcaModule' else (2, 8, 5, 5))


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("args", [(8, 8), (8, 16, 5, 2)])
def test_mbconv_block_batchnorm_silu(train, args):
    _run_pair(lambda B: B['InvertedResidual'](*args), (2, 8, 7, 7), train=train)


def test_weight_standardized_conv():
    _run_pair(lambda B: B['StdConv2d'](4, 8, 3, padding=1, bias=False), (2, 4, 7, 7))


@pytest.mark.parametrize("kw", [dict(init_values=0.1), dict(qk_norm=True, fused=False, reg_tokens=2, global_pool='avg'),
                                dict(qk_norm=True, dynamic_img_size=True)])
def test_vit(kw):
    shape = (2, 3, 20, 24) if kw.get('dynamic_img_size') else (2, 3, 16, 16)
    _run_pair(lambda B: B['VisionTransformer'](**kw), shape, rtol=2e-5, atol=2e-5)


def test_vit_grad_checkpointing_gives_the_same_gradients():
    def ctor(B):
        m = B['VisionTransformer']()
        m.set_grad_checkpointing()
        return m
    _run_pair(ctor, (2, 3, 16, 16), train=True, rtol=2e-5, atol=2e-5)
    m = E['VisionTransformer']()
    assert m.no_weight_decay() == {'pos_embed', 'cls_token'} and not ember.jit.is_scripting()
    with pytest.raises(AssertionError, match=r"Input height \(12\)"):
        m(ember.randn(1, 3, 12, 16))


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("new_size", [(6, 6), (3, 5), (2, 2)])
def test_resample_abs_pos_embed_bicubic(antialias, new_size):
    pe, res = _rand((1, 17, 8)), []
    for lib, B in ((torch, T), (ember, E)):
        p = lib.tensor(pe, requires_grad=True)
        y = B['resample_abs_pos_embed'](p, new_size, antialias=antialias)
        y.backward(lib.tensor(_rand(tuple(y.shape), 1)))
        res.append((y, p.grad))
    for a, b in zip(*res):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)


def test_swin_relative_position_index_and_shift_mask():
    np.testing.assert_array_equal(E['get_relative_position_index'](3, 4).numpy(),
                                  T['get_relative_position_index'](3, 4).numpy())
    me, mt = E['SwinTransformerBlock'](16, (8, 8), shift_size=2), T['SwinTransformerBlock'](16, (8, 8), shift_size=2)
    assert me.attn_mask.dtype == ember.float32 and me.attn.relative_position_index.dtype == ember.int64
    np.testing.assert_array_equal(me.attn_mask.numpy(), mt.attn_mask.numpy())
    assert 'attn_mask' not in me.state_dict() and 'attn.relative_position_bias_table' in me.state_dict()
    x = ember.arange(2 * 8 * 8 * 3.).reshape(2, 8, 8, 3)
    w = E['window_partition'](x, (4, 4))
    assert tuple(w.shape) == (8, 4, 4, 3) and bool((E['window_reverse'](w, (4, 4), 8, 8) == x).all())
    with pytest.raises(RuntimeError, match="invalid for input of size"):
        E['window_partition'](ember.randn(1, 7, 8, 3), (4, 4))


@pytest.mark.parametrize("shift", [0, 2])
def test_swin_block(shift):
    _run_pair(lambda B: B['SwinTransformerBlock'](16, (8, 8), shift_size=shift), (2, 8, 8, 16))


@pytest.mark.parametrize("make,shape", [(lambda B: B['PatchMerging'](16), (2, 8, 8, 16)),
                                        (lambda B: B['MixerBlock'](16, 10), (2, 10, 16))])
def test_patch_merging_and_mixer(make, shape):
    _run_pair(make, shape)


def test_init_helpers_statistics_and_named_apply():
    ember.manual_seed(0)
    t = ember.empty(64, 32, 3, 3)
    fan_in, _ = ember.nn.init._calculate_fan_in_and_fan_out(t)
    # bounds a=-2, b=2 are absolute, so this small std is not truncated: variance (1 / fan_in) / 0.8796**2
    ember.nn.init.trunc_normal_(t, std=math.sqrt(1.0 / fan_in) / .87962566103423978)
    assert fan_in == 288 and abs(float(t.var()) * fan_in - 1 / .87962566103423978 ** 2) < 0.06
    u = ember.empty(200000)
    with ember.no_grad():  # trunc_normal_tf_: inverse-CDF sampling
        lo, hi = [(1. + math.erf(v / math.sqrt(2.))) / 2. for v in (-2., 2.)]
        u.uniform_(2 * lo - 1, 2 * hi - 1).erfinv_().mul_(math.sqrt(2.)).clamp_(min=-2., max=2.)
    assert abs(float(u.std()) - 0.8796) < 0.01 and float(u.abs().max()) <= 2.0

    def named_apply(fn, module, name='', include_root=False):
        for child_name, child in module.named_children():
            named_apply(fn, child, '.'.join((name, child_name)) if name else child_name, include_root=True)
        if include_root:
            fn(module=module, name=name)
        return module

    names = {}
    for lib, B in ((torch, T), (ember, E)):
        seen = []

        def init(module, name, lib=lib, seen=seen):
            seen.append(name)
            if isinstance(module, lib.nn.Linear):
                if name.startswith('head'):
                    lib.nn.init.zeros_(module.weight)
                    lib.nn.init.constant_(module.bias, -2.0)
                else:
                    lib.nn.init.xavier_uniform_(module.weight)
                    lib.nn.init.zeros_(module.bias)
        m = named_apply(init, B['VisionTransformer']())
        assert float(m.head.weight.detach().abs().sum()) == 0 and float(m.head.bias.detach().sum()) == -20.0
        assert float(m.blocks[0].attn.qkv.bias.detach().abs().sum()) == 0
        names[lib] = seen
    assert names[ember] == names[torch]


def test_scripting_and_tracing_guards_are_no_ops():
    assert ember.jit.is_scripting() is False and ember.jit.is_tracing() is False
    assert ember.jit.ignore(lambda: 3)() == 3 and ember.jit.unused(lambda: 4)() == 4
    assert ember.jit.Final[bool] == torch.jit.Final[bool]
    assert ember.compiler.is_compiling() is False
    exec("fn = lib.fx.wrap(lambda: 5)", ns := {"lib": ember})
    assert ns["fn"]() == 5
