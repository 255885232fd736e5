"""pass@k and pass^k: unbiased estimators from n samples per case, in numerically stable product form."""

from __future__ import annotations

from collections.abc import Iterable


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n) or k < 1 or n < k:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k samples drawn without replacement from n passes), given c passed.

    Source: Chen et al. 2021, "Evaluating Large Language Models Trained on Code" (arXiv 2107.03374),
    the unbiased estimator 1 − C(n−c, k)/C(n, k), computed as 1 − ∏_{i=n−c+1}^{n} (1 − k/i), which
    avoids the huge binomials.

    Raises:
        ValueError: unless 0 <= c <= n and 1 <= k <= n.
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def pass_hat_k(n: int, c: int, k: int) -> float:
    """P(all k samples drawn without replacement from n pass), given c passed (pass^k).

    Source: Yao et al. 2024, "τ-bench: A Benchmark for Tool-Agent-User Interaction in Real-World
    Domains" (arXiv 2406.12045), C(c, k)/C(n, k), computed as ∏_{j=0}^{k−1} (c−j)/(n−j).

    Raises:
        ValueError: unless 0 <= c <= n and 1 <= k <= n.
    """
    _check(n, c, k)
    if c < k:
        return 0.0
    product = 1.0
    for j in range(k):
        product *= (c - j) / (n - j)
    return product


def mean_over_cases(counts: Iterable[tuple[int, int]], k: int, estimator=pass_at_k) -> float | None:
    """Mean of `estimator(n, c, k)` over cases given as (n samples, c passed); None for no cases."""
    values = [estimator(n, c, k) for n, c in counts]
    return sum(values) / len(values) if values else None
