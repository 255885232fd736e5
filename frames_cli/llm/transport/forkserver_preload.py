"""Imported by the fork server that CallPool workers are forked from: litellm set up once, heap frozen.

Also: the fork server ignores SIGINT and SIGTERM from the start, and imports nothing from the
current directory.

Set up here, before any worker exists, litellm's objects and tokenizer sit in pages every worker
shares; the collection and freeze that `litellm_module` ends with touch every object once, and
done in each worker instead they would copy most of those pages into it.

The fork server runs as `python -c`, which puts the current directory first on `sys.path`
(Python 3.11 does not apply the client's path there), so a workspace file named like one of
litellm's dependencies (`httpx.py`) would shadow it in the workers only. That entry goes first.
"""

import signal
import sys

# The fork server shares the terminal's (or service's) process group, and importing litellm
# takes seconds: a Ctrl-C or SIGTERM meant for frames must not kill it meanwhile (frames stops
# after its current step and needs the workers for it). It ends when the client does.
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)

if sys.path and sys.path[0] == "":
    del sys.path[0]

from frames_cli.llm.transport.providers import litellm_module  # noqa: E402

litellm_module()
