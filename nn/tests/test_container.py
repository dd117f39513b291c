"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, Container."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import flambeau as fb
from flambeau import nn
from flambeau.nn import Parameter


def _lin(i=2, o=2):
    return nn.Linear(i, o)


def test_sequential_from_modules_and_ordereddict():
    a, b = _lin(), _lin()
    s = nn.Sequential(a, b)
    assert list(s._modules) == ["0", "1"] and s[0] is a and s[-1] is b
    d = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert d.first is a and d[1] is b
    x = fb.ones(3, 2)
    expected = b(a(x))
    np.testing.assert_allclose(s(x).detach().numpy(), expected.detach().numpy())


def test_sequential_indexing_slicing_mutation():
    mods = [_lin() for _ in range(4)]
    s = nn.Sequential(*mods)
    assert len(s) == 4
    sub = s[1:3]
    assert isinstance(sub, nn.Sequential) and list(sub) == mods[1:3]
    with pytest.raises(IndexError, match="index 4 is out of range"):
        s[4]
    new = _lin()
    s[0] = new
    assert s[0] is new
    del s[1]
    assert len(s) == 3 and list(s._modules) == ["0", "1", "2"] and s[1] is mods[2]
    s.append(mods[0])
    assert s[-1] is mods[0]
    s.insert(0, mods[1])
    assert s[0] is mods[1] and len(s) == 5
    popped = s.pop(0)
    assert popped is mods[1] and len(s) == 4
    s.extend([_lin(), _lin()])
    assert len(s) == 6
    both = s + nn.Sequential(_lin())
    assert len(both) == 7
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        s + [1]
    assert len(nn.Sequential(_lin()) * 3) == 3


def test_module_list():
    mods = [_lin() for _ in range(3)]
    ml = nn.ModuleList(mods)
    assert len(ml) == 3 and ml[1] is mods[1] and list(ml) == mods
    assert len(list(ml.parameters())) == 6
    ml.append(_lin())
    ml.extend([_lin()])
    ml.insert(1, mods[2])
    assert len(ml) == 6 and ml[1] is mods[2] and ml[2] is mods[1]
    del ml[0]
    assert ml[0] is mods[2] and list(ml._modules) == [str(i) for i in range(5)]
    assert isinstance(ml[1:3], nn.ModuleList)
    with pytest.raises(TypeError, match="should be called with an iterable"):
        ml.extend(3)
    with pytest.raises(NotImplementedError):
        ml(1)


def test_module_list_repr_groups_repeats():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.Identity()])
    assert repr(ml) == ("ModuleList(\n"
                        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
                        "  (3): Identity()\n"
                        ")")


def test_module_dict():
    md = nn.ModuleDict({"b": _lin(), "a": _lin()})
    assert list(md.keys()) == ["b", "a"] and "a" in md and len(md) == 2
    md["c"] = nn.Identity()
    md.update([("d", nn.Identity())])
    assert list(md) == ["b", "a", "c", "d"]
    assert isinstance(md.pop("c"), nn.Identity) and "c" not in md
    assert [k for k, _ in md.items()] == ["b", "a", "d"]
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("x",)])
    md.clear()
    assert len(md) == 0


def test_parameter_list():
    pl = nn.ParameterList([fb.zeros(2), Parameter(fb.ones(3))])
    assert len(pl) == 2 and all(isinstance(p, Parameter) for p in pl)
    pl.append(fb.zeros(1, 2))
    assert len(list(pl.parameters())) == 3
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert repr(pl) == ("ParameterList(\n"
                        "    (0): Parameter containing: [flambeau.float32 of size 2]\n"
                        "    (1): Parameter containing: [flambeau.float32 of size 3]\n"
                        "    (2): Parameter containing: [flambeau.float32 of size 1x2]\n"
                        ")")
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl()


def test_parameter_dict():
    pd = nn.ParameterDict({"w": fb.zeros(2), "b": Parameter(fb.ones(1))})
    assert list(pd) == ["b", "w"]  # a plain dict is sorted, as PyTorch does
    assert isinstance(pd["w"], Parameter)
    pd["z"] = fb.ones(3)
    assert [n for n, _ in pd.named_parameters()] == ["b", "w", "z"]
    assert "z" in pd and len(pd) == 3
    assert pd.pop("z").shape == (3,) and "z" not in pd
    merged = pd | nn.ParameterDict({"q": fb.zeros(1)})
    assert list(merged) == ["b", "w", "q"]
    assert pd.get("nope", 5) == 5


def test_container_is_deprecated():
    with pytest.warns(DeprecationWarning, match="nn.Container is deprecated"):
        c = nn.Container(a=nn.Identity())
    assert isinstance(c.a, nn.Identity)


def test_state_dict_through_containers():
    s = nn.Sequential(nn.ModuleDict({"enc": nn.Linear(2, 3)}), nn.ModuleList([nn.Linear(3, 1)]))
    assert list(s.state_dict()) == ["0.enc.weight", "0.enc.bias", "1.0.weight", "1.0.bias"]
