"""Printing for commands: rich consoles made on first use (so tests capture them) and JSON output.

Consoles read no markup and no emoji codes: what they print is mostly user text (file names, case
ids, verdicts, reviewer notes), and rich would turn `file:100:` into "file💯" or `[red]` into a
style. A caller that wants a style passes `markup=True` and escapes its data with
`rich.markup.escape`. Every text they print is `shown`: credentials redacted, control characters
escaped, whoever printed it.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def shown(text: str) -> str:
    """`text` as frames shows it to people: credentials redacted as in the reports it writes
    (`secretscan`), control and invisible characters as visible escapes (`sanitize.for_terminal`)."""
    from frames_cli.sanitize import for_terminal
    from frames_cli.secretscan import REDACTED, redact_secrets

    return for_terminal(redact_secrets(text, REDACTED))


def _console(**kw: Any) -> Console:
    """A rich Console whose every printed text passes through `shown`: an expected value holding a
    token, a case id holding ESC or CSI (U+009B), a category written as a YAML escape, reach the
    terminal as the reports have them. Rich's own style and cursor codes are not text and pass."""
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        def _render_buffer(self, buffer: Any) -> str:
            return super()._render_buffer(
                seg if seg.control or not seg.text else Segment(shown(seg.text), seg.style, seg.control)
                for seg in buffer
            )

    return SafeConsole(highlight=False, soft_wrap=True, markup=False, emoji=False, **kw)


def console() -> Console:
    """A rich console on the current `sys.stdout` (made per call: CliRunner swaps stdout)."""
    return _console(file=sys.stdout)


def err_console() -> Console:
    """A rich console on the current `sys.stderr`."""
    return _console(file=sys.stderr)


def print_trimmed(renderable: Any) -> None:
    """Print a rich renderable on stdout at the terminal's width without the spaces rich pads each
    line with (a Markdown paragraph is padded to the full width; copied text kept them).

    Rendered off-screen with the stdout console's width and colour system, then each line is cut
    after its last visible character; a line that carried styles ends with a style reset.
    """
    import io

    real = console()
    buffer = io.StringIO()
    _console(file=buffer, width=real.width, color_system=real.color_system, force_terminal=real.is_terminal).print(
        renderable, soft_wrap=False
    )
    lines = []
    for line in buffer.getvalue().splitlines():
        trimmed = _TRAILING.sub("", line)
        lines.append(trimmed + ("\x1b[0m" if "\x1b[" in trimmed else ""))
    sys.stdout.write("\n".join(lines) + "\n")


#: Trailing blanks and the style codes among them (SGR sequences only: rich writes no other kind).
_TRAILING = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)+$")


def emit_json(obj: Any) -> None:
    """Print `obj` as indented JSON on stdout (for `--json`); DEL, C1, bidirectional and zero-width
    characters as `\\uXXXX` escapes like the C0 controls json escapes itself, so the JSON stays
    the same data and a terminal shown it obeys nothing; credentials redacted in every string, as
    in the JSON reports frames writes (`secretscan.redact_data`)."""
    from frames_cli.sanitize import json_escape_unsafe
    from frames_cli.secretscan import find_secrets, redact_data

    text = json.dumps(obj, indent=2, ensure_ascii=False, default=str)
    if find_secrets(text):
        text = json.dumps(redact_data(json.loads(text)), indent=2, ensure_ascii=False)
    sys.stdout.write(json_escape_unsafe(text) + "\n")


@contextlib.contextmanager
def progress_bar(description: str, total: int | None, *, quiet: bool = False,
                 tokens: Callable[[], int] | None = None) -> Iterator[Callable[[int, int], None] | None]:
    """A transient progress bar on stderr while the block runs.

    Yields the callback `(done, total)` that moves it (the `evaluation.runner.Progress` shape;
    `total` None shows a bar without end until the first report), or None when `quiet` (`--json`).
    Rich draws it only on a terminal: on a pipe or a file nothing is written. No refresh thread:
    the bar is redrawn at each report, so a parent without threads can fork its `--jobs` workers
    (see evaluation.parallel). `tokens` (the ledger's total so far) is shown beside the count.
    """
    if quiet:
        yield None
        return
    from rich.progress import MofNCompleteColumn, Progress, TextColumn

    columns = [*Progress.get_default_columns(), MofNCompleteColumn(), TextColumn("{task.fields[tokens]}", markup=False)]
    with Progress(*columns, console=err_console(), transient=True, auto_refresh=False) as bar:
        task = bar.add_task(description, total=total, tokens="")

        def move(done: int, of: int) -> None:
            spent = f"{tokens():,} tokens" if tokens is not None else ""
            bar.update(task, completed=done, total=of, tokens=spent, refresh=True)

        yield move


@contextlib.contextmanager
def model_wait(description: str, *, quiet: bool = False) -> Iterator[None]:
    """A spinner with the elapsed time on stderr while model calls whose count is not known ahead
    run (ingest's generator, adopt's describer, check-models); like `progress_bar`, drawn only on
    a terminal and not with `--json` (`quiet`). The waits the calls meet (spool, retries) print
    their own lines (llm/transport/notices.py)."""
    if quiet:
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                  console=err_console(), transient=True) as bar:
        bar.add_task(description, total=None)
        yield


def print_estimate(estimate: Any, config: Any, as_json: bool) -> None:
    """Print an `evaluation.estimate.Estimate`: per role and in
    total, with the budget (`--estimate` of eval and evolve)."""
    from frames_cli.evaluation.estimate import budget_sentence, budget_warning

    warning = budget_warning(estimate, config.budget.max_tokens, config.budget.max_usd)
    if as_json:
        emit_json(
            {
                **estimate.to_json(),
                "budget": {"max_tokens": config.budget.max_tokens, "max_usd": config.budget.max_usd},
                "over_budget": warning is not None,
            }
        )
        return
    from rich import box
    from rich.table import Table

    table = Table(title="estimate (no model called)", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for name in ("role", "model", "calls", "calls at most", "tokens", "tokens at most"):
        table.add_column(name, justify="left" if name in ("role", "model") else "right")
    for role, r in estimate.roles.items():
        table.add_row(
            role, estimate.models.get(role, ""), f"{r.calls:,}", f"{r.calls_max:,}", f"{r.tokens:,}",
            f"{r.max_tokens:,}",
        )
    out = console()
    out.print(table)
    out.print(estimate.summary(), markup=False, soft_wrap=True)
    for note in estimate.notes:
        out.print(f"assumed: {note}", markup=False, soft_wrap=True)
    out.print(budget_sentence(estimate, config.budget.max_tokens, config.budget.max_usd), markup=False, soft_wrap=True)
