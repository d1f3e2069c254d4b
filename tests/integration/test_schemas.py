"""The schemas in schemas/ are valid, the example jobs match them, and they
refuse what docs/rest-bodies.md refuses. No daemon needed."""
import copy
import os

import schemacheck
from harness import run_tests
from schemacheck import SchemaError, load_example, validate

EXPECTED_SCHEMAS = [
    "defs.json", "error.json", "health.json", "job_submit.json", "job_created.json",
    "job_list.json", "job.json", "job_summary.json", "agent_enroll.json",
    "agent_enrolled.json", "agent_list.json", "agent.json", "agent_patch.json",
    "lease_request.json", "lease.json", "heartbeat_request.json", "heartbeat.json",
    "progress_request.json", "progress.json", "result.json", "result_accepted.json",
    "fail_request.json", "fail.json", "token_create.json", "token_created.json",
    "token_list.json", "token_revoked.json", "report.json", "compare.json",
    "series.json", "series_list.json", "series_settings.json", "series_settings_put.json", "series_change_points.json",
    "schedule_create.json", "schedule_patch.json", "schedule.json", "schedule_list.json",
    "schedule_run.json", "alert.json", "alert_list.json", "alert_webhook.json",
]
EXAMPLES = ["pietrek-2000.json", "office-cold-start.json", "churn.json",
            "elf-relocations.json", "quickstart.json"]

# The job of API.md, "A job", verbatim.
PIETREK_2000 = {
    "name": "pietrek-2000",
    "family": "pe",
    "generator": {"dlls": 10, "exports": 100, "globals_per_function": 5},
    "variants": ["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind"],
    "measure": {"warm": {"runs": 30, "warmup": 3}},
    "matrix": {"cells": {"os": ["winxp", "win10"], "disk": ["hdd", "ssd"]}},
}

T = "2026-11-30T10:00:00.123Z"


def rejects(schema, instance, why):
    try:
        validate(schema, instance)
    except SchemaError:
        return
    raise AssertionError("schemas/%s accepted %s: %r" % (schema, why, instance))


def mutated(base, **changes):
    job = copy.deepcopy(base)
    for key, value in changes.items():
        path = key.split("__")
        node = job
        for p in path[:-1]:
            node = node[p]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return job


def test_every_schema_is_valid_and_resolves_offline():
    names = schemacheck.schema_names()
    missing = sorted(set(EXPECTED_SCHEMAS) - set(names))
    assert not missing, "missing schemas: %s" % missing
    for name in names:
        schemacheck.check_schema(name)
        schema = schemacheck.load_all()[name]
        assert schema.get("$id") == schemacheck.BASE_URI + name, name
        assert schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema", name


def test_readme_names_every_schema():
    with open(os.path.join(schemacheck.SCHEMAS, "README.md")) as f:
        readme = f.read()
    for name in schemacheck.schema_names():
        assert "`%s`" % name in readme, "schemas/README.md does not describe %s" % name


def test_examples_are_valid_job_submissions():
    present = sorted(n for n in os.listdir(schemacheck.EXAMPLES) if n.endswith(".json"))
    for name in EXAMPLES:
        assert name in present, "schemas/examples/%s is missing" % name
    # the local forms beside them (schemas/examples/local/): test_examples.py
    for name in present:
        validate("job_submit.json", load_example(name))


def test_pietrek_example_is_api_md_job():
    assert load_example("pietrek-2000.json") == PIETREK_2000


def test_examples_say_what_the_studies_measure():
    office = load_example("office-cold-start.json")
    assert office["family"] == "pe"
    assert sorted(office["variants"]) == ["no-rebase", "rebase", "reorder"]
    assert office["measure"]["cold"]["runs"] >= 1
    churn = load_example("churn.json")
    assert churn["measure"]["churn"]["processes"] == 1000
    assert churn["measure"]["churn"]["dll_sets"] == ["none", "user32", "user32+gdi32"]
    elf = load_example("elf-relocations.json")
    assert elf["family"] == "elf"
    # the ELF issue's figures: symbolic+relr and symbolic against default,
    # sysv-hash slower, now not faster, at 100 x 1,000
    assert elf["generator"] == {"dlls": 100, "exports": 1000}
    assert elf["variants"] == ["default", "now", "relr", "hidden", "symbolic", "symbolic+relr", "sysv-hash"]


