"""The interpreter refuses sandbox escapes and resource attacks, with a message and no side effect."""
import ast
import re
from pathlib import Path

import pytest

from workbench.autograd_graph.interpreter import Limits, parse_program, run_program

CANARY = Path("/tmp/autograd_graph_canary_do_not_create")

ATTACKS = {
    "dunder walk to subclasses": "x = ().__class__.__bases__[0].__subclasses__()",
    "tensor dunder class": "t = torch.ones(1)\nc = t.__class__",
    "dunder import": "__import__('os').system('touch /tmp/autograd_graph_canary_do_not_create')",
    "import statement": "import os\nos.system('touch /tmp/autograd_graph_canary_do_not_create')",
    "from import": "from os import system",
    "open a file": "open('/tmp/autograd_graph_canary_do_not_create', 'w')",
    "eval": "eval('1 + 1')",
    "exec": "exec('x = 1')",
    "compile": "compile('1', 'f', 'eval')",
    "getattr trick": "getattr(torch, 'load')",
    "setattr": "setattr(torch, 'x', 1)",
    "globals": "g = globals()",
    "vars": "v = vars()",
    "breakpoint": "breakpoint()",
    "type": "t = type(torch.ones(1))",
    "lambda": "f = lambda: 0",
    "list comprehension": "xs = [i for i in range(3)]",
    "generator expression": "xs = sum(i for i in range(3))",
    "function definition": "def f():\n    return 1",
    "class definition": "class A:\n    pass",
    "while loop": "while True:\n    pass",
    "torch.save writes files": "torch.save(torch.ones(1), '/tmp/autograd_graph_canary_do_not_create')",
    "torch.load": "torch.load('/etc/passwd')",
    "private torch module": "c = torch._C",
    "torch.ops": "o = torch.ops",
    "torch.hub": "torch.hub.load('x', 'y')",
    "tensor storage": "s = torch.ones(1).untyped_storage()",
    "tensor numpy bridge": "n = torch.ones(1).numpy()",
    "hook registration on grad_fn": ("w = torch.ones(1, requires_grad=True)\ny = w * 2\n"
                                     "y.grad_fn.register_hook(print)"),
    "attribute of grad_fn": "w = torch.ones(1, requires_grad=True)\nn = (w * 2).grad_fn.next_functions",
    "out= keyword writes into a tensor": "a = torch.ones(2)\ntorch.sin(a, out=a)",
    "generator keyword": "torch.randn(2, generator=None)",
    "device keyword": "torch.ones(2, device='cuda')",
    "kwargs unpacking": "torch.ones(2, **{'requires_grad': True})",
    "star unpacking": "torch.ones(*[2, 2])",
    "f-string": "s = f'{torch.ones(1)}'",
    "power tower": "x = 9 ** 9 ** 9",
    "huge exponent": "x = 2 ** 100000",
    "huge constant": "x = 10000000000000000000000",
    "huge tensor": "x = torch.ones(10 ** 6, 10 ** 6)",
    "big randn": "x = torch.randn(1000, 1000)",
    "long arange": "x = torch.arange(10 ** 8)",
    "long linspace": "x = torch.linspace(0, 1, 10 ** 8)",
    "list multiplication": "x = torch.tensor([1.0] * 1000000)",
    "broadcast blow-up": ("a = torch.ones(100, 1)\nb = torch.ones(1, 100)\n"
                          "c = (a + b).view(1, 100, 100) * a.view(100, 1, 1)"),
    "matmul blow-up": "a = torch.ones(10000, 1)\nb = torch.ones(1, 10000)\nc = a @ b",
    "endless growth by cat": "x = torch.ones(100)\nfor i in range(100):\n    x = torch.cat([x, x])",
    "huge loop": "for i in range(10 ** 9):\n    pass",
    "deep loop nesting": ("for i in range(50):\n    for j in range(50):\n        for k in range(50):\n"
                          "            x = 1"),
    "statement flood in loops": "for i in range(100):\n    for j in range(100):\n        x = i",
    "print flood": "for i in range(100):\n    for j in range(10):\n        print(i)",
    "backward flood": ("w = torch.ones(1, requires_grad=True)\nL = (w * w).sum()\nfor i in range(100):\n"
                       "    L.backward(retain_graph=True)"),
    "long source": "x = 1\n" * 2000,
    "deep nesting": "x = " + "(1 + " * 200 + "1" + ")" * 200,
    "unary tower": "x = " + "-" * 3000 + "1",
    "huge string": "s = '" + "a" * 5000 + "'",
    "string arithmetic": "s = 'a' * 100000000",
    "try block": "try:\n    x = 1\nexcept Exception:\n    pass",
    "walrus": "y = (x := 3)",
    "del": "x = 1\ndel x",
    "global": "global x",
    "with open": "with open('x') as f:\n    pass",
    "assignment to attribute": "w = torch.ones(1)\nw.grad = torch.ones(1)",
    "assignment to torch": "torch = 1",
    "subscript assignment": "w = torch.ones(2)\nw[0] = 5",
    "model attribute without a model": "m = model.state_dict()",
    "NUL byte": "x = 1\x00",
    "name with underscore": "_secret = 1",
    # the syntax of define-by-run: comparisons, if/else and while, under the same caps
    "endless while on a tensor": "x = torch.tensor(1.0)\nwhile x > 0:\n    x = x + 1",
    "endless while inside a loop": ("for i in range(100):\n    x = torch.tensor(1.0)\n"
                                    "    while x > 0:\n        x = x + 1"),
    "while rounds flood the step cap": "for i in range(100):\n    n = 0\n    while n < 99:\n        n += 1",
    "while condition allocates every round": ("for i in range(100):\n    n = 0\n"
                                              "    while torch.ones(10000).sum() > n:\n        n += 1000"),
    "comparison blow-up": "a = torch.ones(10000, 1)\nb = torch.ones(1, 10000)\nc = a < b",
    "chained comparison blow-up": ("a = torch.ones(10000, 1)\nb = torch.ones(1, 10000)\n"
                                   "c = torch.tensor(0.0) < torch.tensor(1.0) < a + b"),
    "conditional expression blow-up": "a = torch.ones(10000, 1)\nb = a @ a.T if True else 0",
    "bool of a multi-element tensor in if": "x = torch.ones(3)\nif x > 0:\n    y = 1",
    "bool of a multi-element tensor in while": "x = torch.ones(3)\nwhile x:\n    x = x - 1",
    "chained comparison of multi-element tensors": "a = torch.ones(3)\nc = 0 < a < 2",
    "and/or of a multi-element tensor": "a = torch.ones(3)\nc = a and 1",
    "not of a multi-element tensor": "a = torch.ones(3)\nc = not a",
    "is with a value": "a = 1\nb = a is a",
    "in operator": "x = 1 in [1]",
    "break out of an endless loop": "while True:\n    break",
    "while else": "n = 0\nwhile n < 1:\n    n += 1\nelse:\n    n = 5",
    "truth of the torch namespace": "b = not torch",
    "comparing torch itself": "b = torch == torch",
    "deep if nesting": "".join("    " * depth + "if True:\n" for depth in range(40)) + "    " * 40 + "x = 1",
    "loops hidden in if blocks": ("for i in range(9):\n    if True:\n        for j in range(9):\n"
                                  "            if True:\n                while True:\n"
                                  "                    pass"),
    "undefined name in a branch not taken": ("x = torch.tensor(-1.0)\nif x > 0:\n    y = x * 2\n"
                                             "z = y + 1"),
}


