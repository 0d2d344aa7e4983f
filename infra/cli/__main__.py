"""``python -m schedmate.infra.cli`` (how the supervisor and benchmarks start workers)."""

from schedmate.infra.cli import main

main()
