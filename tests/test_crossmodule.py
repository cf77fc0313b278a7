"""jedi, used only to find where workspace names are defined, must never make the checker load torch."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from autograd_lsp.analysis.crossmodule import NEVER_INSPECT, JediResolver, refuse_compiled_torch
from crossmodule_programs import HELPER, TRAIN




def test_the_private_jedi_hook_is_in_place():
    from jedi.inference import imports

    refuse_compiled_torch()
    hook = imports._load_builtin_module
    assert getattr(hook, "refuses", None) == NEVER_INSPECT
    assert hook(None, ("torch", "_C"), []) is None  # refused before jedi touches its inference state
    refuse_compiled_torch()  # idempotent: not wrapped twice
    assert imports._load_builtin_module is hook


def test_resolving_through_jedi_loads_no_torch(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    # a conditional definition makes the direct lookup ambiguous: jedi has to answer
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""\
        import torch
        if torch.__version__ >= "2":
            def compose(a, b):
                return torch.stack((a, b))
        else:
            def compose(a, b):
                return torch.stack((a, b)).clone()
    """))
    (tmp_path / "train.py").write_text(TRAIN.format(module="helpers"))
    probe = textwrap.dedent(f"""
        import os, sys
        from autograd_lsp.analysis.crossmodule import JediResolver
        from autograd_lsp.checker import check_path
        resolver = JediResolver({str(tmp_path)!r})
        result = check_path({str(tmp_path / "train.py")!r}, resolver=resolver)
        print([f.code for f in result.findings], resolver.queries)
        maps = []
        children = open(f"/proc/{{os.getpid()}}/task/{{os.getpid()}}/children").read().split()
        for pid in [str(os.getpid()), *children]:
            try:
                maps.append(open(f"/proc/{{pid}}/maps").read())
            except OSError:
                pass
        print("torch-mapped" if any("libtorch" in m or "torch/_C" in m for m in maps) else "no-torch")
        print("torch" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))).stdout.split("\n")
    codes, queries = out[0].rsplit(" ", 1)
    assert codes == "['AG002', 'AG002']" and int(queries) >= 1, out  # found (the composition and its use), and jedi was asked
    assert out[1] == "no-torch" and out[2] == "False", out


def _workspace(tmp_path, helpers: int):
    (tmp_path / "pyproject.toml").write_text("")
    for index in range(helpers):
        (tmp_path / f"helpers{index}.py").write_text(textwrap.dedent(f"""\
            import torch

            def compose(a, b):
                return torch.stack((a, b))

            def unrelated{index}(x):
                return x * 2
        """))
        (tmp_path / f"train{index}.py").write_text(TRAIN.format(module=f"helpers{index}"))


def test_consulted_modules_walk_only_the_functions_a_caller_needs(tmp_path):
    from autograd_lsp.checker import check_path

    _workspace(tmp_path, 1)
    resolver = JediResolver(tmp_path)
    result = check_path(tmp_path / "train0.py", resolver=resolver)
    assert [f.code for f in result.findings] == ["AG002", "AG002"]  # the composition and its use
    (model,) = [m for m in resolver._models.values() if m is not None]
    walked = {info.name: info.walked for info in model.functions.values()}
    assert walked == {"compose": True, "unrelated0": False}
    assert model.events == [] and model._provs == {}  # summary only


def test_trimmed_resolver_keeps_few_models_and_the_same_findings(tmp_path):
    from autograd_lsp.checker import check_path

    _workspace(tmp_path, 4)
    unbounded, bounded = JediResolver(tmp_path), JediResolver(tmp_path, max_models=1)
    for index in range(4):
        expected = [(f.code, f.span.line) for f in check_path(tmp_path / f"train{index}.py", resolver=unbounded).findings]
        got = [(f.code, f.span.line) for f in check_path(tmp_path / f"train{index}.py", resolver=bounded).findings]
        assert got == expected == [("AG002", 6), ("AG002", 8)]
        bounded.trim()
        assert len(bounded._models) <= 1
    kept = [info for model in unbounded._models.values() for info in model.functions.values()]
    assert len(unbounded._models) == 4 and all(info.owner is not None for info in kept)


def test_a_released_model_leaves_no_cyclic_garbage(tmp_path):
    import gc
    import weakref

    from autograd_lsp.checker import check_text

    source = textwrap.dedent("""\
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 1)

            def forward(self, x):
                return self.fc(x)

        def compose(a, b):
            return torch.stack((a, b))

        net = Net()
        a = torch.tensor(1.0, requires_grad=True)
        w = compose(a, a)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(3):
            loss = (net(torch.ones(4)) * w).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """)
    check_text(source)  # imports and caches warmed up
    gc.collect()
    gc.disable()
    try:
        result = check_text(source)
        assert result.model.events and result.model.loops and result.model.classes
        probe = weakref.ref(result.model)
        result.model.release()
        result = None
        assert probe() is None  # reference counting alone freed it
        assert gc.collect() == 0  # and nothing of it was left for the collector (the server's pauses)
    finally:
        gc.enable()


def test_direct_resolution_follows_a_reexported_name_without_jedi(tmp_path):
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import ops as tools\nfrom .events import Events\n")
    (pkg / "ops.py").write_text(HELPER)
    (pkg / "events.py").write_text("import enum\n\nclass Events(enum.Enum):\n    STARTED = 1\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from pkg import Events, tools
        a = torch.tensor(1.0, requires_grad=True)
        b = torch.tensor(2.0, requires_grad=True)
        opt = torch.optim.SGD([a, b], lr=0.1)
        every = Events.STARTED(every=2)
        w = tools.compose(a, b)
        for step in range(3):
            loss = (w * 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """))
    resolver = JediResolver(tmp_path)
    result = check_path(tmp_path / "train.py", resolver=resolver)
    assert [(f.code, f.span.line) for f in result.findings] == [("AG002", 7), ("AG002", 9)]  # compose found through `tools`
    assert resolver.queries == 0  # `Events.STARTED` known not to be a def or class, `tools.compose` found: no jedi


