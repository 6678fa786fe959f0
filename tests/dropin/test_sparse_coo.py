"""Sparse COO tensors as GNN code uses them (Kipf's pygcn, GCNs with learned edge weights) against torch: the
constructors, coalescing, products and their gradients, reductions, conversions, repr and errors."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import ember
from ember._sparse import _spmm, spmm_reference

warnings.filterwarnings("ignore", "Sparse invariant checks")

LIBS = (ember, torch)
I = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # (0, 2) twice: uncoalesced
V = [3.0, 4.0, 5.0, 6.0, -1.0]


def _np(t):
    t = t.detach()
    if t.is_sparse:
        t = t.to_dense()
    return t.numpy()


def _close(e, t, rtol=1e-6, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert e.is_sparse == t.is_sparse
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _same_sparse(e, t):
    """Same layout, size, coalesced flag, nnz, indices and values."""
    _close(e, t)
    assert e.is_coalesced() == t.is_coalesced() and e._nnz() == t._nnz()
    assert e.sparse_dim() == t.sparse_dim() and e.dense_dim() == t.dense_dim()
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    np.testing.assert_allclose(_np(e._values()), _np(t._values()), rtol=1e-6)


def _both(fn):
    return [fn(m) for m in LIBS]


def _a(m, dtype=None):
    return m.sparse_coo_tensor(m.tensor(I), m.tensor(V, dtype=dtype), (3, 3))


# -- pygcn ---------------------------------------------------------------------------------------------------------
def _normalized_adj(n=12, seed=0):
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, n)) < 0.25).astype(np.float32)
    adj = sp.coo_matrix(np.maximum(dense, dense.T) + np.eye(n, dtype=np.float32))
    rowsum = np.array(adj.sum(1))
    r_inv = np.power(rowsum, -1.0).flatten()
    r_inv[np.isinf(r_inv)] = 0.0
    return sp.diags(r_inv).dot(adj).tocoo().astype(np.float32)


def sparse_mx_to_torch_sparse_tensor(torch, sparse_mx):
    """pygcn's utils.py, verbatim."""
    sparse_mx = sparse_mx.tocoo().astype(np.float32)
    indices = torch.from_numpy(np.vstack((sparse_mx.row, sparse_mx.col)).astype(np.int64))
    values = torch.from_numpy(sparse_mx.data)
    shape = torch.Size(sparse_mx.shape)
    return torch.sparse.FloatTensor(indices, values, shape)


def _pygcn(torch, adj_mx, feats, labels, w1, w2, steps=5):
    import math
    nn, F = torch.nn, torch.nn.functional

    class GraphConvolution(nn.Module):
        def __init__(self, in_features, out_features, bias=True):
            super().__init__()
            self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
            self.bias = nn.Parameter(torch.FloatTensor(out_features)) if bias else None
            stdv = 1. / math.sqrt(self.weight.size(1))
            self.weight.data.uniform_(-stdv, stdv)
            if self.bias is not None:
                self.bias.data.uniform_(-stdv, stdv)

        def forward(self, input, adj):
            support = torch.mm(input, self.weight)
            output = torch.spmm(adj, support)
            return output + self.bias if self.bias is not None else output

    class GCN(nn.Module):
        def __init__(self, nfeat, nhid, nclass):
            super().__init__()
            self.gc1, self.gc2 = GraphConvolution(nfeat, nhid), GraphConvolution(nhid, nclass)

        def forward(self, x, adj):
            x = F.relu(self.gc1(x, adj))
            return F.log_softmax(self.gc2(x, adj), dim=1)

    model = GCN(w1.shape[0], w1.shape[1], w2.shape[1])
    with torch.no_grad():
        model.gc1.weight.copy_(torch.tensor(w1))
        model.gc2.weight.copy_(torch.tensor(w2))
        model.gc1.bias.zero_()
        model.gc2.bias.fill_(0.1)
    adj = sparse_mx_to_torch_sparse_tensor(torch, adj_mx)
    features, labels = torch.tensor(feats), torch.tensor(labels)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses = []
    for _ in range(steps):
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[:8], labels[:8])
        loss_train.backward()
        optimizer.step()
        losses.append(loss_train.item())
    return losses, adj, model.gc1.weight.detach().numpy().copy()


