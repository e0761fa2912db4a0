"""What the autograd page's language offers: the torch functions, tensor methods, attributes,
keyword arguments and operators a learner's program may use.

`language.py` refuses anything not named here before a program runs; `interpreter.py` runs what
is; the page's *What you can write* lists these tables, so the help is the whitelist itself.
"""
from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

import torch

TORCH_FUNCTIONS: frozenset[str] = frozenset({
    # creating tensors
    "tensor", "ones", "zeros", "full", "randn", "rand", "arange", "linspace", "eye",
    "ones_like", "zeros_like", "full_like",
    # elementwise and reductions
    "sin", "cos", "tan", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "neg", "square",
    "pow", "maximum", "minimum", "clamp", "sum", "mean", "prod", "softmax", "log_softmax",
    # linear algebra and shapes
    "matmul", "mm", "dot", "outer", "stack", "cat", "reshape", "flatten", "transpose", "t",
    "squeeze", "unsqueeze",
    # choosing elementwise (no `if` needed, one graph for every value)
    "where",
    # losses
    "binary_cross_entropy_with_logits",
})
CREATORS = frozenset({"tensor", "ones", "zeros", "full", "randn", "rand", "arange", "linspace", "eye"})
RANDOM_CREATORS = frozenset({"randn", "rand"})
GRAD_MODES = {"no_grad": torch.no_grad, "enable_grad": torch.enable_grad,
              "inference_mode": torch.inference_mode}
TORCH_CONSTANTS = {"float32": torch.float32, "float64": torch.float64, "float": torch.float32,
                   "double": torch.float64, "int64": torch.int64, "long": torch.int64,
                   "pi": math.pi}

TENSOR_METHODS: frozenset[str] = frozenset({
    "sin", "cos", "tan", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "neg", "square",
    "pow", "clamp", "sum", "mean", "prod", "max", "min", "softmax", "log_softmax",
    "matmul", "mm", "dot", "t", "view", "reshape", "flatten", "transpose", "squeeze", "unsqueeze",
    "add", "sub", "mul", "div", "float", "double",
    "detach", "clone", "item", "numel", "dim", "size", "any", "all", "is_inference",
    # autograd
    "backward", "retain_grad", "requires_grad_",
    # in place
    "zero_", "add_", "sub_", "mul_", "div_", "clamp_", "fill_", "pow_", "exp_",
})
TENSOR_ATTRIBUTES: frozenset[str] = frozenset({
    "grad", "shape", "requires_grad", "is_leaf", "grad_fn", "T", "dtype", "ndim",
})
KEYWORDS: frozenset[str] = frozenset({
    "requires_grad", "dtype", "dim", "keepdim", "retain_graph", "gradient", "min", "max",
    "exponent", "steps", "start", "end", "step", "dim0", "dim1", "fill_value", "alpha",
})
BINARY_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
}
IN_PLACE_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul,
    ast.Div: operator.itruediv,
}
SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@"}
COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
COMPARISON_SYMBOLS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
                      ast.NotEq: "!="}
