"""The knowledge checks that only the lessons ask: the from-scratch training loop, the pitfalls
and where a tensor lives.

Each `compute` function is the code the learner reads after committing; it asks PyTorch for the
answer when the learner reveals it. The from-scratch checks draw their data exactly as the
autograd page does (a `torch.Generator` seeded with 0), so the numbers in the check and on the
page are the same numbers. This module never imports streamlit.
"""
from __future__ import annotations

import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn

from workbench.common.checks import Answer, Check
from workbench.common.saved import SavedTensors, saved_tensors_held

# ---------------------------------------------------------------------------- where a tensor lives


def default_device() -> Answer:
    x = torch.zeros(2, 3)                       # no device= argument
    where = x.device.type
    return Answer(where, f"x.device = {x.device}; torch.cuda.is_available() = {torch.cuda.is_available()}",
                  "A factory puts the tensor on the CPU unless you pass `device=` (or change the "
                  "default with `torch.set_default_device`), even on a machine with a GPU. Moving "
                  "it is explicit: `x.to('cuda')` makes a copy on the GPU, and tensors in one "
                  "operation must all be on the same device.")


DEFAULT_DEVICE = Check(
    "lesson_default_device",
    "`x = torch.zeros(2, 3)` names no device. Where does `x` live?",
    ("cpu", "cuda (when a GPU is present)", "meta"),
    default_device)


# ---------------------------------------------------------------------------- the from-scratch loop
# The data of the lesson: y = 3*x1 - 2*x2 + 5 on 64 points, w and b starting at zero.

def regression_data() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)    # the autograd page's generator
    X = torch.randn(64, 2, generator=generator)
    y = X @ torch.tensor([3.0, -2.0]) + 5
    return X, y


def loss_at_zero() -> Answer:
    X, y = regression_data()
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    pred = X @ w + b                            # forward: every prediction is 0
    L = ((pred - y) ** 2).mean()
    is_mean_square = torch.allclose(L, (y ** 2).mean())
    return Answer("the mean of y²" if is_mean_square else "something else",
                  f"L = {L.item():.4g}; (y ** 2).mean() = {(y ** 2).mean().item():.4g}",
                  "With every prediction 0, each error is -y, so the mean squared error is the mean "
                  "of y². The graph records `pred` and `L` from X, w and b as it computes them.")


LOSS_AT_ZERO = Check(
    "lesson_loss_at_zero",
    "w = 0 and b = 0, so every prediction `pred = X @ w + b` is 0. What is "
    "`L = ((pred - y) ** 2).mean()` then?",
    ("0", "the mean of y", "the mean of y²", "something else"),
    loss_at_zero)


AGAINST = "each gradient has the opposite sign of 3, -2 and 5"
ALONG = "each gradient has the same sign as 3, -2 and 5"


def gradient_signs_at_zero() -> Answer:
    X, y = regression_data()
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    L = ((X @ w + b - y) ** 2).mean()
    L.backward()                                # fills w.grad and b.grad
    grads = torch.cat([w.grad, b.grad])
    target = torch.tensor([3.0, -2.0, 5.0])
    if bool((torch.sign(grads) == -torch.sign(target)).all()):
        option = AGAINST
    elif bool((torch.sign(grads) == torch.sign(target)).all()):
        option = ALONG
    else:
        option = "the signs are mixed"
    return Answer(option, f"w.grad = {w.grad}, b.grad = {b.grad}",
                  "The gradient points uphill: increasing w1 from 0 towards 3 would lower the loss, "
                  "so dL/dw1 is negative. A step `w -= lr * w.grad` goes downhill, towards the "
                  "true weights.")


GRADIENT_SIGNS = Check(
    "lesson_gradient_signs",
    "At w = 0 and b = 0 the true weights are 3, -2 and 5. After `L.backward()`, what are the signs "
    "of `w.grad` and `b.grad`?",
    (AGAINST, ALONG, "the signs are mixed", "all zero"),
    gradient_signs_at_zero)


def one_step_lowers_the_loss() -> Answer:
    X, y = regression_data()
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr = 0.1
    L = ((X @ w + b - y) ** 2).mean()
    L.backward()
    with torch.no_grad():                       # the update is not part of the model
        w -= lr * w.grad
        b -= lr * b.grad
    after = ((X @ w + b - y) ** 2).mean()
    option = "lower" if after < L else "higher" if after > L else "the same"
    return Answer(option, f"L before = {L.item():.4g}, L after one step = {after.item():.4g}",
                  "One step of size lr against the gradient moves w and b a little towards 3, -2 "
                  "and 5, and the loss falls. Too large a learning rate would overshoot instead.")


