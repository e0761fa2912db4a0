"""The moons trainer's settings: one dataclass and its table, the only place a setting's link
name, range, widget label, help and step are written.

The link names (dataset, points, n, noise, seed, split, features, hidden, act, dropout, opt, lr, wd,
reg, reg_rate, batch, epochs, speed, net, discrete) are public: teachers type them into slides. Keep them
and their meaning.
This module never imports streamlit.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from workbench.common.links import (
    MAX_SEED,
    BoolParam,
    ChoiceParam,
    ChoiceSetParam,
    FloatParam,
    IntListParam,
    IntParam,
    LinkSchema,
    PointsParam,
    Widget,
)

GENERATED = ("moons", "circles", "xor", "spiral", "gaussians")   # drawn by a known process
REGRESSION = ("plane", "multigauss")   # TensorFlow Playground's regression datasets: float targets
DATASETS = (*GENERATED, "drawn", *REGRESSION)
# "drawn": the learner's own points, clicked onto the plane (the `points` link parameter). They
# sit on a fixed plane, rounded to a grid, and are capped so that any drawing fits in a link
# (PointsParam.longest: 3,603 characters for 300 points, under links.MAX_RAW_LENGTH).
DRAW_BOUND = 3.0                # the drawing plane is [-3, 3] x [-3, 3]
DRAW_STEP = 0.05                # each coordinate is rounded to this
MAX_DRAWN = 300                 # points in a drawing, both classes together
ACTIVATIONS = ("ReLU", "LeakyReLU", "GELU", "Tanh", "Sigmoid", "Identity")
OPTIMIZERS = ("AdamW", "Adam", "SGD", "RMSprop")
# TensorFlow Playground's regularization: a penalty on the weights added to the loss
# (workbench/moons_trainer/model.py, weight_penalty).
REGULARIZATIONS = ("none", "L1", "L2")
# TensorFlow Playground's input features, computed from the scaled point (x1, x2) by the model's
# first module (workbench/moons_trainer/model.py, InputFeatures); the link names stay URL-plain.
FEATURES = ("x1", "x2", "x1_sq", "x2_sq", "x1_x2", "sin_x1", "sin_x2")
FEATURE_LABELS = {"x1": "x₁", "x2": "x₂", "x1_sq": "x₁²", "x2_sq": "x₂²", "x1_x2": "x₁x₂",
                  "sin_x1": "sin x₁", "sin_x2": "sin x₂"}


def feature_words(feature: str) -> str:
    """What an input feature is, in words: `the coordinate x₁, standardised`, `sin x₁ of the
    standardised coordinates`."""
    label = FEATURE_LABELS[feature]
    if feature in ("x1", "x2"):
        return f"the coordinate {label}, standardised"
    return f"{label} of the standardised coordinates"


SPLITS = ("70/15/15", "60/20/20", "80/10/10", "50/25/25")
# Epochs per second while Play trains (workbench/moons_trainer/pace.py); "max": as fast as it can. The
# default lets the preset's boundary be seen forming: its 50 epochs take ten seconds.
SPEEDS = ("1", "2", "5", "10", "25", "max")

# Hard limits: a lesson link is untrusted input, and one learner must not starve the others.
MAX_SAMPLES = 5000
MAX_WIDTH = 256
MAX_LAYERS = 4
MAX_EPOCHS = 500
MAX_STEPS_PER_RUN = 200_000     # optimizer steps in one training run, whatever the settings


@dataclass(frozen=True)
class MoonsSettings:
    """Everything that decides one experiment. Defaults are the lesson's assignment."""

    dataset: str = "moons"
    points: tuple[tuple[float, float, int], ...] = ()   # (x, y, class): the drawn data
    n: int = 3000
    noise: float = 0.25
    seed: int = 42
    split: str = "70/15/15"
    features: tuple[str, ...] = ("x1", "x2")
    hidden: tuple[int, ...] = (64, 32)
    act: str = "ReLU"
    dropout: float = 0.0
    opt: str = "AdamW"
    lr: float = 0.003
    wd: float = 1e-4
    reg: str = "none"
    reg_rate: float = 0.001
    batch: int = 64
    epochs: int = 50
    speed: str = "5"
    net: bool = False
    discrete: bool = False

    @property
    def epochs_per_second(self) -> float | None:
        """The live pace; None: as fast as it can. The model trained is the same at any pace."""
        return None if self.speed == "max" else float(self.speed)

    @property
    def drawn(self) -> bool:
        """Whether the data are the learner's own points (dataset `drawn`)."""
        return self.dataset == "drawn"

    @property
    def regression(self) -> bool:
        """Whether the targets are numbers in [-1, 1] (MSE loss, R²), not classes 0/1."""
        return self.dataset in REGRESSION

    @property
    def drawn_points(self) -> tuple[tuple[float, float, int], ...]:
        """The points the data are made of when drawn; () for a generated dataset (the drawing
        is kept in the settings, so that switching back to `drawn` brings it back)."""
        return self.points if self.drawn else ()

    @property
    def samples(self) -> int:
        """How many points the data have: the drawing's, or `n`."""
        return len(self.points) if self.drawn else self.n

    @property
    def fractions(self) -> tuple[float, float, float]:
        train, val, test = (int(p) / 100 for p in self.split.split("/"))
        return train, val, test

    @property
    def architecture(self) -> str:
        """`2 -> 64 -> 32 -> 1`, the shape of the network in words (the first number counts the
        input features)."""
        return " -> ".join(str(w) for w in (len(self.features), *self.hidden, 1))

    @property
    def linear_on_the_plane(self) -> bool:
        """Every input feature is a coordinate (x₁, x₂): a model linear in its input features is
        then linear on the plane too, and its boundary a straight line. With x₁², x₂², x₁x₂ or
        sin it is a straight line in those features only, a curve on the plane."""
        return set(self.features) <= {"x1", "x2"}

    @property
    def feature_labels(self) -> tuple[str, ...]:
        """The input features as the page writes them: `x₁, x₂, sin x₁`."""
        return tuple(FEATURE_LABELS[f] for f in self.features)


