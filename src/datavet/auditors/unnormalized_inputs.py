from __future__ import annotations

import math

from datavet.auditors.base import AuditContext, Auditor, Skip, fmt
from datavet.findings import Severity
from datavet.scan.moments import Moments

RAW_8BIT_MIN_MAX = 64  # whole numbers in 0..255 reaching at least this look like 8-bit pixels
LISTED_CHANNELS = 8  # the hint lists per-channel mean/std up to this many channels


class UnnormalizedInputs(Auditor):
    """Tensor inputs that look raw: 0..255 pixel values, or far from a normalised range.

    **What it checks**
    Tensor inputs (NumPy arrays, ``.npy``/``.npz``/``.pt`` files, torch tensors, Datasets and
    DataLoaders) of every split, over all their finite values: it fires when they are ``uint8``
    or ``uint16``, when they are whole numbers between 0 and 255 reaching at least 64 (8-bit
    pixels stored as floats), or when their mean is beyond ``max_abs_mean`` (10) in absolute
    value, or their standard deviation above ``max_std`` (10) or below ``min_std`` (0.001). The
    hint says what to divide by, and the per-channel mean and std of train to standardise with.
    The pixel tests (``uint8``/``uint16``, whole numbers up to 255) apply to images, sequences
    and other samples; ``(N, D)`` features (word counts, ages, one-hot columns) are judged by
    their mean and std alone, and the hint gives their per-feature mean and std, with nothing
    to divide by.
    Vector columns of a table (embeddings: a list or array of numbers per row, in Parquet,
    Arrow or pandas) are read the same way, one finding per column, over all their elements.
    Other table columns are left to F003.

    **Why it matters**
    Networks are initialised for inputs of about unit scale. Raw 0..255 pixels make the first
    layer's outputs hundreds of times too large: activations saturate, the initial loss is far
    from ln(C), and gradients explode or the learning rate has to be tiny. A forgotten
    ``/ 255`` (or a ``ToTensor`` left out of a pipeline) is one of the most common causes of a
    loss that starts at NaN or never moves. Inputs scaled far below 1 starve the first layer
    the same way in reverse.

    **How to fix**
    Convert to float and divide by 255 (65535 for 16-bit data); then standardise each channel
    with the train mean and std (``transforms.Normalize(mean, std)``, or
    ``(x - mean) / std`` with statistics computed on train only and applied to every split).
    Integer inputs that are token or category indices for an embedding layer are not to be
    scaled: ignore T001 for them (the hint says so for int32/int64 inputs).
    """

    code = "T001"
    name = "unnormalized-inputs"
    severity = Severity.WARNING
    summary = "tensor values look raw (0..255, large mean/std)"
    thresholds = {"max_abs_mean": 10.0, "max_std": 10.0, "min_std": 0.001}

    def check(self, ctx: AuditContext):
        vectors = any(c.vector is not None for p in ctx.splits for c in p.columns.values())
        if ctx.train.tensor is None and not vectors:
            raise Skip(
                "applies to tensor inputs (NumPy, PyTorch) and vector columns (embeddings); "
                "F003 covers other table columns"
            )
        if ctx.train.tensor is not None:
            yield from self._tensors(ctx)
        if vectors:
            yield from self._vectors(ctx)

    def _why(
        self,
        dtype: str,
        integral: bool,
        lo: float,
        hi: float,
        mean: float,
        std: float,
        pixels: bool = True,
    ):
        """Why values look raw, in words (None when they look normalised). ``pixels`` False:
        (N, D) features (counts, ages, one-hot columns), judged by their mean and std alone,
        never read as 8- or 16-bit pixels."""
        values = f"values {fmt(lo)}..{fmt(hi)}, mean {fmt(mean)}, std {fmt(std)}"
        if pixels and dtype in ("uint8", "uint16") and hi > 1:
            return f"are {dtype}, raw integers ({values})"
        if pixels and integral and lo >= 0 and RAW_8BIT_MIN_MAX <= hi <= 255:
            return f"look like raw 0..255 pixel values stored as {dtype} ({values})"
        if abs(mean) > self.options["max_abs_mean"] or std > self.options["max_std"]:
            return f"are far from a normalised range ({values})"
        if 0 < std < self.options["min_std"]:
            return f"vary very little ({values}): they look scaled down too far"
        return None

    def _tensors(self, ctx: AuditContext):
        reference = _per_channel(ctx.train)
        train_raw = False
        for profile in ctx.splits:
            if profile.tensor is None:
                continue
            chans = [c for c in profile.columns.values() if c.kind == "numeric" and c.finite.n]
            if not chans:
                continue
            whole = Moments()
            for c in chans:
                whole = whole.merge(c.finite)
            lo, hi = min(c.min for c in chans), max(c.max for c in chans)
            mean, std = whole.mean, whole.std
            dtype = profile.tensor.layout.dtype
            pixels = profile.tensor.layout.kind != "features"
            why = self._why(dtype, profile.tensor.integral, lo, hi, mean, std, pixels)
            if why is None:
                continue
            divide = _divisor(dtype, lo, hi) if pixels else None
            if profile.split == "train":
                train_raw = True
            unit = "channel" if pixels else "feature"
            hint = _split_hint(profile.split, train_raw, divide, reference, dtype, unit)
            yield self.finding(
                f"Inputs in {profile.split} {why}; networks expect inputs of about unit scale.",
                split=profile.split,
                columns=tuple(c.name for c in chans) if len(chans) <= LISTED_CHANNELS else (),
                n_affected=profile.rows,
                metrics={"mean": mean, "std": std, "min": lo, "max": hi},
                hint=hint,
            )

    def _vectors(self, ctx: AuditContext):
        """Vector columns (embeddings), each read as a tensor input of one axis."""
        train_raw: set[str] = set()
        for profile in ctx.splits:
            for col in profile.columns.values():
                vec = col.vector
                if vec is None or not col.finite.n:
                    continue
                dtype = ARROW_DTYPES.get(vec.value_type, vec.value_type)
                lo, hi, mean, std = col.min, col.max, col.mean, col.std
                why = self._why(dtype, vec.integral, lo, hi, mean, std)
                if why is None:
                    continue
                if profile.split == "train":
                    train_raw.add(col.name)
                ref = ctx.train.columns.get(col.name)
                dims = ref.vector.per_dim() if ref is not None and ref.vector is not None else None
                reference = (
                    [(f"{col.name}[{j}]", m, s) for j, (m, s) in enumerate(dims)] if dims else []
                )
                hint = _split_hint(
                    profile.split,
                    col.name in train_raw,
                    _divisor(dtype, lo, hi),
                    reference,
                    dtype,
                    unit="dimension",
                )
                yield self.finding(
                    f"Vector column {col.name!r} in {profile.split}: its elements {why}; "
                    "networks expect inputs of about unit scale.",
                    split=profile.split,
                    columns=(col.name,),
                    n_affected=col.rows - col.missing,
                    metrics={"mean": mean, "std": std, "min": lo, "max": hi},
                    hint=hint,
                )


