"""ember.transforms: conversions and normalisation against torch arithmetic, crops against torch's padding."""
import numpy as np
import pytest
import torch
import torch.nn.functional as tF

import ember
from ember import transforms as T


def _img(h=5, w=6, c=3, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


def test_to_tensor():
    img = _img()
    x = T.ToTensor()(img)
    assert x.shape == (3, 5, 6) and x.dtype == ember.float32
    np.testing.assert_allclose(x.numpy(), torch.from_numpy(img).permute(2, 0, 1).float().div(255).numpy())
    gray = T.ToTensor()(img[:, :, 0])
    assert gray.shape == (1, 5, 6)
    assert T.ToTensor()(ember.from_numpy(img)).tolist() == x.tolist()  # uint8 tensors in HWC too
    floats = T.ToTensor()(img.astype(np.float64))
    assert floats.dtype == ember.float64 and floats.shape == (3, 5, 6) and float(floats.max()) > 1
    ember.set_default_dtype(ember.float64)
    assert T.ToTensor()(img).dtype == ember.float64
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray. Got <class 'list'>"):
        T.ToTensor()([[1]])
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional. Got 4 dimensions."):
        T.ToTensor()(np.zeros((1, 1, 1, 1), np.uint8))


def test_normalize_matches_torch_arithmetic():
    x = T.ToTensor()(_img())
    mean, std = (0.4, 0.5, 0.6), (0.2, 0.25, 0.3)
    out = T.Normalize(mean, std)(x)
    ref = (torch.from_numpy(x.numpy()) - torch.tensor(mean).view(-1, 1, 1)) / torch.tensor(std).view(-1, 1, 1)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)
    assert out is not x and not np.array_equal(out.numpy(), x.numpy())
    batch = ember.stack([x, x])
    assert T.Normalize(mean, std, inplace=True)(batch) is batch
    np.testing.assert_allclose(batch[1].numpy(), ref.numpy(), rtol=1e-6)
    assert repr(T.Normalize(mean, std)) == "Normalize(mean=(0.4, 0.5, 0.6), std=(0.2, 0.25, 0.3))"


def test_normalize_errors():
    with pytest.raises(TypeError, match="Input tensor should be a float tensor. Got ember.uint8."):
        T.Normalize([0], [1])(ember.zeros(1, 2, 2, dtype=ember.uint8))
    with pytest.raises(ValueError, match=r"Expected tensor to be a tensor image of size \(..., C, H, W\)"):
        T.Normalize([0], [1])(ember.zeros(2, 2))
    with pytest.raises(ValueError, match="std evaluated to zero after conversion to ember.float32"):
        T.Normalize([0], [0])(ember.zeros(1, 2, 2))


@pytest.mark.parametrize("padding, torch_pad", [(2, (2, 2, 2, 2)), ((1, 2), (1, 1, 2, 2)),
                                                ((1, 2, 3, 4), (1, 3, 2, 4))])
@pytest.mark.parametrize("mode, torch_mode", [("constant", "constant"), ("edge", "replicate"),
                                              ("reflect", "reflect")])
def test_random_crop_padding_matches_torch(padding, torch_pad, mode, torch_mode):
    x = T.ToTensor()(_img())
    ref = tF.pad(torch.from_numpy(x.numpy())[None], torch_pad, mode=torch_mode)[0]
    full = T.RandomCrop(tuple(ref.shape[1:]), padding=padding, padding_mode=mode)(x)  # the crop is the whole image
    np.testing.assert_array_equal(full.numpy(), ref.numpy())


def test_random_crop_windows_and_arrays():
    ember.manual_seed(0)
    x = T.ToTensor()(_img(8, 8))
    padded = np.pad(x.numpy(), ((0, 0), (2, 2), (2, 2)))
    windows = {tuple(padded[:, i:i + 8, j:j + 8].ravel()) for i in range(5) for j in range(5)}
    seen = set()
    for _ in range(30):
        out = T.RandomCrop(8, padding=2)(x)
        assert out.shape == (3, 8, 8) and tuple(out.numpy().ravel()) in windows
        seen.add(tuple(out.numpy().ravel()))
    assert len(seen) > 5
    arr = T.RandomCrop((3, 4))(_img())
    assert arr.shape == (3, 4, 3) and isinstance(arr, np.ndarray)
    grown = T.RandomCrop(7, pad_if_needed=True, fill=9)(_img(4, 5))
    assert grown.shape == (7, 7, 3) and (grown == 9).any()
    with pytest.raises(ValueError, match=r"Required crop size \(9, 9\) is larger than input image size \(5, 6\)"):
        T.RandomCrop(9)(_img())
    with pytest.raises(ValueError, match="Padding must be an int or a 1, 2, or 4 element tuple, not a 3 element"):
        T.RandomCrop(2, padding=(1, 2, 3))
    with pytest.raises(ValueError, match="Padding mode should be either constant, edge, reflect or symmetric"):
        T.RandomCrop(2, padding_mode="wrap")
    assert repr(T.RandomCrop(4, padding=1)) == "RandomCrop(size=(4, 4), padding=1)"


def test_random_horizontal_flip():
    x = T.ToTensor()(_img())
    np.testing.assert_array_equal(T.RandomHorizontalFlip(1.0)(x).numpy(), x.numpy()[:, :, ::-1])
    assert T.RandomHorizontalFlip(0.0)(x) is x
    np.testing.assert_array_equal(T.RandomHorizontalFlip(1.0)(_img()), _img()[:, ::-1])
    ember.manual_seed(3)
    flips = [T.RandomHorizontalFlip()(x) is not x for _ in range(40)]
    ember.manual_seed(3)
    assert flips == [T.RandomHorizontalFlip()(x) is not x for _ in range(40)]
    assert 5 < sum(flips) < 35


def test_compose_and_lambda():
    tf = T.Compose([T.ToTensor(), T.Lambda(lambda t: t * 2)])
    assert float(tf(np.full((1, 1), 255, np.uint8))) == 2.0
    assert repr(tf) == "Compose(\n    ToTensor()\n    Lambda()\n)"
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)
