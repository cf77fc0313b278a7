"""## What it does
Flags `backward(retain_graph=True)` where the retained graph is reused after an `optimizer.step()` (an
error) — including a loss rebuilt every iteration on a forward computed once before the loop (or run by a helper called
before it: `for term in self.objectives(batch)`, a step per term) — and where
nothing reuses the retained graph at all (a warning: pure memory cost). And the misuse the other way round: a
`backward()` without `retain_graph=True`, then a later `backward()` of the same body (on a path that runs whenever
the first did) through a part of that graph that saved a tensor — two losses of one
forward backpropagated one after the other, or one loss twice (an error: the first backward freed what the second
needs; with an optimizer step between, unless AG017 reports that backward with its `.detach()` fix).

A method that retains the graph of a forward's output kept on `self`, followed by a method its caller runs next that
backpropagates through that kept output (`self.logits` of a supervised update, read by a consistency update), counts as a
reuse after a step that the first method runs after its backward, or the caller between the two calls.

A value of the retained graph carried into the next iteration counts too, also one the loop first binds from itself
(`out, h = rnn(x, h)` with `h = None` before the loop), or a state a workspace module's forward returns in a nested tuple
(`y, (h, c) = net(x, h, c)`); a recurrent layer (nn.RNN/GRU/LSTM) keeps its weights for its
backward whatever it is fed.

An optimizer over part of a model (`net.trunk` and one head) counts where the model's forward runs a part it updates on
the way to every output and that part kept a parameter (a stack of layers, a layer fed what requires grad, or a workspace module
whose own blocks keep their weights whatever they are fed).

A step is also a method of a `torch.optim.Optimizer` subclass of the workspace that moves its parameters in place (SAM's
`first_step()`), and an optimizer or model handed over in a dict (`optimizers["net"].step()`). An optimizer a module's
class builds over `self.parameters()` (`self.opt`) updates the module it is read from (`member.opt.step()`: `member`'s).

A graph handed to a function as its arguments (`def update(self, gen_loss, dis_loss)`) and retained there is never
reused when the body reads that argument no more and no caller in the module backpropagates through it after the call. Nor does a function
that returns only numbers, tensors of other graphs and modules that keep no value of their calls (`return netG, z`) hand
it on, nor a module-level helper handed nothing of it backpropagate through it (`gradient_penalty(netD, real, fake.detach())`).
A step its class's own methods call (`loss = self.train_batch(x)`) that returns the graph is judged at those calls (only
`loss.item()` there: never reused); a value cut from the graph (`prev = logits.argmax(-1)`) carries nothing to the next pass.

A bug of two backward calls is reported at both: the one that retains (or frees) the graph, and the later one, which
raises (a later one that a helper of this module runs: at the call, and at the helper's backward). A helper's backward that
frees, every iteration of a training loop, a forward another method ran once before it (`self.fake_B`; AG017 reports the
call) is reported at that backward, where the graph could be kept.

## Why is this bad?
`retain_graph=True` is usually added to silence "Trying to backward through the graph a second time".
The graph it keeps alive saved the parameters' values at forward time; once `optimizer.step()` changes
them in place, a backward through that old graph fails the version check ("modified by an inplace operation"). When nothing
backwards through the graph again, retaining it only holds its memory until the tensors die.

## Example
```python
y1, y2 = model(x)                # forward once, outside the loop
loss1, loss2 = mse(y1, t1), mse(y2, t2)
for step in range(10):
    opt.zero_grad()
    loss1.backward(retain_graph=True)
    opt.step()                   # modifies w1, saved by the graph
    opt.zero_grad()
    loss2.backward(retain_graph=True)   # reuses the old graph: version error
    opt.step()
```

## Use instead
```python
for step in range(10):
    y1, y2 = model(x)            # a fresh graph every step
    loss = mse(y1, t1) + mse(y2, t2)
    opt.zero_grad()
    loss.backward()              # one backward per graph
    opt.step()
```
Two losses that share a graph and are both backpropagated *before* one `step()` are fine. The "never reused"
warning stays silent while a value of the graph may reach the next iteration: a name the loop reads where no earlier
statement of the blocks around the read has assigned it in this pass (`out, state = rnn(x, state)`, or `memory = out`
read by the next `cell(x, memory)`); a name assigned before it is read (`prob = D(fake)`) carries nothing.

## Fix safety
Removing `retain_graph=True` is offered as unsafe: it is exact only when nothing else backpropagates
through the graph.

## Runtime signature
`RuntimeError: one of the variables needed for gradient computation has been modified by an inplace
operation: [...] is at version N; expected version M instead`; for a second backward through a freed graph,
`RuntimeError: Trying to backward through the graph a second time`.
"""
from __future__ import annotations

import ast
import builtins
from bisect import bisect_left
import sys

from ..analysis.model import BindEvent, CallEvent, ClassInfo, ItemStoreEvent, ModuleModel, ThroughEvent, UseEvent
from ..analysis.provenance import Kind, Provenance, flatten
from ..analysis import callsite, torch_api as api
from ..analysis import uses
from ..analysis.syntax import nodes, statements, super_call
from ..analysis.training import called_module, is_frozen, keeps_own_weights, mine, never_together, parted, runs_after, shown, site
from ..findings import Edit, Fix, Safety, Severity, Span

CODE = "AG003"
NAME = "retain-graph-misuse"
SEVERITY = Severity.ERROR
SUMMARY = "backward(retain_graph=True) whose graph is reused after optimizer.step(), or never reused"
RUNTIME_SIGNATURE = "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation"
RULE = sys.modules[__name__]
_BUILTINS = frozenset(dir(builtins))


def _retains(event: CallEvent) -> bool:
    keyword = event.keyword("retain_graph")
    return keyword is not None and isinstance(keyword.value, ast.Constant) and keyword.value.value is True


def _receiver(event: CallEvent):
    if event.method == "backward":
        return event.receiver, event.receiver_prov
    return None, None


