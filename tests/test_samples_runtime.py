"""Run every sample pair under real torch and check what it really does.

For each rule AG001..AG018, ``samples/`` holds a buggy program and its fixed twin. The buggy one must
show the rule's runtime signature (RULES.md): an exception for error rules, a warning for AG011, and
for the silent rules a symptom measured from torch state after the program ran. The fixed twin must
run clean, without that signature and without the symptom.

Samples run in subprocesses (``sys.executable``), in parallel. Silent samples run through this file
used as a driver (``python tests/test_samples_runtime.py --probe NAME SAMPLE``): it may install a
hook, runs the sample with ``runpy``, then measures its globals and prints the result as JSON.
Nothing is mocked; the probes only observe (hooks, TorchFunctionMode, a ``.to("meta")`` move after the
run, torch's own fill of uninitialised memory).
"""
from __future__ import annotations

import ast
import json
import os
import re
import runpy
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sample_markers import SAMPLES_DIR, expected_markers, rule_code, sample_pairs

pytestmark = pytest.mark.slow  # torch runs in subprocesses

TIMEOUT_S = 120  # bounds a hung sample, not its speed: with xdist the other worker's torch runs share the cores
MEASURED = "@@MEASURED@@ "

RULE_NAMES = {
    "AG001": "inplace-on-leaf",
    "AG002": "stale-composed-weight",
    "AG003": "retain-graph-misuse",
    "AG004": "nonfloat-requires-grad",
    "AG005": "backward-nonscalar",
    "AG006": "inplace-on-saved-tensor",
    "AG007": "no-grad-alias",
    "AG008": "data-attribute",
    "AG009": "module-tensor-attribute",
    "AG010": "nondifferentiable-loss",
    "AG011": "deprecated-range",
    "AG012": "uninitialized-tensor",
    "AG013": "tensor-subscript-typo",
    "AG014": "requires-grad-toggle-after-forward",
    "AG015": "loss-accumulation-keeps-graph",
    "AG016": "missing-zero-grad",
    "AG017": "missing-detach-shared-graph",
    "AG018": "requires-grad-typo",
}
CODES = sorted(RULE_NAMES)

VERSION_ERROR = (
    r"RuntimeError: one of the variables needed for gradient computation has been modified by an "
    r"inplace operation: \[torch\.FloatTensor \[\d+\]\].* is at version \d+; expected version \d+ instead"
)


@dataclass(frozen=True)
class Raises:
    """An error rule: the buggy sample exits nonzero with ``pattern`` (a regex) in stderr.

    ``at`` says where the exception surfaces: ``"marker"`` (the first ``# expect`` line) or a piece of
    the source line it is raised from.
    """

    pattern: str
    at: str = "marker"


# What torch 2.13 really raises; see the notes at the end of this file for where RULES.md differs.
RAISES = {
    "AG001": Raises(r"RuntimeError: a leaf Variable that requires grad is being used in an in-place operation\."),
    # The retained graph of loss1 saved w2; the step after loss1.backward bumped w2's version, so the
    # second iteration's loss1.backward fails (the first iteration runs through).
    "AG003": Raises(VERSION_ERROR),
    # requires_grad_() on an int64 tensor. NB: the kwarg form (torch.tensor([1], requires_grad=True))
    # says "Only Tensors of floating point and complex dtype ..." instead.
    "AG004": Raises(r"RuntimeError: only Tensors of floating point dtype can require gradients"),
    "AG005": Raises(r"RuntimeError: grad can be implicitly created only for scalar outputs"),
    # The clamp_ is silent; the error comes at the next backward().
    "AG006": Raises(VERSION_ERROR.replace(r".* is at", r", which is output 0 of Sigmoid, is at"), at="loss.backward()"),
    "AG010": Raises(r"RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"),
    "AG013": Raises(r"TypeError: 'builtin_function_or_method' object is not subscriptable"),
    "AG017": Raises(r"RuntimeError: Trying to backward through the graph a second time"),
}

# Rules whose buggy sample runs to the end (exit 0); each gets a probe that measures the symptom.
PROBED = {
    "AG002": "conv_weights",
    "AG007": "alias",
    "AG008": "grad_consistency",
    "AG009": "device_move",
    "AG011": "grid",
    "AG012": "uninitialized",
    "AG014": "unfrozen_grad",
    "AG015": "kept_graph",
    "AG016": "grad_accumulation",
    "AG018": "frozen_embedding",
}