def test_wrong_jobs_are_rejected():
    job = PIETREK_2000
    rejects("job_submit.json", mutated(job, family="macho"), "an unknown family")
    rejects("job_submit.json", mutated(job, generator__dlls=0), "dlls = 0")
    rejects("job_submit.json", mutated(job, generator__dlls=257), "dlls = 257")
    rejects("job_submit.json", mutated(job, generator__dlls=2.5), "fractional dlls")
    rejects("job_submit.json", mutated(job, generator__exports=4097), "exports = 4097")
    rejects("job_submit.json", mutated(job, generator__globals_per_function=65),
            "globals_per_function = 65")
    rejects("job_submit.json", mutated(job, generator__main="jump"), "an unknown main")
    rejects("job_submit.json", mutated(job, generator__dlls=KeyError), "no dlls")
    rejects("job_submit.json", mutated(job, colour="red"), "an unknown top-level field")
    rejects("job_submit.json", mutated(job, generator__seed=1), "an unknown generator field")
    rejects("job_submit.json", mutated(job, name=""), "an empty name")
    rejects("job_submit.json", mutated(job, name="x" * 129), "a 129-byte name")
    rejects("job_submit.json", mutated(job, name=KeyError), "no name")
    rejects("job_submit.json", mutated(job, variants=[]), "no variants")
    rejects("job_submit.json", mutated(job, variants=["default", "default"]),
            "duplicate variants")
    rejects("job_submit.json", mutated(job, variants=["relr"]), "an elf preset in a pe job")
    rejects("job_submit.json", mutated(job, family="elf"), "pe presets in an elf job")
    rejects("job_submit.json",
            mutated(job, variants=[{"name": "x", "bases": "random"}]), "an unknown bases knob")
    rejects("job_submit.json",
            mutated(job, variants=[{"bases": "unique"}]), "a knob variant without a name")
    rejects("job_submit.json",
            mutated(job, variants=[{"name": "x", "speed": 11}]), "an unknown knob")
    rejects("job_submit.json", mutated(job, measure={}), "a measure with nothing in it")
    rejects("job_submit.json", mutated(job, measure__warm__runs=0), "warm runs = 0")
    rejects("job_submit.json", mutated(job, measure__warm__runs=1001), "warm runs = 1001")
    rejects("job_submit.json", mutated(job, measure={"cold": {"runs": 201}}), "cold runs = 201")
    rejects("job_submit.json", mutated(job, measure={"churn": {"processes": 5001}}),
            "5001 processes")
    rejects("job_submit.json", mutated(job, measure={"churn": {"dll_sets": ["kernel32"]}}),
            "an unknown dll set")
    rejects("job_submit.json", mutated(job, measure={"hot": {}}), "an unknown measurement")
    rejects("job_submit.json",
            mutated(job, matrix={"cells": {"os": ["win10"]}, "each_agent": {}}),
            "both cells and each_agent")
    rejects("job_submit.json", mutated(job, matrix={"cells": {"OS": ["win10"]}}),
            "an upper-case matrix key")
    rejects("job_submit.json", mutated(job, matrix={"cells": {"os": ["x" * 65]}}),
            "a 65-byte matrix value")
    rejects("job_submit.json", mutated(job, matrix={"cells": {"os": [str(i) for i in range(17)]}}),
            "17 values for one key")
    rejects("job_submit.json",
            mutated(job, matrix={"cells": {"k%d" % i: ["v"] for i in range(9)}}), "9 keys")
    rejects("job_submit.json", mutated(job, priority=101), "priority = 101")
    rejects("job_submit.json", mutated(job, priority="high"), "a string priority")
    rejects("job_submit.json", [job], "an array instead of an object")


