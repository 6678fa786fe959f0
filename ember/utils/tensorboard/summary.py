"""Summary protocol buffers for ``SummaryWriter``: scalars, histograms, images, audio, video, text, hparams,
PR curves, custom-scalar layouts and meshes, built from ember tensors, NumPy arrays or Python numbers."""
import io
import json
import struct

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._dtype import bfloat16
from ..._tensor import Tensor


def make_np(x):
    """Convert a tensor, NumPy array or Python number into a NumPy array."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.device.type == "meta":
            return np.random.randn(1)
        if x.dtype is bfloat16:
            x = x.half()
        return x.detach().cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or ember tensor are expected.")


def half_to_int(f):
    """Bits of ``f`` as a float32, read as an int32 (the ``half_val`` field of a TensorProto)."""
    return struct.unpack("i", struct.pack("f", f))[0]


def int_to_half(i):
    """Inverse of :func:`half_to_int`."""
    return struct.unpack("f", struct.pack("i", i))[0]


def _half_vals(a):
    return [half_to_int(v) for v in a.reshape(-1).tolist()]


def _complex_vals(a):
    return np.stack([a.real, a.imag], -1).reshape(-1).tolist()


def _vals(a):
    return a.reshape(-1).tolist()


_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val", _half_vals), "bfloat16": ("DT_BFLOAT16", "half_val", _half_vals),
    "float32": ("DT_FLOAT", "float_val", _vals), "float64": ("DT_DOUBLE", "double_val", _vals),
    "int8": ("DT_INT8", "int_val", _vals), "uint8": ("DT_UINT8", "uint32_val", _vals),
    "int16": ("DT_INT16", "int_val", _vals), "int32": ("DT_INT32", "int_val", _vals),
    "int64": ("DT_INT64", "int64_val", _vals), "bool": ("DT_BOOL", "bool_val", _vals),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_vals),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_vals),
}


def tensor_proto(tag, tensor):
    """A ``Summary`` holding the whole tensor, for the ``tensor`` plugin."""
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    name = str(tensor.dtype).rpartition(".")[2]
    if name not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, convert = _TENSOR_TYPES[name]
    values = convert(tensor.detach().cpu().float().numpy() if name == "bfloat16" else tensor.detach().cpu().numpy())
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in tensor.shape])
    proto = TensorProto(dtype=dtype, tensor_shape=shape, **{field: values})
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """A ``Summary`` with one scalar; ``new_style`` stores it as a tensor (float32, or float64 with
    ``double_precision``) for the ``scalars`` plugin."""
    tensor = make_np(tensor).squeeze()
    if tensor.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {tensor.size} "
                             f"and {tensor.ndim} dimensions.")
    value = float(tensor)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=smd)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    """A ``Summary`` with a histogram given by its statistics and buckets."""
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name, values, bins, max_bins=None):
    """A ``Summary`` with the histogram of ``values`` (``bins`` as in ``numpy.histogram``)."""
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(make_np(values).astype(float), bins, max_bins))])


def make_histogram(values, bins, max_bins=None):
    """A ``HistogramProto`` of ``values``, trimmed to the buckets between the first and last non-empty ones."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        sub = len(counts) // max_bins
        if len(counts) % sub:
            counts = np.pad(counts, [[0, sub - len(counts) % sub]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, sub).sum(axis=-1)
        limits = np.concatenate([limits[:-1:sub], limits[-1:]])
    cum = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum, [0, cum[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def make_grid(images, ncols=8):
    """Tile ``N1HW`` or ``N3HW`` images into one ``3HW`` array, ``ncols`` per row."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = int(np.ceil(n / ncols))
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor, input_format):
    """Reorder an image array in ``input_format`` (``NCHW``, ``HWC``, ``HW``, ...) into ``HWC`` with 3 channels."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {input_format}")
    if tensor.ndim != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {tensor.shape}, "
                             f"input_format: {input_format}")
    fmt = input_format.upper()
    if len(fmt) == 4:
        return make_grid(tensor.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    return np.stack([tensor.transpose([fmt.find(c) for c in "HW"])] * 3, 2)


def _to_uint8(array):
    """Pixels as ``uint8``: floats are taken in ``[0, 1]``, ``uint8`` as it is; out-of-range values are clipped."""
    return (array.astype(np.float32) * (1 if array.dtype == np.uint8 else 255)).clip(0, 255).astype(np.uint8)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """A ``Summary`` with a PNG image; floats are taken in ``[0, 1]``, ``uint8`` in ``[0, 255]``."""
    tensor = convert_to_HWC(make_np(tensor), dataformats)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(_to_uint8(tensor), rescale=rescale))])