RANGE_WARNING = "UserWarning: torch.range is deprecated"


# --------------------------------------------------------------------------------------------------
# Probes. They run in the sample's subprocess (see _drive), never in the pytest process.
# Each is (before, after): before() runs ahead of the sample and returns a state, after(globals, state)
# returns a JSON-able dict of measurements.


def _conv_weights_before():
    """Record a copy of the weight every F.conv2d call receives."""
    import torch
    from torch.overrides import TorchFunctionMode

    class RecordConvWeights(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.weights = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if getattr(func, "__name__", "") == "conv2d":
                weight = kwargs["weight"] if "weight" in kwargs else args[1]
                self.weights.append(weight.detach().clone())
            return func(*args, **kwargs)

    mode = RecordConvWeights()
    mode.__enter__()
    return mode


def _conv_weights_after(g, mode):
    import torch

    mode.__exit__(None, None, None)
    used = mode.weights
    current = g["concatAB"](g["a"], g["b"]).detach()
    return {
        "conv_calls": len(used),
        "all_steps_used_first_weight": all(torch.equal(w, used[0]) for w in used),
        "sources_moved_since_first_step": not torch.equal(current, used[0]),
        "a_first_used": used[0][0, 0, 0, 0].item(),
        "a_now": g["a"].item(),
    }


def _alias_after(g, _):
    w, w_ref = g["w"], g["w_ref"]
    return {
        "ref_requires_grad": w_ref.requires_grad,
        "ref_shares_storage": w_ref.data_ptr() == w.data_ptr(),
        "ref_follows_w": bool((w_ref == w).all()),
        "w_moved_from_ref": bool((w_ref != w).any()),
        "last_proximal": g["proximal"].item(),
    }


def _grad_consistency_after(g, _):
    """Is w.grad the gradient of the loss at the weights the last forward used?"""
    import torch

    w_used = g["w_used"].clone().requires_grad_(True)
    (true_grad,) = torch.autograd.grad(g["critic_loss"](w_used, g["real"], g["fake"]), w_used)
    reported = g["w"].grad
    return {
        "grad_is_true_gradient": torch.allclose(reported, true_grad),
        "max_abs_error": (reported - true_grad).abs().max().item(),
    }


def _device_move_after(g, _):
    """Move the trained model to the meta device (stands in for CUDA) and look where its tensors went."""
    import torch

    model = g["model"].to("meta")
    try:
        model(torch.rand(2, 3, 8, 8, device="meta"))
        forward_error = None
    except RuntimeError as exc:
        forward_error = str(exc)
    return {
        "weight_device": model.conv.weight.device.type,
        "mean_device": model.mean.device.type,
        "std_device": model.std.device.type,
        "state_dict_keys": sorted(model.state_dict()),
        "forward_error_after_move": forward_error,
    }


def _grid_after(g, _):
    return {"grid": g["grid"].tolist(), "dtype": str(g["grid"].dtype)}


def _uninitialized_before():
    """torch's own sanitizer: with deterministic algorithms on, uninitialised memory is filled with NaN."""
    import torch
    import torch.utils.deterministic

    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True


def _uninitialized_after(g, _):
    import torch

    counts, labels = g["counts"], g["labels"]
    true_counts = torch.bincount(labels, minlength=g["num_classes"]).to(counts.dtype)
    return {
        "counts": counts.tolist(),
        "counts_finite": bool(torch.isfinite(counts).all()),
        "counts_match_bincount": torch.equal(counts, true_counts),
        "loss_finite": bool(torch.isfinite(g["loss"])),
    }


def _unfrozen_grad_after(g, _):
    weight = g["backbone"].weight
    return {"requires_grad": weight.requires_grad, "grad_is_none": weight.grad is None}


def _kept_graph_after(g, _):
    """Walk the autograd graph still reachable from total_loss; count the per-iteration loss nodes."""
    import torch

    total = g["total_loss"]
    if not isinstance(total, torch.Tensor):
        return {"type": type(total).__name__, "has_grad_fn": False, "loss_nodes": 0, "graph_nodes": 0}
    seen, stack = set(), [total.grad_fn]
    loss_nodes = 0
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        loss_nodes += type(node).__name__ == "MseLossBackward0"
        stack.extend(fn for fn, _ in node.next_functions)
    return {
        "type": "Tensor",
        "has_grad_fn": total.grad_fn is not None,
        "loss_nodes": loss_nodes,
        "graph_nodes": len(seen),
    }


def _grad_accumulation_before():
    """At every optimizer.step(), compare p.grad with the gradient the latest backward() produced.

    The fresh gradient is caught by a hook on each parameter (it sees the incoming gradient before it is
    accumulated into .grad). Hooks are attached at the first step, so steps 2.. are compared.
    """
    import torch
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    state = {"steps": [], "hooked": set(), "fresh": {}, "previous": {}}

    def pre_step(optimizer, args, kwargs):
        record = {"compared": False, "equals_fresh": True, "equals_previous_plus_fresh": True}
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                key = id(p)
                if key in state["fresh"]:
                    fresh = state["fresh"].pop(key)
                    previous = state["previous"].get(key, torch.zeros_like(fresh))
                    record["compared"] = True
                    record["equals_fresh"] &= torch.allclose(p.grad, fresh)
                    record["equals_previous_plus_fresh"] &= torch.allclose(p.grad, previous + fresh)
                state["previous"][key] = p.grad.detach().clone()
                if key not in state["hooked"]:
                    state["hooked"].add(key)
                    p.register_hook(lambda grad, key=key: state["fresh"].__setitem__(key, grad.detach().clone()))
        state["steps"].append(record)

    state["handle"] = register_optimizer_step_pre_hook(pre_step)
    return state


def _grad_accumulation_after(g, state):
    state["handle"].remove()
    return {"steps": state["steps"]}


def _frozen_embedding_after(g, _):
    weight = g["embedding"].weight
    in_optimizer = any(p is weight for group in g["optimizer"].param_groups for p in group["params"])
    return {
        "requires_grad": weight.requires_grad,
        "has_misspelled_attribute": hasattr(weight, "require_grad"),
        "in_optimizer": in_optimizer,
        "got_grad": weight.grad is not None,
    }


PROBES = {
    "conv_weights": (_conv_weights_before, _conv_weights_after),
    "alias": (None, _alias_after),
    "grad_consistency": (None, _grad_consistency_after),
    "device_move": (None, _device_move_after),
    "grid": (None, _grid_after),
    "uninitialized": (_uninitialized_before, _uninitialized_after),
    "unfrozen_grad": (None, _unfrozen_grad_after),
    "kept_graph": (None, _kept_graph_after),
    "grad_accumulation": (_grad_accumulation_before, _grad_accumulation_after),
    "frozen_embedding": (None, _frozen_embedding_after),
}


def _drive(probe: str, sample: str) -> None:
    before, after = PROBES[probe]
    state = before() if before else None
    sample_globals = runpy.run_path(sample, run_name="__main__")
    measured = after(sample_globals, state)
    sys.stdout.flush()
    print(MEASURED + json.dumps(measured), flush=True)


# --------------------------------------------------------------------------------------------------
# Running the samples


@dataclass
class Run:
    path: Path
    probe: str | None
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    measured: dict | None = field(default=None)

    def describe(self) -> str:
        return (
            f"{self.path.name} (probe={self.probe}) exit {self.returncode} in {self.seconds:.1f}s\n"
            f"--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"
        )

    def raised_line(self) -> int | None:
        """The last line of the sample file in the traceback."""
        lines = re.findall(rf'File "{re.escape(str(self.path))}", line (\d+)', self.stderr)
        return int(lines[-1]) if lines else None


def run_sample(path: Path, probe: str | None) -> Run:
    if probe is None:
        cmd = [sys.executable, str(path)]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--probe", probe, str(path)]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    env.pop("PYTHONWARNINGS", None)
    start = time.monotonic()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=str(SAMPLES_DIR.parent), env=env
    )
    run = Run(path, probe, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)
    for line in proc.stdout.splitlines():
        if line.startswith(MEASURED):
            run.measured = json.loads(line[len(MEASURED):])
    return run


