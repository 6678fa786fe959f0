import numpy as np
import pytest

import ember


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Each test starts from ember's defaults: grad mode on, float32 default dtype, anomaly detection off."""
    yield
    from ember.autograd.engine import ANOMALY
    from ember.autograd.grad_mode import STATE
    STATE.enabled, STATE.inference = True, False
    ANOMALY[0] = False
    ember.set_default_dtype(ember.float32)


DEVICES = ["cpu"] + (["cuda"] if ember.cuda.is_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(0)