PRESET = MoonsSettings()

TABLE: LinkSchema[MoonsSettings] = LinkSchema(MoonsSettings, [
    ChoiceParam("dataset", DATASETS, label="Dataset",
                help="Which generative process draws the points, or Your own points: click them "
                     "onto the plane. Plane and Multi Gaussian are regression: each point has a "
                     "number in [-1, 1] to predict (MSE loss, R²) instead of a class.",
                meaning="which generative process draws the points; `drawn`: the points you "
                        "click onto the plane (`points`); `plane`, `multigauss`: regression, a "
                        "target in [-1, 1] per point, MSE loss",
                widget=Widget(choice_labels={"moons": "Two moons", "circles": "Circles",
                                             "xor": "XOR", "spiral": "Spiral",
                                             "gaussians": "Two Gaussians",
                                             "drawn": "Your own points",
                                             "plane": "Plane (regression)",
                                             "multigauss": "Multi Gaussian (regression)"})),
    PointsParam("points", DRAW_BOUND, DRAW_STEP, MAX_DRAWN, label="Drawn points",
                help=f"The points you drew on the plane (dataset: Your own points), each with its "
                     f"class; at most {MAX_DRAWN}, rounded to {DRAW_STEP:g} on the plane from "
                     f"{-DRAW_BOUND:g} to {DRAW_BOUND:g}. Kept when you pick another dataset.",
                meaning="the points drawn for `dataset=drawn`, e.g. `0:-1,0.5_-0.5,1~1:1,-0.5` "
                        "(class 0 at (-1, 0.5) and (-0.5, 1), class 1 at (1, -0.5))",
                readme_default="(none)"),
    IntParam("n", 100, MAX_SAMPLES, label="Points (n_samples)",
             help="Number of points, all splits together.",
             meaning="points in all splits together", widget=Widget(step=100)),
    FloatParam("noise", 0.0, 1.0, label="Noise (std)",
               help="Standard deviation of the Gaussian noise added to every point. It sets the "
                    "best accuracy any classifier can reach. For regression it moves where each "
                    "point's target is read, as in TensorFlow Playground.",
               meaning="std of the Gaussian noise added to each point",
               widget=Widget(kind="slider", step=0.01)),
    IntParam("seed", 0, MAX_SEED, label="Seed",
             help="Seeds the data and the split (scikit-learn's random_state and NumPy's "
                  "default_rng take it), and the initial weights, the batch order and dropout "
                  "(the learner's own torch.Generator objects).",
             meaning="seeds data and split (scikit-learn, NumPy), initial weights, batch order "
                     "and dropout (own `torch.Generator`s)",
             widget=Widget(step=1)),
    ChoiceParam("split", SPLITS, label="Split train/val/test (%)",
                help="Stratified: each split keeps the class balance (regression data are split "
                     "at random: a continuous target has no classes to balance).",
                meaning="train/val/test percentages, stratified (not for regression)"),
    ChoiceSetParam("features", FEATURES, label="Input features",
                   help="What the first layer sees, computed from each point's scaled coordinates "
                        "(x₁, x₂) by the model's first module, as in TensorFlow Playground. With "
                        "x₁² and x₂² even a network without hidden layers draws a circle.",
                   meaning="the first layer's inputs, computed from the scaled point (x₁, x₂): "
                           "`x1`, `x2`, `x1_sq` (x₁²), `x2_sq`, `x1_x2` (x₁x₂), `sin_x1`, `sin_x2`",
                   widget=Widget(choice_labels=FEATURE_LABELS)),
    IntListParam("hidden", 1, MAX_WIDTH, MAX_LAYERS, empty_ok=True, label="Hidden layer widths",
                 help=f"Widths separated by commas, e.g. 64,32 (at most {MAX_LAYERS} layers of at "
                      f"most {MAX_WIDTH}). Empty: no hidden layer, one Linear layer on the input "
                      "features: linear in those features (a straight boundary when they are x₁ "
                      "and x₂ only).",
                 meaning="hidden widths, e.g. 64,32; empty: one Linear layer on the input features",
                 widget=Widget(kind="text")),
    ChoiceParam("act", ACTIVATIONS, label="Activation",
                help="The activation between layers. Identity is none at all: stacked Linear "
                     "layers then collapse into one linear map of the input features, a straight "
                     "boundary with x₁ and x₂ alone, a curve with x₁², x₂², x₁x₂ or sin (the "
                     "Model tab says which this run draws).",
                meaning="the nonlinearity between layers; `Identity`: none, so the layers "
                        "collapse into one linear map"),
    FloatParam("dropout", 0.0, 0.8, label="Dropout",
               help="Probability of zeroing each hidden activation while training.",
               meaning="dropout probability after each activation",
               widget=Widget(kind="slider", step=0.05)),
    ChoiceParam("opt", OPTIMIZERS, label="Optimizer", help="SGD uses momentum 0.9.",
                meaning="SGD with momentum 0.9"),
    FloatParam("lr", 1e-5, 1.0, label="Learning rate",
               help="How far each optimizer step moves the weights along the gradient.",
               meaning="how far each step moves the weights", widget=Widget(step=0.001, format="%.5f")),
    FloatParam("wd", 0.0, 0.1, label="Weight decay",
               help="Pulls every weight towards zero a little at each step.",
               meaning="pulls the weights towards zero", widget=Widget(step=1e-4, format="%.5f")),
    ChoiceParam("reg", REGULARIZATIONS, label="Regularization",
                help="A penalty on the weights added to the loss, as in TensorFlow Playground: L1 "
                     "adds rate × Σ|w| (it pulls every weight towards zero by the same step, so "
                     "many end close to zero, but hardly any exactly: a weight that crosses zero "
                     "is pulled back across it; Playground sets such a weight to 0, this page, "
                     "like plain PyTorch, does not), L2 adds rate × Σw²/2 (it shrinks them all, "
                     "the large ones most). Biases are not penalised. The curves show the data's "
                     "loss without it. It can change mid-run.",
                meaning="a penalty on the weights added to the loss: `L1` rate·Σ|w|, `L2` "
                        "rate·Σw²/2 (not the biases); changes mid-run keep the weights",
                widget=Widget(kind="segmented", choice_labels={"none": "None"})),
    FloatParam("reg_rate", 0.0, 10.0, label="Regularization rate",
               help="How strongly the penalty pulls: the `rate` in rate × Σ|w| or rate × Σw²/2.",
               meaning="the penalty's weight in the loss", widget=Widget(step=0.001, format="%.4f")),
    IntParam("batch", 1, 2048, label="Batch size", help="Samples in one mini-batch.",
             meaning="samples per optimizer step", widget=Widget(step=16)),
    IntParam("epochs", 1, MAX_EPOCHS, label="Epochs",
             help="Passes over the training split. Raising it later continues the same run.",
             meaning="epochs to train; raising it later continues the same run",
             widget=Widget(step=10)),
    ChoiceParam("speed", SPEEDS, label="Speed (epochs per second)",
                help="How fast Play trains, so that the boundary can be watched as it forms. The "
                     "run is the same at every speed: only when its steps happen changes.",
                meaning="epochs trained per second while playing (`max`: as fast as it can); "
                        "the run is the same at every speed",
                widget=Widget(kind="segmented")),
    BoolParam("net", label="Network view",
              help="Draws the network under the boundary: every hidden unit as a small map of its "
                   "activation over the plane (read with PyTorch forward hooks), the weights on the "
                   "edges between them. It follows the run live and changes nothing in it.",
              meaning="each hidden unit's activation over the plane "
                      "(forward hooks) and the weights on the edges; the run is the same either way"),
    BoolParam("discrete", label="Discretize output",
              help="Shades the plane by the class the model predicts (P ≥ 0.5, a logit ≥ 0) instead "
                   "of by its probability, as TensorFlow Playground's checkbox does; hovering "
                   "still reads the probability. For regression: by the sign of the output. The "
                   "run is the same either way.",
              meaning="shade the plane by the predicted class instead of P(class 1); the run is "
                      "the same either way"),
])
assert [p.field for p in TABLE.params] == [f.name for f in fields(MoonsSettings)]


