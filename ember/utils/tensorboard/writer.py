"""``SummaryWriter``: the high-level API to log scalars, histograms, images, text, hparams, embeddings, ... to event
files under ``log_dir``; ``FileWriter`` appends ``Event`` protos to one event file."""
import math
import os
import time

import numpy as np
from tensorboard.compat import tf
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .summary import (audio, custom_scalars, histogram, histogram_raw, hparams, image, image_boxes, make_grid, make_np,
                      mesh, pr_curve, pr_curve_raw, scalar, tensor_proto, text, video)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` protos to an event file in ``log_dir``, asynchronously, flushing every ``flush_secs``."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        """Directory where the event file is written."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        """Add an ``Event`` at ``step`` (wall time now unless ``walltime``)."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        """Add a ``Summary`` proto as an event."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_onnx_graph(self, graph, walltime=None):
        """Add a ``GraphDef`` proto as an event."""
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self):
        """Write pending events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self):
        """Reopen a closed writer (a new event file in the same directory)."""
        self.event_writer.reopen()


def _default_bins():
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


class SummaryWriter:
    """Writes entries to event files in ``log_dir`` for TensorBoard, asynchronously.

    Args:
        log_dir (str): directory; default ``runs/CURRENT_DATETIME_HOSTNAME`` + ``comment``.
        comment (str): suffix of the default ``log_dir``; ignored if ``log_dir`` is given.
        purge_step (int): discard in TensorBoard the events at or after this step (resuming after a crash).
        max_queue (int): pending events before a forced flush. Default: 10.
        flush_secs (int): seconds between flushes. Default: 120.
        filename_suffix (str): suffix of the event file names.

    Example::

        >>> with SummaryWriter("runs/exp1") as writer:
        ...     writer.add_scalar("loss/train", loss.item(), step)
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def get_logdir(self):
        """Directory where event files are written."""
        return self.log_dir

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """Add hyperparameters and their metrics for the HParams dashboard, in the sub-run ``run_name``
        (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for s in (exp, ssi, sei):
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False, double_precision=False):
        """Add a scalar (a number, or a one-element tensor or array)."""
        self._add(scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision), global_step,
                  walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Add several scalars in one chart: each goes to the sub-run ``log_dir/main_tag_tag``."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if fw_tag not in self.all_writers:
                self.all_writers[fw_tag] = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers[fw_tag].add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Add a whole tensor."""
        self._add(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """Add a histogram of ``values``; ``bins`` is ``'tensorflow'`` (exponential buckets) or any
        ``numpy.histogram`` bins (``'auto'``, ``'fd'``, an int, edges, ...)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts, global_step=None,
                          walltime=None):
        """Add a histogram given by its statistics and bucket upper limits and counts."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts), global_step,
                  walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Add an image: float in ``[0, 1]`` or ``uint8``, laid out as ``dataformats`` (``CHW``, ``HWC``, ``HW``)."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Add a batch of images tiled into a grid (``NCHW`` or ``NHWC``)."""
        self._add(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None, rescale=1,
                             dataformats="CHW", labels=None):
        """Add an image with boxes ``(xmin, ymin, xmax, ymax)`` drawn on it, optionally labelled."""
        if labels is not None:
            labels = [labels] if isinstance(labels, str) else labels
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._add(image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats, labels=labels),
                  global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Render a matplotlib figure (or a list of them) into an image."""
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats="NCHW" if isinstance(figure, list) else "CHW")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """Add a ``(N, T, C, H, W)`` video as a GIF (needs moviepy)."""
        self._add(video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Add mono audio with samples in ``[-1, 1]``."""
        self._add(audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Add a (markdown) string."""
        self._add(text(tag, text_string), global_step, walltime)

    def add_onnx_graph(self, prototxt):
        """Add the graph of an ONNX model file (needs onnx)."""
        self._get_file_writer().add_onnx_graph(_onnx_graph(prototxt))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not supported: ember has no JIT tracer to build the graph from."""
        raise NotImplementedError("SummaryWriter.add_graph is not supported in ember (it needs a JIT trace of the "
                                  "model); export the model with ember.onnx.export and use add_onnx_graph instead")

    @staticmethod
    def _encode(rawstr):
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Add an ``(N, D)`` embedding for the Projector, with optional per-point ``metadata`` (labels, or rows
        under ``metadata_header``) and ``label_img`` thumbnails ``(N, C, H, W)``."""
        from google.protobuf import text_format
        from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig
        mat = make_np(mat)
        global_step = 0 if global_step is None else global_step
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        logdir = self._get_file_writer().get_logdir()
        save_path = os.path.join(logdir, subdir)
        fs = tf.io.gfile
        if fs.exists(save_path):
            if not fs.isdir(save_path):
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            fs.makedirs(save_path)
        info = EmbeddingInfo(tensor_name=f"{tag}:{str(global_step).zfill(5)}", tensor_path=subdir + "/tensors.tsv")
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            if metadata_header:
                if len(metadata_header) != len(metadata[0]):
                    raise AssertionError("len of header must be equal to the number of columns in metadata")
                rows = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
            else:
                rows = [str(x) for x in metadata]
            _write(save_path, "metadata.tsv", "\n".join(rows) + "\n")
            info.metadata_path = subdir + "/metadata.tsv"
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _write(save_path, "sprite.png", _sprite(make_np(label_img)))
            info.sprite.image_path = subdir + "/sprite.png"
            info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        _write(save_path, "tensors.tsv", "".join("\t".join(str(v.item()) for v in row) + "\n" for row in mat))
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend([info])
        _write(logdir, "projector_config.pbtxt", text_format.MessageToString(self._projector_config))

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """Add a precision-recall curve of ``predictions`` (probabilities) against binary ``labels``."""
        self._add(pr_curve(tag, make_np(labels), make_np(predictions), num_thresholds, weights), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127, weights=None,
                         walltime=None):
        """Add a precision-recall curve from its counts per threshold."""
        summary = pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                               false_negative_counts, precision, recall, num_thresholds, weights)
        self._add(summary, global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        """Add a custom-scalars chart plotting ``tags`` together."""
        self._add(custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        """Add a custom-scalars chart of a value and its lower and upper bounds (three tags)."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._add(custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout):
        """Add a custom-scalars layout ``{category: {title: ['Multiline'|'Margin', tags]}}``."""
        self._add(custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None, global_step=None, walltime=None):
        """Add a 3D mesh or point cloud: ``(B, N, 3)`` vertices, optional ``colors`` and ``faces``."""
        self._add(mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def flush(self):
        """Write pending events of all the writer's files to disk."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        """Flush and close all event files; a later ``add_*`` opens new ones."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


def _onnx_graph(fname):
    import onnx
    from tensorboard.compat.proto.attr_value_pb2 import AttrValue
    from tensorboard.compat.proto.graph_pb2 import GraphDef
    from tensorboard.compat.proto.node_def_pb2 import NodeDef
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.compat.proto.versions_pb2 import VersionDef
    graph, nodes = onnx.load(fname).graph, []
    for v in list(graph.input) + list(graph.output):
        shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d.dim_value) for d in v.type.tensor_type.shape.dim])
        nodes.append(NodeDef(name=v.name, op="Variable", input=[], attr={
            "dtype": AttrValue(type=v.type.tensor_type.elem_type), "shape": AttrValue(shape=shape)}))
    for node in graph.node:
        params = ", ".join(" = ".join(str(f[1]) for f in a.ListFields()) for a in node.attribute)
        nodes.append(NodeDef(name=node.output[0], op=node.op_type, input=node.input,
                             attr={"parameters": AttrValue(s=params.encode("utf_8"))}))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))


def _write(directory, name, data):
    with tf.io.gfile.GFile(os.path.join(directory, name), "wb") as f:
        f.write(tf.compat.as_bytes(data) if isinstance(data, str) else data)


def _sprite(label_img):
    import io
    from PIL import Image
    grid = make_grid(label_img, ncols=math.ceil(label_img.shape[0] ** 0.5))
    square = np.zeros((grid.shape[2], grid.shape[2], 3))
    square[:grid.shape[1]] = grid.transpose(1, 2, 0)
    with io.BytesIO() as buf:
        Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(buf, format="PNG")
        return buf.getvalue()


def figure_to_image(figures, close=True):
    """Render a matplotlib figure to a ``CHW`` ``uint8`` array (a list of figures to ``NCHW``)."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        w, h = figure.canvas.get_width_height()
        data = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape([h, w, 4])[:, :, :3]
        if close:
            plt.close(figure)
        return np.moveaxis(data, 2, 0)

    return np.stack([render(f) for f in figures]) if isinstance(figures, list) else render(figures)
