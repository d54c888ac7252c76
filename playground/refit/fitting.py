"""Fitting the meters' constants on billed counts, and testing the fit honestly.

A meter's count is linear in its fitted constants: ``count = fixed + Σ constant × feature``,
where the features are what a request holds (tokens of tool definitions, number of images…) and
``fixed`` is everything published (or not fitted). So the constants can be refitted from the
recorded cases at any time, and each case can be predicted by constants fitted WITHOUT it
(leave-one-out), which is the error a new request should expect. Pure Python: a few dozen
features and a few hundred cases need no numerical library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RIDGE = 1e-4  # a touch of ridge toward 0, relative to each feature's own scale: the fit is unique (so it
# does not depend on the shipped values it starts from) without pulling any constant noticeably
ROUNDS = 60  # iteratively reweighted least squares rounds (L1 by IRLS)


@dataclass(frozen=True)
class Sample:
    """One recorded request: what the meter counts with no fitted part (``fixed``), its
    features, and what the provider billed."""

    fixed: float
    features: Mapping[str, float]
    billed: float


def predict(sample: Sample, constants: Mapping[str, float]) -> float:
    return sample.fixed + sum(constants.get(name, 0.0) * value for name, value in sample.features.items())


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting on a small dense system."""
    size = len(vector)
    rows = [[*row, value] for row, value in zip(matrix, vector, strict=True)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        lead = rows[column][column]
        if abs(lead) < 1e-12:
            continue
        for r in range(size):
            if r != column and rows[r][column]:
                factor = rows[r][column] / lead
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[column], strict=True)]
    return [rows[i][size] / rows[i][i] if abs(rows[i][i]) > 1e-12 else 0.0 for i in range(size)]


def fit_constants(samples: Sequence[Sample], prior: Mapping[str, float], *, relative: bool = True) -> dict[str, float]:
    """Constants (the names in ``prior``, its values only where the fit starts) minimising the
    summed absolute error — relative to the billed count when ``relative`` (Anthropic, Responses:
    the targets are percentages), in tokens otherwise (Chat: the target is "within 2 tokens")."""
    names = list(prior)
    index = {name: i for i, name in enumerate(names)}
    rows = [[(index[name], value) for name, value in s.features.items() if value and name in index] for s in samples]
    targets = [s.billed - s.fixed for s in samples]
    weights = [1.0 / (s.billed if relative else 1.0) for s in samples]
    constants = dict(prior)
    for _ in range(ROUNDS):
        matrix = [[0.0] * len(names) for _ in names]
        vector = [0.0] * len(names)
        for row, target, weight in zip(rows, targets, weights, strict=True):
            for i, a in row:
                vector[i] += weight * a * target
                line = matrix[i]
                for j, b in row:
                    line[j] += weight * a * b
        for i in range(len(names)):
            matrix[i][i] = matrix[i][i] * (1 + RIDGE) + 1e-12
        previous, constants = constants, dict(zip(names, _solve(matrix, vector), strict=True))
        if all(abs(constants[name] - previous[name]) < 1e-6 for name in names):
            break
        weights = []
        for sample, row, target in zip(samples, rows, targets, strict=True):
            error = abs(sum(constants[names[i]] * a for i, a in row) - target)
            norm = sample.billed if relative else 1.0
            weights.append(1.0 / (norm * max(error, (1e-3 if relative else 0.5) * norm)))
    return constants


def leave_one_out(samples: Sequence[Sample], prior: Mapping[str, float], *, relative: bool = True,
                  integers: bool = False) -> list[float]:
    """Each sample's prediction by constants fitted on all the others."""
    predictions = []
    for index, sample in enumerate(samples):
        constants = fit_constants([s for i, s in enumerate(samples) if i != index], prior, relative=relative)
        if integers:
            constants = {name: float(round(value)) for name, value in constants.items()}
        predictions.append(predict(sample, constants))
    return predictions