class _Graph:
    """Which forward computations of a graph saved a parameter that an optimizer step modifies in place.

    A retained graph only breaks when a tensor it saved is changed: parameters saved by a module's forward
    (any layer after the first saves its weight), or a trainable leaf saved by `*`, `@`, `/`, `**`, conv…
    Views, stack/cat and ops on non-trainable tensors save nothing the optimizer touches.
    """

    def __init__(self, model: ModuleModel):
        self.model = model
        self.calls = {id(event.node): event for event in model.calls()}
        self.modules = {}
        for event in model.of_type(BindEvent):
            if event.prov is not None and event.prov.kind is Kind.MODULE:
                self.modules[event.name] = event.prov.module_class

    def node(self, ident: int):
        """The node of a graph id: a call, or the expression whose value the walk recorded (`a * w`). (No walk of the
        whole tree: that made every edit of a 2,000-line module pay ~30 ms.)"""
        event = self.calls.get(ident)
        if event is not None:
            return event.node
        prov = self.model._provs.get(ident)
        return prov.node if prov is not None and prov.node is not None and id(prov.node) == ident else None

    def before_loop(self, loop, graph, frozen: bool = False) -> frozenset:
        """The forwards of `graph` computed in the loop's function before the loop runs (not in its body, not in a helper);
        those of modules the file freezes only with `frozen` (they may have recorded nothing)."""
        scope = loop.scope
        start, end = loop.node.lineno, loop.node.end_lineno or loop.node.lineno
        before = lambda event: event.ctx.scope is scope and event.node.lineno < start and not (start <= event.node.lineno <= end)  # noqa: E731
        owners, called = self.model._graph_owners()
        return frozenset(ident for ident in graph for event in [self.calls.get(ident)]
                         if event is not None and event.role == "forward" and event.ctx.via is None
                         and (before(event) or event.ctx.scope is not scope and self._called_before(owners.get(ident), called, graph, before))
                         and (frozen or not is_frozen(self.model, self.model.text(event.node.func) if event.method != "forward" else None)))

    def caller(self, forward, graph, scope):
        """The call of this scope, in the graph, that ran a helper's forward (None: the forward is this scope's)."""
        if forward.ctx.scope is scope:
            return None
        owners, called = self.model._graph_owners()
        return next((event for event in map(self.calls.get, called.get(owners.get(id(forward.node)), frozenset()) & graph)
                     if event is not None and event.ctx.scope is scope), None)

    def _called_before(self, function, called, graph, before) -> bool:
        """A forward of a helper's body that a call of this graph, made before the loop, ran (`losses = self.task_losses(batch)`)."""
        return function is not None and any(event is not None and before(event)
                                            for event in map(self.calls.get, called.get(function, frozenset()) & graph))

    def first_forward(self, part):
        return min((self.calls[ident] for ident in part), key=lambda event: event.seq)

    def touched(self, steps, graph) -> bool:
        for step in steps or [None]:
            prov = step.receiver_prov if step is not None else None
            params = prov.params if prov is not None and prov.kind is Kind.OPTIMIZER and prov.params else None
            if params is not None:
                params = params | self._kept_as(prov, params) | self._owned_by(step.receiver, prov, params)
            if any(self._saves(self.node(ident), params) for ident in graph):
                return True
        return False

    def _kept_as(self, optimizer, params) -> frozenset:
        """The optimizer's parameters under the attribute the function that built it keeps their module as
        (`self.model = model` then `SGD(model.parameters())`: `self.model.*` too)."""
        made = optimizer.node
        owner = self.model._graph_owners()[0].get(id(made)) if made is not None else None
        if owner is None:
            return frozenset()
        kept = set()
        for bind in self.model.of_type(BindEvent):
            value = bind.value
            if bind.ctx.scope.node is owner and bind.ctx.via is None and bind.name.startswith("self.") and type(value) is ast.Name:
                for param in params:
                    if param == value.id + ".*" or param.startswith(value.id + "."):
                        kept.add(bind.name + param[len(value.id):])
        return frozenset(kept)

    def _owned_by(self, receiver, optimizer, params) -> frozenset:
        """`member.opt.step()` of an optimizer its module's class built over `self.parameters()` (`self.*`): `member.*`."""
        if type(receiver) is not ast.Attribute or type(optimizer.node) is not ast.Call:
            return frozenset()
        owner = self.model.prov(receiver.value)
        cls = owner.module_class if owner is not None and owner.kind is Kind.MODULE else None
        made = optimizer.node.lineno
        if not isinstance(cls, ClassInfo) or not cls.node.lineno <= made <= (cls.node.end_lineno or made):
            return frozenset()
        text = self.model.text(receiver.value)
        return frozenset(text + param[len("self"):] for param in params if param == "self" or param.startswith("self."))

    @staticmethod
    def _covers(params, name: str | None, whole: bool = False) -> bool:
        """The optimizer's parameters include `name`'s (`whole`: all of them, not only a submodule's)."""
        if params is None:
            return True
        if name is None:
            return True  # an unnamed module or leaf: it may be among the optimizer's parameters
        name = name[: -len(".parameters()")] if name.endswith(".parameters()") else name
        for param in params:
            owner = param[:-2] if param.endswith(".*") else param
            if name == owner or name.startswith(owner + ".") or not whole and owner.startswith(name + "."):
                return True
        return False

    def _saves(self, node, params) -> bool:
        model = self.model
        if node is None:
            return False  # made in another module's helper: unknown, so silent
        event = self.calls.get(id(node))
        if event is not None and event.role == "forward":
            target = event.receiver if event.method == "forward" else node.func
            name = model.text(target) if isinstance(target, (ast.Name, ast.Attribute)) else None
            # (the module this call runs, as the walk knew it there: a name bound to other classes elsewhere may differ)
            called = called_module(model, event)
            cls = called.module_class if called is not None and called.module_class is not None else self.modules.get(name)
            if isinstance(cls, str) and (api.layer_parameters(cls.rsplit(".", 1)[-1]) == () or cls.endswith("Loss")):
                return False
            if self._covers(params, name, whole=True):
                # a single torch layer fed data may keep only its input (nn.Linear): then a step changes nothing it saved
                fed = any(p is not None and p.is_tensor and p.requires_grad for p in map(model.prov, node.args))
                keeps = api.layer_keeps_parameters(cls.rsplit(".", 1)[-1], fed) if isinstance(cls, str) else None
                if keeps is None and not fed and isinstance(cls, ClassInfo) and _layers_only(cls, model):
                    # a workspace module of layers fed data: its first layer kept the data; only chained layers keep weights
                    keeps = keeps_own_weights(model, Provenance(Kind.MODULE, node.lineno, module_class=cls))
                return keeps is not False
            # the optimizer updates only a part of the module (`model.trunk`): that part's weights are saved for sure
            # only when the forward's input requires grad (a first layer fed data keeps its input, not its weight)
            return self._covers(params, name) and (any(p is not None and p.is_tensor and p.requires_grad
                                                       for p in map(model.prov, node.args)) or self._part_saves(cls, name, params))
        if isinstance(node, ast.BinOp) and api.operator_op(node.op):
            return self._saves_operand(api.operator_op(node.op), [node.left, node.right], params)
        if isinstance(node, ast.Call) and event is not None and event.role is None:
            name = (event.qualname or event.method or "").rsplit(".", 1)[-1]
            operands = ([event.receiver] if event.receiver is not None else []) + list(node.args)
            return self._saves_operand(name, operands, params)
        return False

    def _part_saves(self, cls, name: str, params) -> bool:
        """The forward of a workspace module (`net`) of which the optimizer updates only some submodules (`net.trunk`)
        runs one of those on the way to every output it returns, and that one keeps a parameter for its backward (a
        stack of layers, or a layer fed what requires grad): whichever output a loss is made from, its graph holds it."""
        forward = cls.methods.get("forward") if isinstance(cls, ClassInfo) else None
        outputs = flatten([forward.returns]) if forward is not None and forward.returns is not None else []
        if not outputs or any(p is None or not p.is_tensor or not p.graph for p in outputs):
            return False
        for event in self._forwards_in(forward):
            target = event.receiver if event.method == "forward" else event.node.func
            text = self.model.text(target) if isinstance(target, ast.Attribute) else ""
            part = name + text[len("self"):] if text.startswith("self.") and text.count(".") == 1 else None
            if part is None or not self._covers(params, part, whole=True) or is_frozen(self.model, part) \
                    or not all(id(event.node) in p.graph for p in outputs):
                continue
            fed = any(p is not None and p.is_tensor and p.requires_grad for p in map(self.model.prov, event.node.args))
            if self._layer_saves(cls.attribute(text[len("self."):]), fed, self.model):
                return True
        return False

    def _forwards_in(self, function) -> list:
        """The module calls of a function's own walk (once per function)."""
        cache = self.__dict__.setdefault("_forwards", {})
        found = cache.get(id(function))
        if found is None:
            found = cache[id(function)] = [event for event in self.calls.values() if event.role == "forward"
                                           and event.ctx.via is None and event.ctx.scope.function is function]
        return found

    @staticmethod
    def _layer_saves(layer, fed: bool, model: ModuleModel) -> bool:
        """A torch.nn layer keeps one of its parameters for its backward (a container: one of its layers does, each
        after one with parameters being fed what requires grad; a workspace module: one that keeps its weights whatever
        it is fed)."""
        if layer is not None and layer.kind is Kind.MODULE and isinstance(layer.module_class, ClassInfo):
            return keeps_own_weights(model, layer)
        if layer is None or layer.kind is not Kind.MODULE or not isinstance(layer.module_class, str):
            return False
        short = layer.module_class.rsplit(".", 1)[-1]
        if api.layer_parameters(short) is not None:
            return bool(api.layer_parameters(short)) and api.layer_keeps_parameters(short, fed) is True
        if not layer.elements:
            return False
        for inner in layer.elements:
            if _Graph._layer_saves(inner, fed, model):
                return True
            if inner is None or not isinstance(inner.module_class, str) or api.layer_parameters(inner.module_class.rsplit(".", 1)[-1]) is None:
                return False  # (an unknown layer: what follows may be fed anything)
            fed = fed or bool(api.layer_parameters(inner.module_class.rsplit(".", 1)[-1]))
        return False

    def saves_any(self, node) -> bool:
        """The node's backward keeps some tensor (an input, a wrapped Python number, its own result), which a backward
        that does not retain the graph frees: a module forward with parameters, or an op derivatives.yaml says keeps one."""
        if node is None:
            return False
        event = self.calls.get(id(node))
        if event is not None and event.role == "forward":
            # a layer with parameters keeps its input (for the weight's gradient) or its weight (for the input's): some
            # tensor either way; one without (an activation) keeps what its op's derivative needs
            target = event.receiver if event.method == "forward" else node.func
            cls = self.modules.get(self.model.text(target) if isinstance(target, (ast.Name, ast.Attribute)) else None)
            if not isinstance(cls, str):
                return cls is not None  # a workspace module (its layers keep what they need); unknown: no claim
            short = cls.rsplit(".", 1)[-1]
            if api.layer_parameters(short):
                return True
            op = api.layer_op(short)
            fed = any(p is not None and p.is_tensor and p.requires_grad for p in map(self.model.prov, node.args))
            return op is not None and fed and (bool(api.saved_inputs(op, [True])) or api.saves_output(op))
        if isinstance(node, ast.BinOp) and api.operator_op(node.op):
            op, operands = api.operator_op(node.op), [node.left, node.right]
        elif isinstance(node, ast.Call) and event is not None and event.role is None:
            op = (event.qualname or event.method or "").rsplit(".", 1)[-1]
            operands = ([event.receiver] if event.receiver is not None else []) + list(node.args)
        else:
            return False
        grads = [bool(p is not None and p.is_tensor and p.requires_grad) for p in map(self.model.prov, operands)]
        return bool(api.saved_inputs(op, grads)) or any(grads) and api.saves_output(op)

    def _saves_operand(self, op: str, operands: list, params) -> bool:
        """`op` keeps one of the optimizer's parameters for its backward (derivatives.yaml, given what requires grad)."""
        grads = [bool(p is not None and p.is_tensor and p.requires_grad) for p in map(self.model.prov, operands)]
        kept = api.saved_inputs(op, grads)
        return any(index in kept and self._leaf_covered(operand, params) for index, operand in enumerate(operands))

    def _leaf_covered(self, operand, params) -> bool:
        prov = self.model.prov(operand)
        if prov is None or not prov.is_trainable_leaf:
            return False
        name = self.model.text(operand) if isinstance(operand, (ast.Name, ast.Attribute)) else None
        return self._covers(params, prov.origin if prov.origin.endswith(".parameters()") else name)


def check(model: ModuleModel):
    """Each finding; the second place of a two-place one (`cause_of`) only where no finding of its own stands."""
    found = list(_check(model))
    primary = {finding.span.line for finding in found if "cause_of" not in finding.data}
    seen = set()  # (a helper's backward reached by two calls: one finding there)
    for finding in found:
        if "cause_of" in finding.data:
            if finding.span.line in primary or (finding.span.line, finding.span.col) in seen:
                continue
            seen.add((finding.span.line, finding.span.col))
        yield finding


