from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.common.links import (
    BoolParam,
    ChoiceParam,
    FloatParam,
    IntListParam,
    IntParam,
    LinkSchema,
    TextParam,
)


@dataclass(frozen=True)
class Demo:
    n: int = 20
    lr: float = 0.003
    shuffle: bool = True
    act: str = "ReLU"
    hidden: tuple[int, ...] = (64, 32)
    code: str = ""


SCHEMA = LinkSchema(Demo, [
    IntParam("n", 4, 500), FloatParam("lr", 1e-5, 1.0), BoolParam("shuffle"),
    ChoiceParam("act", ["ReLU", "Tanh"]), IntListParam("hidden", 1, 256, 4), TextParam("code", 100),
])


def test_defaults_when_the_url_is_empty():
    settings, problems = SCHEMA.read({})
    assert settings == Demo() and problems == []
    assert SCHEMA.write(settings) == {}


def test_values_are_read_and_clamped():
    settings, problems = SCHEMA.read({"n": "100000", "lr": "0.01", "shuffle": "false",
                                      "act": "tanh", "hidden": "128,9999", "code": "x = 1"})
    assert problems == []
    assert settings == Demo(n=500, lr=0.01, shuffle=False, act="Tanh", hidden=(128, 256), code="x = 1")


@pytest.mark.parametrize("name,raw", [("n", "many"), ("lr", "nan"), ("shuffle", "maybe"),
                                      ("act", "swish"), ("hidden", "a,b"), ("hidden", "1,2,3,4,5"),
                                      ("code", "x" * 101)])
def test_invalid_values_fall_back_to_the_default_with_a_message(name, raw):
    settings, problems = SCHEMA.read({name: raw})
    assert settings == Demo()
    assert len(problems) == 1 and problems[0].param == name
    assert "default" in str(problems[0]) and name in str(problems[0])


def test_booleans_accept_words_and_digits():
    for raw, value in [("1", True), ("0", False), ("true", True), ("False", False)]:
        assert SCHEMA.read({"shuffle": raw})[0].shuffle is value


def test_a_schema_must_name_real_fields():
    with pytest.raises(ValueError):
        LinkSchema(Demo, [IntParam("x", 0, 1)])


@given(n=st.integers(4, 500), lr=st.floats(1e-5, 1.0), shuffle=st.booleans(),
       act=st.sampled_from(["ReLU", "Tanh"]), hidden=st.lists(st.integers(1, 256), min_size=1, max_size=4))
def test_round_trip(n, lr, shuffle, act, hidden):
    settings = Demo(n=n, lr=lr, shuffle=shuffle, act=act, hidden=tuple(hidden))
    back, problems = SCHEMA.read(SCHEMA.write(settings))
    assert problems == []
    assert back.n == n and back.shuffle == shuffle and back.act == act and back.hidden == tuple(hidden)
    assert back.lr == pytest.approx(lr, rel=1e-5)


@pytest.mark.parametrize("raw", ["tanh", "TANH", " Tanh ", "tAnH"])
def test_choices_match_without_regard_to_case_and_are_written_canonically(raw):
    settings, problems = SCHEMA.read({"act": raw})
    assert settings.act == "Tanh" and problems == []
    assert SCHEMA.write(settings) == {"act": "Tanh"}


def test_a_table_names_each_widget_and_generates_its_readme_rows():
    table = LinkSchema(Demo, [
        IntParam("n", 4, 500, label="Samples", help="How many samples."),
        ChoiceParam("act", ["ReLU", "Tanh"], label="Activation", help="Between layers."),
    ])
    assert table["n"].label == "Samples" and table["n"].kind == "number"
    assert table.labels() == {"n": "Samples", "act": "Activation"}
    rows = table.markdown_table().splitlines()
    assert rows[2] == "| `n` | Samples: How many samples. | 4 to 500 | `20` |"
    assert rows[3] == "| `act` | Activation: Between layers. | `ReLU`, `Tanh` | `ReLU` |"
    with pytest.raises(KeyError):
        table["nope"]


def test_fixed_settings_name_each_hidden_control_in_the_widgets_words():
    from workbench.autograd_graph.settings import TABLE as AUTOGRAD
    from workbench.moons_trainer.settings import TABLE as MOONS

    settings, problems = MOONS.read({"act": "tanh", "hidden": "16,16", "lr": "0.01"})
    assert problems == []
    # In the table's order, the choice's label (Tanh, not tanh), names of other pages ignored.
    assert MOONS.fixed_settings(settings, ["lr", "act", "hidden", "shuffle"]) == [
        ("Hidden layer widths", "16,16"), ("Activation", "Tanh"), ("Learning rate", "0.01")]
    assert MOONS.fixed_settings(settings, []) == []
    fixed = dict(AUTOGRAD.fixed_settings(AUTOGRAD.defaults, ["code", "retain"]))
    assert fixed == {"Program": "as shown on the page", "`retain_graph=True`": "off"}


def test_every_parameter_writes_examples_its_own_parse_reads_or_refuses_in_words():
    """`Param.example`, what both link fuzzers send: a string, read by the parameter's own parse
    or refused with a ValueError (what the page reports in words), never another exception;
    the same seed gives the same examples; and each kind writes some values it accepts."""
    import random

    from workbench.common.readme import TABLES

    for table_name, table in TABLES.items():
        for param in table.params:
            rng = random.Random(0)
            examples = [param.example(rng) for _ in range(300)]
            accepted = 0
            for raw in examples:
                assert isinstance(raw, str), (table_name, param.name, raw)
                try:
                    param.parse(raw)
                    accepted += 1
                except ValueError:
                    pass
            assert accepted, f"{table_name}.{param.name}: no example of 300 is a valid value"
            again = random.Random(0)
            assert [param.example(again) for _ in range(300)] == examples, \
                f"{table_name}.{param.name}: the same seed gave other examples"