ONE_STEP = Check(
    "lesson_one_step",
    "After one step `w -= 0.1 * w.grad`, `b -= 0.1 * b.grad` (inside `torch.no_grad()`), the loss "
    "on the same data is...",
    ("lower", "higher", "the same"),
    one_step_lowers_the_loss)


SUM_OF_BOTH = "the sum of both steps' gradients"


def second_gradient_without_zeroing() -> Answer:
    X, y = regression_data()
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr = 0.1
    grads = []
    for _ in range(2):
        L = ((X @ w + b - y) ** 2).mean()
        fresh = torch.autograd.grad(L, w, retain_graph=True)[0]   # this step's own gradient
        L.backward()                                              # adds into w.grad
        grads.append(fresh)
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        # no w.grad.zero_() / b.grad.zero_() here
    if torch.allclose(w.grad, grads[0] + grads[1]):
        option = SUM_OF_BOTH
    elif torch.allclose(w.grad, grads[1]):
        option = "the second step's gradient"
    else:
        option = "something else"
    return Answer(option, f"step 1: {grads[0]}, step 2: {grads[1]}, w.grad: {w.grad}",
                  "`backward()` adds into `.grad`. Without zeroing, the second update used the "
                  "first step's stale gradient as well as its own, so the step was too big. "
                  "`w.grad.zero_()` (or `optimizer.zero_grad()`) after each update fixes it.")


NO_ZEROING = Check(
    "lesson_no_zeroing",
    "Two training steps without `w.grad.zero_()`. After the second `L.backward()`, `w.grad` is...",
    ("the second step's gradient", SUM_OF_BOTH, "zero", "something else"),
    second_gradient_without_zeroing)


CLOSE = "close (within 0.001) but not exactly"


def weights_after_sixty_steps() -> Answer:
    X, y = regression_data()
    w = torch.zeros(2, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr = 0.1
    for _ in range(60):
        L = ((X @ w + b - y) ** 2).mean()       # forward
        L.backward()                            # backward
        with torch.no_grad():                   # step
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad.zero_()                          # zero_grad
        b.grad.zero_()
    error = (torch.cat([w, b]) - torch.tensor([3.0, -2.0, 5.0])).abs().max().item()
    if error == 0:
        option = "exactly 3, -2 and 5"
    elif error < 1e-3:
        option = CLOSE
    elif error < 0.1:
        option = "within 0.1, not within 0.001"
    else:
        option = "still more than 0.1 away"
    return Answer(option, f"w = {w.detach()}, b = {b.detach()}, largest error {error:.2g}",
                  "Each step shrinks the distance to the answer by roughly a constant factor, so "
                  "after 60 steps it is small but not zero. More steps, or a larger lr within "
                  "reason, get closer. A comment that shows 3.0, -2.0 and 5.0 after such a loop "
                  "shows the answer, not what the loop printed.")


SIXTY_STEPS = Check(
    "lesson_sixty_steps",
    "The data follow y = 3x1 - 2x2 + 5 exactly. After 60 steps with lr = 0.1, starting at zero, "
    "w and b are...",
    ("exactly 3, -2 and 5", CLOSE, "within 0.1, not within 0.001", "still more than 0.1 away"),
    weights_after_sixty_steps)


# ---------------------------------------------------------------------------- the pitfalls

def sigmoid_then_bce_floor() -> Answer:
    loss_fn = nn.BCEWithLogitsLoss()             # applies the sigmoid itself
    confident = torch.tensor([1e4, -1e4])        # a perfect model's logits: class 1, class 0
    targets = torch.tensor([1.0, 0.0])
    floor = loss_fn(torch.sigmoid(confident), targets)   # the second sigmoid squeezes to (0, 1)
    per_class = nn.BCEWithLogitsLoss(reduction="none")(torch.sigmoid(confident), targets)
    return Answer(f"about {floor.item():.2f}", f"per class {per_class}, mean {floor.item():.4f}",
                  "Even a perfect model feeds the loss sigmoid(logit), a number in (0, 1), which "
                  "the loss treats as a logit. For class 1 the best it can get is log(1 + e^-1), "
                  "as sigmoid(logit) approaches 1; for class 0 it is log 2, as sigmoid(logit) "
                  "approaches 0. With balanced classes the loss cannot fall below their mean, so "
                  "the broken run's loss levels off above it.")


SIGMOID_FLOOR = Check(
    "lesson_sigmoid_floor",
    "`loss_fn = nn.BCEWithLogitsLoss()` is fed `torch.sigmoid(logits)`. With balanced classes, "
    "what is the lowest loss even a perfect model can reach?",
    ("0", "about 0.31", "about 0.50", "about 0.69"),
    sigmoid_then_bce_floor)


def train_mode_evaluation() -> Answer:
    with torch.random.fork_rng():                # leaves the server's global random state alone
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 1))
        x = torch.randn(8, 2)
        with torch.no_grad():
            first, second = model(x), model(x)   # still in train mode: dropout is on
            model.eval()
            third, fourth = model(x), model(x)   # eval mode: dropout is off
    differ = not torch.equal(first, second)
    return Answer("different outputs each call" if differ else "the same outputs",
                  f"train mode, two calls equal: {torch.equal(first, second)}; "
                  f"eval mode, two calls equal: {torch.equal(third, fourth)}",
                  "In train mode every call draws a new dropout mask, so evaluating the same "
                  "weights twice scores two different thinned networks: the accuracy changes "
                  "from call to call (and each thinned network is usually weaker than the whole, "
                  "as the pitfall lab measures). `model.eval()` switches dropout off.")


