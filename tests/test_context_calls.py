"""Calls walked with what the caller passes (walker.call_in_context): grad mode across modules, memo, depth bound."""
from __future__ import annotations

import textwrap

from autograd_lsp.analysis import callsite
from autograd_lsp.analysis.crossmodule import JediResolver
from autograd_lsp.checker import check_path, check_source
from autograd_lsp.config import Settings
from autograd_lsp.source import Source

AG001 = Settings(select=frozenset({"AG001"}))

HELPERS = """\
import torch

scale = torch.ones(3, requires_grad=True)


def shrink(weights):
    weights.mul_(0.5)


def shrink_scale():
    scale.mul_(0.5)
"""


def _lines(result, code="AG001"):
    return [f.span.line for f in result.findings if f.code == code]


def test_a_helper_whose_only_callers_are_elsewhere_has_no_known_grad_mode(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from helpers import shrink, shrink_scale
        w = torch.randn(3, requires_grad=True)
        with torch.no_grad():
            shrink(w)
            shrink_scale()
    """))
    resolver = JediResolver(tmp_path)
    assert _lines(check_path(tmp_path / "helpers.py", settings=AG001, resolver=resolver)) == []  # (an error before: scale.mul_)
    assert _lines(check_path(tmp_path / "train.py", settings=AG001, resolver=resolver)) == []


def test_a_visible_caller_in_grad_mode_makes_it_an_error(tmp_path):
    source = HELPERS + "\nshrink_scale()\nw = torch.randn(3, requires_grad=True)\nshrink(w)\nshrink(w * 2)\n"
    result = check_source(Source(source, str(tmp_path / "one.py")), AG001)
    assert _lines(result) == [7, 11, 15]  # the helpers' own lines, and the call that hands `shrink` the leaf; `w * 2` is no leaf


def test_another_modules_helper_is_reported_at_the_call_in_the_checked_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "train.py").write_text("import torch\nfrom helpers import shrink\nw = torch.randn(3, requires_grad=True)\nshrink(w)\n")
    result = check_path(tmp_path / "train.py", settings=AG001, resolver=JediResolver(tmp_path))
    assert _lines(result) == [4]
    assert "helpers.py:7" in result.findings[0].message


def test_calls_passing_the_same_facts_share_one_walk(tmp_path):
    calls = "\n".join(f"shrink(torch.randn({n}, requires_grad=True))" for n in range(2, 52))
    result = check_source(Source(HELPERS + "\n" + calls + "\n", str(tmp_path / "many.py")), AG001)
    assert _lines(result) == [7] + list(range(13, 63))  # the helper's line, and every call that hands it a leaf
    assert result.model._walker.context_walks == 1


def test_the_call_depth_is_bounded():
    # f1 .. f{MAX_DEPTH} are walked with the tensor the script passes; the next one deeper is read from its summary only
    depth = callsite.MAX_DEPTH
    chain = ["import torch"] + [f"def f{i}(x):\n    f{i + 1}(x)" for i in range(1, depth)]
    chain += [f"def f{depth}(x):\n    x.add_(1)\n    f{depth + 1}(x)", f"def f{depth + 1}(x):\n    x.sub_(1)", "f1(torch.zeros(2, requires_grad=True))"]
    text = "\n".join(chain) + "\n"
    assert 3 <= depth <= 6
    result = check_source(Source(text, "chain.py"), AG001)
    assert _lines(result) == [text.splitlines().index("    x.add_(1)") + 1]


AG005 = Settings(select=frozenset({"AG005"}))


def test_layer_builders_walk_once_per_set_of_integers():
    text = textwrap.dedent("""\
        import torch.nn as nn


        def block(c_in, c_out, k=3):
            return nn.Sequential(nn.Conv2d(c_in, c_out, k), nn.ReLU())


        class Tower(nn.Module):
            def __init__(self, width, depth=2):
                super().__init__()
                self.head = nn.Linear(width, depth)
        """) + "\n".join(["a = block(3, 8)", "b = block(3, 8)", "c = block(3, 16)", "t = Tower(4)", "u = Tower(4)"]) + "\n"
    result = check_source(Source(text, "layers.py"), AG005)
    walker = result.model._walker
    layer_walks = [key for key in walker.memo if isinstance(key, tuple) and key and key[0] == "layers"]
    # block(3, 8) twice shares one walk, block(3, 16) has its own; a module's constructions are not walked for their
    # layers (the per-instance tables kept the server from walking again only an edited method)
    assert len(layer_walks) == 2


def test_a_plain_class_with_its_own_apply_is_not_nn_module_apply():
    text = textwrap.dedent("""\
        import torch


        class Operator:
            def __init__(self, weight):
                self.weight = weight

            def apply(self, vec):
                return self.weight * vec


        op = Operator(torch.randn(4, requires_grad=True))
        vec = torch.randn(4)
        out = op.apply(vec)
        out.backward()
        """)
    result = check_source(Source(text, "operator.py"), AG005)
    assert _lines(result, "AG005") == [15]  # `apply` is the class's own: its result is a tensor of 4 elements


def test_two_calls_of_one_loss_helper_build_two_graphs():
    """AG003: a helper's own nodes are the same code in every call's graph, not the same graph. A retained graph whose
    only later backward is another call's (made after the step) is never reused (a warning, not a stale-graph error);
    one call's result backpropagated again after the step is."""
    source = Source(textwrap.dedent("""\
        import torch
        import torch.nn as nn

        net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)


        def regression_loss(batch):
            return (net(batch) - 1.0).pow(2).mean()


        for step in range(4):
            warm = regression_loss(torch.randn(5, 3))
            warm.backward(retain_graph=True)
            opt.step()
            regression_loss(torch.randn(5, 3)).backward()

        for step in range(4):
            warm = regression_loss(torch.randn(5, 3))
            warm.backward(retain_graph=True)
            opt.step()
            warm.backward()
        """), "loss_helper.py")
    found = [(f.span.line, f.data.get("kind"), f.severity.name) for f in check_source(source, Settings(select=frozenset({"AG003"}))).findings]
    assert found == [(14, "never-reused", "WARNING"), (20, "reused-after-step", "ERROR"), (22, "reused-after-step", "ERROR")], found


def _walked(text: str):
    import ast

    from autograd_lsp.analysis.model import build_model

    source = Source(textwrap.dedent(text), "through.py")
    return build_model(ast.parse(source.text), source)


def test_a_backward_and_a_step_a_called_body_runs_are_the_callers_in_its_order():
    """ThroughEvent: what the body does is seen at the call, on the caller's values (named by the caller's argument),
    in the body's order; one under a branch the walk cannot decide may not run (`certain` False)."""
    from autograd_lsp.analysis.model import ThroughEvent

    model = _walked("""\
        import torch
        import torch.nn as nn

        net = nn.Linear(3, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)


        def update(first, second, both):
            first.backward()
            opt.step()
            if both:
                second.backward()


        for step in range(3):
            a = net(torch.randn(2, 3)).mean()
            b = net(torch.randn(2, 3)).sum()
            update(a, b, step > 1)
        """)
    through = [event for event in model.calls(through=True) if type(event) is ThroughEvent]
    assert [(event.role, event.node.lineno, event.through.lineno, event.certain) for event in through] == [
        ("backward", 9, 18, True), ("step", 10, 18, True), ("backward", 12, 18, False)]
    assert [model.text(event.receiver) for event in through if event.role == "backward"] == ["a", "b"]
    assert through[0].receiver_prov.graph and through[0].receiver_prov.graph == model.prov(through[0].receiver).graph
    assert not [event for event in model.calls() if type(event) is ThroughEvent]  # (only rules that ask see them)
    assert model.loops[0].is_training


def test_a_workspace_class_that_defines_backward_runs_its_own_body():
    """`tracker.backward(loss)` of a class of the workspace is a call of its method (here it only logs): no backward
    at the caller, and a loop that only calls it is no training loop."""
    model = _walked("""\
        import torch
        import torch.nn as nn

        net = nn.Linear(3, 1)


        class Tracker:
            def backward(self, value):
                print(float(value.detach()))


        tracker = Tracker()
        for step in range(3):
            loss = net(torch.randn(2, 3)).mean()
            tracker.backward(loss)
        """)
    assert not list(model.calls(role="backward", through=True))
    assert [event.function.name for event in model.calls(method="backward")] == ["backward"]
    assert not model.loops[0].is_training


def test_the_outputs_of_a_linalg_op_returning_several_tensors_are_computed_from_its_input():
    """`vals, vecs = torch.linalg.eigh(m)` in a helper: both outputs are made from its parameter (the op table's
    TUPLE_RESULTS, under torch's native name), so the helper's result has the graph of what a call passes; an integer
    output (`lu_factor`'s pivots) has none."""
    model = _walked("""\
        import torch

        def spectrum(feats):
            gram = feats @ feats.t()
            vals, vecs = torch.linalg.eigh(gram)
            return vals.sum() + vecs.abs().sum()

        def pivots(m):
            lu, piv = torch.linalg.lu_factor(m)
            return piv

        w = torch.randn(4, 3, requires_grad=True)
        s = spectrum(w * 2)
        p = pivots(w @ w.t())
        """)
    binds = {event.name: event.prov for event in model.events if type(event).__name__ == "BindEvent" and event.ctx.scope.function is None}
    assert binds["s"] is not None and binds["s"].requires_grad is True and binds["s"].graph
    assert binds["p"].requires_grad is False and binds["p"].dtype == "int"


def test_a_backward_run_by_another_modules_method_is_reported_in_the_checked_file(tmp_path):
    """A ThroughEvent whose body is another module's: reported at this file's call, naming no line of the other file."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "wrappers.py").write_text(textwrap.dedent("""\
        class Backprop:
            def run(self, loss):
                loss.backward()
        """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn
        from wrappers import Backprop

        net = nn.Linear(4, 1)
        bp = Backprop()
        for step in range(3):
            loss = net(torch.randn(2, 4)).pow(2).mean()
            bp.run(loss)
            bp.run(loss)
        """))
    result = check_path(tmp_path / "train.py", settings=Settings(select=frozenset({"AG003"})), resolver=JediResolver(tmp_path))
    assert [(f.span.line, f.data.get("first_backward_line")) for f in result.findings] == [(10, 9)]
    assert "its backward runs" in result.findings[0].message


def test_an_inherited_method_reading_what_an_overridden_hook_built_is_not_the_subclasss():
    """The base's __init__ builds `self.norm` through `self.make_norm()`, which the subclass redefines: the base's forward
    walked for a subclass instance would claim that instance's backward breaks on the base's layer."""
    result = check_source(Source(textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Encoder(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)
                self.norm = self.make_norm(dim)

            def make_norm(self, dim):
                return nn.Softmax(dim=-1)

            def forward(self, x):
                z = self.norm(self.proj(x))
                z[:, 0] = 0.0
                return z


        class NormedEncoder(Encoder):
            def make_norm(self, dim):
                return nn.LayerNorm(dim)


        NormedEncoder(4)(torch.randn(3, 4)).sum().backward()
        """), path="hooks.py"), settings=Settings(select=frozenset({"AG006"})))
    messages = [f.message for f in result.findings if f.span.line == 16]
    assert messages and not any("NormedEncoder" in message or "line 25" in message for message in messages), messages
