"""The server's walk after an edit inside one function body: that function is walked again, with the functions
its walk walked first (the callees it reached before anyone else did), and the rest of the previous walk stands.

The walk of a module is a depth-first order of function walks (walker.walk_function records where each began:
its caller, the event count, the module statement). A function's events, loops and expression table entries are
those of its walk and of the walks nested in it: one contiguous block. The block is walked again from the same
starting state and put where the old one was; the later events keep their order, their sequence numbers moved
by the difference in length. That equals a fresh walk of the new text when nothing outside the block read
anything the edit changed. What others read of it is its summary (what a call returns, whether it runs
backward/step/zero_grad, whether it changes its arguments, the modules its first call passed on), compared
after the walk. The rest is checked before it, else the module is walked in full (`rewalk` returns False and
leaves the model as it was):
- the edit lies in the body of a module-level function or a method of a module-level class, and neither that
  function nor the walks nested in it define functions, classes or lambdas, import, or store attributes on
  `self` (the class tables are merged over methods) unless no other method sets the same attributes (an
  `__init__`'s table is its own);
- a body walked for one call site (walker.call_in_context) during the block is walked again with it (its memo
  entry forgotten) when nothing after the block read that entry and it stores nothing on `self`; one of a
  function of the block walked elsewhere makes the walk that holds that call site the block (_Above); the
  call-site tables keyed by nodes of the bodies walked (model.call_site_backwards, ...) are written again;
- what other walks read of a function's summary besides their call events (walker._summary_of: the last block
  of an nn.Sequential) counts as a read of it;
- the module statements from the one whose code first led to the function on bind nothing (the walk read the
  module's names as they stood then);
- the edit changes neither how often a function's name is written (walker._pass_modules) nor the names
  `zero_grad` is called on (walker._zero_grad_receivers): facts of the whole tree, read by other walks;
- the new walk reaches no function first that was first walked after it (a fresh walk would walk it here).
"""
from __future__ import annotations

import ast
import bisect
from collections import Counter

from . import callsite, syntax
from .model import CallEvent, FunctionInfo, ModuleModel, _bare_names, restore_state, state_of

_SUMMARY = ("returns", "returned_any", "calls_backward", "calls_step", "calls_zero_grad", "uses_arguments")
# what a walk records about itself, or what is made again by walking (not a fact others read)
_OWN = {"node", "scope", "walked", "walking", "walk_from", "walk_seq", "walk_end", "walk_stmt", "walk_tables", "walk_module",
        "walk_tables_end", "reads_classes",
        "defining_scope", "owner", "cls",
        "name", "context_of", *_SUMMARY}
# a nested def gets a FunctionInfo of its own per walk; imports are the module's ImportTable (compared instead)
_FORBIDDEN = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal)


def rewalk(model: ModuleModel, parsed, source, resolver=None) -> bool:
    """Bring `model` (the walk of `parsed.base`) to the walk of `parsed.tree` by walking the edited function
    again (and the walks that read what changed in it); False when that cannot be shown to equal a walk of the
    whole new tree: the model is then unchanged, or marked `stale` (never reused) when a first block was kept."""
    edit = _edited(model, parsed)
    if edit is None:
        return False
    pending = [edit[1]]
    done: set[int] = set()
    tries = kept = walked = 0
    while pending:
        root = pending.pop(0)
        if id(root) in done:
            continue
        tries += 1
        if tries > MAX_BLOCKS:
            return _give_up(model, kept, "too many blocks")
        plan = _plan(model, edit, root, first=not kept)
        if isinstance(plan, _Above):
            pending.insert(0, plan.root)
            continue
        if plan is None:
            return _give_up(model, kept, None)
        rewalk_ = _Rewalk(model, parsed.tree, source, resolver, edit, root, *plan)
        outcome = rewalk_.run()
        if isinstance(outcome, FunctionInfo):
            pending.insert(0, outcome)  # what changed is read by the walk it lies in: walked again from there
            continue
        if not outcome:
            return _give_up(model, kept, None)
        kept += 1
        walked += rewalk_.walked
        if 3 * walked > 2 * max(len(model.events), 1) and len(model.events) > 1000:
            return _give_up(model, kept, "most of the module")
        done.update(rewalk_.ids)
        # walks after this block that read what changed in it: each walked again in turn, in walk order
        pending = sorted({id(f): f for f in [*pending, *rewalk_.later]}.values(), key=lambda f: f.walk_seq)
    return True