@pytest.fixture(autouse=True)
def no_canary():
    CANARY.unlink(missing_ok=True)
    yield
    assert not CANARY.exists(), "an attack created the canary file"


def test_there_are_at_least_thirty_attacks():
    assert len(ATTACKS) >= 30


@pytest.mark.parametrize("source", ATTACKS.values(), ids=ATTACKS.keys())
def test_attack_is_rejected_with_a_message_and_no_side_effect(source):
    outcome = run_program(source)
    assert not outcome.ok
    problem = outcome.refused or outcome.failed
    assert problem is not None
    assert str(problem).startswith("line ")
    assert len(str(problem)) > len("line 1: ")
    assert problem.col is not None, str(problem)   # every refusal names its column too
    assert not ast_words_in(str(problem)), str(problem)


# Names of the `ast` module's classes that a message must never show (a learner never typed
# `Gt` or `BoolOp`); "In" and "Is" only in backticks, as they also start English sentences.
AST_CLASSES = sorted(name for name in dir(ast) if isinstance(getattr(ast, name), type)
                     and issubclass(getattr(ast, name), ast.AST) and name[0].isupper())
ENGLISH = {"In", "Is", "If", "For", "While", "With", "Not", "And", "Or", "Pass", "Set", "List",
           "Name", "Call", "Load", "Store", "Del", "Delete", "Return", "Match", "Try", "Global",
           "Import", "Assert", "Raise", "Expression", "Module", "Constant", "Attribute", "Slice",
           "Lambda", "Yield", "Await", "Break", "Continue", "Interactive", "Tuple", "Dict",
           "Starred", "Subscript", "Expr", "Add", "Sub"}