def _check(model: ModuleModel):
    backwards = list(model.calls(role="backward"))
    steps = list(model.calls(role="step"))
    graphs = None
    for event in backwards:
        if not _retains(event):
            continue
        receiver, prov = _receiver(event)
        if prov is None or not prov.has_graph or not prov.graph:
            if _handed_in_never_reused(model, event):
                yield _never_reused(model, event)
            continue
        scope = event.ctx.scope
        same_scope = [b for b in backwards if b.ctx.scope is scope]
        sharing = [b for b in same_scope if b is not event and b.receiver_prov is not None and model.shared_graph(b.receiver_prov.graph, prov.graph)]
        # 1. a later backward through the same graph, with a step in between
        for later in sharing:
            if later.seq <= event.seq or never_together(model, event, later):
                continue
            between = [s for s in steps if s.ctx.scope is scope and event.seq < s.seq < later.seq
                       and not never_together(model, event, s) and not never_together(model, s, later)]
            graphs = graphs or _Graph(model)
            shared = model.shared_graph(later.receiver_prov.graph, prov.graph)
            touching = [s for s in between if graphs.touched([s], shared)]
            if touching:
                yield from _reused_after_step(model, event, later, touching[0])
                break
        else:
            # 1b. a later method, called right after this one, backpropagates through the graph it kept on `self`
            graphs = graphs or _Graph(model)
            crossed = _reused_by_next_method(model, event, prov, backwards, steps, graphs)
            if crossed is not None:
                yield from _reused_after_step(model, event, *crossed)
                continue
            # 2. in a training loop, a graph built before the loop is backpropagated again next iteration
            loop = next((l for l in event.ctx.loops() if l.has_step and not l.contains(prov.loop)
                         and (receiver is None or model.text(receiver) not in l.assigned)), None)
            if loop is not None:
                graphs = graphs or _Graph(model)
                if graphs.touched(loop.steps, prov.graph):
                    step = loop.steps[0] if loop.steps else None
                    yield _reused_next_iteration(model, event, loop, step)
                continue  # reused every iteration, but nothing it saved is modified: no error to report
            # 2a. the loss is rebuilt each iteration, but on a forward computed before the loop (`fake` of the previous loop)
            graphs = graphs or _Graph(model)
            loops = [l for l in event.ctx.loops() if l.scope is scope]
            touched = next(((l, part) for l in loops if l.has_step for part in [graphs.before_loop(l, prov.graph)]
                            if part and graphs.touched(l.steps, part)), None)
            if touched is not None:
                loop, part = touched
                forward = graphs.first_forward(part)
                step = next((s for s in loop.steps if graphs.touched([s], part)), None)  # (the step that changes what it saved)
                yield _reused_from_before_loop(model, event, loop, forward, graphs.caller(forward, prov.graph, scope), step)
            if any(graphs.before_loop(l, prov.graph, frozen=True) for l in loops):
                continue  # the next iteration may backpropagate through that part again: retaining it may be needed
            # 2b. a value of this graph is carried into the next iteration (an RNN's hidden state never detached)
            carried = _loop_carried(model, event, prov)
            if carried is not None:
                loop, name = carried
                graphs = graphs or _Graph(model)
                if graphs.touched(loop.steps, prov.graph):
                    yield _carried_next_iteration(model, event, loop, name)
                continue
            # 3. nothing reuses the graph: retain_graph only costs memory
            if _nothing_reuses(model, event, prov, same_scope, scope):
                yield _never_reused(model, event)
    # 4. without retain_graph, a backward frees what the graph saved: a later backward through it raises (a backward that a
    # called function runs on this body's values counts: ThroughEvent)
    freeing = list(model.calls(role="backward", through=True))
    if len(freeing) > 1:
        # (a step a called function runs is one between, too)
        yield from _freed_then_reused(model, freeing, list(model.calls(role="step", through=True)), graphs or _Graph(model))
    # 5. a helper's backward that frees, every iteration, a forward run once before the loop (AG017 reports the call)
    yield from _freed_every_iteration(model)


def _frees(event) -> bool:
    """`loss.backward()` with no say on keeping the graph: it frees every saved tensor it passes. (Any keyword but
    `gradient`/`inputs` — `retain_graph`, `create_graph`, torch 0.3's `retain_variables` — and the call is not known to.)
    Through a call: the backward it comes down to, run whenever the call runs."""
    if type(event) is ThroughEvent:
        if not event.certain:
            return False
        event = event.direct
    return event.method == "backward" and all(kw.arg in ("gradient", "inputs") for kw in event.node.keywords) \
        and not any(isinstance(arg, ast.Starred) for arg in event.node.args) and len(event.node.args) < 2


def _freed_then_reused(model, backwards, steps, graphs):
    """A `backward()` that frees the graph, then a later `backward()` of the same body, on a path that runs whenever the
    first one ran (the same block or nested in a later statement of it), through a node of that graph that saved a tensor:
    "Trying to backward through the graph a second time". With an optimizer step between, AG017 may say more (a GAN's
    shared output, with its `.detach()`): where it reports the later backward, this does not."""
    reported = set()
    for first in backwards:
        _, prov = _receiver(first)
        if not _frees(first) or first.ctx.via is not None or prov is None or not prov.has_graph or not prov.graph:
            continue
        scope = first.ctx.scope
        for later in backwards:
            later_prov = later.receiver_prov
            if later.method != "backward" or later is first or later.ctx.via is not None \
                    or later.ctx.scope is not scope or later.seq <= first.seq \
                    or later.keyword("inputs") is not None or later_prov is None or not later_prov.graph:
                continue
            a, b = parted(first, later)  # (both through one call: where they are in its body)
            if a is b or site(b) is site(a) or site(b).lineno <= site(a).lineno or id(site(b)) in reported:
                continue
            if _fresh_each_call(model, a, b, prov.graph | later_prov.graph):
                continue  # two calls of one helper that builds its graph anew and backpropagates it: two graphs
            shared = model.shared_graph(later_prov.graph, prov.graph)  # (a helper's nodes: per call)
            if not shared or not runs_after(first, later) \
                    or not any(graphs.saves_any(graphs.node(ident)) and not _apart_outputs(model, graphs, ident, prov.graph, later_prov.graph)
                               for ident in shared):
                continue
            a, b = shown(model, first, later)  # (where they part, when that body is this module's)
            if any(s.ctx.scope is scope and first.seq < s.seq < later.seq for s in steps) and site(b).lineno in _ag017_lines(model) \
                    and not _added_to(model, first, later):
                continue  # a step between, on a GAN's shared output: AG017 reports it, with the detach that fixes it
            found = _backward_second_time(model, a, b)
            finding = found[0]
            if (finding.span.line, finding.span.col) in reported:
                continue  # (the same pair seen from a caller of the body that holds it)
            reported.add(id(site(b)))
            reported.add((finding.span.line, finding.span.col))
            yield from found
            break  # (one finding per freeing backward: the first backward through it again)


def _apart_outputs(model, graphs, ident: int, a: frozenset, b: frozenset) -> bool:
    """`ident` is a call of a workspace module (`a, v = policy(s)`) that each graph holds through other outputs than the
    other's (the unpacked targets its graph holds: walker._output_marked), and the forward it runs provably computes
    those outputs apart: `return self.actor(s), self.critic(s)`, each output a call of its own module (one set in
    __init__: handed to the constructor or built there), whose operands are the forward's arguments, constants, or
    locals computed from them by calls of their own. Not apart (the claim needs proof): two outputs reaching one call,
    one local or one module (a local unpacked from one call, `a, b = self.net(x)`, `.split`/`.chunk`); a value read
    from `self` or from outside; a method call on a value the walk does not know (`context.mul(...)`, `self.feat.matmul`,
    a method of the class, `super().forward`); an argument of the call that carries the call's own graph (a loop-carried
    `hx`/`prev` rebound from its outputs). What the arguments carry otherwise is in both graphs by its own nodes."""
    event = graphs.calls.get(ident)
    if event is None or event.role != "forward" or event.runs is None or event.runs.cls is None:
        return False
    statement = event.ctx.statement
    if type(statement) is not ast.Assign or len(statement.targets) != 1 or statement.value is not event.node \
            or type(statement.targets[0]) not in (ast.Tuple, ast.List):
        return False
    places = {id(element): index for index, element in enumerate(statement.targets[0].elts)}
    took_a = {places[i] for i in a if i in places}
    took_b = {places[i] for i in b if i in places}
    if not took_a or not took_b or took_a & took_b:
        return False
    if _carries_own_graph(model, event) or not _arguments_without_graph(model, event):
        return False
    function = event.runs.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    flow = _forward_flow(model, function, event.runs.cls)
    if flow is None:
        return False
    returns, reach = flow
    width = len(statement.targets[0].elts)
    if any(len(elements) != width for elements in returns):
        return False
    used_a = set().union(*(reach(elements[index]) for elements in returns for index in took_a))
    used_b = set().union(*(reach(elements[index]) for elements in returns for index in took_b))
    if any(kind == "unknown" for kind, _ in used_a | used_b):
        return False
    return not used_a & used_b


def _arguments_without_graph(model, event) -> bool:
    """No tensor the call is given is known to carry a graph: one it carries (an encoder's output, a loop-carried
    prediction) is in both losses' graphs, with what its ops saved (a layer's saved input, not always known here)."""
    for argument in [*event.node.args, *(keyword.value for keyword in event.node.keywords)]:
        if type(argument) is ast.Starred:
            return False
        prov = model.prov(argument)
        if prov is not None and prov.kind is Kind.TENSOR and prov.graph:
            return False
    # a parameter of the function the call is in: what its callers here pass (`prev = train_step(model, obs, prev)`,
    # the previous step's prediction fed back)
    function = event.ctx.scope.function
    if function is not None and event.ctx.via is None:
        read = {node.id for argument in [*event.node.args, *(keyword.value for keyword in event.node.keywords)]
                for node in ast.walk(argument) if type(node) is ast.Name}
        params = read & {a.arg for a in [*function.node.args.posonlyargs, *function.node.args.args, *function.node.args.kwonlyargs]}
        for call in model.callers(function) if params else ():
            for param in params:
                passed = callsite.argument_for(call, {param})
                prov = model.prov(passed) if passed is not None else None
                if prov is not None and prov.kind is Kind.TENSOR and prov.graph:
                    return False
                if type(passed) is ast.Name and any(  # (rebound in a loop from a result with a graph: its later passes)
                        bind.name == passed.id and bind.ctx.scope is call.ctx.scope and bind.prov is not None
                        and bind.prov.kind is Kind.TENSOR and bind.prov.graph for bind in model.of_type(BindEvent)):
                    return False
    return True


def _carries_own_graph(model, event) -> bool:
    """An argument of the call `event` is a name that some binding in its scope gives a graph holding this very call
    (`logits, value, hx = model(obs, hx)`; `nxt, score = net(prev)` ... `prev = nxt`): the next call's outputs then
    share the earlier call's graph through it."""
    names = {node.id if type(node) is ast.Name else ast.unparse(node)
             for argument in [*event.node.args, *(keyword.value for keyword in event.node.keywords)]
             for node in ast.walk(argument) if type(node) in (ast.Name, ast.Attribute)}  # (`self.hx`: its label)
    if not names:
        return False
    ident = id(event.node)
    for bind in model.of_type(BindEvent):
        if bind.name in names and bind.ctx.scope is event.ctx.scope and bind.prov is not None and ident in bind.prov.graph:
            return True
    for call in model.of_type(CallEvent):  # (`history.append(softmax(logits))`, `history[-1]` the next call's input)
        if call.method is not None and call.receiver is not None and call.ctx.scope is event.ctx.scope \
                and (ast.unparse(call.receiver) in names) and call.method in uses.ADDS_ITEMS:
            for argument in call.node.args:
                prov = model.prov(argument)
                if prov is None or ident in prov.graph:
                    return True
    return False


