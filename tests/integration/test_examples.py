"""The example jobs of schemas/examples/ (issue 27): every file is a valid
job_submit.json; every study has a form the lab `make run` starts can run
(its one local agent, facts as `loadlab-agent facts` reports them here:
os=linux, runner=wine); each such local form, submitted to a real daemon
with an agent of exactly those facts enrolled, is accepted and its tasks
can run now (no "waiting: no agent has ..."), while the fleet forms wait
with that reason; the README's quick start types every local form.

Running them end to end takes minutes under Wine: that was done by hand on
scripts/run-lab.sh, and the README gives the times it measured.
"""
import glob
import itertools
import json
import os
import shutil
import subprocess
import tempfile

from harness import AGENT, EXAMPLES, LOADLAB, SOURCE_DIR, Daemon, run_tests
from schemacheck import validate

# Each study's fleet form (the cells of a lab of Windows machines) and the
# form that runs on the local lab, beside it.
LOCAL_FORM = {
    "pietrek-2000.json": "quickstart.json",
    "office-cold-start.json": "local/office-cold-start.json",
    "churn.json": "local/churn.json",
    "program-ci.json": "local/program-ci.json",
    "elf-relocations.json": "local/elf-relocations.json",
}
# The fleet forms the local agent cannot take (elf-relocations.json's
# os=linux it can, but at 100 x 1,000 it builds for some 20 minutes here).
WAITING_HERE = ("pietrek-2000.json", "office-cold-start.json", "churn.json", "program-ci.json")
LOCAL = sorted(set(LOCAL_FORM.values()))


