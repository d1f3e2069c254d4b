"""Series, schedules and regression alerts against the real daemon: a
schedule with a 2 s interval creates jobs of its series, never doubles a
job still queued, runs missed due times once across a SIGTERM restart on
the same data directory; a job with a deliberately slower variant opens an
alert and calls a webhook served here on 127.0.0.1, an identical job does
not; GET /api/v1/series/NAME returns one point per job."""
import json
import random
import time
import subprocess

from harness import LOADLAB, Daemon, run_tests, wait_for
from schemacheck import validate
from series_helpers import FACTS, JOB, Hook, play, serve_hook


def series_jobs(d, name):
    r = d.api("GET", "/api/v1/jobs?limit=200", token=d.admin_token)
    assert r.status == 200, r
    ids = []
    for j in r.json()["jobs"]:
        full = d.api("GET", "/api/v1/jobs/%d" % j["id"], token=d.admin_token).json()
        if full["spec"].get("series") == name:
            ids.append(full)
    return sorted(ids, key=lambda j: j["id"])


# The schedule's interval: the shortest a schedule may have
# (SCHEDULE_MIN_INTERVAL_S), ten ticks of --schedule-tick-ms 100; the
# waits below are counted in it.
INTERVAL = 1


def test_schedule_fires_once_across_restart():
    d = Daemon(extra_args=["--schedule-tick-ms", "100"]).start()
    try:
        body = {"series": "ci/main", "interval_s": INTERVAL, "job": JOB}
        r = d.api("POST", "/api/v1/schedules", body, token=d.admin_token)
        assert r.status == 201, r
        validate("schedule.json", r.json())
        sid = r.json()["id"]
        assert r.json()["enabled"] is True and r.json()["interval_s"] == INTERVAL and r.json()["cron"] is None

        first = wait_for("the first job", lambda: series_jobs(d, "ci/main"), timeout=6)
        assert len(first) == 1 and first[0]["submitted_by"] == "schedule:%d" % sid, first
        assert first[0]["state"] == "queued"
        # Two more due times pass while the job is queued: skipped, not doubled.
        time.sleep(2.25 * INTERVAL)
        assert len(series_jobs(d, "ci/main")) == 1
        s = d.api("GET", "/api/v1/schedules/%d" % sid, token=d.admin_token).json()
        assert s["skipped"] >= 1 and "still queued" in s["last_skip"]["reason"], s
        assert s["last_job_id"] == first[0]["id"], s

        # Run now while one is queued: refused.
        r = d.api("POST", "/api/v1/schedules/%d/run" % sid, {}, token=d.admin_token)
        assert r.status == 409, r

        # Cancelled: the next due time creates the second job.
        assert d.api("POST", "/api/v1/jobs/%d/cancel" % first[0]["id"], {}, token=d.admin_token).status == 200
        second = wait_for("the second job", lambda: len(series_jobs(d, "ci/main")) == 2 and series_jobs(d, "ci/main"),
                          timeout=5)
        assert d.api("POST", "/api/v1/jobs/%d/cancel" % second[1]["id"], {}, token=d.admin_token).status == 200
        assert d.stop() == 0

        # Down for 2.5 intervals: two due times missed, run once after the restart.
        time.sleep(2.5 * INTERVAL)
        d2 = Daemon(extra_args=["--schedule-tick-ms", "100"], data_dir=d.data_dir).start()
        try:
            d2.admin_token = d.admin_token
            third = wait_for("the missed run", lambda: len(series_jobs(d2, "ci/main")) >= 3 and series_jobs(d2, "ci/main"),
                             timeout=5)
            time.sleep(1.5 * INTERVAL)  # more due times pass: the third job is queued, none is added
            jobs = series_jobs(d2, "ci/main")
            assert len(jobs) == 3, [j["id"] for j in jobs]
            assert len({j["id"] for j in jobs}) == 3
            s = d2.api("GET", "/api/v1/schedules/%d" % sid, token=d.admin_token).json()
            assert s["last_job_id"] == third[2]["id"], s

            # pause, resume, run now, delete
            r = d2.api("PATCH", "/api/v1/schedules/%d" % sid, {"enabled": False}, token=d.admin_token)
            assert r.status == 200 and r.json()["enabled"] is False and r.json()["next_run_at"] is None, r
            assert d2.api("POST", "/api/v1/jobs/%d/cancel" % third[2]["id"], {}, token=d.admin_token).status == 200
            time.sleep(1.25 * INTERVAL)
            assert len(series_jobs(d2, "ci/main")) == 3  # paused
            r = d2.api("POST", "/api/v1/schedules/%d/run" % sid, {}, token=d.admin_token)
            assert r.status == 201, r
            validate("schedule_run.json", r.json())
            assert len(series_jobs(d2, "ci/main")) == 4
            lst = d2.api("GET", "/api/v1/schedules", token=d.admin_token)
            validate("schedule_list.json", lst.json())
            assert [x["id"] for x in lst.json()["schedules"]] == [sid]
            assert d2.api("DELETE", "/api/v1/schedules/%d" % sid, token=d.admin_token).status == 200
            assert d2.api("GET", "/api/v1/schedules/%d" % sid, token=d.admin_token).status == 404
        finally:
            d2.stop()
    finally:
        d.close()