def test_a_checked_file_reuses_the_tree_parsed_when_another_file_consulted_it(tmp_path):
    from autograd_lsp.checker import check_path
    from autograd_lsp.source import Source

    _workspace(tmp_path, 1)
    resolver = JediResolver(tmp_path)
    check_path(tmp_path / "train0.py", resolver=resolver)
    (model,) = [m for m in resolver._models.values() if m is not None]
    helpers = tmp_path / "helpers0.py"
    assert resolver.parsed(Source(helpers.read_text(), str(helpers))) is model.tree
    edited = resolver.parsed(Source(helpers.read_text() + "\nx = 1\n", str(helpers)))
    assert edited is not model.tree and len(edited.body) == len(model.tree.body) + 1  # other text: parsed anew


def test_trimming_never_leaves_a_summary_naming_freed_nodes(tmp_path):
    """Summaries hold ids of graph nodes across modules (b.f's summary holds ids from c.g). Releasing c while b
    stayed cached let newly parsed trees reuse those ids: two unrelated graphs looked like one (a false AG017)."""
    from autograd_lsp.checker import check_source
    from autograd_lsp.source import read_source

    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "c.py").write_text("import torch\n\nW = torch.nn.Parameter(torch.randn(3, 3))\n\ndef g(x):\n"
                              "    y = torch.matmul(x, W)\n    z = y.sigmoid()\n    return z * x\n")
    (pkg / "b.py").write_text("from pkg.c import g\n\ndef f(x):\n    return g(x)\n\ndef k(x):\n    return x\n")
    order = [("main1.py", "import torch\nfrom pkg.b import f\nout = f(torch.randn(3, requires_grad=True))\n")]
    for index in range(1, 5):
        (pkg / f"d{index}.py").write_text(f"def h{index}(x):\n    return x\n")
        order.append((f"other{index}.py", f"import torch\nfrom pkg.d{index} import h{index}\nx = h{index}(torch.randn(3, requires_grad=True))\n"))
    order.insert(4, ("main2.py", "import torch\nfrom pkg.b import k\ny = k(torch.randn(3, requires_grad=True))\n"))
    independent = ("import torch\nfrom pkg.b import f\nlin = torch.nn.Linear(3, 3)\nopt = torch.optim.SGD(lin.parameters(), lr=0.1)\n"
                   "w = torch.randn(3, requires_grad=True)\na = f(w)\na.sum().backward()\nopt.step()\nh = lin(torch.randn(3))\n"
                   + "h = lin(h) * 2 + lin(h).sigmoid()\n" * 150 + "h.sum().backward()\n")
    order += [(f"main3{suffix}.py", independent) for suffix in "abcdefgh"]
    resolver = JediResolver(tmp_path, max_models=5)
    for name, text in order:
        (tmp_path / name).write_text(text)
        resolver.trim()
        assert len(resolver._models) <= 5
        result = check_source(read_source(tmp_path / name), resolver=resolver)
        if name.startswith("main3"):
            assert result.findings == [], (name, [f.message for f in result.findings])
        result.model.release()