def test_other_valid_jobs_are_accepted():
    job = PIETREK_2000
    validate("job_submit.json", mutated(job, variants=[
        "default", {"name": "rebased-bound", "bases": "unique", "bind": True,
                    "imports": "ordinal", "order": "trace"}, {"name": "only-a-name"}]))
    validate("job_submit.json", mutated(job, matrix={"each_agent": {}}))
    validate("job_submit.json", mutated(job, matrix=KeyError, measure=KeyError, priority=-100))
    validate("job_submit.json", mutated(job, measure={"warm": {}, "cold": {}, "churn": {}}))
    validate("job_submit.json", mutated(job, family="elf", variants=["sysv-hash", "reorder"]))


def test_request_schemas_refuse_unknown_fields():
    validate("agent_enroll.json", {"name": "xp-1", "facts": {"os": "winxp", "cores": 2,
                                                             "toolchains": ["mingw"]},
                                   "labels": {"rack": "a"}})
    rejects("agent_enroll.json", {"name": "xp-1", "facts": {}, "labels": {}, "x": 1},
            "an unknown field")
    rejects("agent_enroll.json", {"name": "", "facts": {}, "labels": {}}, "an empty name")
    rejects("agent_enroll.json", {"name": "a", "facts": {"f%d" % i: 1 for i in range(65)},
                                  "labels": {}}, "65 facts")
    rejects("agent_enroll.json", {"name": "a", "facts": {"os": {"nested": 1}}, "labels": {}},
            "an object fact")
    validate("agent_patch.json", {"labels": {"rack": None, "noisy": "yes"}, "quarantined": True})
    rejects("agent_patch.json", {"name": "renamed"}, "an unknown field")
    validate("lease_request.json", {})
    rejects("lease_request.json", {"wait": 61}, "wait = 61")
    validate("progress_request.json", {"attempt": 1, "phase": "warm", "percent": 40})
    rejects("progress_request.json", {"attempt": 1, "phase": "sleep", "percent": 40},
            "an unknown phase")
    rejects("progress_request.json", {"attempt": 1, "phase": "warm", "percent": 101},
            "percent = 101")
    validate("fail_request.json", {"attempt": 2, "reason": "build failed"})
    rejects("fail_request.json", {"attempt": 2, "reason": ""}, "an empty reason")
    rejects("fail_request.json", {"attempt": 2, "reason": "x" * 2001}, "a 2001-byte reason")
    validate("token_create.json", {"kind": "enroll", "name": "lab"})
    rejects("token_create.json", {"kind": "admin", "name": "lab"}, "an admin token")
    validate("heartbeat_request.json", {})
    rejects("heartbeat_request.json", {"busy": True}, "an unknown field")
    # A result keeps further fields as sent.
    validate("result.json", {"attempt": 1, "facts": {"os": "win10"},
                             "variants": [{"name": "default", "warm": {"samples_us": [1.5, 2]},
                                           "extra": True}],
                             "order": [0, 1]})
    rejects("result.json", {"attempt": 1, "facts": {}, "variants": [{}]}, "a nameless variant")
    # The figures reports read are checked where given.
    rejects("result.json", {"attempt": 1, "facts": {}, "variants": [{"name": "d", "warm": {}}]},
            "warm runs without samples")
    rejects("result.json", {"attempt": 1, "facts": {}, "variants": [
        {"name": "d", "valid": False, "invalid_reason": "x", "warm": {"samples_us": [1]}}]},
            "numbers for an invalid variant")
    rejects("result.json", {"attempt": 1, "facts": {}, "variants": [],
                            "churn": [{"dll_set": "none", "processes": 0, "create_us": 1,
                                       "destroy_us": 1}]}, "churn of no process")
    # Run counters and the loader's work (issue 40): what was counted, per
    # run; what was not, named with its reason, never as a zero.
    counted = {"samples_us": [5, 6], "run_counters": {
        "counters": ["cpu_user_us", "minor_faults"], "cpu_user_us": [0, 12.5],
        "minor_faults": [48, 49], "not_counted": {"instructions": "no PMU on this machine"}}}
    validate("result.json", {"attempt": 1, "facts": {}, "variants": [
        {"name": "d", "warm": counted, "cold": counted,
         "loader": {"source": "glibc LD_DEBUG=statistics", "relocations": 333,
                    "relative_relocations": 267, "startup_time": 3145216, "time_unit": "cycles"}}],
        "floor": {"loader": {"source": "glibc LD_DEBUG=statistics", "not_counted": "exited with 1"}}})
    rejects("result.json", {"attempt": 1, "facts": {}, "variants": [
        {"name": "d", "warm": {"samples_us": [5], "run_counters": {
            "counters": ["instructions"], "not_counted": {"mips": "?"}}}}]}, "an unknown counter")
    rejects("result.json", {"attempt": 1, "facts": {}, "variants": [
        {"name": "d", "warm": {"samples_us": [5], "run_counters": {"counters": []}}}]},
            "run counters that do not say what was not counted")
    rejects("result.json", {"attempt": 1, "facts": {}, "variants": [
        {"name": "d", "loader": {"source": "x", "relocations": -1}}]}, "a negative relocation count")


