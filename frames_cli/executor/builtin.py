"""The built-in agent under test: one LLM conversation per case, catalog first, skills loaded by id.

Turn 1 shows the catalog (`executor_catalog` prompt, `first_turn`: instructions, the skills given
with every case, the listing and the reply format first, the same for every case of an evaluation
so that provider prompt caching applies to them, then the case's answer format, id and request);
the model replies `{"load": [ids]}` or answers
at once. Unknown ids are refused and the model is asked again (`executor_retry`); known ones are
shown as `<skill id=".." name="..">` blocks (`executor_answer`). The answer is
`{"answer": ..., "skills_used": [...]}` (schema EXECUTOR_STEP). Every turn is a trajectory step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from frames_cli.executor.base import AgentResult, request_text
from frames_cli.executor.catalog import Catalog
from frames_cli.llm.messages.prompts import Block, render
from frames_cli.llm.messages.schemas import EXECUTOR_STEP
from frames_cli.llm.messages.types import ChatRequest, Usage

#: Cases per event loop for each concurrent call slot: enough to keep every slot busy between
#: turns, few enough that only a small share of a large evaluation's prompts is in memory.
CHUNK_PER_SLOT = 32

if TYPE_CHECKING:
    from frames_cli.formats.case import AgentCase
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.workspace.config import ExecutorConfig


class BuiltinExecutor:
    """The built-in agent (DESIGN §5), on the model of role `executor`.

    Args:
        client: the model layer (cache, retries, ledger, audit).
        config: `executor` settings: `max_skill_loads` skills per case at most, `max_turns` turns
            spent asking for skills at most (then the case fails: "no answer").
    """

    def __init__(self, client: ModelClient, config: ExecutorConfig):
        self.client = client
        self.max_loads = config.max_skill_loads
        self.max_turns = config.max_turns

    def run(self, cases: Sequence[AgentCase], skills: SkillSet, sample: int = 0, retry: int = 0) -> list[AgentResult]:
        """Run the cases concurrently, `CHUNK_PER_SLOT` × `llm.concurrency` per event loop; results in case order.

        Chunks bound memory: a conversation holds its prompts from its first turn to its answer, so
        only the cases of one chunk are in flight at once. See `Executor` for the contract.
        """
        catalog = Catalog.of(skills)

        async def one(case: AgentCase) -> AgentResult:
            return await self._conversation(case, catalog, sample, retry)

        size = CHUNK_PER_SLOT * self.client.config.llm.concurrency
        results: list[AgentResult] = []
        for start in range(0, len(cases), size):
            results += self.client.gather(one, list(cases[start : start + size]))
        return results

    async def _conversation(self, case: AgentCase, catalog: Catalog, sample: int, retry: int) -> AgentResult:
        first = first_turn(catalog, case.id, request_text(case.input), case.answer_format or "JSON", self.max_loads)
        messages: list[dict[str, Any]] = [{"role": "user", "content": first}]
        usage = Usage()
        trajectory: list[dict[str, Any]] = []
        loaded: list[str] = []
        given = f"; given: {', '.join(catalog.ids[i] for i in catalog.given)}" if catalog.given else ""
        state = f"catalog of {len(catalog.listed)} skills{given}"
        asks = 0
        while True:
            reply = await self.client.achat(
                ChatRequest("executor", list(messages), EXECUTOR_STEP, sample=sample, tag=case.id, retry=retry)
            )
            usage.add(reply.usage)
            if not reply.ok:
                trajectory.append(_step(trajectory, state, "model call", f"failed: {reply.error}"))
                return AgentResult(case.id, None, [], usage, trajectory, error=f"model: {reply.error}", lost=reply.lost)
            data = reply.data
            if "answer" in data:
                # The given skills were read on this case whatever the model reports: attribution,
                # anchors and the cost-directed child count them as loaded (decision 0099).
                used = catalog.names([*catalog.given, *(data.get("skills_used") or [])])
                trajectory.append(_step(trajectory, state, {"answer": data["answer"], "skills_used": used}, "answered"))
                return AgentResult(case.id, data["answer"], used, usage, trajectory)
            if asks == self.max_turns:
                trajectory.append(_step(trajectory, state, {"load": data["load"]}, "refused: no turns left"))
                return AgentResult(
                    case.id, None, [], usage, trajectory,
                    error=f"no answer after {self.max_turns} turns of loading skills",
                )
            asks += 1
            follow_up, result = self._load(case, catalog, data["load"], loaded)
            trajectory.append(_step(trajectory, state, {"load": data["load"]}, result))
            state = (
                f"catalog of {len(catalog.listed)} skills{given}; "
                f"loaded: {', '.join(catalog.ids[i] for i in loaded) or 'none'}"
            )
            messages += [{"role": "assistant", "content": reply.text or ""}, {"role": "user", "content": follow_up}]

    def _load(self, case: AgentCase, catalog: Catalog, requested: list[str], loaded: list[str]) -> tuple[str, str]:
        """The next user message for a load request, and the step's result; extends `loaded`."""
        known, unknown = catalog.resolve(requested)
        if unknown:
            text = render("executor_retry", case_id=case.id, unknown=", ".join(unknown), valid=", ".join(catalog.ids))
            return text, f"refused unknown ids: {', '.join(unknown)}"
        # A given skill is in the first turn already and costs no load.
        fresh = [sid for sid in known if sid not in loaded and sid not in catalog.given]
        new = fresh[: max(self.max_loads - len(loaded), 0)]
        loaded.extend(new)
        skipped = fresh[len(new) :]
        blocks = Block("\n\n".join(catalog.block(sid) for sid in new)) or (
            f"(none: at most {self.max_loads} skills per case, all loaded)" if fresh
            else "(none: the skills you asked for are loaded already)"
        )
        result = f"loaded {', '.join(catalog.ids[s] for s in new) or 'nothing'}" + (
            f"; not loaded {', '.join(skipped)}" if skipped else ""
        )
        return render("executor_answer", case_id=case.id, skills=blocks), result


def first_turn(catalog: Catalog, case_id: str, request: str, answer_format: str, max_loads: int) -> str:
    """The first message of a case's conversation (`executor_catalog`): the skills given with every
    case (`Catalog.given_text`), the listing, the reply format, then the case's answer format
    (free text, e.g. "JSON"), id and request; the agent may ask for `max_loads` skills."""
    return render(
        "executor_catalog", case_id=case_id, given=catalog.given_text(), catalog=catalog.text(), request=request,
        answer_format=answer_format, max_loads=max_loads,
    )


def _step(trajectory: list[dict[str, Any]], state: str, action: Any, result: str) -> dict[str, Any]:
    return {"step": len(trajectory) + 1, "state": state, "action": action, "result": result}
