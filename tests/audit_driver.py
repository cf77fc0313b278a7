"""A small stand-in for the audit child runner, used by the probe tests until `autograd-lsp audit` is in main.

    python audit_driver.py PROBES.py SCRIPT [STEPS]

Bounds every loop of SCRIPT to STEPS iterations (calling the probes' step_boundary), execs the probes text,
install(), runs SCRIPT as __main__, finish(exc), and prints the findings as one JSON line after a marker.
"""
import ast
import builtins
import itertools
import json
import os
import sys
import types

PROBES, SCRIPT = sys.argv[1], os.path.abspath(sys.argv[2])
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
FINDINGS = []


def report(code, path, line, message, evidence=""):
    FINDINGS.append({"code": code, "path": path, "line": line, "message": message, "evidence": evidence})


class Bound:
    def __init__(self, boundary):
        self.boundary = boundary
        self.spins = {}

    def loop(self, iterable, path, line):
        for i, item in enumerate(itertools.islice(iterable, STEPS)):
            self.boundary((path, line), i)
            yield item

    def spin(self, path, line):
        i = self.spins.get((path, line), 0)
        if i >= STEPS:
            return False
        self.spins[(path, line)] = i + 1
        self.boundary((path, line), i)
        return True


class Bounder(ast.NodeTransformer):
    def call(self, method, args, at):
        func = ast.Attribute(value=ast.Name(id="__agl_audit__", ctx=ast.Load()), attr=method, ctx=ast.Load())
        return ast.copy_location(ast.Call(func=func, args=args + [ast.Constant(SCRIPT), ast.Constant(at.lineno)], keywords=[]), at)

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter = self.call("loop", [node.iter], node)
        return node

    def visit_While(self, node):
        self.generic_visit(node)
        node.test = ast.copy_location(ast.BoolOp(op=ast.And(), values=[self.call("spin", [], node), node.test]), node.test)
        return node


def main():
    namespace = {"__name__": "__agl_audit_probes__"}
    with open(PROBES, encoding="utf-8") as handle:
        exec(compile(handle.read(), "<autograd-lsp audit probes>", "exec"), namespace)
    namespace["install"](report, {SCRIPT})
    builtins.__agl_audit__ = Bound(namespace["step_boundary"])
    with open(SCRIPT, encoding="utf-8") as handle:
        tree = ast.fix_missing_locations(Bounder().visit(ast.parse(handle.read(), SCRIPT)))
    module = types.ModuleType("__main__")
    module.__file__ = SCRIPT
    sys.modules["__main__"] = module
    sys.argv = [SCRIPT]
    sys.path[0] = os.path.dirname(SCRIPT)
    failure = None
    try:
        exec(compile(tree, SCRIPT, "exec"), module.__dict__)
    except BaseException as error:  # noqa: BLE001 - the script may raise anything
        failure = error
    namespace["finish"](failure)
    sys.stdout.flush()
    print("\n@@AUDIT@@" + json.dumps({"findings": FINDINGS, "raised": repr(failure) if failure else None}))
    sys.stdout.flush()
    os._exit(0)


main()
