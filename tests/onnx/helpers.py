"""Shared checks: export an ember model, run the file in onnxruntime and through ember.onnx.load, compare."""
import io

import numpy as np
import pytest

import ember

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from ember.onnx._trace import flatten  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6


def export_bytes(model, args, **kwargs):
    buf = io.BytesIO()
    ember.onnx.export(model, args, buf, **kwargs)
    return buf.getvalue()


def session(data):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])


def ort_run(data, args):
    sess = session(data)
    tensors = flatten(list(args))
    return sess.run(None, {i.name: t.numpy() for i, t in zip(sess.get_inputs(), tensors)})


def reference(model, args):
    with ember.no_grad():
        return [t.numpy() for t in flatten([model(*args)])]


def assert_close(got, ref, rtol=RTOL, atol=ATOL):
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        g = g.detach().numpy() if isinstance(g, ember.Tensor) else np.asarray(g)
        assert g.shape == r.shape, (g.shape, r.shape)
        np.testing.assert_allclose(g, r, rtol=rtol, atol=atol)


def check(model, args, dynamic_axes=None, others=(), load=True, rtol=RTOL, atol=ATOL, **kwargs):
    """Exports ``model(*args)`` and checks onnxruntime (and the file loaded back into ember) against ember on
    ``args`` and on each tuple of ``others`` (inputs at other sizes of the dynamic axes)."""
    args = args if isinstance(args, tuple) else (args,)
    data = export_bytes(model, args, dynamic_axes=dynamic_axes, **kwargs)
    onnx.checker.check_model(onnx.load_from_string(data))
    loaded = ember.onnx.load(data) if load else None
    for a in (args,) + tuple(o if isinstance(o, tuple) else (o,) for o in others):
        ref = reference(model, a)
        assert_close(ort_run(data, a), ref, rtol, atol)
        if loaded is not None:
            with ember.no_grad():
                assert_close(flatten([loaded(*flatten(list(a)))]), ref, rtol, atol)
    return data
