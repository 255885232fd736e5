"""`frames eval`: evaluate a skill set on the cases, per category, with token cost; thresholds for CI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from frames_cli.commands.common import (
    STDOUT,
    JsonOption,
    NoCacheOption,
    RepoOption,
    check_output_file,
    check_stdout_users,
    guarded,
    write_output,
)
from frames_cli.workspace.config import setting_range

if TYPE_CHECKING:
    from frames_cli.evaluation.estimate import Estimate
    from frames_cli.evaluation.runner import EvalReport, Progress
    from frames_cli.formats.case import Case
    from frames_cli.formats.problems import Problem
    from frames_cli.formats.skill_set import SkillSet
    from frames_cli.workspace.config import FramesConfig
    from frames_cli.workspace.layout import Workspace

EVALS_DIR = "evals"


def load_skills(ws: Workspace, ref: str | None) -> tuple[SkillSet, list[Problem]]:
    """The skills that load in the working tree, or at git revision `ref` (read from git objects,
    no checkout), and the first error of each skill left out.

    Raises:
        InputError: there are skill files and none of them loads (path:line of each).
        GitError: `ref` names no commit.
    """
    from frames_cli.errors import InputError
    from frames_cli.formats.skill_set import SkillSet

    if ref is None:
        files, base = SkillSet.read_dir(ws.skills_dir), ws.skills_dir.parent
    else:
        from frames_cli.gitstore.store import GitStore

        files, base = GitStore(ws.root).read_files(ref, "skills/"), Path(f"{ref}:")
    skills, dropped = SkillSet.load_valid(files, base=base)
    if ref is None:
        from frames_cli.workspace.health import skill_folder_problems

        # Never read, so never offered to the agent; named, so nobody believes they were evaluated.
        dropped += skill_folder_problems(ws, base)
    if dropped and not skills:
        # Evaluating no skill at all is not what anyone asked for: say why each one failed.
        raise InputError(
            "no skill loads (`frames adopt skills` repairs what it can): "
            + "; ".join(f"{p.location}: {p.message}" for p in dropped)
        )
    return skills, dropped


def load_eval_cases(ws: Workspace, pattern: str) -> list[Case]:
    """The cases that count (reviewed) in the files matching `pattern` (relative to the workspace).

    Raises:
        InputError: no file matches, or a case file is malformed (path:line).
    """
    from frames_cli.formats.case_files import load_counted_cases

    return load_counted_cases(ws.root, pattern)


def load_set_cases(ws: Workspace, name: str) -> list[Case]:
    """The cases of one set (`diagnosis`, `selection` or `test`) as `frames evolve` would divide the
    workspace's cases now (`eval.cases`, `evolution.split`; evolution/state/splits.py).

    Raises:
        InputError: an unknown set name (the message lists the sets), or a bad case file.
    """
    from frames_cli.errors import InputError
    from frames_cli.evolution.state.splits import SETS, load_split_cases, split_cases

    if name not in SETS:
        raise InputError(f"--set must be one of {', '.join(SETS)}, got {name!r}")
    config = ws.config()
    cases, sealed = load_split_cases(ws.root, config)
    split = split_cases(
        [c for c in cases.values() if c.id not in sealed], config.evolution.split, [cases[c] for c in sealed]
    )
    return [cases[c] for c in split.ids(name)]


def check_thresholds(
    report: EvalReport, min_pass_rate: float | None, min_category_pass_rate: float | None
) -> list[str]:
    """The threshold violations, one line each (empty when all thresholds hold)."""
    problems = []
    if min_pass_rate is not None and report.pass_rate < min_pass_rate:
        problems.append(f"overall pass rate {report.pass_rate:.1%} < {min_pass_rate:.1%}")
    if min_category_pass_rate is not None:
        for category, stats in report.per_category().items():
            if stats.pass_rate < min_category_pass_rate:
                problems.append(f"category {category}: pass rate {stats.pass_rate:.1%} < {min_category_pass_rate:.1%}")
    return problems


def _cases_to_score(ws: Workspace, case_set: str | None, glob: str, glob_given: bool) -> list[Case]:
    """The cases of one set as `frames evolve` divides them (`case_set`), or those of the files `glob` matches.

    Raises:
        InputError: both a set and a glob given (`glob_given`), or the set holds no case.
    """
    from frames_cli.errors import InputError

    if case_set is not None and glob_given:
        raise InputError(
            "--set and --cases cannot be combined: --set divides the cases `frames evolve` uses (eval.cases)"
        )
    case_list = load_set_cases(ws, case_set) if case_set is not None else load_eval_cases(ws, glob)
    if not case_list:
        raise InputError(f"the {case_set} set holds no case (see evolution.split in frames.yaml)")
    return case_list


def _before_the_first_call(ws: Workspace, config: FramesConfig, spend: Estimate, rubric: bool, jobs: int) -> None:
    """A warning when the estimate exceeds the budget; the API keys the executor (and, for `rubric`
    checks, the judge) need; an earlier run's provider batches waited for, and named; `jobs` worker
    processes refused with the Ray backend."""
    from frames_cli.commands.output import err_console
    from frames_cli.errors import InputError
    from frames_cli.evaluation.estimate import budget_warning
    from frames_cli.llm.client.check import require_keys
    from frames_cli.llm.transport.batch import wait_for_batches
    from frames_cli.llm.transport.batch_models import batch_notices

    warning = budget_warning(spend, config.budget.max_tokens, config.budget.max_usd)
    if warning:
        err_console().print(warning, markup=False, soft_wrap=True)
    require_keys(
        ws, config, (["executor"] if config.executor.kind == "builtin" else []) + (["judge"] if rubric else [])
    )
    wait_for_batches(ws, config)
    for line in batch_notices(config):
        err_console().print(line, markup=False, soft_wrap=True)
    if jobs > 1 and config.eval.backend == "ray":
        raise InputError(
            "--jobs (eval.jobs) spreads cases over this machine's processes; with eval.backend: ray they already run "
            "on the Ray cluster: leave --jobs out (or set eval.backend: local)"
        )


def eval_command(
    ref: Annotated[
        str | None,
        typer.Option("--ref", help="Evaluate the skills at this git revision (default: the working tree)."),
    ] = None,
    cases: Annotated[
        str | None,
        typer.Option("--cases", help="Glob of case files, relative to the workspace (default: eval.cases)."),
    ] = None,
    case_set: Annotated[
        str | None,
        typer.Option(
            "--set",
            help="Score one set as `frames evolve` divides the cases: diagnosis, selection or test (not with --cases).",
            show_default=False,
        ),
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option(
            "--samples", min=1, max=setting_range("eval", "samples")[1],
            help="k samples per case; k > 1 adds pass@k and pass^k (default: eval.samples).",
        ),
    ] = None,
    min_pass_rate: Annotated[
        float | None,
        typer.Option("--min-pass-rate", min=0.0, max=1.0, help="Exit 100 when the overall pass rate (0..1) is lower."),
    ] = None,
    min_category_pass_rate: Annotated[
        float | None,
        typer.Option(
            "--min-category-pass-rate", min=0.0, max=1.0, help="Exit 100 when any category's pass rate (0..1) is lower."
        ),
    ] = None,
    markdown: Annotated[
        Path | None,
        typer.Option(
            "--markdown", help="Also write a Markdown summary to this file (`-`: print it instead of the table)."
        ),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            help=(
                "Also write JUnit XML (one test per case, grouped by category) to this file (`-`: print it instead of "
                "the table)."
            ),
        ),
    ] = None,
    no_cache: NoCacheOption = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", min=1, max=setting_range("eval", "jobs")[1],
            help="Worker processes to spread the cases over; each gets 1/N of the budget (default: eval.jobs).",
        ),
    ] = None,
    estimate: Annotated[
        bool,
        typer.Option(
            "--estimate",
            help="Print the calls, tokens and price the evaluation will make at most, and exit; no model call.",
        ),
    ] = False,
    repo: RepoOption = None,
    json_out: JsonOption = False,
) -> None:
    """Evaluate the skill set on the cases: pass rate per category
    and overall, mean tokens per case and the cost of the evaluation.

    Unchanged skills and cases are answered from the cache: a re-run makes no model call.
    `--set selection` (or `diagnosis`, `test`) scores only the cases of that set, divided as
    `frames evolve` divides them (`evolution.split` in frames.yaml).
    `--estimate` prints the calls, tokens and price it will make at most, without calling a model;
    a warning says so before the first call when the estimate exceeds `budget.*`.

    Cases that pass in every sample enter the regression pool with the skills they used.

    With `llm.batch` the calls go to the provider's batch API: the command exits 75 while a batch
    runs and, run again later, goes on from the answers.

    Exit codes: 0 ok, 1 run-time failure, 2 bad input, 75 waiting
    for a provider batch, 100 a --min-*pass-rate threshold failed.
    """
    from frames_cli.commands.output import progress_bar
    from frames_cli.errors import ThresholdError
    from frames_cli.evaluation import report as reports
    from frames_cli.evaluation.parallel import WorkerSetup, evaluate_parallel
    from frames_cli.evaluation.pool import RegressionPool
    from frames_cli.evaluation.runner import evaluate
    from frames_cli.evolution.state.run_ids import new_run_id
    from frames_cli.executor.factory import make_executor
    from frames_cli.llm.client.client import ModelClient
    from frames_cli.llm.transport.providers import simulator_notice
    from frames_cli.sim.world import SimWorld, policy_texts
    from frames_cli.files.atomic import atomic_write_json
    from frames_cli.workspace.layout import Workspace

    # Output paths first: a path that can never be written must not cost a whole evaluation.
    check_stdout_users({"--json": json_out, "--markdown -": markdown == STDOUT, "--junit -": junit == STDOUT})
    check_output_file(markdown, "--markdown")
    check_output_file(junit, "--junit")
    ws = Workspace.open(repo)
    config = ws.config()
    skills, dropped = load_skills(ws, ref)
    case_list = _cases_to_score(ws, case_set, cases or config.eval.cases, cases is not None)
    if dropped:
        from frames_cli.commands.output import err_console
        from frames_cli.formats.skill_set import left_out_message

        err_console().print(left_out_message(dropped, len(skills)), markup=False, soft_wrap=True)
    k = samples or config.eval.samples
    from frames_cli.evaluation.estimate import evaluation_estimate

    spend = evaluation_estimate(case_list, skills, config, k)
    if estimate:
        from frames_cli.commands.output import print_estimate

        print_estimate(spend, config, json_out)
        return
    rubric = any(c.task.check.kind == "rubric" for c in case_list)
    n_jobs = jobs or config.eval.jobs
    _before_the_first_call(ws, config, spend, rubric, n_jobs)
    run_dir = ws.state_dir / EVALS_DIR / new_run_id()
    # The simulator's world (used only by `frames-sim/` models) shares the cases loaded here.
    with ModelClient(
        ws, config, run_dir=run_dir, use_cache=not no_cache, sim_world=SimWorld.from_cases(case_list, policy_texts(ws))
    ) as client:
        executor = make_executor(ws, config, client)
        judge = client if rubric else None

        def run(progress: Progress | None) -> EvalReport:
            if n_jobs > 1:
                setup = WorkerSetup(ws, config, run_dir, use_cache=not no_cache)
                return evaluate_parallel(
                    case_list, skills, setup, jobs=n_jobs, samples=k, ledger=client.ledger, progress=progress
                )
            return evaluate(
                case_list, skills, executor, samples=k, judge=judge, progress=progress,
                lost_retries=config.eval.lost_retries,
            )

        with progress_bar(
            f"{len(case_list)} cases × {k} samples, {len(skills)} skills", len(case_list) * k, quiet=json_out,
            tokens=lambda: client.ledger.total_tokens,
        ) as progress:
            report = run(progress)
        calls = sum(r["calls"] for r in client.ledger.to_dict()["roles"].values())
    report.require_answers()
    commit = ws_commit(ws, ref)
    pool = RegressionPool.load(ws)
    pool.add(report, commit)
    pool.save()
    notice = simulator_notice(
        {
            "executor": config.models.executor if config.executor.kind == "builtin" else None,
            "judge": config.models.judge,
        }
    )
    data = {
        "simulator_notice": notice, **report.to_json(), "ref": ref, "commit": commit, "set": case_set,
        "model_calls": calls, "run_dir": str(run_dir),
        "left_out": [{"location": str(p.location), "message": p.message} for p in dropped],
    }
    atomic_write_json(run_dir / "report.json", data)
    expected = {c.id: c.task.expected for c in case_list}
    if markdown:
        write_output(markdown, reports.markdown(report, expected=expected) + (f"\n> {notice}\n" if notice else ""))
    if junit:
        write_output(junit, reports.junit_xml(report, notice=notice))
    if json_out:
        from frames_cli.commands.output import emit_json

        emit_json(data)
    elif STDOUT not in (markdown, junit):
        on_set = f", {case_set} set" if case_set else ""
        title = f"frames eval — skills at {ref or 'working tree'}{on_set}"
        _print_report(report, title, expected, f"model calls: {calls} (cached answers are free); log: "
                      f"{ws.relative(run_dir)}", notice)
    problems = check_thresholds(report, min_pass_rate, min_category_pass_rate)
    if problems:
        raise ThresholdError("threshold failed: " + "; ".join(problems))


def ws_commit(ws: Workspace, ref: str | None) -> str:
    """The commit a result belongs to: `ref` resolved, or "working-tree"."""
    if ref is None:
        return "working-tree"
    from frames_cli.gitstore.store import GitStore

    return GitStore(ws.root).resolve(ref)


def register(app: typer.Typer) -> None:
    """Add `frames eval` to `app`."""
    app.command("eval", short_help="Pass rate per category, tokens and cost of a skill set.")(guarded(eval_command))


def _print_report(report: EvalReport, title: str, expected: dict[str, Any], calls: str, notice: str | None) -> None:
    """The per-category table under `title`, the line on model calls and the log, and the simulator notice."""
    from frames_cli.commands.output import console
    from frames_cli.evaluation import report as reports

    out = console()
    out.print(reports.table(report, title=title, expected=expected))
    out.print(calls, markup=False)
    if notice:
        out.print(notice, markup=False)
