"""An independent computation of loadlab's change points (common/include/
loadlab/change_points.h, docs/series.md "Change points"), in plain Python:
E-Divisive means over the logs, each split tested with Student's t, in
Otava's overlapping windows, then confirmed between neighbours. Student's
t tail is integrated numerically here (Simpson's rule over the density),
not with the continued fraction the C code uses, so the two agree only if
both are right."""
import math


def t_p_value(t, df):
    """P(|T| >= |t|) for Student's t with DF degrees of freedom: twice the
    tail integral, with x = |t| / u so that it runs over u in (0, 1]."""
    t = abs(t)
    if t == 0:
        return 1.0
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def density(x):
        return c * math.exp(-(df + 1) / 2 * math.log1p(x * x / df))

    def integrand(u):
        if u == 0:
            # x -> infinity: density ~ c df^((df+1)/2) x^-(df+1); times t/u^2
            return c * df ** ((df + 1) / 2) * t ** (-df) if df == 1 else 0.0
        x = t / u
        return density(x) * t / (u * u)

    steps = 4000
    h = 1.0 / steps
    s = integrand(0) + integrand(1)
    for i in range(1, steps):
        s += (4 if i % 2 else 2) * integrand(i * h)
    return min(1.0, 2 * s * h / 3)


def t_quantile(p, df):
    lo, hi = 0.0, 1.0
    while t_p_value(hi, df) > p:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if t_p_value(mid, df) > p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def compare(logs, start, index, end, with_ci=False):
    left, right = logs[start:index], logs[index:end]
    ml, mr = sum(left) / len(left), sum(right) / len(right)
    ss = sum((x - ml) ** 2 for x in left) + sum((x - mr) ** 2 for x in right)
    df = len(left) + len(right) - 2
    d = mr - ml
    out = {"index": index, "n_before": len(left), "n_after": len(right), "magnitude": math.expm1(d)}
    if df < 1:
        out["p_value"] = 1.0
        return out
    se = math.sqrt(ss / df * (1 / len(left) + 1 / len(right)))
    if se == 0:
        out["p_value"] = 1.0 if d == 0 else 0.0
        out["ci"] = (out["magnitude"], out["magnitude"])
        return out
    out["p_value"] = t_p_value(d / se, df)
    if with_ci:
        half = t_quantile(0.05, df) * se
        out["ci"] = (math.expm1(d - half), math.expm1(d + half))
    return out


def q_hat(logs, a, tau, b):
    """E-Divisive's divergence of the split at TAU of LOGS[A:B], summed
    pair by pair as the textbook writes it."""
    x, y = logs[a:tau], logs[tau:b]
    n1, n2 = len(x), len(y)
    cross = sum(abs(u - v) for u in x for v in y)
    within_x = sum(abs(x[i] - x[j]) for i in range(n1) for j in range(i + 1, n1))
    within_y = sum(abs(y[i] - y[j]) for i in range(n2) for j in range(i + 1, n2))
    return n1 * n2 / (n1 + n2) * (2 * cross / (n1 * n2) - 2 * within_x / (n1 * (n1 - 1))
                                  - 2 * within_y / (n2 * (n2 - 1)))


def divisive(logs, start, end, p_value):
    bounds = [start, end]
    found = []
    while True:
        best = None
        for a, b in zip(bounds, bounds[1:]):
            for tau in range(a + 2, b - 1):
                q = q_hat(logs, a, tau, b)
                if best is None or q > best[0]:
                    best = (q, tau, a, b)
        if best is None:
            return found
        _, tau, a, b = best
        if compare(logs, a, tau, b)["p_value"] > p_value:
            return found
        bounds = sorted(bounds + [tau])
        found.append(tau)


def change_points(values, window=50, max_p_value=0.001, min_magnitude=0.01):
    """The change points of VALUES (positive figures in job order) as dicts
    with index, n_before, n_after, magnitude, ci and p_value."""
    logs = [math.log(v) for v in values]
    n = len(logs)
    if n < 4:
        return []
    first_p = max_p_value * 10 if max_p_value < 0.05 else max_p_value * 2 if max_p_value < 0.5 else max_p_value
    start, step, found = 0, window // 2, []
    while start < n:
        new = sorted(divisive(logs, start, min(start + window, n), first_p))
        start = max(new[-1] if new else 0, start + step)
        found += new
    found = sorted(set(found))
    while True:
        stats = []
        for i, idx in enumerate(found):
            s = found[i - 1] if i else 0
            e = found[i + 1] if i + 1 < len(found) else n
            stats.append(compare(logs, s, idx, e))
        failing = [c for c in stats if c["p_value"] > max_p_value or abs(c["magnitude"]) < min_magnitude]
        if not failing:
            break
        weakest = max(failing, key=lambda c: (c["p_value"], -abs(c["magnitude"])))
        found.remove(weakest["index"])
    return [compare(logs, found[i - 1] if i else 0, idx, found[i + 1] if i + 1 < len(found) else n, True)
            for i, idx in enumerate(found)]