def _give_up(model: ModuleModel, kept: int, reason: str | None) -> bool:
    if reason is not None:
        _no(reason)
    if kept:
        model.stale = True  # part walked again, part not: its walk is no longer that of any text
    return False


MAX_BLOCKS = 12


def _edited(model: ModuleModel, parsed):
    """(walker, the edited function, its old node, its new node, (old class, new class) or None) when the edit lies
    inside the body of a module-level function or a method of a module-level class."""
    walker = model.__dict__.get("_walker")
    path = parsed.path
    if walker is None or walker.model is not model or walker.summary_only or parsed.base is not model.tree or len(path) < 2:
        return _no('no walk to keep')
    if walker.via is not None or walker.function is not None or walker.context_depth:
        return _no('walker mid-walk')
    cls_pair = None
    index = 1
    if isinstance(path[1][0], ast.ClassDef):
        cls_pair, index = path[1], 2
    if len(path) <= index or not isinstance(path[index][0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _no('not inside a function body')
    old_f, new_f = path[index]
    info = model.functions.get(old_f)
    if info is None or not info.walked or info.walking or info.owner is not walker or "walk_end" not in info.__dict__:
        return _no('function not walked')
    if cls_pair is not None and (info.cls is None or info.cls.node is not cls_pair[0]):
        return _no('class mismatch')
    old, new = _facts(walker, old_f), _facts(walker, new_f)
    _FACTS.pop(id(old_f), None)  # (the old def is in no later tree: keeping it would keep its whole body alive)
    if not old.plain or not new.plain:
        return _no('nested def')
    if info.cls is not None and (old.stored != new.stored or info.name != "__init__" and old.setters != new.setters):
        return _no('attribute stores changed')  # (walker._class_constant, the class's setters)
    defined = {function.name for function in model.functions.values()} | set(model.classes)
    if any(old.names[name] != new.names[name] for name in (old.names - new.names) + (new.names - old.names) if name in defined):
        return _no("a def's name mentions changed")
    methods = {function.name for function in model.functions.values() if function.cls is not None}
    if any(old.attrs[name] != new.attrs[name] for name in (old.attrs - new.attrs) + (new.attrs - old.attrs) if name in methods):
        return _no("a method's attribute mentions changed")  # (walker._pass_modules: a staticmethod named once after a dot)
    if old.zero_grad != new.zero_grad:
        return _no('zero_grad receivers changed')
    constructors = set(model.classes) | {"__init__"}  # (what constructions pass: walker._defaulted_layer reads it)
    if Counter({key: n for key, n in old.calls.items() if key[0] in constructors}) != \
            Counter({key: n for key, n in new.calls.items() if key[0] in constructors}):
        return _no("a construction's arguments changed")
    if old.imports != new.imports:
        return _no('imports changed')
    return walker, info, old_f, new_f, cls_pair


def _plan(model: ModuleModel, edit, root: FunctionInfo, first: bool = True):
    """(members, module view, inside) of a walk again from `root`: the walks nested in it, the module's names it saw,
    the bodies walked for one call site during it; _Above when a walk it is nested in must be walked again instead."""
    walker, info, old_f, new_f, cls_pair = edit
    if "walk_end" not in root.__dict__ or "walk_tables" not in root.__dict__ or not root.walked or root.context_of is not None:
        return _no('function not walked')
    if root.walk_seq == root.walk_end:
        return _no('walk without events')
    members = _nested_walks(model, root)
    if members is None:
        return _no('a call-site walk inside')
    if first and info not in members:
        return _no('edited function not in the block')
    ids = {id(member) for member in members}
    for member in members:
        facts = _facts(walker, member.node)
        if not facts.plain:
            return _no('nested def')
        on_self = facts.on_self | (_facts(walker, new_f).on_self if member is info else set())
        if member.cls is not None and (member.name == "__init__" or on_self):
            reason = _tables_refused(model, walker, member, on_self, ids)
            if reason is not None:
                return _no(reason)
    inside = []  # bodies walked for one call site during the block: walked again with it
    for shadow in walker.shadows:
        within = _within(shadow, root)
        if within:
            reason = _inside_refused(walker, shadow, root)
            if reason is not None:
                return _no(reason)
            inside.append(shadow)
        elif id(shadow.context_of) in ids:
            # walked for a call site outside the block: from the walk that holds that call site too
            above = _holding(root, shadow)
            if above is None:
                return _no('walked for a call site')
            return _Above(above)
        else:
            caller = shadow.__dict__.get("called_from")
            while caller is not None and caller.context_of is not None:
                caller = caller.__dict__.get("called_from")
            if id(caller) in ids:
                return _no('call-site walk from inside')
    view = _module_view(model, root)
    if view is False:
        return _no('module names not known')
    # reading an attribute a method sets that was walked later walks that method first (walker._late_attribute)
    read = set()
    for member in members:
        read |= _facts(walker, new_f if member is info else member.node).read
    for cls in _classes(model).values():
        for method in cls.methods.values():
            if method.name != "__init__" and id(method) not in ids and method.__dict__.get("walk_seq", -1) >= root.walk_seq \
                    and read & _facts(walker, method.node).on_self:
                return _no('a setter method walked later')
    return members, view, inside


class _Above:
    """The plan of a walk again is that of a walk `root`'s is nested in."""

    def __init__(self, root: FunctionInfo):
        self.root = root


def _within(shadow: FunctionInfo, root: FunctionInfo) -> bool:
    """Whether a body walked for one call site was walked during `root`'s walk."""
    d = shadow.__dict__
    return "ctx_seq" in d and root.walk_seq <= d["ctx_seq"] and d["ctx_end"] <= root.walk_end


def _holding(root: FunctionInfo, shadow: FunctionInfo) -> FunctionInfo | None:
    """The nearest walk `root`'s is nested in that holds the walk of `shadow` (None: none does)."""
    above = root.__dict__.get("walk_from")
    while above is not None:
        if above.context_of is not None or "walk_end" not in above.__dict__:
            return None
        if _within(shadow, above):
            return above
        above = above.__dict__.get("walk_from")
    return None


def _inside_refused(walker, shadow: FunctionInfo, root: FunctionInfo) -> str | None:
    """Why a body walked for one call site during `root`'s walk cannot be walked again with it (None: it can): its
    memoised result read after the block (those reads would read the new one), or class tables it may write."""
    seen = walker.memo_seen.get(shadow.__dict__.get("ctx_key"))
    if seen is None or walker.memo.get(shadow.ctx_key) is None:
        return 'call-site walk without its memo'
    if seen[1] >= root.walk_end:  # (a read inside the block is followed by its call's event: at the end is after)
        return 'call-site walk read after the block'
    caller = shadow.__dict__.get("called_from")
    if caller is None or caller.owner is not walker:
        return 'call-site walk made for another module'
    if shadow.cls is not None and (shadow.name == "__init__" or _facts(walker, shadow.node).on_self):
        return 'call-site walk of a method that stores on self'
    return None


def _tables_refused(model: ModuleModel, walker, member: FunctionInfo, on_self: set, ids) -> str | None:
    """Why the class tables `member` writes cannot be made again by walking it again (None: they can). Its
    __init__'s table is its own (emptied, then filled by the walk); what another method sets (`late`) is merged
    over the methods that set it: only when no method outside the block sets the same attributes."""
    cls = member.cls
    if cls.constructed or cls.instances or any(shadow.cls is cls for shadow in walker.shadows):
        return 'class walked for a call site'  # (the per-construction tables)
    if member.name == "__init__":
        return None
    for method in cls.methods.values():
        if id(method) not in ids and method.name != "__init__" and (method.walked or method.walking) \
                and _facts(walker, method.node).on_self & on_self:
            return 'attribute set by another method too'
    return None


def _top(info: FunctionInfo) -> FunctionInfo:
    """The walk started by module code (or after it) that `info`'s walk is nested in."""
    while info.__dict__.get("walk_from") is not None:
        info = info.walk_from
    return info


def _classes(model: ModuleModel) -> dict:
    return {id(cls): cls for cls in [*model.classes.values(), *(f.cls for f in model.functions.values() if f.cls)]}


def _nested_walks(model: ModuleModel, info: FunctionInfo) -> list[FunctionInfo] | None:
    """`info` and every function first walked while it was being walked, in walk order; None when a walk began in
    its span that is not one of them (a body walked for a call site)."""
    start, end = info.walk_seq, info.walk_end
    members, ids = [info], {id(info)}
    inside = sorted((f for f in model.functions.values() if f is not info and f.walked and start <= f.__dict__.get("walk_seq", -1) <= end),
                    key=lambda f: f.walk_seq)
    ancestors = set()
    caller = info.walk_from
    while caller is not None:
        ancestors.add(id(caller))
        caller = caller.__dict__.get("walk_from")
    for function in inside:
        if id(function.walk_from) not in ids:
            if id(function) in ancestors or function.walk_seq == start and function.__dict__.get("walk_end", end) <= start \
                    or function.walk_seq == end:
                continue  # began before the block, or just after it ended (no event between)
            return None
        members.append(function)
        ids.add(id(function))
    return members


class _Facts:
    """What a function's body shows without walking it, in one pass (kept per node: unchanged bodies are shared)."""

    def __init__(self, node):
        from .walker import label, setter_attributes

        args = node.args.posonlyargs or node.args.args
        me = args[0].arg if args else None
        self.plain = True  # no nested def or class, no global/nonlocal
        self.on_self: set = set()  # attributes stored on the first argument
        self.read: set = set()  # attributes read
        self.stored: Counter = Counter()  # attributes stored, on anything (walker._class_constant reads them)
        self.zero_grad: Counter = Counter()  # receivers of `.zero_grad()` (walker._zero_grad_receivers)
        self.imports: list = []
        self.names: Counter = Counter()  # bare names written (ModuleModel.mentions)
        self.attrs: Counter = Counter()  # attribute names written, read or stored (ModuleModel.attribute_mentions)
        self.calls: Counter = Counter()  # (called name, keywords passed, positional count): ModuleModel.passed_by_calls
        self.setters = sorted(setter_attributes(node))  # (walker._late_attribute)
        for stmt in node.body:
            self.names.update(_bare_names(stmt))
            for sub in ast.walk(stmt):
                kind = type(sub)
                if kind is ast.Attribute:
                    self.attrs[sub.attr] += 1
                    if isinstance(sub.ctx, ast.Load):
                        self.read.add(sub.attr)
                    else:
                        self.stored[sub.attr] += 1
                        if me is not None and isinstance(sub.value, ast.Name) and sub.value.id == me:
                            self.on_self.add(sub.attr)
                elif kind is ast.Call and isinstance(sub.func, ast.Attribute) and sub.func.attr == "register_forward_hook":
                    self.plain = False  # (walker._forward_hook: the hook, walked later, is walked with what this registers)
                if kind is ast.Call:
                    func = sub.func
                    called = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
                    if called is not None:
                        self.calls[(called, frozenset(kw.arg for kw in sub.keywords),
                                    -1 if any(type(arg) is ast.Starred for arg in sub.args) else len(sub.args))] += 1
                if kind is ast.Call and isinstance(sub.func, ast.Attribute) and sub.func.attr == "zero_grad":
                    self.zero_grad[label(sub.func.value)] += 1
                elif kind is ast.Call and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("add_module", "register_module") \
                        and sub.args and syntax.attribute_name(sub.args[0]) is not None:
                    self.on_self.add(syntax.attribute_name(sub.args[0]))  # (stored on the receiver's class table when it is self)
                elif kind is ast.Call and type(sub.func) is ast.Name and sub.func.id == "getattr" and len(sub.args) == 2 \
                        and syntax.attribute_name(sub.args[1]) is not None:
                    self.read.add(syntax.attribute_name(sub.args[1]))  # (`getattr(self, f"block{i}")`: read as an attribute)
                elif kind is ast.Import or kind is ast.ImportFrom:
                    self.imports.append(ast.dump(sub))
                elif isinstance(sub, _FORBIDDEN):
                    self.plain = False


# id of a def -> (the def, its facts): the trees of one document's texts share every def an edit left alone,
# across full walks too; cleared when full (the defs it holds stay alive until then)
_FACTS: dict = {}
_FACTS_KEPT = 512


def _facts(walker, node) -> _Facts:
    found = _FACTS.get(id(node))
    if found is None or found[0] is not node:
        if len(_FACTS) >= _FACTS_KEPT:
            _FACTS.clear()
        found = _FACTS[id(node)] = (node, _Facts(node))
    return found[1]


def _module_view(model: ModuleModel, info: FunctionInfo):
    """The module's names (and torch function aliases) as they stood when the module code that led to `info`'s
    walk called it: None when that was after the module's code (its final names stand), False when not known."""
    root = info
    while root.__dict__.get("walk_from") is not None:
        root = root.walk_from
        if root.context_of is not None or "walk_stmt" not in root.__dict__:
            return False
    if isinstance(root.__dict__.get("walk_stmt"), ast.Module):
        return None  # walked after the module's code (an earlier version of the tree): its final names
    return root.__dict__.get("walk_module", False)


REFUSED: Counter = Counter()  # why edits were walked in full, by reason (for tests and bench/server_bench.py)


def _no(reason: str):
    REFUSED[reason] += 1
    return None


class _Rewalk:
    def __init__(self, model, tree, source, resolver, edit, root, members, view, inside):
        walker, self.edited, self.old_f, self.new_f, self.cls_pair = edit
        self.model, self.parsed_tree, self.source, self.resolver, self.walker = model, tree, source, resolver, walker
        self.info, self.members, self.view, self.inside = root, members, view, inside
        self.final_seq, self.final_tables, self.final_walks = walker.seq, walker.table_changes, walker.context_walks
        self.ids = {id(member) for member in members}
        self.block_ids = self.ids | {id(shadow) for shadow in inside}  # whose events and loops the block holds
        self.escalate = None  # an ancestor walk to try from instead
        self.later: list = []  # walks after the block that read what changed in it
        self.walked = 0  # events walked again

    def run(self) -> bool:
        model, walker, info = self.model, self.walker, self.info
        start, end = info.walk_seq, info.walk_end
        events = model.events
        seqs = [event.seq for event in events]
        a, b = bisect.bisect_right(seqs, start), bisect.bisect_right(seqs, end)
        shadow_ids = self.block_ids - self.ids
        if any(id(event.ctx.scope.function) not in self.block_ids
               or event.ctx.via is not None and id(event.ctx.scope.function) not in shadow_ids for event in events[a:b]):
            return _no('events interleaved')
        if len(events) > 1000 and 3 * (b - a) > 2 * len(events):
            return _no('most of the module')  # (a walk of the whole costs as much)
        if any(id(event.ctx.scope.function) in self.block_ids for event in events[:a]) or \
                any(id(event.ctx.scope.function) in self.block_ids for event in events[b:]):
            return _no('events outside the block')
        loops = model.loops
        loop_seqs = [loop.__dict__.get("seq", -1) for loop in loops]
        if -1 in loop_seqs:
            return _no('loop without seq')
        inside = [k for k, loop in enumerate(loops) if id(loop.scope.function) in self.block_ids]
        if inside:
            la, lb = inside[0], inside[-1] + 1
            if lb - la != len(inside):
                return _no('loops interleaved')
        else:
            la = lb = bisect.bisect_right(loop_seqs, start)
        old_nodes = {id(sub) for member in self.members for stmt in member.node.body for sub in ast.walk(stmt)}
        # the call-site tables (keyed by nodes of the bodies walked) are written again by the walks of the block: a
        # body walked for a call site inside it and outside is refused (the first to write an entry keeps it)
        self.written = set(old_nodes)
        bodies = set()
        for shadow in self.inside:
            body = shadow.context_of
            if body is not None and id(body) not in self.ids and id(body) not in bodies:
                bodies.add(id(body))
                if any(other.context_of is body and id(other) not in self.block_ids for other in walker.shadows):
                    return _no('a body walked for call sites inside the block and outside')
                self.written |= {id(sub) for stmt in body.node.body for sub in ast.walk(stmt)}
        call_tables = (dict(model.call_site_backwards), dict(model.forward_graphs), dict(model.backward_handovers),
                       dict(model.__dict__.get("_sequential_hazards", {})), {key: dict(readers) for key, readers in walker.summary_reads.items()})

        saved = {id(member): state_of(member) for member in self.members}
        state = (walker.seq, walker.function, walker.stmt, walker.resolver, dict(walker.function_aliases), walker.context_walks,
                 list(walker.shadows), dict(walker.memo), walker.table, {key: list(seen) for key, seen in walker.memo_seen.items()})
        old_provs, old_functions, old_tree, old_source = model._provs, model.functions, model.tree, model.source
        old_subs = model.torch_subscripts
        cls = self.edited.cls
        cls_node = cls.node if cls is not None else None
        # the class tables as they stand (the walk again empties and fills those of the classes it walks)
        self.classes = _classes(model)
        self.tables = {key: (dict(c.attributes), dict(c.attribute_nodes), dict(c.late), c.__dict__.get("changed_at"),
                             dict(c.__dict__.get("changed_attrs", ())), dict(c.instances),
                             {node: set(names) for node, names in c.__dict__.get("none_attributes", {}).items()})
                       for key, c in self.classes.items()}
        self.hazards_before = call_tables[3]
        try:
            ok = self._walk(old_nodes, a, b, la, lb)
        except Exception:  # RecursionError included: the full walk decides (and says what is wrong)
            ok = _no("error while walking")
        if not ok:
            walker.table_changes = self.final_tables
            for key, c in self.classes.items():
                attributes, nodes, late, changed_at, changed_attrs, instances, none_attributes = self.tables[key]
                for table, before in ((c.attributes, attributes), (c.attribute_nodes, nodes), (c.late, late), (c.instances, instances)):
                    table.clear()
                    table.update(before)
                c.__dict__.pop("changed_attrs", None)
                c.__dict__.pop("none_attributes", None)
                if none_attributes:
                    c.none_attributes = none_attributes
                if changed_attrs:
                    c.changed_attrs = changed_attrs
                if changed_at is None:
                    c.__dict__.pop("changed_at", None)
                else:
                    c.changed_at = changed_at
            for member in self.members:
                restore_state(member, saved[id(member)])
            (walker.seq, walker.function, walker.stmt, walker.resolver, aliases, walker.context_walks, shadows, memo, walker.table,
             seen) = state
            walker.function_aliases.clear(), walker.function_aliases.update(aliases)
            walker.memo.clear(), walker.memo.update(memo)
            walker.memo_seen = seen
            walker.shadows[:] = shadows
            model._provs, model.functions, model.tree, model.source = old_provs, old_functions, old_tree, old_source
            model.events, model.loops, model.torch_subscripts = events, loops, old_subs
            model.call_site_backwards, model.forward_graphs, model.backward_handovers, hazards, walker.summary_reads = call_tables
            model.__dict__["_sequential_hazards"] = hazards
            walker.module_scope.node = old_tree
            if cls is not None:
                cls.node = cls_node
            return self.escalate or False
        return True

    def _walk(self, old_nodes, a, b, la, lb) -> bool:
        model, walker, info = self.model, self.walker, self.info
        start, end = info.walk_seq, info.walk_end
        events, loops = model.events, model.loops
        summaries = {id(member): {key: value for key, value in state_of(member).items() if key not in _OWN or key in _SUMMARY}
                     for member in self.members}
        provs = dict(model._provs)
        for key in old_nodes:
            provs.pop(key, None)
        scopes = {id(member.scope) for member in self.members if member.scope is not None}
        for key in [key for key in walker.function_aliases if key[0] in scopes]:
            del walker.function_aliases[key]
        end_tables = info.__dict__.get("walk_tables_end")
        if end_tables is None:
            return _no('walk without a table count')
        # attributes set after the block: a walk again reads their final state, the first walk did not
        changed_after = {(key, attr) for key, c in self.classes.items() for attr, count in c.__dict__.get("changed_attrs", {}).items()
                         if count > end_tables}
        for member in self.members:
            member.__dict__.pop("reads_classes", None)
            if member.cls is not None and member.name == "__init__":
                member.cls.attributes.clear()  # (only the class's own __init__, walked once, fills these)
                member.cls.attribute_nodes.clear()
            elif member.cls is not None:
                for attr in _facts(walker, member.node).on_self | _facts(walker, self.new_f if member is self.edited else member.node).on_self:
                    member.cls.late.pop(attr, None)  # (no method outside the block sets them: _tables_refused)
        walker.table_changes = info.walk_tables
        for member in self.members:
            member.walked = member.walking = False
            member.returns, member.returned_any = None, False
            member.calls_backward = member.calls_step = member.calls_zero_grad = member.uses_arguments = False
            member.scope = None
            member.__dict__.pop("tests_none", None)  # (walker._note_none_test: set again by the walk)
            member.__dict__.pop("moves_parameters", None)  # (an optimizer's method: set again by the walk)
            for key in ("saved_inputs", "backpropagates", "backward_of_arguments", "cuts_graph", "dtype_from_arguments", "configured_by_arguments",
                        "sized_by_arguments"):
                member.__dict__.pop(key, None)  # (set only when true: a walk again that finds none must not keep them)
            if member is not info:  # (set again by the first call inside the block)
                for key in ("passed_modules", "passed_sizes", "module_arguments"):
                    member.__dict__.pop(key, None)
        self.edited.node = self.new_f
        model.functions = {(self.new_f if node is self.old_f else node): function for node, function in model.functions.items()}
        if self.cls_pair is not None:
            self.edited.cls.node = self.cls_pair[1]
        model.tree = self.parsed_tree
        walker.module_scope.node = model.tree
        model.source = self.source
        model._provs = provs
        model.events, model.loops, model.torch_subscripts = [], [], [item for item in model.torch_subscripts if id(item[0]) not in old_nodes]
        walker.events_before = events[:a]  # (walker._constructions: what was built before the block)
        model.__dict__.pop("_ranged_positive", None)  # (cached by the count of events, which the block restarts)
        model.call_site_backwards = {key: value for key, value in model.call_site_backwards.items() if key not in self.written}
        model.backward_handovers = {key: value for key, value in model.backward_handovers.items() if key not in old_nodes and id(value[2]) not in self.written}
        model.forward_graphs = {key: value for key, value in model.forward_graphs.items() if key not in old_nodes}  # (merged over walks)
        hazards = model.__dict__.get("_sequential_hazards")
        if hazards:
            model.__dict__["_sequential_hazards"] = {key: value for key, value in hazards.items() if key not in old_nodes}
        for c in self.classes.values():
            for key in [key for key in c.instances if key in old_nodes]:
                del c.instances[key]
            nones = c.__dict__.get("none_attributes")  # (walker._store_self_attribute: per construction, as instances)
            for key in [key for key in nones or () if key in old_nodes]:
                del nones[key]
        # the bodies walked for a call site during the block are walked again by it (their memo entries forgotten); the
        # entries made after the block are hidden (a fresh walk had not made them yet when it walked the block)
        gone = {id(shadow) for shadow in self.inside}
        walker.shadows[:] = [shadow for shadow in walker.shadows if id(shadow) not in gone]
        for shadow in self.inside:
            walker.memo.pop(shadow.ctx_key, None)
            walker.memo_seen.pop(shadow.ctx_key, None)
        walker.context_walks -= len(self.inside)
        later = {key: walker.memo.pop(key) for key, seen in walker.memo_seen.items() if seen[0] >= end and key in walker.memo}
        for readers in walker.summary_reads.values():  # (the block's walks record again what they read)
            for key in self.block_ids & readers.keys():
                del readers[key]
        seen_before = {key: tuple(seen) for key, seen in walker.memo_seen.items()}
        shadows = len(walker.shadows)
        walker.seq, walker.function, walker.stmt = start, info.walk_from, info.walk_stmt
        walker.resolver = self.resolver
        scope = walker.module_scope
        final = scope.bindings, walker.function_aliases
        if self.view is not None:  # the module's names as the first walk saw them
            bindings, aliases = self.view
            scope.bindings = dict(bindings)
            walker.function_aliases = {**{key: value for key, value in final[1].items() if key[0] != id(scope)}, **aliases}
        walker.classes_read = read = set()
        try:
            walker.walk_function(info)
        finally:
            walker.classes_read = None
            walker.events_before = ()
            if self.view is not None:
                scope.bindings = final[0]
                walker.function_aliases = {**{key: value for key, value in walker.function_aliases.items() if key[0] != id(scope)},
                                           **{key: value for key, value in final[1].items() if key[0] == id(scope)}}
        new_events, new_loops = model.events, model.loops
        new_subs = model.torch_subscripts
        # what a fresh walk would have done differently
        if not all(member.walked for member in self.members):
            return _no('a nested walk missing')
        before, after = self.hazards_before, model.__dict__.get("_sequential_hazards", {})
        if any(key in old_nodes for key in before) or any(before.get(key) is not value for key, value in after.items()):
            return _no('an nn.Sequential with in-place layers in the block')  # (the forwards that run it read them)
        if later.keys() & walker.memo.keys():
            return _no('a call-site walk made before its first')  # (the later call reads it from the memo in a fresh walk)
        walker.memo.update(later)
        if max(walker.context_walks, self.final_walks) >= callsite.MAX_WALKS:
            return _no('call-site walks at their bound')  # (which calls were walked depends on the order)
        new_shadows = {id(shadow) for shadow in walker.shadows[shadows:]}
        if read & changed_after:
            return _no("read a class table that changed later")
        tdelta = walker.table_changes - end_tables
        changed = {id(member) for member in self.members
                   if {key: value for key, value in state_of(member).items() if key not in _OWN or key in _SUMMARY} != summaries[id(member)]}
        # class table entries the walk made again that differ: the walks that read them read something else now
        tables = set()
        for key, c in self.classes.items():
            before = self.tables[key]
            if (c.attributes, c.attribute_nodes, c.late) != before[:3]:
                for new, old in zip((c.attributes, c.attribute_nodes, c.late), before):
                    tables.update((key, attr) for attr in new.keys() | old.keys() if attr not in new or attr not in old or new[attr] != old[attr])
        readers = set()
        if tables:
            if tables & walker.module_reads or any(tables & shadow.__dict__.get("reads_classes", set()) for shadow in walker.shadows):
                return _no('class table read by module code or a call-site walk')
            readers = {function for function in model.functions.values()
                       if id(function) not in self.ids and tables & function.__dict__.get("reads_classes", set())}
        if changed:
            for event in events[:a] + events[b:]:
                if type(event) is CallEvent and (id(event.function) in changed or id(event.runs) in changed):
                    readers.add(event.ctx.scope.function)
            live = {id(shadow) for shadow in walker.shadows}
            for key in changed:  # (read otherwise than through a call event: a Sequential's last block)
                for reader in walker.summary_reads.get(key, {}).values():
                    if reader is None or id(reader) not in self.block_ids and (reader.context_of is None or id(reader) in live):
                        readers.add(reader)
        if readers:  # what others read of it changed: fine if none of them read it (they are walked again from further up)
            if None in readers or any(reader.context_of is not None for reader in readers):
                return _no('summary changed, read by module code or a call-site walk')
            top = _top(info)
            near = [reader for reader in readers if _top(reader) is top]
            far = [reader for reader in readers if _top(reader) is not top]
            if any(reader.__dict__.get("walk_seq", -1) < end for reader in far):
                return _no('summary changed, read before')
            if near:  # inside the walk this block lies in: walked again from the lowest one that holds them all
                caller = info.walk_from
                while caller is not None:
                    above = _nested_walks(model, caller)
                    if above is not None and all(reader in above for reader in near):
                        self.escalate = caller
                        return _no('summary changed: walked from further up')
                    caller = caller.__dict__.get("walk_from")
                return _no('summary changed, read by unrelated walks')
            self.later = far
        for event in new_events:
            if event.ctx.via is not None and id(event.ctx.scope.function) not in new_shadows:
                return _no('via event')
            callee = getattr(event, "function", None) or getattr(event, "runs", None)
            if callee is not None and callee.owner is walker and id(callee) not in self.ids and callee.__dict__.get("walk_seq", -1) > start:
                return _no('reaches a function walked later')
        # commit: the new block where the old one was, later sequence numbers moved
        delta = walker.seq - end
        for event in events[b:]:
            event.seq += delta
        for loop in loops[lb:]:
            loop.seq += delta
        ancestors = set()
        caller = info.walk_from
        while caller is not None:
            ancestors.add(id(caller))
            caller = caller.__dict__.get("walk_from")
        for function in model.functions.values():
            d = function.__dict__
            if id(function) in self.ids or "walk_end" not in d:
                continue
            if id(function) in ancestors:
                d["walk_end"] += delta  # a walk the block was nested in
                if "walk_tables_end" in d:
                    d["walk_tables_end"] += tdelta
            elif d["walk_seq"] >= end:  # began after the block (a walk that ended before it ended by `start`)
                d["walk_seq"] += delta
                d["walk_end"] += delta
                d["walk_tables"] += tdelta
                if "walk_tables_end" in d:
                    d["walk_tables_end"] += tdelta
        for shadow in walker.shadows:  # bodies walked for a call site after the block
            d = shadow.__dict__
            if id(shadow) not in new_shadows and d.get("ctx_seq", -1) >= end:
                d["ctx_seq"] += delta
                d["ctx_end"] += delta
        for key, seen in walker.memo_seen.items():
            before = seen_before.get(key)
            if before is not None:  # (None: made by this walk, counted from its start)
                if before[0] >= end:
                    seen[0] = before[0] + delta
                if before[1] >= end:
                    seen[1] = before[1] + delta
        for key, attr in changed_after:  # (their later stores moved like every later count)
            self.classes[key].changed_attrs[attr] = self.tables[key][4][attr] + tdelta
        for key, c in self.classes.items():
            if (self.tables[key][3] or 0) > end_tables:
                c.changed_at = self.tables[key][3] + tdelta
        self.walked = len(new_events)
        _FACTS.pop(id(self.old_f), None)
        model.events = events[:a] + new_events + events[b:]
        model.loops = loops[:la] + new_loops + loops[lb:]
        model.torch_subscripts = new_subs
        walker.seq = self.final_seq + delta
        walker.table_changes = self.final_tables + tdelta
        walker.function, walker.stmt, walker.table = None, model.tree, model._provs
        walker.scope = walker.module_scope
        model.rebase(self.source)
        for key in ("_index", "_callers_index", "_mentions", "_attribute_facts"):
            model.__dict__.pop(key, None)
        return True