def _forward_flow(model, function, cls):
    """The tuple displays a forward returns (every `return`), and `reach(expression)`: what it is computed from in the
    body: the calls it makes ("call"), the modules of `self` it calls ("module"), the locals it reads ("local"), and
    ("unknown", ...) for anything that is not provably its own: a value of `self` or from outside, a method call on a
    value not known, a local of a loop or a `with`. (A local unpacked from one call reaches that call: two outputs of
    it share it.) None: a body this cannot follow."""
    inner = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    own = []
    stack = list(function.body)
    while stack:
        node = stack.pop()
        own.append(node)
        if isinstance(node, inner) or isinstance(node, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom)):
            return None  # (a nested def, a generator, a name of another scope: not followed)
        stack.extend(ast.iter_child_nodes(node))
    returns = []
    for node in own:
        if type(node) is ast.Expr and type(node.value) is not ast.Constant:
            return None  # (`x.mul_(self.gain)`, a call for its effect: what it changes is not followed)
        if type(node) is ast.Return:
            if type(node.value) not in (ast.Tuple, ast.List) or any(type(e) is ast.Starred for e in node.value.elts):
                return None
            returns.append(node.value.elts)
    if not returns:
        return None
    arguments = function.args
    params = [arg.arg for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    params += [arg.arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None]
    receiver = params[0] if params else None
    bound: dict = {}

    def bind(target, value):
        if type(target) is ast.Name:
            bound.setdefault(target.id, []).append(value)
        elif type(target) in (ast.Tuple, ast.List, ast.Starred):
            for element in (target.elts if type(target) is not ast.Starred else [target.value]):
                bind(element, value)  # (`a, b = self.net(x)`, `.split(...)`: each reaches that one call: shared)
        elif type(target) is ast.Subscript:  # (`h[:, 0] = v`: h holds v too)
            base = target.value
            while type(base) in (ast.Subscript, ast.Attribute):
                base = base.value
            if type(base) is ast.Name and base.id != receiver:
                bind(base, value)

    for node in own:
        kind = type(node)
        if kind is ast.Assign:
            for target in node.targets:
                bind(target, node.value)
        elif kind in (ast.AugAssign, ast.AnnAssign) and node.value is not None:
            bind(node.target, node.value)
        elif kind in (ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr):
            bind(node.target, None)
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, None)
        elif kind is ast.ExceptHandler and node.name:
            bound.setdefault(node.name, []).append(None)
        elif kind in (ast.Import, ast.ImportFrom):
            for alias in node.names:
                bound.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)

    modules = _imported_modules(model)
    own_modules = _init_modules(cls)

    def reach(expression) -> frozenset:
        used = set()
        stack = [expression]
        while stack:
            node = stack.pop()
            kind = type(node)
            if node is None:
                used.add(("unknown", None))
            elif kind is ast.Call:
                used.add(("call", id(node)))
                func = node.func
                entry = None
                if type(func) is ast.Subscript and type(func.slice) is ast.Constant:
                    func, entry = func.value, func.slice.value  # (`self.heads[0](x)`: one entry of a module list)
                if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == receiver:
                    if func.attr in own_modules:
                        used.add(("module", (func.attr, entry)))  # (`self.actor(s)`: a module of its own)
                    else:
                        used.add(("unknown", None))  # (a method of the class, a value of self: not known)
                else:
                    root = func
                    while type(root) is ast.Attribute:
                        root = root.value
                    if type(root) is ast.Call and root is not func:
                        stack.append(func)  # (`self.head(s).clamp(-5, 2)`: a method of a value computed here: read it)
                    elif type(root) is not ast.Name:
                        used.add(("unknown", None))  # (`f()(x)`, `fs[0](x)`)
                    elif root.id in bound or root.id in params:
                        stack.append(func)  # (`x.float()`: a method of a local or an argument: read it)
                    elif root.id not in modules:
                        used.add(("unknown", None))  # (`context.mul(...)`: a value from outside)
                stack.extend(node.args)
                stack.extend(keyword.value for keyword in node.keywords)
            elif kind is ast.Attribute and _rooted_at(node, receiver):
                used.add(("unknown", None))  # (a value read from the module: state, a cache)
            elif kind is ast.Name:
                name = node.id
                if name in bound:
                    if ("local", name) not in used:  # (each binding of it followed once: `h = h + 1` reads itself)
                        used.add(("local", name))
                        stack.extend(bound[name])
                elif name not in params or name == receiver:
                    if name not in modules:
                        used.add(("unknown", None))
            else:
                stack.extend(ast.iter_child_nodes(node))
        if not any(kind == "module" for kind, _ in used):
            used.add(("unknown", None))  # (an output that no module of its own computes)
        return frozenset(used)

    return returns, reach


def _imported_modules(model) -> set:
    """Names the module binds by `import torch` / `import torch.nn.functional as F`, and by `from torch... import x`:
    modules and functions, whose calls build nodes of their own (not values that carry a graph)."""
    found = set()
    for node in ast.walk(model.tree):
        if type(node) is ast.Import:  # (torch's own; another module's attributes may be tensors with a graph)
            found.update((alias.asname or alias.name).split(".")[0] for alias in node.names
                         if alias.name.split(".")[0] in ("torch", "math"))
        elif type(node) is ast.ImportFrom and node.level == 0 and node.module and node.module.split(".")[0] == "torch":
            found.update(alias.asname or alias.name for alias in node.names)
    return found


def _init_modules(cls) -> set:
    """Attributes of `self` that the class's own __init__ sets (`self.actor = actor`, `self.v = nn.Linear(...)`,
    `self.heads = nn.ModuleList(...)`) and no other method of it sets, and that are no method of it."""
    init = set()
    elsewhere = set()
    methods = set()
    for statement in cls.node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods.add(statement.name)
            into = init if statement.name == "__init__" else elsewhere
            receiver = statement.args.args[0].arg if statement.args.args else None
            for node in ast.walk(statement):
                targets = node.targets if type(node) is ast.Assign else [node.target] if type(node) in (ast.AugAssign, ast.AnnAssign) else []
                for target in targets:
                    for element in ast.walk(target):
                        if type(element) is ast.Attribute and type(element.value) is ast.Name and element.value.id == receiver:
                            into.add(element.attr)
        elif type(statement) in (ast.Assign, ast.AnnAssign):
            for target in (statement.targets if type(statement) is ast.Assign else [statement.target]):
                if type(target) is ast.Name:
                    methods.add(target.id)
    return init - elsewhere - methods


def _rooted_at(node, name) -> bool:
    while type(node) is ast.Attribute:
        node = node.value
    return type(node) is ast.Name and node.id == name


def _fresh_each_call(model, a, b, graph) -> bool:
    """`a` and `b` are the backward of one helper's body run by two of its calls (`check(3)`, then `check(5)`), and every
    node of the graph it backpropagates was made while the helper ran: in its body, or in the body of a function it
    calls there (a forward, a loss) through a call the graph holds. Then each call builds its own graph (from fresh
    leaves, a fresh forward) and frees only that: nothing of it was made before the call, by the caller or elsewhere."""
    if type(a) is not ThroughEvent or type(b) is not ThroughEvent or a.through is b.through or not graph:
        return False
    body = a.inner.ctx.scope.node
    if body is not b.inner.ctx.scope.node or not isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    owners, calls = model._graph_owners()
    inside, left, named = {body}, set(graph), {}
    _note_calls(body, graph, named)
    while left:
        found = {ident for ident in left if owners.get(ident) in inside}
        if not found:  # (a function whose calls in the graph are made inside: its nodes are made inside too)
            more = {function for function in {owners.get(ident) for ident in left} - {None}
                    if any(owners.get(call) in inside for call in calls.get(function, ()) if call in graph)
                    or function.name in named or function.name in ("forward", "__call__") and named}
            if not more:
                return False  # (a node made outside the helper's run: the caller's, another method's, the module's)
            inside |= more
            for function in more:
                _note_calls(function, graph, named)
            continue
        left -= found
    return True


def _note_calls(function, graph, named: dict) -> None:
    """The calls of `function`'s own body that the graph holds, by the name they call (`model.q(s)`: "q"): a method
    of an argument, which the walk of the body alone does not know, whose nodes the graph holds (a call-site walk)."""
    for node in nodes(function):
        if type(node) is ast.Call and id(node) in graph:
            func = node.func
            name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
            if name is not None:
                named[name] = node


def _freed_every_iteration(model):
    """`self.backward_D()` in a training loop, whose `loss_D.backward()` frees a forward that another method ran once
    before the loop (`self.fake_B`; AG017 reports the call and that forward): from the second iteration on it goes
    through the freed graph. Reported at that backward, where the graph can be kept, when the call is the helper's only
    one here and the helper runs no other backward."""
    if not any(call.ctx.loop is not None and call.function is not None and call.function.calls_backward for call in model.calls()):
        return  # (no helper that backpropagates is called in a loop: AG017's check is not run for this)
    iterations = {(finding.span.line, finding.span.col): finding for finding in _ag017_findings(model)
                  if "loop_line" in finding.data and "cause_of" not in finding.data}
    if not iterations:
        return
    for call in model.calls():
        found = iterations.get((call.node.lineno, model.char_col(call.node.lineno, call.node.col_offset)))
        function = call.function
        if found is None or function is None or call.ctx.via is not None \
                or any(other.node is not call.node for other in model.callers(function) if other.ctx.via is None):
            continue
        inner = [b for b in model.calls(role="backward") if b.ctx.scope.function is function and b.ctx.via is None]
        if len(inner) != 1 or not _frees(inner[0]) or inner[0].node.lineno in _ag017_lines(model):
            continue
        text = " ".join(model.text(call.node).split())
        message = (f"this backward frees the graph of `{found.data.get('shared')}`, computed once, before the training loop at "
                   f"line {found.data['loop_line']}: the next `{text}` (line {call.node.lineno}) backpropagates through it again: "
                   f"RuntimeError \"Trying to backward through the graph a second time\". Recompute it inside the loop, or keep "
                   f"it here with `retain_graph=True` if no step in the loop changes what it saved")
        yield model.finding(RULE, inner[0].node, message, related=[(call.node, "the next iteration's call backpropagates it again")],
                            kind="freed-every-iteration", loop_line=found.data["loop_line"])


def _ag017_findings(model) -> list:
    from . import missing_detach_shared_graph

    return list(missing_detach_shared_graph.check(model))  # (memoised on the model by that rule)


def _added_to(model, first, later) -> bool:
    """Both backward calls are of one name that an augmented assignment grew in between (`loss += criterion(...)`, the
    accumulator never reset): one loss backpropagated again, not an output shared by two losses (AG017's)."""
    name = first.receiver.id if type(first) is CallEvent and type(first.receiver) is ast.Name else None
    if name is None or type(later.receiver) is not ast.Name or later.receiver.id != name:
        return False
    return any(event.name == name and type(event.ctx.statement) is ast.AugAssign and first.seq < event.seq < later.seq
               for event in model.of_type(BindEvent))


