"""A series' alerts agree with compare (issue 39, docs/statistics.md "The
one judge"): real result documents posted to a real daemon as an enrolled
agent, each with its empty program timed in the same passes.

- 12 jobs whose variant and floor both move by 12 % from one job to the
  next (a busier machine, then a quieter one): no alert, neither while the
  series is young (fewer than 10 points: compare's judge, which used to be
  the median and called every +12 % job a regression) nor from change
  points after.
- 12 jobs whose variant alone is 12 % slower from the 11th on: one alert,
  at that job, naming the metric and interval that judged it; its compare
  link (GET /api/v1/compare of its baseline_id and job_id, the default
  metric) says regression on the same figures, and so does `loadlab
  compare` (exit 1, the interval shown).
- 4 jobs whose variant alone is 12 % slower at the 4th: the young series'
  alert, the same agreement."""
import random
import subprocess

from harness import LOADLAB, Daemon, run_tests, wait_for
from schemacheck import validate
from series_helpers import FACTS, open_alert

JOB = {"name": "judge", "family": "pe", "generator": {"dlls": 2, "exports": 10}, "variants": ["default"]}
RUNS = 30


def post_series(d, token, series, levels, rng):
    """Jobs of SERIES, one at a time; job I's variant around 1000 us x
    LEVELS[I][0] and its floor around 500 us x LEVELS[I][1], sample k of
    both taken in pass k (0.2 % jitter each). Returns the job ids."""
    ids = []
    for i, (variant, floor) in enumerate(levels):
        job = d.submit(dict(JOB, series=series, revision="r%02d" % i))
        ids.append(job["id"])
        lease = wait_for("a lease", lambda: d.api("POST", "/api/v1/lease", {}, token=token).json())
        assert lease["job_id"] == job["id"], lease
        v = [round(1000 * variant * (1 + rng.gauss(0, 0.002)), 1) for _ in range(RUNS)]
        f = [round(500 * floor * (1 + rng.gauss(0, 0.002)), 1) for _ in range(RUNS)]
        body = {"attempt": lease["attempt"], "facts": FACTS,
                "variants": [{"name": "default", "valid": True, "warm": {"runs": RUNS, "samples_us": v}}],
                "floor": {"warm": {"runs": RUNS, "samples_us": f}}}
        r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], body, token=token)
        assert r.status == 200, r
    return ids


def alerts_of(d, series):
    r = d.api("GET", "/api/v1/alerts", token=d.admin_token)
    validate("alert_list.json", r.json())
    return [a for a in r.json()["alerts"] if a["series"] == series]


def agrees_with_compare(d, alert):
    """ALERT's one row is what compare of its jobs says, figure for figure."""
    assert len(alert["rows"]) == 1, alert
    row = alert["rows"][0]
    assert row["metric"] == "floor-ratio", row
    r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d&max_regression=%g"
              % (alert["baseline_id"], alert["job_id"], alert["threshold_pct"]), token=d.admin_token)
    assert r.status == 200, r
    validate("compare.json", r.json())
    cmp = r.json()
    assert cmp["metric"] == "auto" and cmp["verdict"] == "regression", cmp
    (c,) = cmp["rows"]
    j = c["judged"]
    assert c["status"] == "slower" and c["regression"] is True and j["metric"] == "floor-ratio", c
    assert (row["change_pct"], row["ratio"], row["ratio_ci_low"], row["ratio_ci_high"]) == \
        (j["change_pct"], j["ratio"], j["ci_low"], j["ci_high"]), (row, j)
    assert (j["ci_low"], j["ci_high"]) == (c["interval_low"], c["interval_high"]), c
    assert 10 < j["change_pct"] < 14 and j["ci_low"] > 1.01, j
    assert row["judged"] == j, (row, j)
    assert alert["worst_change_pct"] == j["change_pct"], alert
    # the CLI: exit 1, the judged interval and the verdict in words
    out = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "compare",
                          str(alert["baseline_id"]), str(alert["job_id"]), "--max-regression",
                          "%g" % alert["threshold_pct"]], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out
    assert "[%.3f, %.3f]" % (j["ci_low"], j["ci_high"]) in out.stdout, out.stdout
    assert "slower (regression)" in out.stdout, out.stdout


def test_alerts_agree_with_compare():
    with Daemon(extra_args=["--schedule-tick-ms", "100"]) as d:
        _, token = d.enroll("lab-1", FACTS)
        rng = random.Random(39)
        for s in ("judge/busy", "judge/slower", "judge/young"):
            r = d.api("PUT", "/api/v1/series/%s" % s.replace("/", "%2F"), {"threshold_pct": 5},
                      token=d.admin_token)
            assert r.status == 200, r

        busy = [(1.12, 1.12) if i % 2 else (1.0, 1.0) for i in range(12)]
        post_series(d, token, "judge/busy", busy, rng)
        slower = post_series(d, token, "judge/slower", [(1.0, 1.0)] * 10 + [(1.12, 1.0)] * 2, rng)
        young = post_series(d, token, "judge/young", [(1.0, 1.0)] * 3 + [(1.12, 1.0)], rng)
        # the scheduler checks jobs in id order: once a later series'
        # alert is open, every job above was checked
        open_alert(d, token, rng, "judge/sentinel", d.admin_token)

        assert alerts_of(d, "judge/busy") == [], alerts_of(d, "judge/busy")

        (a,) = alerts_of(d, "judge/slower")
        assert (a["baseline_id"], a["job_id"]) == (slower[9], slower[10]), (a, slower)
        assert "change_point" in a["rows"][0], a
        agrees_with_compare(d, a)

        (a,) = alerts_of(d, "judge/young")
        assert (a["baseline_id"], a["job_id"]) == (young[2], young[3]), (a, young)
        agrees_with_compare(d, a)


run_tests(globals())