def _train_with(tmp_path, importer: str, module_line: str):
    """A training script that composes a weight once (AG002 at the composition, line 6, and its loss line 8 when
    `compose` is found)."""
    (tmp_path / importer).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / importer).write_text(TRAIN.replace("from {module} import compose", module_line))
    return tmp_path / importer


def test_overload_stubs_and_rebound_defs_are_resolved_without_jedi(tmp_path):
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""\
        from typing import overload
        import torch

        @overload
        def compose(a: int, b: int) -> int: ...
        @overload
        def compose(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor: ...
        def compose(a, b):
            return torch.stack((a, b))
    """))
    (tmp_path / "wrapped.py").write_text(textwrap.dedent("""\
        import functools
        import torch

        def compose(a, b):
            return torch.stack((a, b))
        compose = functools.lru_cache(compose)
    """))
    resolver = JediResolver(tmp_path)
    found = check_path(_train_with(tmp_path, "train.py", "from helpers import compose"), resolver=resolver)
    assert [(f.code, f.span.line) for f in found.findings] == [("AG002", 6), ("AG002", 8)]  # the real def, the last binding
    rebound = check_path(_train_with(tmp_path, "train_wrapped.py", "from wrapped import compose"), resolver=resolver)
    assert rebound.findings == []  # a value (what lru_cache returned), not the def: unknown, silent
    assert resolver.queries == 0


def test_an_absolute_import_looks_past_a_module_named_like_the_package(tmp_path):
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "pkg" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "pkg.py").write_text("VERSION = 1\n")  # `import pkg` inside the package still means the package
    (pkg / "ops.py").write_text(HELPER)
    resolver = JediResolver(tmp_path)
    result = check_path(_train_with(tmp_path, "pkg/pkg/train.py", "from pkg.ops import compose"), resolver=resolver)
    assert [(f.code, f.span.line) for f in result.findings] == [("AG002", 6), ("AG002", 8)]
    assert resolver.queries == 0


def test_a_library_named_like_a_sibling_module_is_known_absent_without_jedi(tmp_path):
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    models = tmp_path / "lib" / "models"
    models.mkdir(parents=True)
    (tmp_path / "lib" / "__init__.py").write_text("")
    (models / "__init__.py").write_text("")
    # botorch/models/gpytorch.py next to a module importing the gpytorch library: the sibling binds no `priors`
    (models / "gpytorch.py").write_text("import torch\n\nclass GPyTorchModel(torch.nn.Module):\n    pass\n")
    resolver = JediResolver(tmp_path)
    result = check_path(_train_with(tmp_path, "lib/models/fit.py", "from gpytorch.priors import compose"), resolver=resolver)
    assert result.findings == []
    assert resolver.queries == 0


def test_check_stats_counts_the_cross_module_work(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(HELPER)
    _train_with(tmp_path, "train.py", "from helpers import compose")
    proc = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", str(tmp_path), "--no-cache", "--jobs", "1", "--stats", "--exit-zero"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stderr.splitlines() if line.startswith("autograd-lsp: stats: "))
    counters = dict(pair.split("=") for pair in line.split(": ", 2)[2].split())
    assert counters["files"] == "2" and counters["cached"] == "0"
    assert int(counters["direct"]) >= 1 and counters["jedi_queries"] == "0" and counters["jedi_scripts"] == "0"
    assert "AG002" in proc.stdout


def test_a_resolver_that_forgot_its_models_gives_the_same_findings(tmp_path):
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(HELPER)
    train = _train_with(tmp_path, "train.py", "from helpers import compose")
    resolver = JediResolver(tmp_path)
    first = [(f.code, f.span.line) for f in check_path(train, resolver=resolver).findings]
    assert resolver._models and resolver._model_lines > 0
    resolver.forget_models()  # what the CLI does to the resolver of a project it has left
    assert not resolver._models and resolver._model_lines == 0
    assert [(f.code, f.span.line) for f in check_path(train, resolver=resolver).findings] == first == [("AG002", 6), ("AG002", 8)]


def _jedi_answer(tmp_path, train):
    """What jedi alone says `compose` in `train` is (the line of its def), asked as the resolver asks it."""
    import ast

    from autograd_lsp.source import read_source

    source = read_source(train)
    call = next(node for node in ast.walk(ast.parse(source.text)) if isinstance(node, ast.Name) and node.id == "compose"
                and node.lineno > 2)
    found = JediResolver(tmp_path)._resolve(source, call)
    return found.node.lineno if found is not None else None


UNDECIDED_FLAG = """\
import torch
try:
    import fastlib
    WITH_FAST = True
except ImportError:
    WITH_FAST = False

if WITH_FAST:
    compose = fastlib.compose
else:
    def compose(a, b):
        return torch.stack((a, b))
"""


def test_a_def_behind_a_flag_set_in_try_except_is_resolved_as_jedi_does_without_jedi(tmp_path):
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(UNDECIDED_FLAG)
    train = _train_with(tmp_path, "train.py", "from helpers import compose")
    resolver = JediResolver(tmp_path)
    assert [(f.code, f.span.line) for f in check_path(train, resolver=resolver).findings] == [("AG002", 6), ("AG002", 8)]
    assert resolver.queries == 0
    assert _jedi_answer(tmp_path, train) == 11  # jedi cannot decide the branch either: the def


def test_a_def_behind_a_flag_jedi_can_decide_is_left_to_jedi(tmp_path):
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    decided = UNDECIDED_FLAG.replace("except ImportError:\n    WITH_FAST = False\n", "except ImportError:\n    pass\nWITH_FAST = True\n")
    assert decided != UNDECIDED_FLAG
    (tmp_path / "helpers.py").write_text(decided)
    train = _train_with(tmp_path, "train.py", "from helpers import compose")
    resolver = JediResolver(tmp_path)
    check_path(train, resolver=resolver)
    assert resolver.queries == 1  # `WITH_FAST = True` unconditionally last: jedi takes the `if` branch, a value


def test_a_star_reexport_importing_back_from_its_package_is_followed_past_the_cycle(tmp_path):
    """torch_geometric/nn/__init__.py star-imports .pool, then .glob, whose `from torch_geometric.nn import
    global_add_pool` reads back what .pool bound."""
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    pool = tmp_path / "pkg" / "pool"
    pool.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("from .pool import *\nfrom .glob import *\n")
    (tmp_path / "pkg" / "glob.py").write_text("from pkg import compose\n\ncompose.__doc__ = 'deprecated here'\n")
    (pool / "__init__.py").write_text("from .ops import compose\n\n__all__ = ['compose']\n")
    (pool / "ops.py").write_text(HELPER)
    train = _train_with(tmp_path, "train.py", "from pkg import compose")
    resolver = JediResolver(tmp_path)
    assert [(f.code, f.span.line) for f in check_path(train, resolver=resolver).findings] == [("AG002", 6), ("AG002", 8)]
    assert resolver.queries == 0
    assert _jedi_answer(tmp_path, train) == 3  # jedi's answer too: pool/ops.py's def


def test_a_module_consulted_after_it_was_checked_or_trimmed_is_not_parsed_again(tmp_path):
    """A run keeps the trees it parsed (bounded by lines) past their models: checking helpers0.py first and then
    a file that consults it, or consulting it again after a trim, parses nothing twice; a changed file is read and
    parsed anew, and the findings are those of a fresh resolver."""
    import ast

    from autograd_lsp.analysis.crossmodule import STATS
    from autograd_lsp.checker import check_path

    _workspace(tmp_path, 1)
    helpers, train = tmp_path / "helpers0.py", tmp_path / "train0.py"
    fresh = [(f.code, f.span.line) for f in check_path(train, resolver=JediResolver(tmp_path)).findings]
    parses, real_parse = [], ast.parse

    def counting_parse(text, *args, **kwargs):
        parses.append(text)
        return real_parse(text, *args, **kwargs)

    resolver = JediResolver(tmp_path)
    ast.parse = counting_parse
    try:
        reused = STATS.trees_reused
        check_path(helpers, resolver=resolver)
        assert len(parses) == 1
        assert [(f.code, f.span.line) for f in check_path(train, resolver=resolver).findings] == fresh
        assert len(parses) == 2 and STATS.trees_reused == reused + 1  # train0.py parsed; helpers0.py's tree reused
        resolver.forget_models(keep_trees=True)  # what trim() does past its bounds
        assert [(f.code, f.span.line) for f in check_path(train, resolver=resolver).findings] == fresh
        assert len(parses) == 2  # both trees kept: nothing parsed again
        helpers.write_text(helpers.read_text() + "\nEXTRA = 1\n")
        os.utime(helpers, ns=(1, 1))  # another stat signature, whatever the clock's resolution
        resolver.forget_models(keep_trees=True)
        assert [(f.code, f.span.line) for f in check_path(train, resolver=resolver).findings] == fresh
        assert len(parses) == 3 and "EXTRA = 1" in parses[-1]  # the changed file, and only it, parsed again
        resolver.forget_models()  # leaving the project: its trees go too
        assert not resolver._trees and resolver._tree_lines == 0
    finally:
        ast.parse = real_parse


def test_resolved_paths_follow_links_of_directories_and_files_as_path_resolve_does(tmp_path):
    """_resolved resolves a file's directory once and appends the name (one lstat per file, not one per component)."""
    from pathlib import Path

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("")
    os.symlink(tmp_path / "pkg", tmp_path / "linked_pkg")
    os.symlink(tmp_path / "pkg" / "mod.py", tmp_path / "linked_mod.py")
    resolver = JediResolver(tmp_path)
    for path in [tmp_path / "linked_pkg" / "mod.py", tmp_path / "linked_mod.py", tmp_path / "pkg" / ".." / "pkg" / "mod.py",
                 tmp_path / "linked_pkg" / ".." / "linked_mod.py", Path(os.path.relpath(tmp_path / "pkg" / "mod.py"))]:
        assert resolver._resolved(path) == path.resolve(), path


def test_a_local_shadowing_an_imported_name_is_not_resolved_in_another_module(tmp_path):
    """`ones = torch.ones_like(a); ones.view(...)` in a function of a module importing a helper `ones`: the call is
    a method of the local tensor, not `inits.ones.view` (once sent to jedi: seconds per file on a large package)."""
    from autograd_lsp.analysis.crossmodule import STATS
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "inits.py").write_text("import torch\n\ndef ones(x):\n    x.data.fill_(1.0)\n")
    (tmp_path / "layer.py").write_text(textwrap.dedent("""\
        import torch
        from inits import ones

        class Gate(torch.nn.Module):
            def __init__(self, heads):
                super().__init__()
                self.heads = heads
                self.w = torch.nn.Parameter(torch.randn(heads))
                ones(self.w)

            def forward(self, alpha):
                ones = torch.ones_like(alpha)
                return ones.view(-1, self.heads, 1) * self.w.view(1, -1, 1)
    """))
    before = STATS.snapshot()
    resolver = JediResolver(tmp_path)
    check_path(tmp_path / "layer.py", resolver=resolver)
    counters = dict(zip(STATS.FIELDS, (b - a for a, b in zip(before, STATS.snapshot()))))
    assert counters["jedi_queries"] == 0 and counters["jedi_scripts"] == 0 and resolver.queries == 0
    assert counters["direct"] >= 1  # `ones(self.w)` in __init__ is still the workspace helper