class Runs:
    """Both samples of every selected rule, started at once on a thread pool; get() waits for one."""

    def __init__(self, codes):
        self._pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
        self._futures = {}
        pairs = {rule_code(buggy): (buggy, fixed) for buggy, fixed in sample_pairs()}
        for code in sorted(codes):
            if code in pairs:
                for path in pairs[code]:
                    self._futures[path] = self._pool.submit(run_sample, path, PROBED.get(code))

    def get(self, path: Path) -> Run:
        if path not in self._futures:  # not prefetched (unusual selection): run it now
            self._futures[path] = self._pool.submit(run_sample, path, PROBED.get(rule_code(path)))
        return self._futures[path].result()

    def close(self):
        self._pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="session")
def runs(request):
    wanted = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "sample_code" in callspec.params:
            wanted.add(callspec.params["sample_code"])
    pool = Runs(wanted)
    yield pool
    pool.close()


def _pair(code: str) -> tuple[Path, Path]:
    stem = code.lower() + "_" + RULE_NAMES[code].replace("-", "_")
    return SAMPLES_DIR / f"{stem}.py", SAMPLES_DIR / f"{stem}_fixed.py"


def _clean(run: Run) -> None:
    assert run.returncode == 0, run.describe()
    assert "Traceback" not in run.stderr, run.describe()


