"""Change points over a series' history against the real daemon
(docs/series.md, "Change points"): result documents posted as an enrolled
agent, 80 jobs with a +5 % step at r30 and a -8 % step at r55 (both found
within one revision, the +5 % one opens the one alert, with the numbers an
independent Python computation gets from the same points); an A/A history
of 80 jobs (none found, no alert); a step where the agent's CPU model
changed (a machine change with the facts that differ, no alert). The
noise is seeded, and small beside the 1 % minimum magnitude: a spurious
split of the A/A history moves the level by about 0.1 %, ten times less."""
import random
import subprocess

from change_points_reference import change_points
from harness import LOADLAB, Daemon, run_tests, wait_for
from schemacheck import validate
from series_helpers import FACTS, open_alert

JOB = {"name": "cp", "family": "pe", "generator": {"dlls": 2, "exports": 10}, "variants": ["default"]}
BATCH = 20


def post_history(d, token, series, levels, rng, floor=True, facts_at=lambda i: FACTS):
    """Jobs of SERIES with revisions r00, r01, ..., job I's samples around
    1000 us x LEVELS[I] (0.1 % jitter per job, 2 us per sample), with an
    empty program around 500 us when FLOOR; posted BATCH at a time as the
    agent of TOKEN. Returns the job ids."""
    ids = []
    for start in range(0, len(levels), BATCH):
        batch = {}
        for i in range(start, min(start + BATCH, len(levels))):
            job = d.submit(dict(JOB, series=series, revision="r%02d" % i))
            batch[job["id"]] = i
            ids.append(job["id"])
        for _ in batch:
            lease = wait_for("a lease", lambda: d.api("POST", "/api/v1/lease", {}, token=token).json())
            i = batch[lease["job_id"]]
            level = 1000 * levels[i] * (1 + rng.gauss(0, 0.001))
            body = {"attempt": lease["attempt"], "facts": facts_at(i),
                    "variants": [{"name": "default", "valid": True,
                                  "warm": {"runs": 30, "samples_us": [round(level + rng.gauss(0, 2), 1)
                                                                      for _ in range(30)]}}]}
            if floor:
                body["floor"] = {"warm": {"runs": 30, "samples_us": [round(500 + rng.gauss(0, 1), 1)
                                                                     for _ in range(30)]}}
            r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], body, token=token)
            assert r.status == 200, r
    return ids


def settle(d, token, user_token, rng):
    """Waits until the scheduler has checked every job submitted so far:
    it checks jobs in id order, so once a later two-job series' alert is
    open, every earlier job's check is done."""
    open_alert(d, token, rng, "cp/sentinel-%d" % rng.randrange(1 << 30), user_token)


def alerts_of(d, series):
    return [a for a in d.api("GET", "/api/v1/alerts", token=d.admin_token).json()["alerts"] if a["series"] == series]


def reference_of(d, series):
    """The change points of SERIES' default trace, worked out here from the
    points the daemon serves (the floor ratio where every point has one)."""
    s = d.api("GET", "/api/v1/series/%s" % series, token=d.admin_token)
    assert s.status == 200, s
    validate("series.json", s.json())
    points = s.json()["traces"][0]["points"]
    if all("floor_median_us" in p for p in points):
        values = [p["median_us"] / p["floor_median_us"] for p in points]
    else:
        values = [p["median_us"] for p in points]
    return points, change_points(values)


def change_points_of(d, series):
    r = d.api("GET", "/api/v1/series/%s/change-points" % series, token=d.admin_token)
    assert r.status == 200, r
    validate("series_change_points.json", r.json())
    return r.json()


