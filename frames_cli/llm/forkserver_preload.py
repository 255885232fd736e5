"""Imported by the fork server that CallPool workers are forked from: litellm set up once, heap frozen.

Set up here, before any worker exists, litellm's objects and tokenizer sit in pages every worker
shares; the collection and freeze that `litellm_module` ends with touch every object once, and
done in each worker instead they would copy most of those pages into it.
"""

from frames_cli.llm.providers import litellm_module

litellm_module()