def summary(**over):
    s = {"id": 7, "name": "pietrek-2000", "family": "pe", "state": "running", "priority": 0,
         "submitted_by": "admin", "created_at": T, "updated_at": T, "task_count": 2,
         "tasks_by_state": {"queued": 1, "leased": 1, "done": 0, "dead": 0, "cancelled": 0}}
    s.update(over)
    return s


def task(**over):
    t = {"id": 11, "cell": {"os": "winxp"}, "agent_id": None, "state": "queued", "attempt": 0,
         "phase": None, "percent": None, "lease_expires_at": None, "retry_at": None,
         "last_error": None, "result_id": None,
         "waiting": {"could_run": False, "reason": "no agent has os=winxp"}}
    t.update(over)
    return t


PE_KNOBS = {"name": "default", "bases": "same", "bind": False, "imports": "name",
            "order": "link"}
SPEC = {"name": "pietrek-2000", "family": "pe",
        "generator": {"dlls": 10, "exports": 100, "globals_per_function": 5,
                      "main": "reference"},
        "variants": [PE_KNOBS], "measure": {"warm": {"runs": 30, "warmup": 3}},
        "matrix": {"cells": {"os": ["winxp"]}}, "priority": 0}


def test_response_schemas_match_the_page():
    validate("health.json", {"status": "ok", "store": "ok", "version": "0.1.0"})
    validate("error.json", {"error": {"code": "not_found", "message": "No job 9."}})
    rejects("error.json", {"error": {"code": "oops", "message": "x"}}, "an unlisted code")
    rejects("error.json", {"error": "not found"}, "a string error")
    validate("job_created.json", {"id": 1, "task_count": 4, "state": "queued", "warnings": []})
    validate("job_created.json", {"id": 1, "task_count": 4, "state": "queued",
                                  "warnings": ["4 tasks: no agent has os=winxp"]})
    rejects("job_created.json", {"id": 1, "task_count": 4, "state": "queued"}, "no warnings")
    rejects("job_created.json", {"id": 0, "task_count": 4, "state": "queued", "warnings": []},
            "id 0")
    rejects("job_created.json", {"id": "1", "task_count": 4, "state": "queued", "warnings": []},
            "a string id")
    validate("job_list.json", {"jobs": [summary()], "next_before": None})
    validate("job_summary.json", summary(state="cancelled"))
    rejects("job_summary.json", summary(created_at="2026-11-30T10:00:00Z"),
            "a time without milliseconds")
    rejects("job_summary.json", summary(tasks_by_state={"queued": 1}),
            "tasks_by_state without every state")
    job = dict(summary(), spec=SPEC, tasks=[task(), task(id=12, state="leased", agent_id=3,
                                                        attempt=1, phase="warm", percent=40,
                                                        lease_expires_at=T, waiting=None)])
    validate("job.json", job)
    validate("job.json", dict(job, tasks=[task(waiting={"could_run": True, "reason": None})]))
    rejects("job.json", dict(job, tasks=[task(waiting={"could_run": False, "reason": None})]),
            "a task that cannot run without its reason")
    rejects("job.json", dict(job, tasks=[task(waiting={"could_run": True, "reason": "x"})]),
            "a reason for a task that can run")
    t = task()
    del t["waiting"]
    rejects("job.json", dict(job, tasks=[t]), "a task without waiting")
    rejects("job.json", dict(job, tasks=[task(state="running")]), "an unknown task state")
    rejects("job.json", dict(job, spec=dict(SPEC, variants=["default"])),
            "presets not expanded to knobs")
    rejects("job.json", dict(summary(), tasks=[]), "a job without its spec")
    agent = {"id": 3, "name": "xp-1", "facts": {"os": "winxp"}, "labels": {}, "state": "online",
             "last_seen": T, "current_task": None, "created_at": T, "last_calibration": None,
             "builder": False}
    validate("agent_list.json", {"agents": [agent]})
    rejects("agent_list.json", {"agents": [dict(agent, builder="yes")]}, "a builder mark that is no bool")
    calibration = {"injected_us": 1000, "recovered_us": 1012.5, "ratio": 1.0125,
                   "ci_us": [980.0, 1040.0], "recovered_2x_us": 1005.0, "ratio_2x": 1.005,
                   "baseline_us": 450.0, "runs": 100, "family": "elf", "runner": "native",
                   "noise": {"max_other_cpu_pct": None, "flagged": 0, "retaken": 0},
                   "job_id": 7, "task_id": 11, "result_id": 5, "at": T}
    validate("agent.json", dict(agent, last_calibration=calibration))
    rejects("agent.json", dict(agent, last_calibration=dict(calibration, family="program")),
            "a calibration of the program family")
    validate("agent.json", dict(agent, state="quarantined"))
    rejects("agent.json", dict(agent, state="busy"), "an unknown agent state")
    validate("agent_enrolled.json", {"id": 3, "token": "llagt_" + "0f" * 32})
    rejects("agent_enrolled.json", {"id": 3, "token": "secret"}, "a token without its prefix")
    lease = {"task_id": 11, "job_id": 7, "attempt": 1, "cell": {"os": "winxp"},
             "lease_expires_at": T, "lease_seconds": 60, "heartbeat_seconds": 20,
             "job": {"id": 7, "name": "pietrek-2000", "family": "pe",
                     "generator": SPEC["generator"], "variants": [PE_KNOBS],
                     "measure": SPEC["measure"]}}
    validate("lease.json", lease)
    rejects("lease.json", dict(lease, job=dict(lease["job"], variants=[{"name": "default"}])),
            "pe variants without their knobs")
    validate("lease.json", dict(lease, job=dict(lease["job"], family="elf",
                                               variants=[{"name": "relr"}])))
    validate("heartbeat.json", {"agent_id": 3, "tasks": [
        {"task_id": 11, "attempt": 1, "state": "leased", "cancelled": False,
         "lease_expires_at": T}]})
    validate("progress.json", {"task_id": 11, "attempt": 1, "state": "leased",
                               "cancelled": False, "lease_expires_at": T})
    validate("result_accepted.json", {"task_id": 11, "attempt": 1, "result_id": 5,
                                      "state": "done"})
    validate("fail.json", {"task_id": 11, "attempt": 1, "state": "queued", "retry_at": T})
    validate("token_created.json", {"id": 2, "kind": "user", "name": "ci", "token": "llu_x",
                                    "created_at": T})
    validate("token_list.json", {"tokens": [{"id": 2, "kind": "user", "name": "ci",
                                             "created_at": T}]})
    rejects("token_list.json", {"tokens": [{"id": 2, "kind": "user", "name": "ci",
                                            "created_at": T, "token": "llu_x"}]},
            "a listed secret")
    validate("token_revoked.json", {"id": 2, "revoked": True})


