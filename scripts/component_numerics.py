"""Small numerics of the component fits (scripts/fit_components.py), standard library only: linear
solves, bounded Levenberg-Marquardt least squares with standard errors, leave-one-group-out scoring."""
import math


# ----------------------------------------------------------------------------------------------
# Small linear algebra (no numpy here)


def solve(a, b):
    """Solve a x = b (Gauss-Jordan with partial pivoting); a is a list of rows."""
    n = len(a)
    m = [list(a[i]) + [b[i]] for i in range(n)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-300:
            raise ZeroDivisionError("singular matrix")
        m[col], m[piv] = m[piv], m[col]
        p = m[col][col]
        m[col] = [v / p for v in m[col]]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col]
                m[r] = [vr - f * vc for vr, vc in zip(m[r], m[col])]
    return [m[i][n] for i in range(n)]


def inverse(a):
    n = len(a)
    cols = [solve(a, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def mape(pairs):
    """Mean absolute percentage error of (predicted, measured) pairs, in percent."""
    pairs = list(pairs)
    if not pairs:
        return None
    return 100.0 * sum(abs(p - m) / m for p, m in pairs) / len(pairs)


def rnd(x, digits=6):
    """Round for the JSON (significant digits), keeping the output stable and readable."""
    if x is None or isinstance(x, (int, str)) or x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def least_squares(fun, theta0, lo, hi, max_iter=60):
    """Bounded Levenberg-Marquardt on residuals fun(theta) -> (r, J) (projected steps).
    Returns theta, cost (sum r^2), J at the optimum."""
    theta = [min(max(t, l), h) for t, l, h in zip(theta0, lo, hi)]
    r, jac = fun(theta)
    cost = sum(v * v for v in r)
    lam = 1e-3
    p = len(theta)
    for _ in range(max_iter):
        jtj = [[sum(jac[i][a] * jac[i][b] for i in range(len(r))) for b in range(p)] for a in range(p)]
        jtr = [sum(jac[i][a] * r[i] for i in range(len(r))) for a in range(p)]
        improved = False
        for _ in range(12):
            m = [[jtj[a][b] * (1 + lam if a == b else 1) + (1e-30 if a == b else 0) for b in range(p)] for a in range(p)]
            try:
                step = solve(m, [-v for v in jtr])
            except ZeroDivisionError:
                lam *= 10
                continue
            cand = [min(max(t + s, l), h) for t, s, l, h in zip(theta, step, lo, hi)]
            r2, j2 = fun(cand)
            c2 = sum(v * v for v in r2)
            if c2 < cost:
                done = (cost - c2) <= 1e-9 * max(cost, 1e-30)
                theta, r, jac, cost = cand, r2, j2, c2
                lam = max(lam / 3, 1e-12)
                improved = True
                break
            lam *= 4
        if not improved or done:
            break
    return theta, cost, jac


def standard_errors(jac, cost, names, theta, lo, hi):
    """SE from the Jacobian at the optimum: sqrt(diag(s^2 (J^T J)^-1)), s^2 = RSS / (n - p), over
    the parameters not at a bound (those at a bound get None)."""
    n = len(jac)
    free = [i for i in range(len(names)) if lo[i] < theta[i] < hi[i] and not
            (abs(theta[i] - lo[i]) <= 1e-12 * max(1.0, abs(lo[i])) or abs(theta[i] - hi[i]) <= 1e-12 * max(1.0, abs(hi[i])))]
    se = [None] * len(names)
    dof = n - len(free)
    if dof <= 0 or not free:
        return se
    s2 = cost / dof
    jtj = [[sum(jac[k][a] * jac[k][b] for k in range(n)) for b in free] for a in free]
    try:
        inv = inverse(jtj)
    except ZeroDivisionError:
        return se
    for ii, i in enumerate(free):
        se[i] = math.sqrt(max(inv[ii][ii] * s2, 0.0))
    return se


def logo(rows, fit, predict, group_of=lambda r: r["group"]):
    """Leave-one-group-out: for each group, fit on the other groups' rows and predict the held-out
    rows. Returns {row id: prediction} and the folds as (group, fitted ids, scored ids); a row is
    never scored by a fit that saw it (checked here, by construction)."""
    groups = sorted({group_of(r) for r in rows}, key=str)
    preds, folds = {}, []
    for g in groups:
        train = [r for r in rows if group_of(r) != g]
        test = [r for r in rows if group_of(r) == g]
        model = fit(train)
        train_ids = {r["id"] for r in train}
        for r in test:
            assert r["id"] not in train_ids
            preds[r["id"]] = predict(model, r)
        folds.append((g, sorted(train_ids), sorted(r["id"] for r in test)))
    return preds, folds
