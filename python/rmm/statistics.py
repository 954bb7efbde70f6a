"""Allocation statistics (partial: the ``Statistics`` record; the rest of RMM's
``rmm.statistics`` comes later, see python/NOTES.md)."""

from dataclasses import dataclass


@dataclass
class Statistics:
    """Counters of a ``StatisticsResourceAdaptor``: bytes and allocations, each current,
    peak and total."""

    current_bytes: int
    current_count: int
    peak_bytes: int
    peak_count: int
    total_bytes: int
    total_count: int