TRAIN_MODE_EVAL = Check(
    "lesson_train_mode_eval",
    "A network with `nn.Dropout(0.5)` is called twice on the same input inside "
    "`torch.no_grad()`, but without `model.eval()`. The two outputs are...",
    ("the same outputs", "different outputs each call"),
    train_mode_evaluation)


SEEDED_SAME = "the same numbers both times, and the global state is untouched"


def seeding_with_generators() -> Answer:
    with torch.random.fork_rng():                # leaves the server's global random state alone
        torch.manual_seed(0)
        first = torch.randn(3)
        torch.manual_seed(0)
        again = torch.randn(3)                   # the global seed: the same draw again
        unseeded = torch.randn(3)                # the global stream goes on: a new draw
        state = torch.get_rng_state()
        mine = torch.randn(3, generator=torch.Generator().manual_seed(0))
        mine_again = torch.randn(3, generator=torch.Generator().manual_seed(0))
        untouched = torch.equal(state, torch.get_rng_state())
    same = torch.equal(mine, mine_again)
    option = (SEEDED_SAME if same and untouched else
              "the same numbers, but the global state moved" if same else "different numbers")
    return Answer(option, f"manual_seed(0) twice: {torch.equal(first, again)}; next unseeded draw "
                          f"equal: {torch.equal(again, unseeded)}; two Generators seeded 0 equal: "
                          f"{same}; global state untouched: {untouched}",
                  "`torch.manual_seed(0)` resets PyTorch's global streams, the CPU's and every "
                  "GPU's (it calls `torch.cuda.manual_seed_all` itself), which every `randn`, "
                  "`Dropout` and shuffling `DataLoader` draws from, so a run repeats only if "
                  "everything draws in the same order. It does not seed NumPy's or Python's "
                  "`random` generators: `np.random.seed` and `random.seed` do that. A "
                  "`torch.Generator` is a stream of its own: passed to `randn`, a `DataLoader` "
                  "or a sampler, it repeats its numbers whatever else draws. The moons trainer "
                  "gives its weights, its batches and its dropout a generator each, from the seed.")


SEEDING = Check(
    "lesson_seeding",
    "`torch.randn(3, generator=torch.Generator().manual_seed(0))`, twice, with other draws on "
    "the global generator around it. What comes out?",
    ("different numbers", "the same numbers, but the global state moved", SEEDED_SAME),
    seeding_with_generators)


BATCH_STATS = "the 4 points' own mean and variance"
RUNNING_STATS = "the running mean and variance from training"


def batchnorm_in_train_mode() -> Answer:
    with torch.random.fork_rng():                # leaves the server's global random state alone
        torch.manual_seed(0)
        train, batch = torch.randn(256, 3) * 2 + 1, torch.randn(4, 3) * 2 + 1
    norm = nn.BatchNorm1d(3)
    with torch.no_grad():
        for chunk in train.split(32):            # training fills the running statistics
            norm(chunk)
        before = norm.running_mean.clone()
        out = norm(batch)                        # still in train mode: no model.eval()
    own = (batch - batch.mean(0)) / torch.sqrt(batch.var(0, unbiased=False) + norm.eps)
    option = BATCH_STATS if torch.allclose(out, own, atol=1e-5) else RUNNING_STATS
    moved = (norm.running_mean - before).abs().max().item()
    return Answer(option, f"matches the batch's own statistics: {torch.allclose(out, own, atol=1e-5)}; "
                          f"running_mean moved by {moved:.3g}",
                  "In train mode BatchNorm normalises with the statistics of the batch in front of "
                  "it, so a point's output depends on the other points of its batch, and it "
                  "updates its running statistics as it goes: an evaluation in train mode also "
                  "changes the model. `model.eval()` makes it use the running statistics and "
                  "leave them alone.")