def test_pygcn_training_matches_torch():
    rng = np.random.default_rng(1)
    adj_mx = _normalized_adj()
    feats = rng.standard_normal((12, 6)).astype(np.float32)
    labels = rng.integers(0, 3, 12)
    w1, w2 = rng.standard_normal((6, 8)).astype(np.float32) * 0.3, rng.standard_normal((8, 3)).astype(np.float32)
    (le, ae, we), (lt, at, wt) = (_pygcn(m, adj_mx, feats, labels, w1, w2) for m in LIBS)
    assert isinstance(ae, ember.sparse.FloatTensor) and isinstance(ae, ember.Tensor)
    assert ae.layout is ember.sparse_coo and ae.is_sparse and not ae.is_coalesced()
    _same_sparse(ae, at)
    np.testing.assert_allclose(le, lt, rtol=1e-5)
    assert le[-1] < le[0]
    np.testing.assert_allclose(we, wt, rtol=1e-4, atol=1e-5)


def test_gcn_learned_edge_weights_gradients():
    """``sparse_coo_tensor(edge_index, edge_weight)`` with edge weights that require grad, used through
    ``sparse.mm``, ``@``, ``torch.mm`` and ``torch.matmul``: gradients reach the weights and the features."""
    rng = np.random.default_rng(2)
    n, e = 7, 15
    ei = rng.integers(0, n, (2, e))
    w, x, g = rng.random(e).astype(np.float32), rng.standard_normal((n, 4)).astype(np.float32), \
        rng.standard_normal((n, 4)).astype(np.float32)
    res = []
    for m in LIBS:
        wt, xt = m.tensor(w, requires_grad=True), m.tensor(x, requires_grad=True)
        adj = m.sparse_coo_tensor(m.tensor(ei), wt.sigmoid(), (n, n))
        assert adj.requires_grad and not adj.is_leaf
        out = m.sparse.mm(adj, xt) + adj @ xt * 0.5 + m.mm(adj, xt).tanh() + m.matmul(adj, xt[:, 0])[:, None]
        out.backward(m.tensor(g))
        res.append((out, wt.grad, xt.grad, adj))
    for a, b in zip(res[0][:3], res[1][:3]):
        _close(a, b, rtol=1e-5, atol=1e-5)
    assert res[0][3].grad_fn.name() == res[1][3].grad_fn.name()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_spmm_gradients(dtype):
    rng = np.random.default_rng(3)
    x, g = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    res = []
    for m in LIBS:
        dt = getattr(m, dtype)
        v, xt = m.tensor(V, dtype=dt, requires_grad=True), m.tensor(x, dtype=dt, requires_grad=True)
        y = m.sparse.mm(m.sparse_coo_tensor(m.tensor(I), v, (3, 3)), xt)
        gv, gx = m.autograd.grad(y, (v, xt), m.tensor(g, dtype=dt))
        res.append((y, gv, gx))
    for a, b in zip(*res):
        _close(a, b, rtol=1e-5, atol=1e-6)


def test_spmm_gradgradcheck():
    """Second order (torch's sparse backward is not differentiable): checked numerically."""
    rng = np.random.default_rng(6)
    v = ember.tensor(rng.standard_normal(5), requires_grad=True)
    x = ember.tensor(rng.standard_normal((3, 2)), requires_grad=True)

    def f(v, x):
        return ember.sparse.mm(ember.sparse_coo_tensor(ember.tensor(I), v, (3, 3)), x)
    assert ember.autograd.gradcheck(f, (v, x)) and ember.autograd.gradgradcheck(f, (v, x))


def test_sparse_leaf_gets_sparse_grad():
    res = []
    for m in LIBS:
        a = m.sparse_coo_tensor(m.tensor(I)[:, 1:], m.tensor(V[1:]), (3, 3), requires_grad=True)
        assert a.is_leaf and a.requires_grad and a.grad is None
        x = m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        (m.sparse.mm(a, x).sin().sum() + (a.to_dense() * m.arange(9.0).reshape(3, 3)).sum()).backward()
        res.append((a.grad, x.grad))
    assert res[0][0].is_sparse
    _same_sparse(res[0][0].coalesce(), res[1][0].coalesce())
    _close(res[0][1], res[1][1])
    a = ember.sparse_coo_tensor(I, V, (3, 3))
    a.requires_grad_()
    assert a.requires_grad and a._values().is_leaf
    a.grad = None


