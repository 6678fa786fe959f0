"""Ops meeting inf, NaN or overflow stay quiet, as torch's do (NumPy warns), while NumPy code elsewhere keeps its
warnings. Checked in a fresh interpreter: pytest replaces the warning filters that ``import ember`` installs."""
import subprocess
import sys

CASES = """
m.tensor([INF, 1.0]) * 0
m.tensor([INF]) - m.tensor([INF])
m.tensor([1.0, 0.0]) / 0
m.tensor([-1.0, 0.0]).log()
m.tensor([-1.0]).sqrt()
m.tensor([1000.0]).exp()
m.tensor([10.0]) ** 100
m.tensor([60000.0]).half() * 2
m.tensor([INF, -INF]).sum()
m.tensor([INF, -INF]).mean()
m.tensor([[INF, 1.0]]) @ m.tensor([[0.0], [1.0]])
(m.nn.functional.linear(m.tensor([[INF, 1.0, 0.0]]), m.ones(2, 3, requires_grad=True)).sum() * INF).backward()
"""

SCRIPT = """
import sys, warnings
import numpy as np
m = __import__(sys.argv[1])
INF = float("inf")
for line in sys.argv[2].strip().splitlines():
    with warnings.catch_warnings(record=True) as caught:
        exec(line)
    for w in caught:
        print(line, "->", w.message)
with warnings.catch_warnings(record=True) as caught:
    np.log(np.zeros(1))
print("numpy warns:", [str(w.message) for w in caught])
"""


def _run(module):
    return subprocess.run([sys.executable, "-c", SCRIPT, module, CASES], capture_output=True, text=True,
                          check=True).stdout.strip().splitlines()


def test_ops_on_special_values_do_not_warn_like_torch():
    for module in ("torch", "ember"):
        assert _run(module) == ["numpy warns: ['divide by zero encountered in log']"], module