def example(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return json.load(f)


def every_example():
    return sorted(os.path.relpath(p, EXAMPLES)
                  for p in glob.glob(os.path.join(EXAMPLES, "**", "*.json"), recursive=True))


def local_facts():
    """The facts the agent of `make run` reports on this machine."""
    p = subprocess.run([AGENT, "facts"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def cells(job):
    """The job's matrix cells as dicts ({} for a job without a matrix)."""
    matrix = job.get("matrix", {}).get("cells", {})
    keys = sorted(matrix)
    return [dict(zip(keys, values)) for values in itertools.product(*(matrix[k] for k in keys))]


def fact_text(fact):
    if isinstance(fact, bool):
        return "true" if fact else "false"
    if isinstance(fact, float) and fact.is_integer():
        return str(int(fact))
    return str(fact)


def matches(facts, cell):
    """A cell's values against an agent's facts: equal as text, or one of
    an array fact's members."""
    for key, value in cell.items():
        fact = facts.get(key)
        if isinstance(fact, list):
            if value not in fact:
                return False
        elif fact is None or fact_text(fact) != value:
            return False
    return True


def test_every_example_is_a_valid_job_submission():
    names = every_example()
    assert set(LOCAL_FORM) | set(LOCAL) <= set(names), names
    for name in names:
        validate("job_submit.json", example(name))
    # Every file is either a study's fleet form or its local form.
    assert set(names) == set(LOCAL_FORM) | set(LOCAL), set(names) ^ (set(LOCAL_FORM) | set(LOCAL))


def test_local_forms_keep_the_study_and_match_the_local_agent():
    facts = local_facts()
    assert facts["os"] == "linux" and facts["runner"] == "wine", facts
    for fleet, local in LOCAL_FORM.items():
        f, l = example(fleet), example(local)
        assert f["family"] == l["family"] and f["variants"] == l["variants"], (fleet, local)
        assert sorted(f["measure"]) == sorted(l["measure"]), (fleet, local)
        assert cells(l), "%s has no matrix" % local
        for cell in cells(l):
            assert matches(facts, cell), "%s: the local agent does not match %s (facts %s)" % (
                local, cell, facts)
    # The fleet forms target other machines.
    for fleet in WAITING_HERE:
        assert not any(matches(facts, c) for c in cells(example(fleet))), fleet


def program_folder(tmp):
    """A folder with the files local/program-ci.json names (their bytes do
    not matter to the daemon: it stores what it is given)."""
    folder = os.path.join(tmp, "dist")
    for path in example("local/program-ci.json")["program"]["files"]:
        os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
        with open(os.path.join(folder, path), "wb") as f:
            f.write(b"MZ not a real program: " + path.encode())
    return folder


def submit(d, name, *extra):
    p = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "submit",
                        os.path.join(EXAMPLES, name)] + list(extra),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (name, p.stdout, p.stderr)
    job_id = int(p.stdout.splitlines()[-1].split()[1].rstrip(":"))
    return job_id, p.stderr


def test_local_forms_are_accepted_and_can_run_now():
    tmp = tempfile.mkdtemp(prefix="loadlab-examples-")
    try:
        with Daemon() as d:
            d.enroll("make-run-agent", local_facts())
            for name in LOCAL:
                extra = ["--program-dir", program_folder(tmp)] if name == "local/program-ci.json" else []
                job_id, warnings = submit(d, name, *extra)
                assert "warning" not in warnings, (name, warnings)
                job = d.job(job_id)
                assert job["task_count"] == len(cells(example(name))) >= 1, (name, job)
                for task in job["tasks"]:
                    waiting = task["waiting"]
                    assert task["state"] == "queued" and waiting and waiting["could_run"], (name, task)
            # The fleet forms wait, and say for what.
            for fleet in ("pietrek-2000.json", "office-cold-start.json", "churn.json"):
                job_id, warnings = submit(d, fleet)
                assert "no agent has os=winxp" in warnings, (fleet, warnings)
                reasons = {t["waiting"]["reason"] for t in d.job(job_id)["tasks"]}
                assert all(r and r.startswith("no agent has os=") for r in reasons), (fleet, reasons)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_fleet_form_on_the_local_lab_says_the_real_reason_at_once():
    """The lab `make run` starts builds once for the whole matrix (its agent
    is a builder): a fleet form's tasks wait for a build that agent could
    start, but no enrolled agent can measure them. `submit` says so at once
    (issue 41: it warned "waiting for build 17 (queued)", and only after the
    build did `status` give the real reason), and its build is held: the
    builder starts nothing nobody would run. A local form, whose tasks wait
    only for a build that can start, gets no warning at all."""
    with Daemon(shared_build=True) as d:
        _, builder = d.enroll_builder("make-run-agent", local_facts())
        job_id, warnings = submit(d, "pietrek-2000.json")
        lines = warnings.splitlines()
        assert lines and all(l.startswith("loadlab submit: warning: ") for l in lines), warnings
        assert "warning: 2 tasks: no agent has os=winxp" in warnings, warnings
        assert "build" not in warnings, warnings
        job = d.job(job_id)
        assert job["builds"] and not job["builds"][0]["waiting"]["could_run"], job["builds"]
        assert job["builds"][0]["waiting"]["reason"].startswith(
            "held: no agent can measure what it builds (no agent has os="), job["builds"]
        r = d.api("POST", "/api/v1/lease", {"wait": 0}, token=builder)
        assert r.status == 204, r  # no build starts
        reasons = {t["waiting"]["reason"] for t in job["tasks"]}
        assert reasons == {"no agent has os=winxp", "no agent has os=win10"}, reasons
        # loadlab status gives the same reason
        p = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "status", str(job_id)],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and "no agent has os=winxp" in p.stdout, (p.stdout, p.stderr)
        assert "waiting for build" not in p.stdout, p.stdout
        # A local form waits only for its build, which can start: nothing to act on.
        job_id, warnings = submit(d, "quickstart.json")
        assert warnings == "", warnings
        reasons = {t["waiting"]["reason"] for t in d.job(job_id)["tasks"]}
        assert all(r.startswith("waiting for build") for r in reasons), reasons


def test_readme_quick_start_types_every_local_form():
    with open(os.path.join(SOURCE_DIR, "README.md")) as f:
        readme = f.read()
    quick = readme[readme.index("## Quick start"):]
    quick = quick[:quick.index("\n## ", 5)]
    for name in LOCAL:
        assert "submit schemas/examples/%s" % name in quick, "the quick start does not type %s" % name
    for fleet in LOCAL_FORM:
        assert "`%s`" % fleet in quick, "the quick start does not name %s" % fleet
    assert "--program-dir" in quick and "build_lua_mingw.sh" in quick


run_tests(globals())