def test_steps_aa_and_machine_change():
    with Daemon(extra_args=["--schedule-tick-ms", "100"]) as d:
        _, token = d.enroll("lab-1", FACTS)
        rng = random.Random(2029)
        assert d.api("PUT", "/api/v1/series/cp%2Fsteps", {"threshold_pct": 3}, token=d.admin_token).status == 200

        # +5 % at r30, -8 % at r55, among 80 points
        levels = [1.0] * 30 + [1.05] * 25 + [1.05 * 0.92] * 25
        steps = post_history(d, token, "cp/steps", levels, rng)
        # an A/A history of 80 points, judged by the median (no floor)
        same = post_history(d, token, "cp/same", [1.0] * 80, rng, floor=False)
        # a new machine from r20 on: another CPU model, and 10 % slower
        other = dict(FACTS, cpu_model="other cpu")
        machine = post_history(d, token, "cp/machine", [1.0] * 20 + [1.1] * 20, rng,
                               facts_at=lambda i: FACTS if i < 20 else other)
        settle(d, token, d.admin_token, rng)

        c = change_points_of(d, "cp/steps")
        assert c["parameters"] == {"window": 50, "max_p_value": 0.001, "min_magnitude_pct": 1, "max_history": 500}, c
        found = c["change_points"]
        assert len(found) == 2, found
        up, down = found
        assert up["statistic"] == "x_floor" and (up["variant"], up["cell"]) == ("default", "any"), up
        assert up["after"]["revision"] in ("r29", "r30", "r31"), up
        assert down["after"]["revision"] in ("r54", "r55", "r56"), down
        assert int(up["after"]["revision"][1:]) == int(up["before"]["revision"][1:]) + 1, up
        assert 4 < up["magnitude_pct"] < 6 and up["ci_low_pct"] < up["magnitude_pct"] < up["ci_high_pct"], up
        assert -9 < down["magnitude_pct"] < -7, down
        assert up["p_value"] < 1e-6 and down["p_value"] < 1e-6, found
        assert up["regression"] is True and down["regression"] is False, found
        assert not up["machine_changed"] and not down["machine_changed"] and c["machine_changes"] == [], c
        assert up["before"]["job_id"] in steps and up["after"]["job_id"] == steps[steps.index(up["before"]["job_id"]) + 1]

        # the same change points, worked out independently from the same points
        points, ref = reference_of(d, "cp/steps")
        assert [points[r["index"]]["revision"] for r in ref] == [x["after"]["revision"] for x in found], (ref, found)
        for r, x in zip(ref, found):
            assert (r["n_before"], r["n_after"]) == (x["n_before"], x["n_after"]), (r, x)
            assert abs(r["magnitude"] * 100 - x["magnitude_pct"]) < 0.006, (r, x)
            assert abs(r["ci"][0] * 100 - x["ci_low_pct"]) < 0.006 and abs(r["ci"][1] * 100 - x["ci_high_pct"]) < 0.006
            assert abs(r["p_value"] - x["p_value"]) <= 1e-3 * r["p_value"], (r, x)

        # the +5 % step opened one alert, at the job after the change; the -8 % none
        alerts = alerts_of(d, "cp/steps")
        validate("alert_list.json", {"alerts": alerts})
        assert len(alerts) == 1, alerts
        a = alerts[0]
        assert abs(steps.index(a["job_id"]) - 30) <= 1 and steps.index(a["baseline_id"]) == steps.index(a["job_id"]) - 1, a
        assert a["threshold_pct"] == 3 and 4 < a["worst_change_pct"] < 6, a
        assert [row["variant"] for row in a["rows"]] == ["default"] and "change_point" in a["rows"][0], a

        # A/A: none, here and in the reference, and no alert
        c = change_points_of(d, "cp/same")
        assert c["change_points"] == [] and c["machine_changes"] == [], c
        points, ref = reference_of(d, "cp/same")
        assert ref == []
        # the margin: even at p < 0.05 and no minimum, what splits moves the level by < 0.3 %
        loose = change_points([p["median_us"] for p in points], max_p_value=0.05, min_magnitude=0.0)
        assert all(abs(x["magnitude"]) < 0.003 for x in loose), loose
        assert alerts_of(d, "cp/same") == []

        # the machine changed: reported with the facts that differ, no alert
        c = change_points_of(d, "cp/machine")
        assert len(c["change_points"]) == 1, c
        m = c["change_points"][0]
        assert m["statistic"] == "x_floor" and m["after"]["revision"] in ("r19", "r20", "r21"), m
        assert 8 < m["magnitude_pct"] < 12 and m["machine_changed"] is True and m["regression"] is False, m
        assert m["facts_changed"] == [{"fact": "cpu_model", "before": "lab cpu", "after": "other cpu"}], m
        assert [(x["before"]["revision"], x["after"]["revision"], x["facts_changed"]) for x in c["machine_changes"]] == \
            [("r19", "r20", [{"fact": "cpu_model", "before": "lab cpu", "after": "other cpu"}])], c
        assert alerts_of(d, "cp/machine") == []
        s = d.api("GET", "/api/v1/series/cp/machine", token=d.admin_token).json()["traces"][0]["points"]
        assert len({p["facts_digest"] for p in s[:20]}) == 1 and len({p["facts_digest"] for p in s[20:]}) == 1
        assert s[0]["facts_digest"] != s[20]["facts_digest"]
        assert machine[20] == m["after"]["job_id"] or abs(machine.index(m["after"]["job_id"]) - 20) <= 1
        assert same

        # the CLI's table, and the machine change under it
        out = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "series", "cp/steps",
                              "--change-points"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out
        rows = [l.split() for l in out.stdout.splitlines()[1:] if l.strip()]
        assert [r[2] for r in rows] == ["%s..%s" % (x["before"]["revision"], x["after"]["revision"]) for x in found], out.stdout
        assert "regression" in rows[0] and "faster" in rows[1] and "x" in rows[0], out.stdout
        out = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "series", "cp/machine",
                              "--change-points"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "machine changed" in out.stdout, out
        assert 'machine changed between r19 and r20 (default, any): cpu_model "lab cpu" -> "other cpu";' in out.stdout, out.stdout
        out = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "series", "cp/steps",
                              "--change-points", "--metric", "min"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "--metric" in out.stderr, out

        # bad names
        assert d.api("GET", "/api/v1/series/nothing/change-points", token=d.admin_token).status == 404
        assert d.api("GET", "/api/v1/series//change-points", token=d.admin_token).status in (400, 404)
        assert d.api("GET", "/api/v1/series/cp%2Fsteps/change-points").status == 401


run_tests(globals())