def test_a_jedi_query_leaves_the_collector_as_it_was(tmp_path, monkeypatch):
    # parso's cache loads end with gc.enable(): the CLI's collector, off during a check, must stay off after jedi
    import gc

    from autograd_lsp.source import Source

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text("import helpers\nhelpers.compose(1, 2)\n")
    resolver = JediResolver(tmp_path)
    monkeypatch.setattr(JediResolver, "_resolve", lambda self, source, node: gc.enable())
    source = Source(text=(tmp_path / "train.py").read_text(), path=str(tmp_path / "train.py"))
    enabled = gc.isenabled()
    try:
        gc.disable()
        resolver.resolve(source, object())
        assert not gc.isenabled()
        gc.enable()
        resolver.resolve(source, object())
        assert gc.isenabled()  # (a caller whose collector runs, the language server: left on)
    finally:
        (gc.enable if enabled else gc.disable)()


def test_an_unpacked_package_with_no_project_marker_resolves_its_absolute_imports_directly(tmp_path):
    """A wheel or source tree unpacked where no pyproject.toml/setup.py/.git lies above: the project root is the
    directory holding its outermost package (where Python imports it from), not each file's own directory, so
    `from lib.helpers import compose` resolves without jedi. A folder of loose scripts keeps its own directory."""
    package = tmp_path / "site" / "lib"
    (package / "models").mkdir(parents=True)
    for directory in (package, package / "models"):
        (directory / "__init__.py").write_text("")
    (package / "helpers.py").write_text(HELPER)
    trainer = _train_with(package / "models", "trainer.py", "from lib.helpers import compose")
    assert JediResolver.project_root(trainer) == (tmp_path / "site").resolve()
    loose = tmp_path / "scripts"
    loose.mkdir()
    assert JediResolver.project_root(loose / "run.py") == loose.resolve()
    proc = subprocess.run([sys.executable, "-m", "autograd_lsp", "check", str(trainer), "--no-cache", "--jobs", "1", "--stats", "--exit-zero"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stderr.splitlines() if line.startswith("autograd-lsp: stats: "))
    counters = dict(pair.split("=") for pair in line.split(": ", 2)[2].split())
    assert int(counters["direct"]) >= 1 and counters["jedi_queries"] == "0", line
    assert "AG002" in proc.stdout


def test_a_namespace_package_is_a_workspace_module_resolved_directly(tmp_path):
    """`from common.ops import compose` where common/ has no __init__.py: Python 3 imports it as a namespace package,
    so its defs are the workspace's (found without jedi). A directory named like an installed library stays the
    library's (that one wins the import)."""
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "ops.py").write_text(HELPER)
    (tmp_path / "jedi").mkdir()  # (jedi is installed in this environment: `import jedi` would not find this one)
    (tmp_path / "jedi" / "ops.py").write_text(HELPER)
    resolver = JediResolver(tmp_path)
    found = check_path(_train_with(tmp_path, "train.py", "from common.ops import compose"), resolver=resolver)
    assert [(f.code, f.span.line) for f in found.findings] == [("AG002", 6), ("AG002", 8)]
    shadowed = check_path(_train_with(tmp_path, "train_lib.py", "from jedi.ops import compose"), resolver=resolver)
    assert shadowed.findings == []
    assert resolver.queries == 0