def _shown(name: str, settings: MoonsSettings) -> str:
    p = TABLE[name]
    value = getattr(settings, p.field)
    if isinstance(p, ChoiceParam):
        return p.choice_label(value)
    if isinstance(p, ChoiceSetParam):
        return ", ".join(p.choice_label(c) for c in value)
    if isinstance(p, IntListParam):
        return p.format(value) or "none (linear)"
    if isinstance(p, PointsParam):
        return points_words(value)
    return p.format(value)


def points_words(points: tuple[tuple[float, float, int], ...]) -> str:
    """`12 points (5 of class 0, 7 of class 1)`: a drawing in words."""
    ones = sum(1 for point in points if point[2] == 1)
    if not points:
        return "no points"
    return (f"{len(points)} point{'s' if len(points) != 1 else ''} ({len(points) - ones} of class 0, "
            f"{ones} of class 1)")


def changes(old: MoonsSettings, new: MoonsSettings, *, ignore: tuple[str, ...] = ()) -> list[str]:
    """What differs, in words: `the learning rate changed from 0.003 to 0.01`."""
    words = []
    for p in TABLE.params:
        if p.name in ignore or getattr(old, p.field) == getattr(new, p.field):
            continue
        label = p.label[0].lower() + p.label[1:]
        words.append(f"the {label} changed from {_shown(p.name, old)} to {_shown(p.name, new)}")
    return words


def discard_notice(old: MoonsSettings, new: MoonsSettings, epoch: int, steps: int,
                   device_changed: bool = False) -> str:
    """The sentence a page shows when a setting change threw a trained run away."""
    reasons = changes(old, new, ignore=("epochs",))
    if device_changed:
        reasons.append("the device changed")
    where = f"epoch {epoch}" if epoch else f"step {steps:,} of epoch 1"
    what = "; ".join(reasons) or "the settings changed"
    return (f"The run at {where} was discarded: {what} (a new run starts from fresh weights).")
