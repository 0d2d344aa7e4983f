"""What every long-lived component shares: ``start()`` / ``stop()`` and ``async with`` around them."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["AsyncLifecycle"]


class AsyncLifecycle:
    """``async with X(...) as x`` starts ``x`` and stops it on the way out; subclasses define the two."""

    async def start(self) -> Self:
        """Acquire what the component needs; return it, started."""
        raise NotImplementedError

    async def stop(self) -> None:
        """Flush and release it."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