SERIES_JOB = {"name": "nightly", "family": "pe", "generator": {"dlls": 2, "exports": 10},
              "variants": ["default", "rebase"]}


def point(**over):
    p = {"job_id": 7, "revision": "r1", "created_at": T, "value_us": 1000.5, "median_us": 1000.5,
         "ci_low_us": 998.0, "ci_high_us": 1003.0, "min_us": 990.0, "n": 30}
    p.update(over)
    return p


def alert(**over):
    a = {"id": 1, "series": "ci/main", "job_id": 8, "baseline_id": 7, "threshold_pct": 5,
         "worst_change_pct": 20.1, "rows": [{"variant": "rebase", "cell": "any", "change_pct": 20.1}],
         "created_at": T, "acked_at": None, "acked_by": None, "webhook": None}
    a.update(over)
    return a


def schedule(**over):
    s = {"id": 3, "series": "ci/main", "cron": "0 3 * * mon-fri", "interval_s": None,
         "job": SERIES_JOB, "enabled": True, "created_by": "admin", "owner": "admin", "created_at": T,
         "updated_at": T, "next_run_at": T, "last_due_at": None, "last_job_id": None,
         "skipped": 0, "last_skip": None}
    s.update(over)
    return s


def test_series_bodies_match_their_schemas():
    series = {"series": "ci/main", "metric": "median", "threshold_pct": 5, "webhook_url": None,
              "owner": "user:alice", "traces": [{"variant": "rebase", "cell": "os=winxp", "points": [point(), point(job_id=8, revision=None)]}],
              "alerts": [alert()],
              "jobs": [{"id": 7, "name": "nightly", "state": "done", "revision": "r1", "created_at": T},
                       {"id": 8, "name": "nightly", "state": "done", "revision": None, "created_at": T}]}
    validate("series.json", series)
    validate("series.json", dict(series, metric="min", webhook_url="https://hooks.example/x",
                                 traces=[], alerts=[], jobs=[]))
    validate("series.json", dict(series, owner=None))
    rejects("series.json", {k: v for k, v in series.items() if k != "owner"}, "no owner")
    rejects("series.json", dict(series, metric="max"), "an unknown metric")
    rejects("series.json", dict(series, series="has space"), "a name with a space")
    rejects("series.json", dict(series, webhook_url="ftp://x"), "a non-http webhook")
    rejects("series.json", dict(series, traces=[{"variant": "v", "cell": "c", "points": [point(n=0)]}]),
            "a point of no sample")
    p = point()
    del p["ci_high_us"]
    rejects("series.json", dict(series, traces=[{"variant": "v", "cell": "c", "points": [p]}]),
            "a point without its interval")
    rejects("series.json", dict(series, traces=[{"variant": "v", "cell": "c", "points": [point(revision="")]}]),
            "an empty revision")
    rejects("series.json", dict(series, extra=1), "an unknown field")
    listed = {"name": "ci/main", "jobs": 2, "threshold_pct": 5, "webhook_url": None, "owner": None,
              "last_job": {"id": 8, "state": "done", "revision": None, "created_at": T}}
    validate("series_list.json", {"series": [listed]})
    validate("series_list.json", {"series": []})
    rejects("series_list.json", {"series": [dict(listed, jobs=0)]}, "a series of no job")
    rejects("series_list.json", {"series": [dict(listed, last_job=None)]}, "no last job")
    validate("series_settings_put.json", {"threshold_pct": 2.5, "webhook_url": None})
    validate("series_settings_put.json", {})
    rejects("series_settings_put.json", {"threshold_pct": 0.1}, "threshold_pct 0.1")
    rejects("series_settings_put.json", {"threshold_pct": 5, "colour": "red"}, "an unknown field")
    validate("series_settings.json", {"name": "ci/main", "threshold_pct": 5, "webhook_url": "http://127.0.0.1:9/h",
                                      "owner": "user:alice"})
    rejects("series_settings.json", {"name": "ci/main", "threshold_pct": 5, "owner": None}, "no webhook_url")
    rejects("series_settings.json", {"name": "ci/main", "threshold_pct": 5, "webhook_url": None}, "no owner")


