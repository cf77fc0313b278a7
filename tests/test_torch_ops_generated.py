"""The op table is torch's own metadata: regenerating it from the installed torch must give the checked-in module,
and the analyzer that reads it must never import torch."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "autograd_lsp" / "rules"


def test_checked_in_table_matches_the_installed_torch():
    run = subprocess.run([sys.executable, "-W", "ignore", "-m", "tools.generate_torch_ops", "--check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_table_knows_what_the_rules_rely_on():
    from autograd_lsp.analysis import torch_ops

    assert torch_ops.INPLACE["add_"] == "add" and "requires_grad_" not in torch_ops.INPLACE
    assert torch_ops.SAVED["sigmoid"] == {0: ("result",)}  # sigmoid's backward uses its output
    assert torch_ops.SAVED["mul"] == {0: (1,), 1: (0,)}  # each factor is kept for the other's gradient
    assert {"round", "sign", "floor"} <= torch_ops.ZERO_GRADIENT
    assert {"argmax", "eq", "long"} <= torch_ops.NONDIFFERENTIABLE
    assert {"t", "view", "select", "transpose"} <= torch_ops.VIEWS and "detach" not in torch_ops.VIEWS
    assert torch_ops.MODULES["ReLU"]["op"] == "relu" and torch_ops.MODULES["ReLU"]["inplace"] == 0
    assert torch_ops.MODULES["MSELoss"]["op"] == "mse_loss" and "reduction" in torch_ops.MODULES["MSELoss"]
    assert torch_ops.FACTORIES["randint"] == "int" and torch_ops.FACTORIES["zeros"] == "float"
    assert torch_ops.INDEX_SHAPED["gather"] == 2 and torch_ops.INDEX_SHAPED["take"] == 1  # gather(input, dim, index)
    assert "index_select" not in torch_ops.INDEX_SHAPED and "scatter" not in torch_ops.INDEX_SHAPED  # not the index's shape
    assert torch_ops.FACTORY_SIZES["randint"][2] == 1 and torch_ops.FACTORY_SIZES["randint"][3] == 2  # randint([low,] high, size)
    assert torch_ops.FACTORY_SIZES["randn"][1] == 0
    # torch.linalg's functions returning several tensors, under their native names (`torch.linalg.eigh`: linalg_eigh)
    assert torch_ops.TUPLE_RESULTS["linalg_eigh"]["outputs"] == ("float", "float")
    assert torch_ops.TUPLE_RESULTS["linalg_lu_factor"]["outputs"] == ("float", "int")
    assert {"requires_grad", "data", "grad"} <= torch_ops.TRACKING_ATTRIBUTES  # what tells a tracked reference from a snapshot


def test_the_analyzer_never_imports_torch(tmp_path):
    code = ("import sys, pathlib\nfrom autograd_lsp.checker import check_path\n"
            f"paths = [*pathlib.Path({str(ROOT / 'samples')!r}).glob('*.py'), *pathlib.Path({str(ROOT / 'tests' / 'fixtures')!r}).rglob('*.py')]\n"
            "assert len(paths) > 50\nfor path in paths: check_path(path)\n"
            "assert 'torch' not in sys.modules and 'yaml' not in sys.modules, sorted(m for m in sys.modules if 'torch' in m)\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
def _torch_name_sets(path: Path) -> list[str]:
    """Module-level names bound to a set or frozenset literal of strings."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("frozenset", "set") and value.args:
                value = value.args[0]
            if isinstance(value, ast.Set):
                keys = value.elts
                if keys and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in keys):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    found.extend(ast.unparse(t) for t in targets)
    return found


def test_no_rule_keeps_its_own_set_of_names():
    offenders = {path.name: names for path in sorted(RULES.glob("*.py")) if (names := _torch_name_sets(path))}
    assert offenders == {}, f"rules define private name sets (move them to analysis/uses.py or the generated table): {offenders}"


def test_shape_functions_are_torchs():
    from autograd_lsp.analysis import torch_ops

    assert torch_ops.SHAPE_FUNCTIONS["linear"] == ["linear"] and torch_ops.SHAPE_FUNCTIONS["conv2d"] == ["conv2d"]
    assert torch_ops.SHAPE_FUNCTIONS["reshape"] == ["view"]  # found by calling it: view's shapes
    assert "squeeze_nodim" in torch_ops.SHAPE_FUNCTIONS["squeeze"] and torch_ops.SHAPE_FUNCTIONS["dropout"] == ["unary"]