BATCHNORM_TRAIN_MODE = Check(
    "lesson_batchnorm_train_mode",
    "A `BatchNorm1d` layer, trained, is called on 4 new points inside `torch.no_grad()` but "
    "without `model.eval()`. What does it normalise them with?",
    (RUNNING_STATS, BATCH_STATS, "no normalisation: no_grad switches it off"),
    batchnorm_in_train_mode)


def scaler_fit_on_everything() -> Answer:
    X, _ = make_moons(n_samples=1200, noise=0.25, random_state=0)
    X_train, X_test = train_test_split(X, test_size=0.3, random_state=0)
    on_train = StandardScaler().fit(X_train)
    on_all = StandardScaler().fit(X)             # the test points take part
    same = bool(abs(on_train.mean_ - on_all.mean_).max() == 0)
    return Answer("the test points change them" if not same else "they are identical",
                  f"mean fit on train {on_train.mean_.round(4)}, on all {on_all.mean_.round(4)}",
                  "The scaler's mean and std are part of the model's preprocessing; fitting them "
                  "on all the data lets the test points shape it, so the test score is no longer "
                  "a score on unseen data. Fit on the training split, then transform the others.")


SCALER_LEAK = Check(
    "lesson_scaler_leak",
    "A StandardScaler is fit on all the points instead of the training split. Its mean and std...",
    ("they are identical", "the test points change them"),
    scaler_fit_on_everything, computed_by="scikit-learn")


def summing_loss_tensors() -> Answer:
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    x, y = torch.ones(4, 2), torch.zeros(4, 1)
    total = 0.0
    for _ in range(3):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        total += loss                            # the tensor, not loss.item()
    validation = 0.0
    for _ in range(3):                           # the same sum where nothing calls backward()
        validation += nn.functional.mse_loss(model(x), y)
    grad_fn = getattr(total, "grad_fn", None)
    kind = "a tensor with a grad_fn" if grad_fn is not None else "a Python float"
    trained = saved_tensors_held(total) if grad_fn is not None else None
    kept = saved_tensors_held(validation)
    return Answer(kind, f"type(total) = {type(total).__name__}, grad_fn = "
                        f"{type(grad_fn).__name__ if grad_fn is not None else None}",
                  summed_loss_words(trained, kept) + " `total += loss.item()` adds a plain number.")


def summed_loss_words(trained: SavedTensors | None, validation: SavedTensors) -> str:
    """What the sum keeps, from what was measured on both loops."""
    if trained is None:
        return "`total` is a number: it keeps no graph."
    freed = trained.saved - trained.held
    cost = ("so the nodes alone cost little" if trained.held == 0 else
            f"and the {trained.held} still held stay alive with `total`")
    return (f"`total += loss` adds a node to the graph each time, so `total` keeps all three "
            f"batches' graph nodes alive ({trained.nodes} nodes). Each batch called `backward()`, "
            f"which freed {freed} of the {trained.saved} tensors those nodes had saved, {cost}. "
            f"Where nothing calls `backward()`, as in a validation loop, "
            f"the same sum keeps {validation.held} of {validation.saved} saved tensors, every "
            "batch's activations, for as long as `total` lives.")


SUMMED_LOSS = Check(
    "lesson_summed_loss",
    "`total = 0.0`, then `total += loss` after each of three batches (no `.item()`). "
    "What is `total`?",
    ("a Python float", "a tensor with a grad_fn"),
    summing_loss_tensors)


def float_class_targets() -> Answer:
    logits = torch.zeros(4, 2)                   # one logit per class
    targets = torch.tensor([0.0, 1.0, 1.0, 0.0])
    try:
        nn.CrossEntropyLoss()(logits, targets)
    except RuntimeError as exc:
        return Answer("a RuntimeError about the target dtype", str(exc).splitlines()[0],
                      "With one logit per class, `CrossEntropyLoss` wants class indices as int64: "
                      "`targets.long()`. (`BCEWithLogitsLoss` is the opposite: float targets.)")
    return Answer("it works as with int64 targets", "no error")


