"""The type stubs of the extension (rmm/_ffi.pyi) match the built ``rmm._ffi``: same public
names, same class members, same parameters and defaults. Update rmm/_ffi.pyi with every
change to python/src/lib.rs's Python interface."""

import ast
import inspect
import os

import pytest

import rmm
from rmm import _ffi

PACKAGE = os.path.dirname(rmm.__file__)
STUB = os.path.join(PACKAGE, "_ffi.pyi")
HINT = "update python/rmm/_ffi.pyi to match python/src/lib.rs"


def _public(names):
    return {n for n in names if not n.startswith("_")}


@pytest.fixture(scope="module")
def stub():
    with open(STUB) as f:
        return ast.parse(f.read(), STUB)


def _top_level(tree):
    """name -> ast node of the stub's module-level definitions."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
    return out


def _members(cls_node):
    return {
        n.name: n
        for n in cls_node.body
        if isinstance(n, ast.FunctionDef) and (not n.name.startswith("_") or n.name == "__new__")
    }


def _stub_params(fn):
    """[(name, default or inspect.Parameter.empty)] of a stub function, without self/cls."""
    args = fn.args
    positional = args.posonlyargs + args.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults))
    defaults += [ast.literal_eval(d) for d in args.defaults]
    params = list(zip([a.arg for a in positional], defaults))
    params += [
        (a.arg, inspect.Parameter.empty if d is None else ast.literal_eval(d))
        for a, d in zip(args.kwonlyargs, args.kw_defaults)
    ]
    if params and params[0][0] in ("self", "cls"):
        params = params[1:]
    return params


def _runtime_params(obj):
    sig = inspect.signature(obj)
    return [(p.name, p.default) for p in sig.parameters.values() if p.name not in ("self", "cls")]


def test_stub_and_marker_are_installed():
    assert os.path.isfile(STUB), "rmm/_ffi.pyi is missing from the wheel"
    marker = os.path.join(PACKAGE, "py.typed")
    assert os.path.isfile(marker), "rmm/py.typed is missing from the wheel"


def test_stub_names_match_the_extension(stub):
    declared = _public(_top_level(stub))
    actual = _public(dir(_ffi))
    assert sorted(actual - declared) == [], f"in rmm._ffi but not in the stub: {HINT}"
    assert sorted(declared - actual) == [], f"in the stub but not in rmm._ffi: {HINT}"


def test_stub_classes_match_the_extension(stub):
    top = _top_level(stub)
    for name, node in top.items():
        if name.startswith("_") or not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(_ffi, name)
        declared = {m for m in _members(node) if m != "__new__"}
        actual = _public(vars(cls))
        assert declared == actual, f"{name}: stub {sorted(declared)} != {sorted(actual)}: {HINT}"
        for member, fn in _members(node).items():
            is_property = any(
                isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list
            )
            if member == "__new__":
                # a class without #[new] cannot be constructed from Python
                assert cls.__text_signature__ is not None, f"{name}() is not constructible: {HINT}"
                runtime = [
                    (p.name, p.default)
                    for p in inspect.signature(cls).parameters.values()
                ]
            elif is_property:
                assert type(vars(cls)[member]).__name__ == "getset_descriptor", (
                    f"{name}.{member} is not a property: {HINT}"
                )
                continue
            else:
                runtime = _runtime_params(getattr(cls, member))
            assert _stub_params(fn) == runtime, f"{name}.{member}: {HINT}"
        if "__new__" not in _members(node):
            with pytest.raises(TypeError):
                cls()


def test_stub_functions_match_the_extension(stub):
    for name, node in _top_level(stub).items():
        if name.startswith("_") or not isinstance(node, ast.FunctionDef):
            continue
        assert _stub_params(node) == _runtime_params(getattr(_ffi, name)), f"{name}: {HINT}"


def test_stub_constants_match_the_extension(stub):
    for name, node in _top_level(stub).items():
        if name.startswith("_") or not isinstance(node, ast.AnnAssign):
            continue
        assert isinstance(getattr(_ffi, name), int), name
