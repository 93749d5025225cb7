"""One pass over the data into a mergeable :class:`Profile` per split."""

from datavet.scan.columns import ColumnStats
from datavet.scan.counters import ValueCounter
from datavet.scan.hashing import RowHashes
from datavet.scan.labels import LabelStats, PositionBins
from datavet.scan.moments import Moments
from datavet.scan.profile import Profile, ScanPlan
from datavet.scan.reservoir import Reservoir

__all__ = [
    "ColumnStats",
    "LabelStats",
    "Moments",
    "PositionBins",
    "Profile",
    "Reservoir",
    "RowHashes",
    "ScanPlan",
    "ValueCounter",
]