def image_boxes(tag, tensor_image, tensor_boxes, rescale=1, dataformats="CHW", labels=None):
    """A ``Summary`` with a PNG image and boxes ``(xmin, ymin, xmax, ymax)`` drawn on it."""
    tensor_image = convert_to_HWC(make_np(tensor_image), dataformats)
    img = make_image(_to_uint8(tensor_image), rescale=rescale, rois=make_np(tensor_boxes), labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=img)])


def _draw_box(image, xmin, ymin, xmax, ymax, display_str, color="black", color_text="black", thickness=2):
    from PIL import ImageDraw, ImageFont
    font = ImageFont.load_default()
    draw = ImageDraw.Draw(image)
    draw.line([(xmin, ymin), (xmin, ymax), (xmax, ymax), (xmax, ymin), (xmin, ymin)], width=thickness, fill=color)
    if display_str:
        left, top, right, bottom = font.getbbox(display_str)
        tw, th = right - left, bottom - top
        margin = np.ceil(0.05 * th)
        draw.rectangle([(xmin, ymax - th - 2 * margin), (xmin + tw, ymax)], fill=color)
        draw.text((xmin + margin, ymax - th - margin), display_str, fill=color_text, font=font)
    return image


def make_image(tensor, rescale=1, rois=None, labels=None):
    """Encode an ``HWC`` ``uint8`` array as a PNG ``Summary.Image`` (needs Pillow)."""
    from PIL import Image
    height, width, channel = tensor.shape
    img = Image.fromarray(tensor)
    if rois is not None:
        for i in range(rois.shape[0]):
            img = _draw_box(img, *rois[i, :4], display_str=None if labels is None else labels[i], color="Red")
    img = img.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    with io.BytesIO() as out:
        img.save(out, format="PNG")
        data = out.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channel, encoded_image_string=data)


def _prepare_video(v):
    b, t, c, h, w = v.shape
    if v.dtype == np.uint8:
        v = np.float32(v) / 255.0
    if b & (b - 1):
        v = np.concatenate((v, np.zeros((2 ** b.bit_length() - b, t, c, h, w))), axis=0)
    n_rows = 2 ** ((b.bit_length() - 1) // 2)
    n_cols = v.shape[0] // n_rows
    v = np.reshape(v, (n_rows, n_cols, t, c, h, w)).transpose(2, 0, 4, 1, 5, 3)
    return np.reshape(v, (t, n_rows * h, n_cols * w, c))


def video(tag, tensor, fps=4):
    """A ``Summary`` with a GIF of a ``(N, T, C, H, W)`` video batch tiled into a grid (needs moviepy)."""
    return Summary(value=[Summary.Value(tag=tag, image=make_video(_to_uint8(_prepare_video(make_np(tensor))), fps))])


def make_video(tensor, fps):
    """Encode a ``(T, H, W, C)`` ``uint8`` array as a GIF ``Summary.Image``; ``None`` without moviepy."""
    try:
        from moviepy import editor as mpy
    except ImportError:
        try:
            import moviepy as mpy
            mpy.ImageSequenceClip
        except (ImportError, AttributeError):
            print("add_video needs package moviepy")
            return None
    import tempfile
    _, h, w, c = tensor.shape
    clip = mpy.ImageSequenceClip(list(tensor), fps=fps)
    with tempfile.NamedTemporaryFile(suffix=".gif") as f:
        clip.write_gif(f.name, logger=None)
        f.seek(0)
        data = f.read()
    return Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=data)