def _ag017_lines(model) -> set:
    """The lines AG017 reports in this module (computed once, only when a step lies between two backward calls)."""
    found = model.__dict__.get("_ag017_lines")
    if found is None:
        from . import missing_detach_shared_graph

        found = model.__dict__["_ag017_lines"] = {finding.span.line for finding in _ag017_findings(model)}
    return found


def _backward_second_time(model, first, later):
    """Reported at the first backward, where `retain_graph=True` (or one backward of the summed losses) belongs, and at
    the later one, which raises. A first backward that a called function runs (its body may be another module's, or
    shared by other callers) is reported at the later one, and at that body's backward when it is this module's."""
    later_site = site(later)
    later_text = " ".join(model.text(later_site).split())
    if type(first) is ThroughEvent:
        call = " ".join(model.text(first.through).split())
        call = call if len(call) <= 60 else call[:57] + "..."
        inner = first.node  # (in the called body: its backward, or the call there that runs one)
        text = " ".join(model.text(inner).split()) if first.inner.ctx.scope.node in model.functions else None  # (this module's)
        where = f"its `{text}` at line {inner.lineno}" if text is not None and len(text) <= 60 else "its backward"
        message = (f"`{call}` (line {first.through.lineno}) already backpropagated this graph and freed its saved tensors "
                   f"({where} runs whenever it does), so this backward goes through a freed graph: RuntimeError "
                   f"\"Trying to backward through the graph a second time\". Backpropagate once (sum the losses), or keep the "
                   f"graph there with `retain_graph=True`")
        found = model.finding(RULE, later_site, message, related=[(first.through, "the graph is backpropagated and freed in this call")],
                              kind="backward-second-time", first_backward_line=first.through.lineno)
        if text is None or len(text) > 60:
            return [found]
        cause = (f"`{text}` frees the graph's saved tensors when `{call}` (line {first.through.lineno}) runs it, but "
                 f"`{later_text}` (line {later_site.lineno}) backpropagates through the same graph afterwards: RuntimeError "
                 f"\"Trying to backward through the graph a second time\". Backpropagate once, or keep the graph here "
                 f"(`retain_graph=True`) where a later backward needs it")
        return model.with_cause(found, inner, cause, "the freed graph is backpropagated again here")
    message = (f"this backward frees the graph's saved tensors, but `{later_text}` (line {later_site.lineno}) backpropagates "
               f"through the same graph again: RuntimeError \"Trying to backward through the graph a second time\". Sum the "
               f"losses and call backward once, or pass `retain_graph=True` here")
    fix = _add_retain_graph(model, first)
    found = model.finding(RULE, first.node, message, fixes=[fix] if fix else [],
                          related=[(later_site, "the freed graph is backpropagated again here")], kind="backward-second-time",
                          second_backward_line=later_site.lineno)
    first_text = " ".join(model.text(first.node).split())
    cause = (f"`{later_text}` backpropagates through the graph that `{first_text}` (line {first.node.lineno}) already backpropagated and "
             f"freed: RuntimeError \"Trying to backward through the graph a second time\". Sum the losses and call backward "
             f"once, or pass `retain_graph=True` to the first backward")
    found = model.with_cause(found, later_site, cause, "the graph is backpropagated and freed here")
    if type(later) is ThroughEvent and later.inner.ctx.scope.node in model.functions and later.node.lineno != later_site.lineno:
        # (a helper of this module runs the later backward: where it raises, for this call)
        inner_text = " ".join(model.text(later.node).split())
        call = later_text if len(later_text) <= 60 else later_text[:57] + "..."
        raises = (f"`{inner_text}` raises when `{call}` (line {later_site.lineno}) runs it: what that call hands over comes from "
                  f"the graph that `{first_text}` (line {first.node.lineno}) already backpropagated and freed: RuntimeError "
                  f"\"Trying to backward through the graph a second time\". Backpropagate once (sum the losses), or pass "
                  f"`retain_graph=True` to the first backward")
        found += model.with_cause(found[0], later.node, raises, "the graph is backpropagated and freed here")[1:]
    return found


def _add_retain_graph(model, event) -> Fix | None:
    """backward() -> backward(retain_graph=True), backward(g) -> backward(g, retain_graph=True)."""
    call = event.node
    end = model.span(call)
    if end.end_col < 1:
        return None
    text = ", retain_graph=True)" if call.args or call.keywords else "retain_graph=True)"
    return Fix("Keep the graph for the later backward (`retain_graph=True`)", Safety.UNSAFE,
               (Edit(Span(end.end_line, end.end_col - 1, end.end_line, end.end_col), text),))


def _loop_carried(model, event, prov):
    """(loop, name) when `name` is rebound in the loop to a value of the retained graph and read before that, so the
    next iteration builds on (and backpropagates into) this iteration's graph."""
    for loop in event.ctx.loops():
        if loop.scope is not event.ctx.scope:
            break
        binds = [b for b in model.of_type(BindEvent) if b.ctx.scope is loop.scope and loop.contains(b.ctx.loop)]
        first_bind: dict = {}
        for bind in binds:
            first_bind.setdefault(bind.name, bind.seq)
        carriers = {b.name for b in binds if b.prov is not None and b.prov.is_tensor and b.prov.has_graph and model.shared_graph(b.prov.graph, prov.graph)}
        for use in model.of_type(UseEvent):
            if use.name not in carriers or use.ctx.scope is not loop.scope or not loop.contains(use.ctx.loop):
                continue
            if use.seq < first_bind[use.name] and not (use.usage == "receiver" and _carries_nothing(use.callee)) and use.usage != "other" \
                    and _feeds(use, prov.graph):
                return loop, use.name
        for bind in binds:
            if bind.name in carriers and bind.seq == first_bind[bind.name] and _reads_itself(loop, bind, prov.graph):
                return loop, bind.name
    return None


def _reads_itself(loop, bind, graph) -> bool:
    """`out, h = rnn(x, h)`, the loop's first binding of `h`, feeds the graph the `h` of the last iteration (a value the walk
    may not track on the first pass: `h = None` before the loop), and nothing in the loop reads `h` before it."""
    statement = bind.ctx.statement
    value = getattr(statement, "value", None)
    if not isinstance(statement, ast.Assign) or value is None or "." in bind.name:
        return False
    reads = lambda node: any(type(n) is ast.Name and n.id == bind.name and type(n.ctx) is ast.Load for n in ast.walk(node))  # noqa: E731
    if not any(id(node) in graph and reads(node) for node in ast.walk(value)):
        return False
    before = [s for s in loop.node.body if s.lineno < statement.lineno]
    return not any(reads(s) for s in before)


def _carries_nothing(callee) -> bool:
    """`h.detach()`, `h.clone()`, `h.zero_()`, `h.shape`: reading h this way carries no graph into the next iteration."""
    return uses.passive_receiver(callee) or callee == "clone" or uses.writes_without_reading(callee or "")


def _feeds(use, graph) -> bool:
    """The read is an input of a computation of the backpropagated graph (`rnn(x, hidden)` for the loss's graph), not of
    something else (`total = total + loss` keeps graphs alive but never backpropagates through them)."""
    for node in ast.walk(use.ctx.statement):
        if id(node) in graph and any(inner is use.node for inner in ast.walk(node)):
            return True
    return False


def _carried_next_iteration(model, event, loop, name):
    steps = loop.steps
    step_text = f"`{model.text(steps[0].node)}` (line {steps[0].node.lineno})" if steps else "the optimizer step"
    message = (f"`{name}` carries this iteration's graph into the next one (it is never detached), so the next `backward()` "
               f"goes through the retained graph after {step_text} modified the parameters it saved: version-counter error. "
               f"Detach it at the top of the loop (`{name} = {name}.detach()`; if it starts as `None`, once it holds a tensor) "
               f"and drop `retain_graph=True`")
    related = [(steps[0].node, "parameters modified in place here")] if steps else []
    return model.finding(RULE, event.node, message, related=related, kind="carried-next-iteration", loop_line=loop.node.lineno, carried=name)


def _handed_in_never_reused(model, event) -> bool:
    """`loss.backward(retain_graph=True)` on a parameter (`def update(self, gen_loss, dis_loss)`): the graph is the
    callers'. Nothing reuses it when the body reads the parameter no more after it (outside any loop of the body) and,
    at every call of the function this module makes (its ThroughEvents; none: no claim), nothing in the caller
    backpropagates through the graph again after the call."""
    function, receiver = event.ctx.scope.function, event.receiver
    if function is None or type(receiver) is not ast.Name or event.ctx.via is not None:
        return False
    params = function.node.args
    if receiver.id not in {arg.arg for arg in params.posonlyargs + params.args + params.kwonlyargs} \
            or any(loop.scope is event.ctx.scope for loop in event.ctx.loops()):
        return False
    end = (event.node.end_lineno, event.node.end_col_offset)
    if any(type(node) is ast.Name and node.id == receiver.id and (node.lineno, node.col_offset) > end for node in nodes(function.node)):
        return False
    everything = list(model.calls(role="backward", through=True))
    throughs = [t for t in everything if type(t) is ThroughEvent and t.direct.node is event.node]
    for through in throughs:
        prov, scope = through.receiver_prov, through.ctx.scope
        if prov is None or not prov.has_graph or not prov.graph or not _nothing_reuses(
                model, through, prov, [b for b in everything if b.ctx.scope is scope], scope, made_by=through.through):
            return False
    return bool(throughs)


def _nothing_reuses(model, event, prov, same_scope, scope, made_by=None, depth: int = 0) -> bool:
    if event.ctx.scope.function is not None and _returned(model, event, prov.graph, depth):
        return False
    if event.ctx.loop is not None and _fed_from_before_loop(model, event.ctx.loop, prov.graph):
        return False
    if event.ctx.loop is not None and _may_carry(model, event, prov.graph):
        return False
    if _computed_elsewhere(model, event, prov.graph) or _stored(model, event, prov.graph):
        return False
    for other in same_scope:
        if other is event or other.seq < event.seq and not event.ctx.loop:
            continue
        other_prov = other.receiver_prov
        if other_prov is None or model.shared_graph(other_prov.graph, prov.graph):
            return False  # an unknown or graph-sharing backward: it may need the retained graph
    for call in model.calls():
        if call.ctx.scope is scope and (call.qualname or "").endswith("autograd.grad"):
            return False
        if call.ctx.scope is scope and call.function is not None and call.seq > event.seq and call.node is not made_by \
                and _may_backpropagate(model, call.function) and not _handed_nothing_of(model, call, prov.graph):
            return False  # a helper may backpropagate through it
    for use in model.of_type(UseEvent):
        if use.ctx.scope is scope and use.seq > event.seq and model.shared_graph(use.prov.graph, prov.graph):
            if use.usage == "receiver" and uses.passive_receiver(use.callee) or use.usage == "other":
                continue
            if use.usage == "receiver" and use.callee == "backward" or _read_into_cut(model, use):
                continue
            if use.usage == "arg" and (use.callee in uses.NUMBER_CASTS or _inspected_by_helper(model, use)):
                continue  # (`float(loss)`: a number, no graph)
            return False  # the graph is built upon further: a later backward may go through it
    return True