def test_a_name_bound_by_the_last_star_import_of_a_workspace_module_is_resolved(tmp_path):
    """`from helpers import *` then `compose(...)`: the name is the workspace module's when that star import is the
    module's last one and the module binds it; a later star import of a library, or a module that binds no such
    name, leaves it unknown (silent)."""
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "other.py").write_text("import torch\n\n\ndef unrelated(x):\n    return x\n")
    resolver = JediResolver(tmp_path)
    found = check_path(_train_with(tmp_path, "train.py", "from helpers import *"), resolver=resolver)
    assert [(f.code, f.span.line) for f in found.findings] == [("AG002", 6), ("AG002", 8)]
    later = check_path(_train_with(tmp_path, "train_later.py", "from helpers import *; from torch.nn.functional import *"),
                       resolver=resolver)
    assert later.findings == []
    unbound = check_path(_train_with(tmp_path, "train_other.py", "from other import *"), resolver=resolver)
    assert unbound.findings == []


def test_a_step_in_another_modules_helper_below_the_end_of_the_checked_file_is_judged(tmp_path):
    """`update(loss, opt)` of a helper module whose step lies past the last line of the training script: the rules
    that name the stepped optimizer read the call's own argument, never the other module's text by this file's lines
    (an IndexError, AG000, before)."""
    from autograd_lsp.checker import check_path

    (tmp_path / "pyproject.toml").write_text("")
    padding = "".join(f"\n\ndef unused_{i}(x):\n    return x\n" for i in range(15))
    (tmp_path / "steps.py").write_text("import torch\n" + padding + textwrap.dedent("""

        def update(loss, opt):
            opt.zero_grad()
            loss.backward()
            opt.step()
    """))
    script = tmp_path / "ddpg.py"
    script.write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn
        from steps import update

        critics = nn.ModuleList([nn.Linear(6, 1) for _ in range(2)])
        actor = nn.Linear(4, 2)
        critic_opts = [torch.optim.Adam(c.parameters()) for c in critics]
        for it in range(3):
            s = torch.randn(8, 4)
            sa = torch.cat([s, actor(s)], 1)
            pi_loss = -sum(c(sa).mean() for c in critics)
            for c, opt in zip(critics, critic_opts):
                update(c(torch.randn(8, 6)).pow(2).mean(), opt)
            pi_loss.backward()
    """))
    result = check_path(script, resolver=JediResolver(tmp_path))
    assert all(f.code != "AG000" for f in result.findings), result.findings