# --------------------------------------------------------------------------------------------------
# The samples themselves


def test_every_rule_has_a_pair():
    assert [rule_code(b) for b, _ in sample_pairs()] == CODES
    for code in CODES:
        buggy, fixed = _pair(code)
        assert (buggy, fixed) in sample_pairs(), code
    names = {p.name for p in SAMPLES_DIR.glob("*.py")}
    assert names == {p.name for pair in sample_pairs() for p in pair}, "stray files in samples/"


def test_every_rule_is_checked_at_runtime():
    assert set(RAISES) | set(PROBED) == set(CODES)
    assert not set(RAISES) & set(PROBED)


@pytest.mark.parametrize("code", CODES)
def test_sample_markers_and_shape(code):
    buggy, fixed = _pair(code)
    markers = expected_markers(buggy)
    assert markers, f"{buggy.name} has no '# expect: {code}' marker"
    assert {c for _, c in markers} == {code}
    assert expected_markers(fixed) == []
    for path in (buggy, fixed):
        text = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(text))
        assert doc and len(doc.splitlines()) <= 2, f"{path.name}: one- or two-line module docstring"
        assert 10 <= len(text.splitlines()) <= 40, f"{path.name}: {len(text.splitlines())} lines"
        assert "expect:" not in text or path == buggy
    lines = buggy.read_text(encoding="utf-8").splitlines()
    for line, _ in markers:
        assert lines[line - 1].split("#")[0].strip(), f"{buggy.name}:{line}: marker on an empty line"


