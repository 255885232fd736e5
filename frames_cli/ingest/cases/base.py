"""The Converter protocol: one kind of operational feedback in, cases out (`frames ingest KIND`)."""

from __future__ import annotations

from typing import Protocol

from frames_cli.formats.case import Case


class Converter(Protocol):
    """Turns one source (benchmark tasks, a review log, traces, ...) into cases.

    Contract:
        - The source's location and options are given to the constructor; `convert` reads them.
        - Output is deterministic for the same input (same ids, order and content), so re-ingesting
          an unchanged source changes nothing in `cases/`.
        - Case ids are unique within one conversion and stable: the same source item gives the same id.
        - Whatever decides a case (reference answers, reviewer notes, rule text) goes into
          `Case.task.expected` or `Case.diagnosis`, never into `Case.task.input`.
        - A bad source raises `InputError` naming the file and line; nothing is written then.

    Attributes:
        kind: the converter's registry name (`registry.CONVERTERS`), also `Case.source.kind`.
    """

    kind: str

    def convert(self) -> list[Case]:
        """Read the source and return its cases, in source order.

        Raises:
            InputError: the source is unreadable or malformed (`path:line: message`).
        """
        ...