def test_schedule_validation():
    with Daemon() as d:
        bad = [
            {"series": "s", "job": JOB},
            {"series": "s", "cron": "* * *", "job": JOB},
            {"series": "s", "cron": "0 0 30 2 *", "job": JOB},
            {"series": "s", "cron": "* * * * *", "interval_s": 5, "job": JOB},
            {"series": "s", "interval_s": 0, "job": JOB},
            {"series": "a b", "interval_s": 5, "job": JOB},
            {"series": "s", "interval_s": 5, "job": dict(JOB, series="other")},
            {"series": "s", "interval_s": 5, "job": dict(JOB, variants=[])},
            {"series": "s", "interval_s": 5, "job": JOB, "extra": 1},
        ]
        for body in bad:
            r = d.api("POST", "/api/v1/schedules", body, token=d.admin_token)
            assert r.status == 400, (body, r)
            validate("error.json", r.json())
        r = d.api("POST", "/api/v1/schedules", {"series": "s", "cron": "0 3 * * mon-fri", "job": JOB},
                  token=d.admin_token)
        assert r.status == 201, r
        nxt = r.json()["next_run_at"]
        assert nxt.endswith("T03:00:00.000Z"), nxt
        assert d.api("POST", "/api/v1/schedules", {"series": "s", "interval_s": 5, "job": JOB}).status == 401


def test_regression_alert_and_webhook():
    server = serve_hook()
    try:
        with Daemon(extra_args=["--schedule-tick-ms", "100", "--webhook-allow", "127.0.0.1"]) as d:
            url = "http://127.0.0.1:%d/hook" % server.server_port
            r = d.api("PUT", "/api/v1/series/perf%2Fnightly", {"threshold_pct": 5, "webhook_url": url},
                      token=d.admin_token)
            assert r.status == 200, r
            validate("series_settings.json", r.json())
            assert r.json() == {"name": "perf/nightly", "threshold_pct": 5, "webhook_url": url,
                                "owner": r.json()["owner"], "retain_days": 0, "retain_points": 0} \
                and r.json()["owner"].startswith("admin:"), r
            _, token = d.enroll("lab-1", FACTS)
            rng = random.Random(7)
            ids = []
            for rev, shift in (("r1", 1.0), ("r2", 1.0), ("r3", 1.2)):
                ids.append(d.submit(dict(JOB, series="perf/nightly", revision=rev))["id"])
                play(d, token, rng, shift)
                if rev == "r2":
                    # the identical job is checked and opens nothing
                    time.sleep(1.0)
                    assert d.api("GET", "/api/v1/alerts", token=d.admin_token).json()["alerts"] == []
            alerts = wait_for("the alert", lambda: d.api("GET", "/api/v1/alerts", token=d.admin_token).json()["alerts"])
            validate("alert_list.json", {"alerts": alerts})
            assert len(alerts) == 1, alerts
            a = alerts[0]
            assert a["job_id"] == ids[2] and a["baseline_id"] == ids[1] and a["series"] == "perf/nightly", a
            assert [row["variant"] for row in a["rows"]] == ["rebase"], a
            assert 15 < a["worst_change_pct"] < 25, a
            hook = wait_for("the webhook", lambda: Hook.received)
            assert hook[0]["event"] == "regression" and hook[0]["alert"]["id"] == a["id"], hook
            validate("alert_webhook.json", hook[0])
            wait_for("the webhook status",
                     lambda: d.api("GET", "/api/v1/alerts", token=d.admin_token).json()["alerts"][0]["webhook"] == "delivered")

            # the series, by encoded and by plain name
            for path in ("/api/v1/series/perf%2Fnightly", "/api/v1/series/perf/nightly"):
                s = d.api("GET", path, token=d.admin_token)
                assert s.status == 200, s
                validate("series.json", s.json())
            s = s.json()
            assert [j["id"] for j in s["jobs"]] == ids
            assert sorted((t["variant"], t["cell"]) for t in s["traces"]) == [("default", "any"), ("rebase", "any")]
            for t in s["traces"]:
                assert [p["job_id"] for p in t["points"]] == ids
                assert [p["revision"] for p in t["points"]] == ["r1", "r2", "r3"]
                for p in t["points"]:
                    assert p["ci_low_us"] <= p["median_us"] <= p["ci_high_us"] and p["n"] == 30
                    assert p["value_us"] == p["median_us"]
            rebase = [t for t in s["traces"] if t["variant"] == "rebase"][0]["points"]
            assert rebase[2]["median_us"] > rebase[1]["median_us"] * 1.15
            assert [x["id"] for x in s["alerts"]] == [a["id"]]
            m = d.api("GET", "/api/v1/series/perf%2Fnightly?metric=min&variant=rebase", token=d.admin_token).json()
            assert len(m["traces"]) == 1 and all(p["value_us"] == p["min_us"] for p in m["traces"][0]["points"])
            assert d.api("GET", "/api/v1/series/perf%2Fnightly?metric=max", token=d.admin_token).status == 400
            assert d.api("GET", "/api/v1/series/nothing-here", token=d.admin_token).status == 404
            future = d.api("GET", "/api/v1/series/perf%2Fnightly?since=2999-01-01", token=d.admin_token).json()
            assert future["jobs"] == [] and future["traces"] == []
            lst = d.api("GET", "/api/v1/series", token=d.admin_token).json()
            validate("series_list.json", lst)
            assert [(x["name"], x["jobs"], x["last_job"]["id"]) for x in lst["series"]] == [("perf/nightly", 3, ids[2])]

            # the CLI prints the same points
            out = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "series", "perf/nightly"],
                                 capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out
            lines = [l.split() for l in out.stdout.splitlines()[1:] if l.strip()]
            assert len(lines) == 6 and [l[2] for l in lines if l[0] == "rebase"] == [str(i) for i in ids], out.stdout
            assert [l[3] for l in lines if l[0] == "rebase"] == ["r1", "r2", "r3"], out.stdout

            # acknowledged once, by a user
            r = d.api("POST", "/api/v1/alerts/%d/ack" % a["id"], {}, token=d.admin_token)
            assert r.status == 200 and r.json()["acked_by"] and r.json()["acked_at"], r
            assert d.api("POST", "/api/v1/alerts/%d/ack" % a["id"], {}, token=d.admin_token).status == 409
            assert d.api("GET", "/api/v1/alerts?open=true", token=d.admin_token).json()["alerts"] == []
            assert len(Hook.received) == 1
    finally:
        server.shutdown()