def test_schedule_bodies_match_their_schemas():
    validate("schedule_create.json", {"series": "ci/main", "cron": "*/5 * * * *", "job": SERIES_JOB})
    validate("schedule_create.json", {"series": "ci/main", "interval_s": 3600, "job": SERIES_JOB, "enabled": False})
    rejects("schedule_create.json", {"series": "ci/main", "interval_s": 60}, "no job")
    rejects("schedule_create.json", {"series": "ci/main", "interval_s": 0, "job": SERIES_JOB}, "interval_s 0")
    rejects("schedule_create.json", {"series": "ci/main", "interval_s": 60, "job": dict(SERIES_JOB, variants=[])},
            "a job of no variant")
    rejects("schedule_create.json", {"series": "ci/main", "interval_s": 60, "job": SERIES_JOB, "x": 1},
            "an unknown field")
    validate("schedule_patch.json", {"enabled": False})
    rejects("schedule_patch.json", {"enabled": "no"}, "a string enabled")
    rejects("schedule_patch.json", {"series": "other"}, "a new series")
    validate("schedule.json", schedule())
    validate("schedule.json", schedule(cron=None, interval_s=60, enabled=False, next_run_at=None,
                                       last_due_at=T, last_job_id=9, skipped=2,
                                       last_skip={"at": T, "reason": "job 9 is still queued"}))
    rejects("schedule.json", schedule(skipped=-1), "a negative skip count")
    rejects("schedule.json", schedule(last_job_id=0), "job id 0")
    rejects("schedule.json", schedule(last_skip={"reason": "x"}), "a skip without its time")
    rejects("schedule.json", schedule(job=dict(SERIES_JOB, family="macho")), "an invalid job")
    s = schedule()
    del s["next_run_at"]
    rejects("schedule.json", s, "no next_run_at")
    validate("schedule_list.json", {"schedules": [schedule(), schedule(id=4)]})
    rejects("schedule_list.json", {"schedules": [dict(schedule(), extra=1)]}, "an unknown field")
    validate("schedule_run.json", {"schedule_id": 3, "run_id": 12, "job_id": 9})
    rejects("schedule_run.json", {"schedule_id": 3, "job_id": 9}, "no run_id")


def test_alert_bodies_match_their_schemas():
    validate("alert.json", alert())
    validate("alert.json", alert(acked_at=T, acked_by="admin", webhook="delivered", worst_change_pct=None))
    rejects("alert.json", alert(rows=[{"variant": "rebase", "cell": "any"}]), "a row without its change")
    rejects("alert.json", alert(acked_at="yesterday"), "a time that is not RFC 3339")
    a = alert()
    del a["baseline_id"]
    rejects("alert.json", a, "no baseline")
    validate("alert_list.json", {"alerts": [alert(), alert(id=2, acked_at=T, acked_by="ci")]})
    rejects("alert_list.json", {"alerts": [alert(id="2")]}, "a string id")
    validate("alert_webhook.json", {"event": "regression", "alert": alert()})
    rejects("alert_webhook.json", {"event": "recovery", "alert": alert()}, "an unknown event")


def test_validate_message_names_schema_and_path():
    try:
        validate("job_submit.json", mutated(PIETREK_2000, generator__dlls=300))
    except SchemaError as e:
        text = str(e)
        assert "job_submit.json" in text and "$.generator.dlls" in text, text
    else:
        raise AssertionError("dlls = 300 was accepted")


run_tests(globals())
