"""frames-sim: a litellm custom provider that models LLM behaviour (not an LLM) for offline runs.

Model strings `frames-sim/<role>` (executor, diagnoser, rewriter, generator, judge, coldstart) route
here through litellm's real completion path. Behaviour follows DESIGN §8 and the prompt conventions
in docs/ARCHITECTURE.md; answers are deterministic per `simulator.seed`.
"""
