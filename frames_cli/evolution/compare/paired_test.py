"""The exact one-sided test behind the noise-aware gate: S0 and a child compared case by case on k samples each.

Each case is a stratum with S0's passes a of k samples and the child's b of k. Under the null
hypothesis "the child is no worse than S0 on this case" at its extreme, equality, the 2k results of
a case are exchangeable, so given their total t = a + b, S0's share A is hypergeometric:
P(A = x) = C(t, x)·C(2k − t, k − x) / C(2k, k). The cases of a category are independent, so the
statistic ΣA has the convolution of those laws, and the one-sided p-value is P(ΣA ≥ Σa).

This is the exact conditional test of a common effect over strata of 2×2 tables (the exact form
of the Cochran–Mantel–Haenszel test; Mehta, Patel & Gray, JASA 80 (1985) 969–973). With k = 1 it is
McNemar's exact test: only discordant cases (t = 1) vary, each a fair coin.

The p-value only grows when a child's pass count grows (more child passes raise t, and a larger t
makes A stochastically larger), which early rejection relies on (evolution/compare/early.py).

`broken_case_p_value` is the second test of the noise-aware gate: one case alone, unconditional.
It asks how likely S0 beats the child by d = a − b samples on one case if both pass it with the
same unknown probability p. The difference of two independent Binomial(k, p) is a sum of k
independent steps in {−1, 0, +1} with P(±1) = p(1 − p) ≤ ¼; those step laws are log-concave, so
every sum of them is symmetric and unimodal, and P(sum ≥ d) for d ≥ 1 grows with each step's
P(±1) (adding one step changes it by P(±1)·[P(rest = d − 1) − P(rest = d)] ≥ 0). The worst case
over p is therefore p = ½, where a − b + k is Binomial(2k, ½): p-value = P(Binomial(2k, ½) ≥ k + d),
valid whatever p is (Barnard's unconditional approach, Biometrika 34 (1947) 123–138; the
log-concavity of convolutions: Hoggar, J. Combin. Theory B 16 (1974) 248–254). Unlike the
conditional test it does not let a gain on another case of the category offset a case that broke.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def _stratum_law(t: int, k: int) -> tuple[int, list[float]]:
    """(lowest value of A, P(A = lowest + j) for j = 0, 1, ...) for a case with t passes in all of 2k."""
    low, high = max(0, t - k), min(k, t)
    total = math.comb(2 * k, k)
    return low, [math.comb(t, x) * math.comb(2 * k - t, k - x) / total for x in range(low, high + 1)]


def upper_p_value(strata: Iterable[tuple[int, int]], k: int) -> float:
    """P(ΣA ≥ Σa) under the null, for `strata` of (a, b): S0's and the child's passes of k samples.

    Cases that both passed or both failed in every sample (t = 0 or 2k) carry no information and
    are skipped. Cost: about (varying cases)² · k² / 2 multiply-adds (k = 1 takes a binomial
    shortcut).

    Raises:
        ValueError: k < 1, or a count outside 0..k.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    observed, laws = 0, []
    for a, b in strata:
        if not (0 <= a <= k and 0 <= b <= k):
            raise ValueError(f"passes ({a}, {b}) outside 0..{k}")
        if 0 < a + b < 2 * k:
            laws.append((a, a + b))
    if not laws:
        return 1.0
    if k == 1:
        # Only discordant cases remain: a sign test, P(Binomial(n, ½) ≥ losses).
        n, losses = len(laws), sum(a for a, _ in laws)
        return min(1.0, sum(math.comb(n, x) for x in range(losses, n + 1)) / 2**n)
    offset, dist = 0, [1.0]
    for a, t in laws:
        observed += a
        low, law = _stratum_law(t, k)
        offset += low
        dist = _convolved(dist, law)
    return min(1.0, sum(dist[max(0, observed - offset) :]))


def _convolved(dist: list[float], law: list[float]) -> list[float]:
    """The law of X + Y for independent X and Y with laws `dist` and `law` (P(0), P(1), ...)."""
    merged = [0.0] * (len(dist) + len(law) - 1)
    for i, p in enumerate(dist):
        if p:
            for j, q in enumerate(law):
                merged[i + j] += p * q
    return merged


def cases_needed(k: int, threshold: float) -> int:
    """The fewest cases at which the test can reach `threshold` at all: n with C(2k, k)^−n ≤ threshold.

    That most extreme outcome is S0 passing every sample of every case and the child none.

    Raises:
        ValueError: k < 1 or threshold outside (0, 1].
    """
    if k < 1 or not 0 < threshold <= 1:
        raise ValueError("k must be at least 1 and the threshold in (0, 1]")
    return max(1, math.ceil(math.log(1 / threshold) / math.log(math.comb(2 * k, k)) - 1e-12))


def broken_case_p_value(a: int, b: int, k: int) -> float:
    """P(Binomial(2k, ½) ≥ k + a − b): the largest chance, over every pass probability both share,
    that S0 passes one case at least a − b samples more often than the child (see the module docstring).

    1.0 when the child passed the case at least as often as S0. Grows when b grows, so the gate
    stays monotone in the child's passes.

    Raises:
        ValueError: k < 1, or a count outside 0..k.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if not (0 <= a <= k and 0 <= b <= k):
        raise ValueError(f"passes ({a}, {b}) outside 0..{k}")
    d = a - b
    if d <= 0:
        return 1.0
    return sum(math.comb(2 * k, x) for x in range(k + d, 2 * k + 1)) / 4**k


def smallest_broken_case_p(k: int) -> float:
    """The smallest value `broken_case_p_value` can take at k samples: 4^−k (S0 passed all k, the child none)."""
    return broken_case_p_value(k, 0, k)



def broken_cases_p_value(strata: Iterable[tuple[int, int]], k: int, broken: int) -> float:
    """The p-value of "`broken` of these cases are ones S0 passes at least half the time and the
    child fails every time", for `strata` of (a, b): S0's passes of k samples per case and the
    child's passes (of any number of samples: only b = 0 matters).

    Small means the data rule that regression out. A case the child passed in some sample cannot
    be one the child fails every time, so only the cases with b = 0 are candidates; when fewer
    than `broken` are left the alternative is impossible (0.0). Otherwise the alternative is the
    union, over sets B of `broken` candidates, of "S0 passes each case of B with probability
    ≥ ½"; there S0's passes on B are at least Binomial(|B|·k, ½) in the stochastic order, so
    P(Binomial(|B|·k, ½) ≤ Σ_B a) bounds the chance of so few. Rejecting every set's alternative at
    level β rejects the union at level β (an intersection–union test: Berger, Technometrics 24
    (1982) 295–300), and the set of candidates S0 passed most is the hardest: its bound is returned.
    S0's and the child's samples are independent, so the child's side may have fewer samples.

    1.0 when `broken` < 1. Never grows when the child passes more (fewer candidates), so early
    acceptance only gets easier for a better child.

    Raises:
        ValueError: k < 1, or a count outside 0..k.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    candidates = []
    for a, b in strata:
        if not (0 <= a <= k and 0 <= b <= k):
            raise ValueError(f"passes ({a}, {b}) outside 0..{k}")
        if b == 0:
            candidates.append(a)
    if broken < 1:
        return 1.0
    if len(candidates) < broken:
        return 0.0
    n, most = broken * k, sum(sorted(candidates, reverse=True)[:broken])
    return min(1.0, sum(math.comb(n, x) for x in range(most + 1)) / 2**n)