def ast_words_in(message: str) -> list[str]:
    found = [name for name in AST_CLASSES if f"`{name}`" in message]
    found += [name for name in AST_CLASSES if name not in ENGLISH
              and re.search(rf"\b{name}\b", message)]
    return found


def test_refusals_name_the_line():
    outcome = run_program("x = torch.tensor(1.0)\ny = x * 2\nimport os")
    assert outcome.refused is not None and outcome.refused.line == 3
    assert "imports" in outcome.refused.message


def test_refused_programs_run_nothing():
    # The whole program is checked before its first line runs.
    outcome = run_program("print('ran')\nimport os")
    assert outcome.refused is not None
    assert outcome.interpreter.printed == []


def test_time_limit_stops_a_slow_program():
    limits = Limits(max_seconds=0.05, max_statements_run=10 ** 6, max_loop_iterations=10 ** 6,
                    max_total_numel=10 ** 9)
    source = "x = torch.ones(100, 100)\nfor i in range(100000):\n    y = (x @ x).sum()"
    outcome = run_program(source, limits=limits)
    assert outcome.refused is not None and "longer than" in outcome.refused.message


def test_parse_program_accepts_the_documented_language():
    parse_program("x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                  "with torch.no_grad():\n    y = x * 2\n"
                  "for i in range(3):\n    z = (x ** 2).sum()\n    z.backward()\n"
                  "print(x.grad[0], x.shape)\n")


@pytest.mark.parametrize(("source", "origin", "kind"), [
    ("L = q * 2", "Python", "NameError"),
    ("a = 1 / 0", "Python", "ZeroDivisionError"),
    ("x = torch.ones(2)\ny = x.view(3)", "PyTorch", "RuntimeError"),
    ("x = torch.ones(2) + torch.ones(3)", "PyTorch", "RuntimeError"),
    ("x = torch.ones(2)\nif x:\n    y = x", "PyTorch", "RuntimeError"),
    ("w = torch.ones(2, requires_grad=True)\nL = w * 2\nL.backward()", "PyTorch", "RuntimeError"),
    ("x = torch.ones(2)\ny = x[5]", "PyTorch", "IndexError"),
])
def test_a_failure_names_who_raised_it(source, origin, kind):
    """Errors name their origin (issue 27): PyTorch for what a call into PyTorch raised, Python
    for what the language raised before PyTorch was asked anything."""
    failed = run_program(source).failed
    assert failed is not None, source
    assert (failed.origin, type(failed.error).__name__) == (origin, kind)