def _stored(model, event, graph) -> bool:
    """The event's scope stores a value of the graph on an object or into a container (`self.last = loss`): another
    method may backpropagate it."""
    stores = model.__dict__.get("_ag003_stores")
    if stores is None:
        stores = model.__dict__["_ag003_stores"] = {}
        for store in [*model.of_type(BindEvent), *model.of_type(ItemStoreEvent)]:
            if store.prov is not None and store.prov.graph and (type(store) is ItemStoreEvent or "." in store.name):
                stores.setdefault(id(store.ctx.scope), []).append(store.prov.graph)
    return any(model.shared_graph(stored, graph) for stored in stores.get(id(event.ctx.scope), ()))


def _graph_free(prov) -> bool:
    """A tensor known to carry no graph (cut by `.detach()`, or not requiring grad: `argmax`, a comparison)."""
    return prov is not None and prov.is_tensor and not prov.graph and (prov.requires_grad is False or prov.detached)


def _read_into_cut(model, use) -> bool:
    """The read is inside an assignment's value that carries no graph (`prev = logits.argmax(-1)`)."""
    stmt = use.ctx.statement
    if type(stmt) is not ast.Assign or not _graph_free(model.prov(stmt.value)):
        return False
    value, node = stmt.value, use.node
    return (value.lineno, value.col_offset) <= (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (value.end_lineno, value.end_col_offset)


def _computed_elsewhere(model, event, graph) -> bool:
    """Part of the graph was computed outside this body and reached it as a value (`self.fake_B` set by another method,
    a global, a closure's variable), not through a call made here: the next call of this body, or another function,
    may backpropagate through that part again. (A helper's own nodes come with the id of a call of it.)"""
    owners, calls = model._graph_owners()
    here = event.ctx.scope.node
    here = None if isinstance(here, ast.Module) else here
    if any(owner is not here and not calls.get(owner, frozenset()) & graph for owner in map(owners.get, graph)):
        return True
    return _reads_method_state(model, event, graph)


def _reads_method_state(model, event, graph) -> bool:
    """A computation of the graph here reads `self.x` of unknown value that another method (not `__init__`) sets: a
    tensor computed there (`self.codes = self.encoder(batch)`), which may carry a graph other backward calls share."""
    scope = event.ctx.scope
    if scope.function is None or scope.function.cls is None:
        return False
    read = set()
    for call in model.calls():
        if call.ctx.scope is scope and id(call.node) in graph:
            read.update(label for arg in [call.receiver, *call.node.args] if isinstance(arg, ast.Attribute)
                        and model.prov(arg) is None for label in [model.text(arg)] if label.startswith("self."))
    return bool(read) and any(bind.name in read and bind.ctx.scope is not scope and bind.ctx.scope.function is not None
                              and bind.ctx.scope.function.cls is scope.function.cls and bind.ctx.scope.name != "__init__"
                              for bind in model.of_type(BindEvent))


def _may_carry(model, event, graph) -> bool:
    """A statement of the loop that computes part of this graph binds a name the loop reads before it (`output, state =
    model(X, state)` with a model the walk cannot see into): the value may carry this graph into the next iteration,
    whose backward then goes through it (2b reports the carriers whose graph is known). A read that follows an
    unconditional rebinding in the same iteration (a statement of the loop's own body: `fake = G(z)` then `D(fake)`)
    sees this iteration's value, not the last one's."""
    for loop in event.ctx.loops():
        if loop.scope is not event.ctx.scope:
            break
        feeding = parents = None
        for stmt, names, direct in _graph_bindings(model, loop.node, graph):
            end = (stmt.end_lineno, stmt.end_col_offset)
            if not direct and feeding is None:
                feeding = {id(inner) for node in nodes(loop.node) if id(node) in graph for inner in nodes(node)}
            for node in nodes(loop.node):
                if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) \
                        and (direct or id(node) in feeding) and (node.lineno, node.col_offset) <= end:
                    if parents is None:
                        parents = {id(child): parent for parent in nodes(loop.node) for child in ast.iter_child_nodes(parent)}
                    if not _rebound_before(node, loop.node, parents):
                        return True
    return False


def _graph_bindings(model, loop: ast.AST, graph) -> list:
    """(assignment, names it binds, direct) for the loop's assignments whose value computes part of the graph (direct),
    or reads a name one of them binds (`memory = out` after `out = cell(x, memory)`: such a name carries the graph
    only where a computation of the graph reads it, not into `total = total + loss`). A value cut from the graph
    (`prev = logits.argmax(-1)`, `x = out.detach()`) carries nothing."""
    assigns = list(statements(loop.body, (ast.Assign,)))
    bound: dict = {}
    carriers: set = set()
    changed = True
    while changed:
        changed = False
        for stmt in assigns:
            if id(stmt) in bound or not any(id(node) in graph or isinstance(node, ast.Name) and node.id in carriers
                                            and isinstance(node.ctx, ast.Load) for node in nodes(stmt.value)):
                continue
            if _graph_free(model.prov(stmt.value)):
                continue
            names = {node.id for target in stmt.targets for node in nodes(target) if isinstance(node, ast.Name)}
            bound[id(stmt)] = (stmt, names, any(id(node) in graph for node in nodes(stmt.value)))
            carriers |= names
            changed = True
    return list(bound.values())


def _rebound_before(read: ast.Name, loop: ast.AST, parents: dict) -> bool:
    """An earlier statement of a block around the read, inside the loop, assigns its name: the read sees the value of
    this pass (`fake = G(z)` then `D(fake)`), not one carried from the last iteration. (The statement that holds the
    read is not earlier: `state` of `out, state = rnn(x, state)` is the last iteration's.)"""
    child, parent = read, parents.get(id(read))
    while parent is not None and child is not loop:
        if isinstance(child, ast.stmt):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(parent, field, None)
                if isinstance(block, list) and child in block:
                    if any(_assigns(stmt, read.id) for stmt in block[:block.index(child)]):
                        return True
                    break
        child, parent = parent, parents.get(id(parent))
    return False


def _assigns(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, ast.Assign) or isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
                   for target in targets for node in nodes(target))
    return False


def _inspected_by_helper(model, use) -> bool:
    """`report(loss)`: an argument of a workspace helper that runs no backward and returns no graph."""
    calls = model.__dict__.get("_ag003_calls")
    if calls is None:
        calls = model.__dict__["_ag003_calls"] = {id(arg): call for call in model.calls() if call.function is not None
                                                  for arg in call.node.args}
    call = calls.get(id(use.node))
    if call is None or _may_backpropagate(model, call.function):
        return False
    result = call.result
    return result is None and call.function.returned_any is False or result is not None and result.kind is Kind.NUMBER


def _may_backpropagate(model, function, seen=None) -> bool:
    """A helper whose body (or a helper it calls) runs a backward or autograd.grad, or whose body we did not walk."""
    if not function.walked or function.calls_backward or function.scope is None or function.owner is not getattr(model, "_walker", None):
        return True  # (another module's helper: its calls are not in this model)
    cache = model.__dict__.setdefault("_ag003_backpropagates", {})
    if function in cache:
        return cache[function]
    seen = seen if seen is not None else set()
    seen.add(id(function))
    cache[function] = True  # (a recursive call meets its own question: assume it may)
    found = False
    for call in model.calls():
        if call.ctx.scope is not function.scope:
            continue
        if (call.qualname or "").endswith("autograd.grad") or call.method == "manual_backward" or \
                call.function is not None and id(call.function) not in seen and _may_backpropagate(model, call.function, seen):
            found = True
            break
    cache[function] = found
    return found


def _handed_nothing_of(model, call, graph) -> bool:
    """`gradient_penalty(netD, real, fake.detach())`: a module-level helper handed nothing of the graph (numbers, tensors
    of other graphs, modules that keep no values), whose body reads only its arguments, imports and the module's
    functions: whatever it backpropagates through, it is not this graph."""
    if any(type(argument) is ast.Starred for argument in call.node.args) or any(k.arg is None for k in call.node.keywords):
        return False
    arguments = [*call.node.args, *(keyword.value for keyword in call.node.keywords)]
    cut = lambda node: type(node) is ast.Call and type(node.func) is ast.Attribute and uses.is_cut(node.func.attr)  # noqa: E731
    return all(cut(argument) or _free_of(model, model.prov(argument), graph) for argument in arguments) \
        and _reads_only_arguments(model, call.function)


