"""How fast two jobs run when they share the same GPUs, from their GPU utilisations when alone.

``speed_i = a + b·u_i + c·u_j + d·u_i·u_j`` (``u`` = utilisation / 100; speed 1 = alone), a
least-squares fit to the 2,776 measured co-location speeds of job pairs in Lucid's
``simulation/data/colocate_info.csv`` joined with the solo utilisations of ``single_data.csv``
(github.com/S-Lab-System-Group/Lucid, Hu et al., ASPLOS'23; S-Lab License 1.0 — the data is not
shipped, only the four fitted coefficients). Fit: RMSE 0.095, R² 0.42; two jobs at 100 % run at
0.62 each, two at 50 % at 0.92 each. The residual is drawn per pair (seeded), so some pairs do worse
than the mean model says — which is what measuring a pair's throughput (eviction) can catch.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from schedmate.connectors.sim.engine import SimJob

__all__ = ["Interference"]

_COEF: Final = (1.01676, 0.04043, -0.01465, -0.42548)
_RESIDUAL_SD: Final = 0.095


@dataclass(frozen=True)
class Interference:
    """The fitted model plus a seeded per-pair residual."""

    seed: int = 0
    residual_sd: float = _RESIDUAL_SD

    def mean_speed(self, util: float, other: float) -> float:
        """Expected speed of a job at ``util`` % next to one at ``other`` %."""
        a, b, c, d = _COEF
        u, v = util / 100.0, other / 100.0
        return a + b * u + c * v + d * u * v

    def speeds(self, job: SimJob, other: SimJob) -> tuple[float, float]:
        """True speeds of ``job`` and ``other`` packed together (their real utilisations, the pair's residual)."""
        u, v = float(job.info.get("util_true", 50.0)), float(other.info.get("util_true", 50.0))
        rng = random.Random(f"{self.seed}:{min(job.idx, other.idx)}:{max(job.idx, other.idx)}")
        s1 = self.mean_speed(u, v) + rng.gauss(0.0, self.residual_sd)
        s2 = self.mean_speed(v, u) + rng.gauss(0.0, self.residual_sd)
        return min(1.0, max(0.2, s1)), min(1.0, max(0.2, s2))
