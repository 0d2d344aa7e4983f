"""A GPU cluster of identical nodes: which GPUs are free, and consolidated placement.

A job of at most one node's GPUs goes on one node (best fit: the fullest node it fits on); a larger
job takes whole free nodes. Every allocation is checked: a node never gives more GPUs than it has.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Allocation", "Cluster"]


@dataclass(eq=False, slots=True)
class Allocation:
    """GPUs held on nodes: ``[(node, gpus), ...]``; ``jobs`` are the jobs running on them (two when packed)."""

    parts: list[tuple[int, int]]
    gpus: int
    jobs: list[int] = field(default_factory=list)
    owner: Cluster | None = None  # the cluster the GPUs belong to


class Cluster:
    """``nodes`` x ``gpus_per_node`` GPUs."""

    def __init__(self, nodes: int, gpus_per_node: int) -> None:
        if nodes < 1 or gpus_per_node < 1:
            raise ValueError("a cluster needs at least one node with at least one GPU")
        self.nodes = nodes
        self.per_node = gpus_per_node
        self.capacity = nodes * gpus_per_node
        self.used = 0
        self._free = [gpus_per_node] * nodes
        self._by_free: list[set[int]] = [set() for _ in range(gpus_per_node + 1)]
        self._by_free[gpus_per_node] = set(range(nodes))
        self.drained: set[int] = set()  # out of scheduling (a diagnosed fault): never offered to a new job

    def placeable(self, gpus: int) -> bool:
        """Whether an empty cluster could run a job of ``gpus`` GPUs at all."""
        return gpus > 0 and -(-gpus // self.per_node) <= self.nodes

    def fits(self, gpus: int) -> bool:
        """Whether a job of ``gpus`` GPUs can be placed now."""
        g = self.per_node
        if gpus <= g:
            return any(self._by_free[k] for k in range(gpus, g + 1))
        return len(self._by_free[g]) >= -(-gpus // g)

    def _take(self, node: int, n: int) -> None:
        before = self._free[node]
        if n > before or node in self.drained:
            raise AssertionError(f"node {node} has {before} free GPUs (drained: {node in self.drained}), {n} asked")
        self._by_free[before].discard(node)
        self._free[node] = before - n
        self._by_free[before - n].add(node)

    def allocate(self, gpus: int) -> Allocation:
        """Place a job (call :meth:`fits` first)."""
        g = self.per_node
        parts: list[tuple[int, int]] = []
        if gpus <= g:
            level = next(k for k in range(gpus, g + 1) if self._by_free[k])
            node = min(self._by_free[level])  # deterministic
            parts.append((node, gpus))
        else:
            whole = sorted(self._by_free[g])[: -(-gpus // g)]
            left = gpus
            for node in whole:
                parts.append((node, min(g, left)))
                left -= min(g, left)
        for node, n in parts:
            self._take(node, n)
        self.used += gpus
        if self.used > self.capacity:
            raise AssertionError("more GPUs allocated than the cluster has")
        return Allocation(parts, gpus, owner=self)

    def release(self, alloc: Allocation) -> None:
        """Give an allocation's GPUs back."""
        for node, n in alloc.parts:
            before = self._free[node]
            if before + n > self.per_node:
                raise AssertionError(f"node {node} released more GPUs than it has")
            self._by_free[before].discard(node)
            self._free[node] = before + n
            if node not in self.drained:
                self._by_free[before + n].add(node)
        self.used -= alloc.gpus
        alloc.parts = []

    def drain(self, node: int) -> None:
        """Take ``node`` out of scheduling (jobs on it keep their GPUs until they leave)."""
        if node not in self.drained:
            self.drained.add(node)
            self._by_free[self._free[node]].discard(node)

    def resume(self, node: int) -> None:
        """Put a drained node back into scheduling."""
        if node in self.drained:
            self.drained.discard(node)
            self._by_free[self._free[node]].add(node)

    def idle_nodes(self) -> int:
        """Nodes with every GPU free (drained nodes excluded)."""
        return len(self._by_free[self.per_node])

    def free_on(self, node: int) -> int:
        """Free GPUs of ``node`` a new job could get (none on a drained node)."""
        return 0 if node in self.drained else self._free[node]

    def free_gpus(self) -> int:
        """GPUs a new job could get now (drained nodes excluded)."""
        return self.capacity - self.used - sum(self._free[n] for n in self.drained)