def audio(tag, tensor, sample_rate=44100):
    """A ``Summary`` with mono audio in ``[-1, 1]`` encoded as 16-bit WAV."""
    import wave
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as fio:
        with wave.open(fio, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(sample_rate)
            wav.writeframes(array.data)
        data = fio.getvalue()
    snd = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=array.shape[-1],
                        encoded_audio_string=data, content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=snd)])


def text(tag, text):
    """A ``Summary`` with a (markdown) string, under ``tag + '/text_summary'``."""
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=smd, tensor=proto)])


def custom_scalars(layout):
    """A ``Summary`` with a custom-scalars layout ``{category: {title: ['Multiline'|'Margin', tags]}}``."""
    categories = []
    for category, charts in layout.items():
        protos = []
        for title, (kind, tags) in ((k, v[:2]) for k, v in charts.items()):
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
                protos.append(layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                protos.append(layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=protos))
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    proto = TensorProto(dtype="DT_STRING", string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                        tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto, metadata=smd)])


def _pr_summary(tag, data, num_thresholds):
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves", content=content))
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in data.shape[:2]]))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A ``Summary`` with a precision-recall curve given by its counts (at most 127 thresholds)."""
    return _pr_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)), min(num_thresholds, 127))


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """A ``Summary`` with the precision-recall curve of ``predictions`` in ``[0, 1]`` against binary ``labels``."""
    num_thresholds = min(num_thresholds, 127)
    return _pr_summary(tag, compute_curve(labels, predictions, num_thresholds, weights), num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """Rows ``tp, fp, tn, fn, precision, recall`` at ``num_thresholds`` thresholds evenly spaced in ``[0, 1]``."""
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    labels = labels.astype(np.float64)
    kw = dict(bins=num_thresholds, range=(0, num_thresholds - 1))
    tp = np.cumsum(np.histogram(buckets, weights=labels * weights, **kw)[0][::-1])[::-1]
    fp = np.cumsum(np.histogram(buckets, weights=(1.0 - labels) * weights, **kw)[0][::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The experiment, session-start and session-end ``Summary`` protos of the ``hparams`` plugin."""
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.metadata import (EXPERIMENT_TAG, PLUGIN_DATA_VERSION, PLUGIN_NAME,
                                                      SESSION_END_INFO_TAG, SESSION_START_INFO_TAG)
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")

    hps, ssi = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            ssi.hparams[k].number_value = make_np(v)[0]
            hps.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        if isinstance(v, (int, float)):
            field, dtype = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            field, dtype = "string_value", "DATA_TYPE_STRING"
        else:
            raise ValueError("value should be one of int, float, str, bool, or ember.Tensor")
        setattr(ssi.hparams[k], field, v)
        domain = (struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in hparam_domain_discrete[k]])
                  if k in hparam_domain_discrete else None)
        hps.append(HParamInfo(name=k, type=DataType.Value(dtype), domain_discrete=domain))

    def summary(tag, **content):
        data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
        smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME, content=data))
        return Summary(value=[Summary.Value(tag=tag, metadata=smd)])

    exp = Experiment(hparam_infos=hps, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (summary(EXPERIMENT_TAG, experiment=exp), summary(SESSION_START_INFO_TAG, session_start_info=ssi),
            summary(SESSION_END_INFO_TAG, session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))


def mesh(tag, vertices, colors, faces, config_dict, display_name=None, description=None):
    """A ``Summary`` with a 3D mesh: ``(B, N, 3)`` vertices, optional colors and faces, for the ``mesh`` plugin."""
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
    json_config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    parts = [(t, kind) for t, kind in ((vertices, MeshPluginData.VERTEX), (faces, MeshPluginData.FACE),
                                       (colors, MeshPluginData.COLOR)) if t is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    values = []
    for t, kind in parts:
        a = make_np(t) if isinstance(t, Tensor) else np.asarray(t)
        smd = metadata.create_summary_metadata(tag, display_name, kind, components, a.shape, description,
                                               json_config=json_config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=a.reshape(-1).tolist(),
                            tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in a.shape[:3]]))
        values.append(Summary.Value(tag=metadata.get_instance_name(tag, kind), tensor=proto, metadata=smd))
    return Summary(value=values)