def _reads_only_arguments(model, function, depth: int = 0) -> bool:
    """A module-level function whose names are its arguments, its locals, imports, builtins and the module's functions
    (each such too): no global or closure value reaches it."""
    node = function.node
    if function.cls is not None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or depth > 3:
        return False
    top = model.__dict__.get("_ag003_top_defs")
    if top is None:
        top = model.__dict__["_ag003_top_defs"] = {stmt.name: stmt for stmt in model.tree.body
                                                  if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        # (names the module's own statements bind: a builtin rebound there is not the builtin)
        model._ag003_module_names = {n.id for stmt in model.tree.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                                     for n in nodes(stmt) if type(n) is ast.Name and type(n.ctx) is not ast.Load}
    if top.get(node.name) is not node:
        return False
    args = node.args
    known = {arg.arg for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if arg is not None}
    names = [n for n in nodes(node) if type(n) is ast.Name]
    known.update(n.id for n in names if type(n.ctx) is not ast.Load)
    for name in {n.id for n in names if type(n.ctx) is ast.Load} - known:
        if name in model.imports.names or name in _BUILTINS and name not in top and name not in model._ag003_module_names:
            continue
        called = top.get(name)
        inner = model.functions.get(called) if isinstance(called, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if inner is None or inner is function or not _reads_only_arguments(model, inner, depth + 1):
            return False
    return True


def _fed_from_before_loop(model, loop, graph) -> bool:
    """A computation of the graph reads a name set before the loop whose value is unknown: it may hold a graph that
    the next iteration backpropagates through again (`features = encoder(images)` of an unknown encoder)."""
    for event in model.calls():
        if id(event.node) not in graph or event.ctx.scope is not loop.scope:
            continue
        for argument in [*event.node.args, *(kw.value for kw in event.node.keywords)]:
            if isinstance(argument, ast.Name) and argument.id not in loop.assigned and _may_hold_graph(model, argument, loop.scope.function):
                return True
    function = loop.scope.function
    if function is None:
        return False
    # a parameter read anywhere in a computation of the graph in the loop (`(student(x) - targets) ** 2`,
    # `targets.view_as(out)`, `kl_div(log_p, F.softmax(teacher_logits / T, 1))`), not only passed to a call
    seen = set()
    for node in nodes(loop.node):
        if id(node) not in graph:
            continue
        for read in nodes(node):
            if type(read) is ast.Name and id(read) not in seen and type(read.ctx) is ast.Load:
                seen.add(id(read))
                if read.id not in loop.assigned and _may_hold_graph(model, read, function, unknown=False):
                    return True
    return False


def _may_hold_graph(model, argument: ast.Name, function, unknown: bool = True) -> bool:
    """A value whose graph is not known: unknown, or a parameter of `function` that a call this module shows fills with
    a value that carries a graph, or that a function of this module computed without its graph being known
    (`train(X, contents_Y)` of targets a network computed before: each iteration backpropagates through them again).
    A parameter filled with a loader's items (moved, reshaped), or by no visible call, is taken as the data it names."""
    prov = model.prov(argument)
    if prov is None:
        return unknown
    if prov.kind is not Kind.TENSOR or prov.origin != "param" or prov.requires_grad is not None or prov.detached or function is None:
        return False
    for call in model.callers(function):
        if call.function is not function:
            return True  # (run some other way: `model(x)` running forward)
        value = callsite.argument_for(call, {argument.id})
        if value is None:
            if argument.id in {keyword.arg for keyword in call.node.keywords} or \
                    any(type(arg) is ast.Starred for arg in call.node.args) or any(keyword.arg is None for keyword in call.node.keywords):
                return True  # (passed in a way not matched here)
            continue  # (left at its default)
        passed = model.prov(value)
        if passed is not None and passed.kind in (Kind.TENSOR, Kind.SEQUENCE) and (
                passed.has_graph and not _maybe_frozen(model, passed)
                or passed.requires_grad is None and not passed.detached and _made_by_own_function(model, passed)):
            return True  # (a graph, or what a function of this module computed without its graph known: not a loader's data)
    return False


def _maybe_frozen(model, prov) -> bool:
    """The parameters the value was computed from may have been switched off (`teacher.requires_grad_(False)`, a loop
    setting `p.requires_grad = False`): then it carries no graph at all."""
    from ..analysis.toggles import matches, requires_grad_changes

    names = {label[:-2] if label.endswith(".*") else label for label in prov.composed_from}
    return not names or any(toggle.value is not True and matches(toggle.targets, names) for toggle in requires_grad_changes(model))


def _made_by_own_function(model, prov) -> bool:
    """The value is what a function defined in this module returned (`contents_Y = get_contents(...)`: features a network
    computed), not a tensor method's result (`images.to(device)`) or a library's."""
    origin = prov.origin
    if not origin.endswith("()") or origin.startswith("."):
        return False
    return any(info.name == origin[:-2] and info.cls is None for info in model.functions.values())


def _returned(model, event, graph, depth: int = 0) -> bool:
    """The function may hand a value of the graph to its caller: it returns or yields one that is not known to be
    free of it (`return loss.item()` is a number), and some call of it here may backpropagate through it again."""
    function = event.ctx.scope.node
    handed = False
    for node in ast.walk(function):
        if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None:
            if not _free_of(model, model.prov(node.value), graph):
                if type(node) is not ast.Return:
                    return True
                handed = True
    return handed and not _callers_only_read(model, event.ctx.scope.function, graph, depth)


def _callers_only_read(model, function, graph, depth: int) -> bool:
    """A step of its class's own methods (`loss = self.refine(x)`, every call of it being one, in methods of the class;
    or a private function) whose every call gets the graph as its result and reuses it nowhere (`loss.item()`): the
    check of the retained graph, at the caller. (A public method called from outside the class is an API: its other
    callers are unknown.)"""
    if function is None or depth > 2:
        return False
    calls = [call for call in model.calls() if call.function is function and call.ctx.via is None]
    for call in calls:
        func, caller = call.node.func, call.ctx.scope.function
        if not function.name.startswith("_") and not (
                function.cls is not None and type(func) is ast.Attribute and type(func.value) is ast.Name
                and func.value.id == "self" and caller is not None and caller.cls is function.cls):
            return False
        result, scope, statement = call.result, call.ctx.scope, call.ctx.statement
        if result is None or not result.has_graph or not model.shared_graph(result.graph, graph):
            return False
        if not (type(statement) is ast.Expr or type(statement) is ast.Assign and len(statement.targets) == 1
                and type(statement.targets[0]) is ast.Name) or statement.value is not call.node or _stored(model, call, graph):
            return False  # (kept somewhere another method may backpropagate it from: `self.last = self.step(x)`)
        # (the call's own backward, run before it returns, is the one that retained the graph)
        backwards = [b for b in model.calls(role="backward", through=True) if b.ctx.scope is scope
                     and getattr(b, "through", None) is not call.node]
        if not _nothing_reuses(model, call, result, backwards, scope, made_by=call.node, depth=depth + 1):
            return False
    return bool(calls)


def _free_of(model, prov, graph) -> bool:
    """The value holds nothing of the graph: a number, a tensor of another graph, a tuple of such, or a module that keeps
    no value of its calls (`return net, best`)."""
    if prov is None:
        return False
    if prov.kind is Kind.NUMBER or prov.kind is Kind.TEXT:
        return True
    if prov.is_tensor:
        return not model.shared_graph(prov.graph, graph)
    if prov.kind is Kind.SEQUENCE:
        # (no elements: maybe a list appended to since; unknown)
        return bool(prov.elements) and all(_free_of(model, element, graph) for element in prov.elements)
    return prov.kind is Kind.MODULE and _keeps_no_values(model, prov.module_class) and _holds_no_workspace_module(model, prov)


def _holds_no_workspace_module(model, prov, depth: int = 0) -> bool:
    """A torch.nn layer built here from what is known to keep nothing (`nn.Sequential(nn.Linear(4, 8), nn.ReLU())`, sizes):
    a container built around a module of the workspace keeps what that module keeps."""
    if not isinstance(prov.module_class, str):
        return True  # (a workspace class: _keeps_no_values read its methods)
    built = prov.node
    if not isinstance(built, ast.Call) or depth > 4:
        return False
    for argument in [*built.args, *(keyword.value for keyword in built.keywords)]:
        items = argument.elts if isinstance(argument, (ast.List, ast.Tuple)) else [argument]
        for item in items:
            if isinstance(item, ast.Constant):
                continue
            found = model.prov(item) if not isinstance(item, ast.Starred) else None
            if found is None or found.kind is Kind.MODULE and not (
                    _keeps_no_values(model, found.module_class) and _holds_no_workspace_module(model, found, depth + 1)):
                return False
    return True


def _keeps_no_values(model, cls, depth: int = 0) -> bool:
    """A module class whose instances keep nothing a call computed: a torch.nn layer, or a workspace nn.Module subclass
    whose methods (but `__init__`) never store on `self` nor call what might (a container attribute's `append`, an
    unknown method of `self`), in a module that never stores an attribute on another object (`gen.output = gen(z)`)."""
    if isinstance(cls, str):
        return cls.startswith("torch.nn.")
    if not isinstance(cls, ClassInfo) or not cls.is_module or depth > 4 or _stores_on_objects(model):
        return False
    cache = model.__dict__.setdefault("_keeps_no_values", {})  # (on the model: an edit's rewalk keeps the ClassInfo)
    found = cache.get(id(cls))
    if found is None:
        cache[id(cls)] = False  # (a cycle of bases: no claim)
        workspace = {base.node.name: base for base in cls.bases}
        bases_known = all((model.imports.qualname(base) or "").startswith("torch.nn.") or type(base) is ast.Name
                          and base.id in workspace and _keeps_no_values(model, workspace[base.id], depth + 1)
                          for base in cls.node.bases)
        found = cache[id(cls)] = bases_known and all(
            _method_keeps_nothing(cls, method) for method in cls.methods.values() if method.name != "__init__")
    return found


def _method_keeps_nothing(cls, method) -> bool:
    arguments = method.node.args.posonlyargs + method.node.args.args
    if not arguments:
        return True
    me = arguments[0].arg
    on_self = lambda node: type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == me  # noqa: E731
    for node in nodes(method.node):
        if on_self(node) and type(node.ctx) is not ast.Load:
            return False
        if type(node) is ast.Subscript and type(node.ctx) is not ast.Load and on_self(node.value):
            return False
        if type(node) is ast.Call:
            func = node.func
            if type(func) is ast.Name and func.id in ("setattr", "vars"):
                return False
            if on_self(func) and func.attr not in cls.methods and cls.attribute(func.attr) is None:
                return False  # (`self.register_buffer(...)`, an inherited helper)
            if type(func) is ast.Attribute and on_self(func.value):
                held = cls.attribute(func.value.attr)
                if held is None or held.kind is not Kind.MODULE:
                    return False  # (`self.cache.append(out)`)
    return True


def _stores_on_objects(model) -> bool:
    """Some code of the module binds an attribute of an object other than its own `self` (`gen.output = ...`,
    `self.net.cache = ...`)."""
    found = model.__dict__.get("_stores_on_objects")
    if found is None:
        found = model.__dict__["_stores_on_objects"] = any(
            "." in bind.name and not (bind.name.startswith("self.") and bind.name.count(".") == 1)
            for bind in model.of_type(BindEvent)) or model.mentions("setattr") > 0
    return found


def _remove_retain_graph(model, event) -> Fix | None:
    call = event.node
    keyword = event.keyword("retain_graph")
    if len(call.keywords) != 1 or call.args:
        return None
    # backward(retain_graph=True) -> backward()
    start = model.span(call.func)
    end = model.span(call)
    return Fix("Remove `retain_graph=True`", Safety.UNSAFE,
               (Edit(Span(start.end_line, start.end_col, end.end_line, end.end_col), "()"),)) if keyword is not None else None


def _reused_after_step(model, event, later, step):
    """Reported at the backward that retains the graph and at the later one, which fails."""
    step_text = f"`{model.text(step.node)}` (line {step.node.lineno})"
    message = (f"the graph retained here is backpropagated again by `{model.text(later.node)}` (line {later.node.lineno}) after "
               f"{step_text} modified the parameters it saved: version-counter error. "
               f"Recompute the forward for each backward, or sum the losses and call backward once")
    found = model.finding(RULE, event.node, message, related=[(step.node, "parameters modified in place here"),
                                                              (later.node, "the retained graph is reused here")],
                          kind="reused-after-step", optimizer=model.text(step.receiver) if step.receiver is not None else None)
    cause = (f"this backward goes through the graph that `{model.text(event.node)}` (line {event.node.lineno}) retained, after "
             f"{step_text} modified the parameters it saved: RuntimeError \"modified by an inplace operation\". Recompute the "
             f"forward for each backward, or sum the losses and call backward once")
    return model.with_cause(found, later.node, cause, "the graph is retained here")


def _reused_by_next_method(model, event, prov, backwards, steps, graphs):
    """(later backward, step): the method its caller runs next on the same object (a later statement of the same block,
    no other call of the workspace between that could rebuild what is kept on `self`) backpropagates through this graph
    (`self.logits` kept by the first), and an optimizer that changes what the graph saved steps between: after this
    backward in this method, or in the caller between the two calls."""
    scope = event.ctx.scope
    info = scope.function
    if info is None or event.ctx.via is not None:
        return None
    inside = [s for s in steps if s.ctx.scope is scope and s.ctx.via is None and s.seq > event.seq and runs_after(event, s)]
    index = steps_of = None
    for later in backwards:
        other = later.ctx.scope.function
        if other is None or other is info or later.ctx.via is not None or later.receiver_prov is None:
            continue
        shared = model.shared_graph(later.receiver_prov.graph, prov.graph)
        if not shared or _restored_after(info, event, other):
            continue
        if index is None:
            index, steps_of = _WorkspaceCalls(model), {}
            for s in steps:
                if s.ctx.via is None:
                    steps_of.setdefault(id(s.ctx.scope), []).append(s)
        stepped = next((s for s in inside if graphs.touched([s], shared)), None)
        for first in index.of(info):
            then = index.next_to(first)
            if (then is None or then.function is not other or not _same_receiver(model, first, then)
                    or index.stores_between(first, then)):
                continue
            # (the cheap tests first: runs_after reads the caller's body)
            step = stepped or next((s for s in steps_of.get(id(first.ctx.scope), ()) if first.seq < s.seq < then.seq
                                    and graphs.touched([s], shared) and runs_after(first, s) and runs_after(s, then)), None)
            if step is not None and runs_after(first, then):
                return later, step
    return None


def _same_receiver(model, first, then) -> bool:
    """Both calls run on one object as far as the text tells (`b.encode(x); a.fit(x); b.sparsify()`: two objects)."""
    if first.receiver is None or then.receiver is None:
        return first.receiver is then.receiver
    return model.text(first.receiver) == model.text(then.receiver)


def _restored_after(info, event, other) -> bool:
    """The first method stores again, after its retained backward, an attribute of `self` the second method reads
    (`self.code = self.enc(batch)` after the step): the second may backpropagate a graph made after the step."""
    arguments = info.node.args.posonlyargs + info.node.args.args
    theirs = other.node.args.posonlyargs + other.node.args.args
    if not arguments or not theirs:
        return False
    me, them = arguments[0].arg, theirs[0].arg
    read = {node.attr for node in nodes(other.node) if type(node) is ast.Attribute and type(node.ctx) is ast.Load
            and type(node.value) is ast.Name and node.value.id == them}
    after = event.node.end_lineno or event.node.lineno
    return any(type(node) is ast.Attribute and type(node.ctx) is ast.Store and node.lineno > after and node.attr in read
               and type(node.value) is ast.Name and node.value.id == me for node in nodes(info.node))


class _WorkspaceCalls:
    """The module's direct calls of workspace functions, per function and per calling scope in execution order, and
    the lines where each calling scope stores an attribute: made once per model (a pair scan per call was quadratic)."""

    def __init__(self, model):
        cached = model.__dict__.get("_ag003_workspace_calls")
        if cached is None:
            by_function, by_scope, following = {}, {}, {}
            for call in sorted((c for c in model.of_type(CallEvent) if c.function is not None and c.ctx.via is None),
                               key=lambda c: c.seq):
                by_function.setdefault(id(call.function), []).append(call)
                row = by_scope.setdefault(id(call.ctx.scope), [])
                if row:
                    following[id(row[-1])] = call
                row.append(call)
            cached = model.__dict__["_ag003_workspace_calls"] = (by_function, following, {})
        self._by_function, self._following, self._stores = cached

    def of(self, function):
        return self._by_function.get(id(function), ())

    def next_to(self, call):
        return self._following.get(id(call))

    def stores_between(self, first, then) -> bool:
        """The caller sets an attribute between the two calls (`self.h = self.enc(x)`): what the second method reads
        on the object may no longer be what the first kept there."""
        node = first.ctx.scope.node
        lines = self._stores.get(id(node))
        if lines is None:
            lines = self._stores[id(node)] = sorted(n.lineno for n in nodes(node) if type(n) is ast.Attribute and type(n.ctx) is ast.Store)
        start, end = first.node.end_lineno or first.node.lineno, then.node.lineno
        at = bisect_left(lines, start)
        return at < len(lines) and lines[at] <= end


def _reused_from_before_loop(model, event, loop, forward, caller=None, step=None):
    steps = [step] if step is not None else loop.steps
    step_text = f"`{model.text(steps[0].node)}` (line {steps[0].node.lineno})" if steps else "the optimizer step"
    forward_text = " ".join(model.text(forward.node).split())
    message = (f"this loss is rebuilt every iteration, but on `{forward_text}` (line {forward.node.lineno}), computed once before "
               f"this training loop: the next iteration backpropagates through that retained part of the graph after {step_text} "
               f"modified the parameters it saved: version-counter error. Recompute `{forward_text}` inside the loop")
    if caller is not None:  # (a helper's forward, run by a call before the loop)
        call_text = " ".join(model.text(caller.node).split())
        message = (f"every iteration backpropagates a loss made from `{forward_text}` (line {forward.node.lineno}), which "
                   f"`{call_text}` (line {caller.node.lineno}) ran once before this training loop: the next iteration goes through "
                   f"that retained part of the graph after {step_text} modified the parameters it saved: version-counter error. "
                   f"Recompute `{call_text}` inside the loop, or sum the losses and call backward once")
    related = [(forward.node, "computed once, before the loop")] + ([(steps[0].node, "parameters modified in place here")] if steps else [])
    return model.finding(RULE, event.node, message, related=related, kind="reused-from-before-loop", loop_line=loop.node.lineno)


def _reused_next_iteration(model, event, loop, step):
    receiver = model.text(event.receiver) if event.receiver is not None else "the loss"
    step_text = f"`{model.text(step.node)}` (line {step.node.lineno})" if step is not None else "the optimizer step"
    message = (f"`{receiver}` is computed once, before this training loop, so every iteration backpropagates through the same "
               f"retained graph after {step_text} modified the parameters it saved: version-counter error on the second "
               f"iteration. Recompute the forward inside the loop")
    related = [(step.node, "parameters modified in place here")] if step is not None else []
    return model.finding(RULE, event.node, message, related=related, kind="reused-next-iteration", loop_line=loop.node.lineno)


def _never_reused(model, event):
    fix = _remove_retain_graph(model, event)
    message = "`retain_graph=True` but nothing backpropagates through this graph again: it only keeps the graph's memory alive"
    finding = model.finding(RULE, event.node, message, fixes=[fix] if fix else [], kind="never-reused")
    return finding.with_severity(Severity.WARNING)


def _super_runs_layers_only(cls: ClassInfo, forward, model: ModuleModel) -> bool:
    """Every `super()` of the forward is `super().forward(...)` of a base whose forward is of layers only (the walker
    runs that base's forward there: walker._module_chain); no `super()` at all: True."""
    calls = [node for node in nodes(forward.node) if type(node) is ast.Call]
    supers = sum(super_call(node) for node in calls)
    if not supers:
        return True
    runs_base = sum(super_call(node, "forward") for node in calls)
    if runs_base != supers or len(cls.node.bases) != 1 or len(cls.bases) != 1:
        return False  # (another use of super(), or a base this module does not define: what it runs is not seen)
    base = cls.bases[0]
    return "forward" in base.methods and _layers_only(base, model)


def _layers_only(cls: ClassInfo, model: ModuleModel) -> bool:
    """The class's forward reads of `self` only its layers and plain settings (no tensor of its own that a functional
    op could save): what its layers keep is all it keeps. `super().forward(x)` counts as such a read where the base it
    runs is a workspace module of one single-inheritance chain up to nn.Module whose forward is of layers only too."""
    # (kept with the forwards it was read from, this class's and its bases': the server's walk again of one function
    # gives an edited base forward a new node while this class's record stays)
    key = _forward_chain(cls)
    cached = cls.__dict__.get("_layers_only")
    if cached is not None and len(cached[0]) == len(key) and all(a is b for a, b in zip(cached[0], key)):
        return cached[1]
    cls._layers_only = (key, False)  # (a class chain that meets itself: no claim)
    forward = cls.methods.get("forward")
    found = forward is not None and _super_runs_layers_only(cls, forward, model) and all(
        node.attr in cls.methods or _plain_attribute(cls.attribute(node.attr))
        for node in nodes(forward.node) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        and node.value.id == "self" and isinstance(node.ctx, ast.Load))
    cls._layers_only = (key, found)
    return found


def _forward_chain(cls: ClassInfo) -> tuple:
    """The forward nodes of a class and of its single bases of this module, in order (None where one has none)."""
    chain, c = [], cls
    while c is not None and len(chain) < 8:
        forward = c.methods.get("forward")
        chain.append(forward.node if forward is not None else None)
        c = c.bases[0] if len(c.bases) == 1 else None
    return tuple(chain)


def _plain_attribute(prov) -> bool:
    """A layer of a known class (not one picked per instance), or a number or string setting."""
    return prov is not None and (prov.kind is Kind.MODULE and prov.module_class is not None or prov.kind in (Kind.NUMBER, Kind.TEXT))
