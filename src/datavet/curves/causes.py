"""The usual causes behind a curve symptom, easiest to check first, with the check that
tests each one.

The chapter groups the causes of its symptom table into eight families and lists them in this
order, easiest to check first: data and label errors, missing normalisation, the learning rate,
initialisation, masks, eval mode, loss aggregation, training-loop order. Every curve rule names
the families that fit its symptom, in this order, with what to look for in that case; the report
prints each with the datavet check that tests it: ``datavet audit`` for the data, ``datavet
probe`` for the wiring of model, loss and update.
"""

from __future__ import annotations

from dataclasses import dataclass

ORDER = (
    "data",
    "normalisation",
    "learning_rate",
    "initialisation",
    "mask",
    "eval_mode",
    "aggregation",
    "loop_order",
    "regularisation",  # not in the chapter's list: dropout/augmentation, capacity, early stopping
)


@dataclass(frozen=True)
class Cause:
    key: str
    title: str
    check: str  # the datavet command (or, where datavet has none, the hand check the source gives)


CAUSES: dict[str, Cause] = {
    c.key: c
    for c in (
        Cause(
            "data",
            "data or label errors",
            "datavet audit TRAIN --test TEST --target LABEL",
        ),
        Cause(
            "normalisation",
            "missing normalisation",
            "datavet audit (F003 scale-mismatch, T001 unnormalized-inputs) and datavet probe "
            "(M001 initial loss)",
        ),
        Cause(
            "learning_rate",
            "learning rate",
            "a short rerun with the learning rate 10x lower (or higher), then datavet curves "
            "on its log; record it with datavet journal (one change, prediction first)",
        ),
        Cause(
            "initialisation",
            "initialisation",
            "datavet probe (M006 saturated-activations, M007 vanishing-activations)",
        ),
        Cause(
            "mask",
            "masks",
            "datavet probe (M013 future-leakage: a missing or off-by-one causal mask; M014 "
            "padding-in-loss with padding_mask= or pad_id=: padding counted in the loss or "
            "reaching real positions)",
        ),
        Cause(
            "eval_mode",
            "eval mode",
            "datavet probe (M008 eval-nondeterminism: the same input twice in eval mode must "
            "give the same output)",
        ),
        Cause(
            "aggregation",
            "loss aggregation",
            "datavet probe (M009 batch-size-dependent-loss: the loss must not change when only "
            "the batch size does)",
        ),
        Cause(
            "loop_order",
            "training-loop order",
            "datavet probe (M010 stale-gradients, M002 cannot-overfit-batch)",
        ),
        Cause(
            "regularisation",
            "capacity and regularisation",
            "by hand: evaluate the training set in eval mode (no dropout, no augmentation) and "
            "compare with the validation loss",
        ),
    )
}


def check_order(causes: tuple[tuple[str, str], ...]) -> None:
    """Raise if a rule lists its causes out of the chapter's order (a meta-test calls this)."""
    keys = [k for k, _ in causes]
    positions = [ORDER.index(k) for k in keys]
    if positions != sorted(positions) or len(set(keys)) != len(keys):
        raise ValueError(f"causes out of the source order: {keys}")


def describe(causes: tuple[tuple[str, str], ...]) -> list[dict]:
    """The report's list for one rule: title, what to look for here, the check."""
    return [
        {"key": k, "cause": CAUSES[k].title, "look_for": why, "check": CAUSES[k].check}
        for k, why in causes
    ]