FLOAT_TARGETS = Check(
    "lesson_float_targets",
    "`nn.CrossEntropyLoss()(logits, targets)` with logits of shape (4, 2) and float targets "
    "`tensor([0., 1., 1., 0.])`. What happens?",
    ("it works as with int64 targets", "a RuntimeError about the target dtype"),
    float_class_targets)


def softmax_then_cross_entropy_floor() -> Answer:
    loss_fn = nn.CrossEntropyLoss()             # applies log_softmax itself
    confident = torch.tensor([[1e4, -1e4],       # a perfect model's logits: class 0...
                              [-1e4, 1e4]])      # ...and class 1
    targets = torch.tensor([0, 1])
    probabilities = torch.softmax(confident, dim=1)    # the extra softmax: one-hot rows
    floor = loss_fn(probabilities, targets)            # read by the loss as logits
    per_class = nn.CrossEntropyLoss(reduction="none")(probabilities, targets)
    return Answer(f"about {floor.item():.2f}", f"per class {per_class}, mean {floor.item():.4f}",
                  "The softmax's outputs lie in (0, 1), and the loss reads them as logits: the best "
                  "a perfect model can hand it is a one-hot row, whose cross entropy is "
                  "log(1 + e^-1) with two classes, for either class. So the floor does not depend "
                  "on the class balance (unlike a sigmoid before BCEWithLogitsLoss), and the "
                  "squeezed logits also shrink the gradients. Hand `CrossEntropyLoss` the raw "
                  "logits.")


SOFTMAX_FLOOR = Check(
    "lesson_softmax_floor",
    "`loss_fn = nn.CrossEntropyLoss()` is fed `torch.softmax(logits, dim=1)` from a two-class "
    "head. What is the lowest loss even a perfect model can reach?",
    ("0", "about 0.31", "about 0.50", "about 0.69"),
    softmax_then_cross_entropy_floor)


MOVES = "PyTorch moves `xb` to the model's device and runs"
RAISES = "a RuntimeError: the tensors are on different devices"


def model_and_batch_on_two_devices() -> Answer:
    model = nn.Linear(2, 64)                    # its weight and bias are on the CPU
    if torch.cuda.is_available():
        other = torch.device("cuda")            # a real second device
    else:
        other = torch.device("meta")            # no GPU here: meta (a shape, no data) stands in
    xb = torch.zeros(32, 2, device=other)
    simulated = other.type == "meta"
    scalar = (torch.tensor(2.0) + xb).device    # a 0-dim CPU tensor may join any device
    where = ("This server has no GPU, so the batch was put on `meta` to stand in for one, and "
             "the layer refused to mix it with its CPU weights as it refuses a GPU batch. The "
             "message above is PyTorch's wording for `meta`; on a GPU machine it names `cuda:0` "
             "and `cpu` instead. " if simulated else "")
    try:
        out = model(xb)
    except RuntimeError as exc:
        return Answer(RAISES, f"model on cpu, xb on {xb.device}"
                              f"{' (standing in for a GPU)' if simulated else ''}: "
                              f"{str(exc).splitlines()[0]}",
                      "A layer does not move its input to its weights' device: the model's "
                      "first layer refuses the batch. Move both to one device, `model.to(device)` "
                      "once and `xb.to(device)` for each batch. " + where
                      + f"A 0-dim CPU tensor is the exception, joining a tensor on any device "
                        f"like a Python number: `torch.tensor(2.0) + xb` is on {scalar}.")
    if out.device == xb.device:
        return Answer("it runs on `xb`'s device", f"out.device = {out.device}")
    return Answer(MOVES, f"out.device = {out.device}")


DEVICE_MISMATCH = Check(
    "lesson_device_mismatch",
    "`model = nn.Linear(2, 64)` lives on the CPU; a batch `xb` lives on another device (a GPU, "
    "or where there is none, the `meta` device standing in for one). What does `model(xb)` do?",
    (MOVES, "it runs on `xb`'s device", RAISES),
    model_and_batch_on_two_devices)


KEEPS_GRAPH = "a graph, and the tensors its backward would need"