def test_to_dense_and_values_gradients():
    g = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    res = []
    for m in LIBS:
        v = m.tensor(V, requires_grad=True)
        a = m.sparse_coo_tensor(m.tensor(I), v * 2, (3, 3))
        d = a.to_dense()
        c = a.coalesce()
        (d * m.tensor(g)).sum().backward(retain_graph=True)
        g1 = v.grad.clone()
        v.grad = None
        (c.values() * m.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        res.append((d, g1, v.grad, c))
    for a, b in zip(res[0][:3], res[1][:3]):
        _close(a, b)
    _same_sparse(res[0][3], res[1][3])


# -- construction, metadata, repr -------------------------------------------------------------------------------
def test_metadata_and_accessors():
    e, t = _both(_a)
    _same_sparse(e, t)
    for name in ("shape", "ndim", "layout", "is_sparse", "requires_grad", "is_leaf"):
        assert str(getattr(e, name)).replace("ember", "torch") == str(getattr(t, name)), name
    for name in ("size", "dim", "numel", "sparse_dim", "dense_dim", "_nnz", "is_coalesced", "__len__"):
        assert getattr(e, name)() == getattr(t, name)(), name
    assert e.size(-1) == 3 and e.dtype is ember.float32 and e.device == ember.device("cpu")
    assert isinstance(e, ember.Tensor) and not ember.ones(2).is_sparse and ember.ones(2).layout is ember.strided
    for m, x in zip(LIBS, (e, t)):
        with pytest.raises(RuntimeError, match="uncoalesced"):
            x.values()
        with pytest.raises(RuntimeError, match="uncoalesced"):
            x.indices()
    ce, ct = e.coalesce(), t.coalesce()
    _same_sparse(ce, ct)
    assert ce.coalesce() is ce and ce.indices().dtype is ember.int64
    np.testing.assert_array_equal(ce.indices().numpy(), ct.indices().numpy())
    np.testing.assert_array_equal(ce.values().numpy(), ct.values().numpy())


def test_repr_matches_torch():
    cases = [
        lambda m: _a(m),
        lambda m: _a(m, m.float64).requires_grad_(),
        lambda m: m.sparse_coo_tensor(m.tensor(I), m.tensor(V, requires_grad=True) * 1, (3, 3)),
        lambda m: m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.long), m.zeros(0), (2, 3)),
        lambda m: m.sparse_coo_tensor(m.tensor(I), m.ones(5, 2), (3, 3, 2)),
        lambda m: m.eye(3).to_sparse(),
    ]
    for make in cases:
        e, t = _both(make)
        assert repr(e).replace("ember.", "torch.") == repr(t)


def test_constructor_variants():
    for make in [
        lambda m: m.sparse_coo_tensor(I, V),  # size inferred
        lambda m: m.sparse_coo_tensor(I, V, [4, 5], dtype=m.float64),
        lambda m: m.sparse_coo_tensor(m.tensor(I, dtype=m.int32), m.tensor([1, 2, 3, 4, 5]), (3, 3)),
        lambda m: m.sparse_coo_tensor(m.tensor(I), m.ones(5, 2), (3, 3, 2)),
        lambda m: m.sparse_coo_tensor(m.tensor(I)[:, :1], m.tensor(V[:1]), (3, 3)),  # one entry: coalesced
        lambda m: m.sparse_coo_tensor(I, V, (3, 3), is_coalesced=False, check_invariants=True),
        lambda m: m.sparse.FloatTensor(m.tensor(I), m.tensor(V)),
        lambda m: m.sparse.FloatTensor(2, 3),
        lambda m: m.sparse.DoubleTensor(m.tensor(I), m.tensor(V, dtype=m.float64), m.Size([3, 3])),
    ]:
        e, t = _both(make)
        _same_sparse(e, t)
    assert not isinstance(_a(ember), ember.sparse.DoubleTensor) and not isinstance(ember.ones(2), ember.sparse.FloatTensor)


@pytest.mark.parametrize("make", [
    lambda m: m.sparse_coo_tensor(I, V, (3, 2), check_invariants=True),  # size is inconsistent with indices
    lambda m: m.sparse_coo_tensor([[0, -1], [1, 1]], [1.0, 2.0], (2, 2), check_invariants=True),
    lambda m: m.sparse_coo_tensor(I, V[:3], (3, 3)),
    lambda m: m.sparse_coo_tensor(I, V, (3,)),
    lambda m: m.sparse_coo_tensor(I, V, (3, 3, 2)),
])
def test_constructor_errors(make):
    with pytest.raises(RuntimeError) as te:
        make(torch)
    with pytest.raises(RuntimeError) as ee:
        make(ember)
    assert str(ee.value) == str(te.value).split("\n")[0]


