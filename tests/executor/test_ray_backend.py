"""`eval.backend: ray` (executor/ray_backend.py): the command agent's runs as Ray tasks.

Invariants:
1. On a local Ray cluster the report equals the local command agent's, result for result (crash,
   lost and retried, answers, usage, the skills shipped to the worker).
2. A Ray worker killed in the middle of a case loses only that task: Ray runs it again and the
   case gets its answer; nothing else changes.
3. Cases are cut into tasks by the cluster's CPU slots; without Ray, or with the built-in agent,
   `eval.backend: ray` is a configuration error naming frames.yaml (exit code 2).
Tests that need Ray skip when it is not installed (`pip install 'frames-cli[ray]'`).
"""

from __future__ import annotations

import builtins
import sys
from pathlib import Path

import pytest

from frames_cli.errors import ConfigError
from frames_cli.evaluation.runner import evaluate
from frames_cli.executor.command import CommandExecutor
from frames_cli.executor.ray_backend import RayCommandExecutor, ray_module
from frames_cli.formats.case import Case, Check, Source, Task
from frames_cli.formats.skill_set import SkillSet
from frames_cli.workspace.config_file import parse_config

AGENT = [sys.executable, str(Path(__file__).with_name("ray_agent.py"))]


def _case(cid: str, **fields: str) -> Case:
    expected = "yes" if int(cid.rsplit("-", 1)[1]) % 2 == 0 else "no"
    return Case(cid, cid.split("-")[0], Source("manual"), "",
                Task({"text": cid, "fields": dict(fields)}, expected, Check("exact"), "yes or no"))


SKILLS = SkillSet.from_files({f"skills/{n}/SKILL.md": f"---\nname: {n}\ndescription: Does {n}.\n---\nBody.\n".encode()
                              for n in ("alpha", "beta")})


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    # A cluster of this test's own ("local"), never one that `ray start` left running on the machine.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_ADDRESS", "local")
        ray.shutdown()
        ray_module()
        yield ray
    ray.shutdown()


def test_ray_tasks_give_the_local_report_and_survive_a_killed_worker(local_ray, tmp_path: Path) -> None:
    cases = [_case(f"ok-{i}") for i in range(12)] + [_case("crash-1"), _case("lost-2")]
    local = evaluate(cases, SKILLS, CommandExecutor(AGENT, 30, 4, tmp_path), lost_retries=1)
    on_ray = evaluate(cases, SKILLS, RayCommandExecutor(AGENT, 30, tmp_path, cpus=0.5), lost_retries=1)
    assert [r.to_dict() for r in on_ray.results] == [r.to_dict() for r in local.results]
    assert on_ray.results[0].skills_used == ["alpha", "beta"] and on_ray.results[0].passed
    assert not on_ray.results[-2].passed and on_ray.results[-1].passed  # the crash fails, the lost one is asked again

    marker = tmp_path / "killed"
    killed = [_case("kill-4", marker=str(marker)), _case("ok-7")]
    report = evaluate(killed, SKILLS, RayCommandExecutor(AGENT, 30, tmp_path), lost_retries=0)
    assert marker.exists(), "the agent did not kill its Ray worker: the test shows nothing"
    assert [(r.case_id, r.passed, r.lost, r.error) for r in report.results] == [
        ("kill-4", True, False, None),
        ("ok-7", True, False, None),
    ]


def test_cases_are_cut_into_tasks_by_the_cluster_s_slots() -> None:
    executor = RayCommandExecutor(AGENT, 30, None, cpus=0.5)
    assert executor.chunk_size(8, 4.0) == 1  # 8 slots: a task per case
    assert executor.chunk_size(256, 4.0) == 8  # 8 slots × 4 tasks each
    assert RayCommandExecutor(AGENT, 30, None, cpus=2).chunk_size(10_000, 2.0) == 2500


def test_ray_backend_is_a_configuration_error_without_ray_or_with_the_builtin_agent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="command agent") as err:
        parse_config("version: 1\neval:\n  backend: ray\n", tmp_path / "frames.yaml")
    assert err.value.location.line == 2
    config = parse_config("executor:\n  kind: command\n  command: [agent]\neval:\n  backend: ray\n  ray_cpus: 0.25\n")
    assert (config.eval.backend, config.eval.ray_cpus) == ("ray", 0.25)
    with pytest.raises(ConfigError, match="ray_cpus"):
        parse_config("executor:\n  kind: command\n  command: [agent]\neval:\n  backend: ray\n  ray_cpus: 0\n")
    real_import = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: (_ for _ in ()).throw(ImportError(name))
                        if name == "ray" else real_import(name, *a, **k))
    with pytest.raises(ConfigError, match=r"pip install 'frames-cli\[ray\]'") as err:
        ray_module(tmp_path / "frames.yaml")
    assert err.value.location.path == tmp_path / "frames.yaml"


def test_frames_eval_uses_ray_when_frames_yaml_says_so(local_ray, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from typer.testing import CliRunner

    from frames_cli.commands.app import app
    from frames_cli.executor import ray_backend

    cases = [_case(f"ok-{i}").to_dict() for i in range(6)]
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "c.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    for name, data in SKILLS.to_files().items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    agent = json.dumps([*AGENT])
    runs = []
    calls = []
    real = ray_backend.RayCommandExecutor.run
    monkeypatch.setattr(ray_backend.RayCommandExecutor, "run", lambda self, *a, **k: calls.append(len(a[0]))
                        or real(self, *a, **k))
    for backend in ("local", "ray"):
        (tmp_path / "frames.yaml").write_text(f"executor:\n  kind: command\n  command: {agent}\neval:\n  backend: "
                                              f"{backend}\n")
        done = CliRunner().invoke(app, ["eval", "--json", "--no-cache", "--repo", str(tmp_path)])
        assert done.exit_code == 0, done.output
        runs.append([(r["case_id"], r["passed"], r["output"]) for r in json.loads(done.stdout)["results"]])
    assert runs[0] == runs[1] and all(p for _, p, _ in runs[1]) and calls == [6]