def validation_outside_no_grad() -> Answer:
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                          nn.Linear(32, 1))     # the moons trainer's 2 -> 64 -> 32 -> 1
    x_val = torch.zeros(100, 2)
    model.eval()                                # eval() switches dropout off, not autograd

    def forward_and_count(x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        saved: list[torch.Tensor] = []           # every tensor autograd saves for backward
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            out = model(x)
        return out, saved

    outside, saved_outside = forward_and_count(x_val)
    with torch.no_grad():
        inside, saved_inside = forward_and_count(x_val)
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved_outside}
    # The weights and x_val exist anyway; what skipping no_grad adds is the rest (activations).
    existing = {t.untyped_storage().data_ptr() for t in [*model.parameters(), x_val]}
    added = sum(nbytes for ptr, nbytes in storages.items() if ptr not in existing)
    option = KEEPS_GRAPH if saved_outside and outside.requires_grad else "nothing: `model.eval()` is enough"
    return Answer(option, f"outside no_grad: {len(saved_outside)} tensors saved "
                          f"({sum(storages.values()):,} bytes for {len(x_val)} points, of which "
                          f"{added:,} bytes are new activations; the rest are the weights and "
                          f"x_val, which exist anyway), requires_grad={outside.requires_grad}; "
                          f"inside: {len(saved_inside)} saved, requires_grad={inside.requires_grad}",
                  "`model.eval()` only changes layers such as dropout and batch norm; autograd "
                  "still records. Outside `torch.no_grad()` the forward pass keeps each layer's "
                  "input and the weights its backward would need, for a backward that never "
                  "comes, until the output is dropped. The bytes grow with the number of "
                  "validation points and the layers' widths; the outputs are the same either "
                  "way.")


NO_NO_GRAD = Check(
    "lesson_no_no_grad",
    "After `model.eval()`, a validation pass `val_logits = model(x_val)` runs outside "
    "`torch.no_grad()`. Besides the output, what does it keep in memory?",
    ("nothing: `model.eval()` is enough", KEEPS_GRAPH, "only the output tensor itself"),
    validation_outside_no_grad)


SILENT_DATA = "`.data`: no error, a wrong gradient; `no_grad`: PyTorch's in-place error"


def in_place_change_before_backward() -> Answer:
    with torch.random.fork_rng():                # leaves the server's global random state alone
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                              nn.Linear(32, 1))
        x, y = torch.randn(32, 2), torch.randint(0, 2, (32, 1)).float()
    loss_fn = nn.BCEWithLogitsLoss()
    weight = model[2].weight                     # saved by the forward pass for backward

    loss = loss_fn(model(x), y)
    true = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
    before = weight._version
    for p in model.parameters():
        p.data.mul_(0.999)                       # through .data: autograd is not told
    data_version = f"{before} -> {weight._version}"
    try:
        loss.backward()
        error = max((p.grad - g).abs().max().item() for p, g in zip(model.parameters(), true, strict=True))
        data_outcome = f"no error, largest |grad - true gradient| = {error:.3g}"
    except RuntimeError as exc:
        error, data_outcome = None, str(exc).split(":")[0]

    model.zero_grad()
    loss = loss_fn(model(x), y)
    before = weight._version
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.999)                        # the same change, seen by the version counter
    no_grad_version = f"{before} -> {weight._version}"
    try:
        loss.backward()
        refused = None
    except RuntimeError as exc:
        refused = str(exc).split(":")[0]

    if error is not None and error > 0 and refused is not None:
        option = SILENT_DATA
    elif error is None and refused is None:
        option = "`.data`: PyTorch's in-place error; `no_grad`: no error, a wrong gradient"
    elif error is None:
        option = "both raise PyTorch's in-place error"
    else:
        option = "neither: both leave the true gradient"
    return Answer(option, f".data: {data_outcome} (version {data_version}); "
                          f"no_grad: {refused or 'no error'} (version {no_grad_version})",
                  "The forward pass saved the weights its backward needs, and each tensor's "
                  "version counter records in-place changes. `.data` is an alias of the same storage that "
                  "autograd does not track: the counter stays put, and `backward()` mixes the changed "
                  "weights into the gradient of a loss computed with the old ones. Under "
                  "`torch.no_grad()` the change is still counted, so `backward()` sees a stale "
                  "saved tensor and refuses. Change parameters after `optimizer.step()`, under "
                  "`torch.no_grad()`.")


DATA_MUTATION = Check(
    "lesson_data_mutation",
    "After the forward pass and before `loss.backward()`, every parameter is scaled in place: "
    "once as `p.data.mul_(0.999)`, once as `p.mul_(0.999)` under `torch.no_grad()`. What happens?",
    ("both raise PyTorch's in-place error", SILENT_DATA,
     "`.data`: PyTorch's in-place error; `no_grad`: no error, a wrong gradient",
     "neither: both leave the true gradient"),
    in_place_change_before_backward)