def test_marker_parser():
    import tempfile

    source = (
        '"""doc"""\n'
        "x = 1  # expect: AG001\n"
        "s = '# expect: AG002'\n"
        "y = 2  # noqa # expect: AG003, AG017\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.py"
        path.write_text(source)
        assert expected_markers(path) == [(2, "AG001"), (4, "AG003"), (4, "AG017")]


# --------------------------------------------------------------------------------------------------
# Error rules: the buggy sample raises the signature; the fixed one runs clean.


@pytest.mark.parametrize("sample_code", sorted(RAISES))
def test_error_signature(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    spec = RAISES[sample_code]
    run = runs.get(buggy)
    assert run.returncode != 0, run.describe()
    assert re.search(spec.pattern, run.stderr), run.describe()
    raised = run.raised_line()
    lines = buggy.read_text(encoding="utf-8").splitlines()
    if spec.at == "marker":
        # (a bug of two places is marked at both: where it fails and where the fix goes)
        assert raised in [line for line, code in expected_markers(buggy) if code == sample_code], run.describe()
    else:
        assert raised is not None and spec.at in lines[raised - 1], run.describe()

    ok = runs.get(fixed)
    _clean(ok)
    assert not re.search(spec.pattern, ok.stderr), ok.describe()


# --------------------------------------------------------------------------------------------------
# Silent rules: the symptom is measured on both; present in the buggy sample, absent in the fixed one.


def _measured(runs, path) -> dict:
    run = runs.get(path)
    _clean(run)
    assert run.measured is not None, run.describe()
    return run.measured


@pytest.mark.parametrize("sample_code", ["AG002"])
def test_ag002_composed_weight_goes_stale(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    # torch 2.13: no "backward through the graph a second time" (torch.stack/unsqueeze save no
    # tensors); every conv2d call gets the step-0 kernel while a and b keep moving.
    assert bad["conv_calls"] == 3
    assert bad["all_steps_used_first_weight"] is True
    assert bad["sources_moved_since_first_step"] is True
    assert bad["a_now"] != bad["a_first_used"]
    assert "backward through the graph" not in runs.get(buggy).stderr

    good = _measured(runs, fixed)
    assert good["conv_calls"] == 3
    assert good["all_steps_used_first_weight"] is False


@pytest.mark.parametrize("sample_code", ["AG007"])
def test_ag007_alias_still_tracks(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    assert bad["ref_requires_grad"] is True
    assert bad["ref_shares_storage"] is True
    assert bad["ref_follows_w"] is True
    assert bad["last_proximal"] == 0.0

    good = _measured(runs, fixed)
    assert good["ref_requires_grad"] is False
    assert good["ref_shares_storage"] is False
    assert good["w_moved_from_ref"] is True
    assert good["last_proximal"] > 0.0


@pytest.mark.parametrize("sample_code", ["AG008"])
def test_ag008_data_write_gives_wrong_gradient(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    assert bad["grad_is_true_gradient"] is False
    assert bad["max_abs_error"] > 1e-3
    assert "modified by an inplace operation" not in runs.get(buggy).stderr

    good = _measured(runs, fixed)
    assert good["grad_is_true_gradient"] is True


@pytest.mark.parametrize("sample_code", ["AG009"])
def test_ag009_plain_tensor_left_behind(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    assert bad["weight_device"] == "meta"
    assert bad["mean_device"] == "cpu" and bad["std_device"] == "cpu"
    assert "mean" not in bad["state_dict_keys"] and "std" not in bad["state_dict_keys"]
    # what CUDA users see: the forward mixes devices
    assert bad["forward_error_after_move"] == "Tensor on device cpu is not on the expected device meta!"

    good = _measured(runs, fixed)
    assert good["mean_device"] == "meta" and good["std_device"] == "meta"
    assert {"mean", "std"} <= set(good["state_dict_keys"])
    assert good["forward_error_after_move"] is None


@pytest.mark.parametrize("sample_code", ["AG011"])
def test_ag011_range_warns_and_fix_keeps_values(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    assert RANGE_WARNING in runs.get(buggy).stderr
    good = _measured(runs, fixed)
    assert RANGE_WARNING not in runs.get(fixed).stderr
    assert "Warning: torch.range" not in runs.get(fixed).stderr
    assert good == bad == {"grid": [0.0, 0.25, 0.5, 0.75, 1.0], "dtype": "torch.float32"}


@pytest.mark.parametrize("sample_code", ["AG012"])
def test_ag012_uninitialized_values_are_read(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    assert bad["counts_finite"] is False
    assert bad["counts_match_bincount"] is False
    assert bad["loss_finite"] is False

    good = _measured(runs, fixed)
    assert good["counts_finite"] is True
    assert good["counts_match_bincount"] is True
    assert good["loss_finite"] is True


@pytest.mark.parametrize("sample_code", ["AG014"])
def test_ag014_unfreeze_after_forward_gets_no_grad(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    assert bad == {"requires_grad": True, "grad_is_none": True}
    good = _measured(runs, fixed)
    assert good == {"requires_grad": True, "grad_is_none": False}


@pytest.mark.parametrize("sample_code", ["AG015"])
def test_ag015_total_keeps_every_graph(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    assert bad["has_grad_fn"] is True
    assert bad["loss_nodes"] == 4  # one MSE graph per batch, all still reachable
    good = _measured(runs, fixed)
    assert good["type"] == "float" and good["loss_nodes"] == 0


@pytest.mark.parametrize("sample_code", ["AG016"])
def test_ag016_gradients_accumulate(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = [s for s in _measured(runs, buggy)["steps"] if s["compared"]]
    assert len(bad) == 2
    assert all(not s["equals_fresh"] and s["equals_previous_plus_fresh"] for s in bad)

    good = [s for s in _measured(runs, fixed)["steps"] if s["compared"]]
    assert len(good) == 2
    assert all(s["equals_fresh"] for s in good)


@pytest.mark.parametrize("sample_code", ["AG018"])
def test_ag018_misspelled_attribute_freezes_nothing(sample_code, runs):
    buggy, fixed = _pair(sample_code)
    bad = _measured(runs, buggy)
    assert bad == {"requires_grad": True, "has_misspelled_attribute": True, "in_optimizer": True, "got_grad": True}
    good = _measured(runs, fixed)
    assert good == {"requires_grad": False, "has_misspelled_attribute": False, "in_optimizer": False, "got_grad": False}


if __name__ == "__main__":
    # Driver mode: python tests/test_samples_runtime.py --probe NAME SAMPLE
    if len(sys.argv) != 4 or sys.argv[1] != "--probe":
        sys.exit("usage: test_samples_runtime.py --probe NAME SAMPLE")
    _drive(sys.argv[2], sys.argv[3])