def compare_series(d, *args):
    out = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "compare", "--series"] + list(args),
                         capture_output=True, text=True, timeout=60)
    return out.returncode, out.stdout, out.stderr


def test_compare_series():
    """loadlab compare --series NAME [--against REVISION]: the latest done job
    against the done job before it (or the one carrying REVISION), with
    compare's exit codes: 0 no regression, 1 a regression, 2 an error."""
    with Daemon(extra_args=["--schedule-tick-ms", "100"]) as d:
        _, token = d.enroll("lab-1", FACTS)
        rng = random.Random(11)
        ids = []

        def add(rev, shift):
            ids.append(d.submit(dict(JOB, series="cmp/x", revision=rev))["id"])
            play(d, token, rng, shift)
            wait_for("job done", lambda: d.api("GET", "/api/v1/jobs/%d" % ids[-1], token=d.admin_token)
                     .json()["state"] == "done")

        add("r1", 1.0)
        code, out, err = compare_series(d, "cmp/x")
        assert code == 2 and "one done job" in err, (code, out, err)
        add("r2", 1.0)
        code, out, err = compare_series(d, "cmp/x", "--max-regression", "5", "--format", "json")
        assert code == 0, (code, out, err)
        body = json.loads(out)
        assert (body["baseline"]["id"], body["candidate"]["id"], body["verdict"]) == (ids[0], ids[1], "ok"), body
        assert "job %d (r2) against job %d (r1)" % (ids[1], ids[0]) in err, err
        api = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d&max_regression=5&format=json" % (ids[0], ids[1]),
                    token=d.admin_token).json()
        assert api == body

        add("r3", 1.2)
        # a queued job of the series is not the latest done one
        queued = d.submit(dict(JOB, series="cmp/x", revision="r4"))["id"]
        code, out, err = compare_series(d, "cmp/x", "--max-regression", "5")
        assert code == 1 and "regression" in out, (code, out, err)
        assert "job %d (r3) against job %d (r2)" % (ids[2], ids[1]) in err, err
        code, out, err = compare_series(d, "cmp/x", "--against", "r1", "--max-regression", "5", "--format", "json")
        assert code == 1 and json.loads(out)["baseline"]["id"] == ids[0], (code, out, err)
        code, out, err = compare_series(d, "cmp/x", "--against", "r2", "--max-regression", "50", "--format", "csv")
        assert code == 0 and out.strip(), (code, out, err)
        assert "job %d (r3) against job %d (r2)" % (ids[2], ids[1]) in err, err
        assert queued not in ids

        # errors: exit 2 with one line on stderr
        for args, says in ((["no/such-series"], "not_found"),
                           (["cmp/x", "--against", "r9"], "no done job with revision 'r9'"),
                           (["cmp/x", "--against", "r3"], "no done job with revision 'r3'"),
                           (["cmp/x", "1"], "takes no job ids"),
                           (["cmp/x", "--format", "yaml"], "yaml")):
            code, out, err = compare_series(d, *args)
            assert code == 2 and says in err and not out, (args, code, out, err)
        out = subprocess.run([LOADLAB, "--server", d.url, "compare", "1", "2", "--against", "r1"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "--against needs --series" in out.stderr, out


run_tests(globals())