# Arrow's names of element types, as NumPy (and the rest of this rule) calls them
ARROW_DTYPES = {"halffloat": "float16", "float": "float32", "double": "float64"}


def _split_hint(split, train_raw, divide, reference, dtype, unit="channel") -> str:
    if split == "train":
        hint = _hint(divide, reference, unit)
    elif train_raw:
        hint = f"as for train: {_hint(divide, reference, unit)}"
    else:  # train is fine: the splits were preprocessed differently
        hint = (
            f"preprocess {split} exactly as train (same scaling and "
            "normalisation, with the statistics fitted on train)"
        )
    if divide is None and _is_index_dtype(dtype):
        # int32/int64 inputs are often token or category ids fed to an embedding.
        hint += (
            "; if these are token or category indices for an embedding layer, "
            "scaling does not apply (ignore T001 for this input)"
        )
    return hint


def _is_index_dtype(dtype: str) -> bool:
    return dtype.startswith(("int", "uint")) and dtype not in ("uint8", "uint16")


def _divisor(dtype: str, lo: float, hi: float) -> int | None:
    if lo < 0:
        return None
    if dtype == "uint16" and hi > 255:
        return 65535
    if dtype == "uint8" or RAW_8BIT_MIN_MAX <= hi <= 255:
        return 255
    return None


def _per_channel(profile) -> list[tuple[str, float, float]]:
    return [
        (c.name, c.mean, c.std)
        for c in profile.columns.values()
        if c.kind == "numeric" and c.finite.n
    ]


def _hint(divide: int | None, train: list[tuple[str, float, float]], unit: str = "channel") -> str:
    first = f"convert to float and divide by {divide}, then " if divide else ""
    if not train or not all(math.isfinite(m) and math.isfinite(s) for _, m, s in train):
        return f"{first}standardise each {unit} with the train mean and std"
    if divide:
        train = [(n, m / divide, s / divide) for n, m, s in train]
    if len(train) > LISTED_CHANNELS:
        return (
            f"{first}standardise each of the {len(train)} {unit}s with its train mean and std "
            "((x - mean) / std, fitted on train, applied to every split)"
        )
    means = ", ".join(f"{m:.4g}" for _, m, _ in train)
    stds = ", ".join(f"{s:.4g}" if s > 0 else "1" for _, _, s in train)
    if unit == "feature":  # (N, D) features: no torchvision transform to name
        return (
            f"{first}standardise per feature with the train statistics: (x - mean) / std with "
            f"mean=[{means}], std=[{stds}]"
        )
    return (
        f"{first}standardise per {unit} with the train statistics: Normalize(mean=[{means}], "
        f"std=[{stds}])"
    )