# -- ops ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda m, a: a.coalesce(),
    lambda m, a: a.t(),
    lambda m, a: a.coalesce().t(),
    lambda m, a: a.transpose(0, 1),
    lambda m, a: a * 2.5,
    lambda m, a: 2.5 * a.coalesce(),
    lambda m, a: a / 2,
    lambda m, a: -a,
    lambda m, a: a.coalesce() + a.coalesce() * 3,
    lambda m, a: (a.coalesce() - a.t().coalesce()).coalesce(),
    lambda m, a: a.mul(m.arange(9.0).reshape(3, 3)),
    lambda m, a: a.coalesce() * m.tensor([1.0, -2.0, 3.0]),
    lambda m, a: m.arange(9.0).reshape(3, 3) * a,
    lambda m, a: a.coalesce() * a.t().coalesce(),
    lambda m, a: m.sparse.sum(a, dim=1),
    lambda m, a: m.sparse.sum(a, dim=0),
    lambda m, a: m.sparse.sum(a),
    lambda m, a: m.sparse.sum(a, dim=(0, 1)),
    lambda m, a: a.sum(),
    lambda m, a: a.sum(1),
    lambda m, a: m.sparse.softmax(a, 1),
    lambda m, a: m.sparse.softmax(a, 0),
    lambda m, a: m.sparse.log_softmax(a, 1),
    lambda m, a: m.sparse.mm(a, a.t()),
    lambda m, a: m.matmul(a, m.ones(3)),
    lambda m, a: a @ m.ones(3),
    lambda m, a: m.ones(2, 3) @ a,
    lambda m, a: m.mm(m.ones(2, 3), a),
    lambda m, a: m.sparse.addmm(m.ones(3, 2), a, m.ones(3, 2), beta=0.5, alpha=2.0),
    lambda m, a: m.ones(3, 3) + a,
    lambda m, a: m.ones(3, 3) - a,
    lambda m, a: a.to(m.float64),
    lambda m, a: a.double(),
    lambda m, a: a.long(),
    lambda m, a: a.clone(),
    lambda m, a: a.detach(),
    lambda m, a: a.to_dense(),
    lambda m, a: a.to_sparse(),
    lambda m, a: a.to_dense().to_sparse(),
    lambda m, a: m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(sparse_dim=1),
    lambda m, a: m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(layout=m.sparse_coo),
    lambda m, a: m.zeros(2, 3).to_sparse_coo(),
    lambda m, a: m.eye(4).to_sparse(),
])
def test_ops_match_torch(op):
    e, t = (op(m, _a(m)) for m in LIBS)
    if t.is_sparse:
        _same_sparse(e, t)
    else:
        _close(e, t)


def test_sparse_ops_gradients():
    rng = np.random.default_rng(4)
    res = []
    for m in LIBS:
        v = m.tensor(V, requires_grad=True)
        x = m.tensor(rng.standard_normal((3, 3)).astype(np.float32), requires_grad=True)
        a = m.sparse_coo_tensor(m.tensor(I), v, (3, 3)).coalesce()
        deg = m.sparse.sum(a, dim=1).to_dense()
        att = m.sparse.softmax(a * x, 1)
        y = m.sparse.mm(att, x) * deg[:, None] + (a.t() * 2).to_dense() + m.sparse.log_softmax(a, 0).to_dense()
        y.backward(m.tensor(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)))
        res.append((y, v.grad, x.grad))
        rng = np.random.default_rng(4)
    for a, b in zip(*res):
        _close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16])
def test_spmm_kernel_matches_reference(dtype):
    rng = np.random.default_rng(5)
    rows, cols = rng.integers(0, 50, 300), rng.integers(0, 40, 300)  # with duplicates
    vals, dense = (rng.standard_normal(300) * 4).astype(dtype), (rng.standard_normal((40, 7)) * 4).astype(dtype)
    got, ref = _spmm(np, rows, cols, vals, dense, 50), spmm_reference(np, rows, cols, vals, dense, 50)
    assert got.dtype == ref.dtype == dtype
    half = dtype == np.float16
    np.testing.assert_allclose(got, ref, rtol=1e-2 if half else 1e-5, atol=1e-2 if half else 1e-6)


@pytest.mark.parametrize("call", [
    lambda m, a: a.exp(),
    lambda m, a: a + m.ones(3, 3),
    lambda m, a: m.add(a, 1),
    lambda m, a: m.sparse.mm(a, m.ones(2, 2)),
    lambda m, a: m.sparse.mm(a, m.ones(3, 2, dtype=m.float64)),
    lambda m, a: a.view(9),
    lambda m, a: a.data_ptr(),
    lambda m, a: a.add(m.sparse_coo_tensor(I, V, (3, 4))),
])
def test_unsupported_and_invalid_raise_runtime_error(call):
    with pytest.raises((RuntimeError, NotImplementedError)):
        call(torch, _a(torch))
    with pytest.raises(RuntimeError) as ee:
        call(ember, _a(ember))
    msg = str(ee.value)
    assert "sparse" in msg or "addmm" in msg or "expected scalar type" in msg


def test_numpy_conversion_error_and_dense_ops_message():
    a = _a(ember)
    with pytest.raises(TypeError, match="Sparse layout"):
        a.numpy()
    with pytest.raises(RuntimeError, match="sparse COO"):
        ember.relu(a)
    with pytest.raises(RuntimeError, match="sparse COO"):
        ember.cat([a, a])
