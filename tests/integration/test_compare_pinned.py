"""Compare's and the report's output pinned on a fixed data set, byte for
byte, so that making them faster cannot change an answer: two jobs of 12
agents x 6 variants with seeded samples (ties, unequal sample counts, an
invalid variant, a variant missing, a failed task, a result whose facts
differ, cold samples), compared both ways and reported with summaries
computed on demand, cached, and made by the background summarizer.

The expected documents are tests/integration/data/compare_pinned.json,
written by the code before issue 16's optimisations. To rewrite it after a
deliberate change of the statistics: test_compare_pinned.py --regen.

Since issue 23 compare's default metric is "auto" (floor-ratio where both
sides have a floor, else the median) and every row says the scope of its
interval: the pinned documents ask for the median by name and are checked
without the fields issue 23 added (NEW_ROW_FIELDS, "intervals"), which must
say "within-job" here (no history); the default's answer is pinned on its
own in data/compare_pinned_default.json, and its rows (no floors here:
judged by the median) must carry the median's figures bit for bit.

Issue 40 added each row's "detectable_pct" (and, above max_regression,
"underpowered" and "detectable_note") and the comparison's "power": the
median documents are checked without them (NEW_ROW_FIELDS), and the
default's pinned document was rewritten with --regen, checked to differ
by these additions only; the reports' warm cells gained "detectable_pct"
against the baseline (compare_pinned.json rewritten, checked equal
without it).

Issue 27 added to the report (rewritten with --regen, checked to differ
from the earlier documents by these additions only): the warm table's
"measured", each table's "unit", the "notes" of bind's cells (every result
here ran under Wine) with a finding per bound variant, and the Markdown's
layout (each table's unit, its notes below it, the findings last).
"""
import json
import os
import random
import sys
import time

from harness import Daemon, run_tests

PINNED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "compare_pinned.json")
PINNED_DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                              "compare_pinned_default.json")
NEW_ROW_FIELDS = ("metric", "interval_scope", "interval_low", "interval_high", "between_jobs", "judged",
                  "detectable_pct", "underpowered", "detectable_note")
REGEN = "--regen" in sys.argv
if REGEN:
    sys.argv.remove("--regen")

VARIANTS = ["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind"]
AGENTS = 12


def result_body(rng, agent, shift, side):
    """One agent's result: warm samples for most variants, with ties."""
    facts = {"os": "winxp" if agent % 2 else "win10", "disk": "ssd" if agent % 3 else "hdd",
             "cpu_model": "lab cpu", "runner": "wine"}
    if side == 1 and agent == 5:
        facts["cpu_model"] = "other cpu"
    variants = []
    for i, name in enumerate(VARIANTS):
        if name == "ordinal":
            variants.append({"name": name, "valid": False, "invalid_reason": "probe: 3 imports by name"})
            continue
        if name == "ordinal+rebase" and agent == 7:
            continue
        n = 30 if (agent + i + side) % 4 else 25
        center = (1000 + 40 * i) * shift.get(name, 1.0) * (1 + agent / 100.0)
        ties = 0 if agent % 4 else 1
        samples = [round(center + rng.gauss(0, 6), ties) for _ in range(n)]
        v = {"name": name, "valid": True, "warm": {"runs": n, "samples_us": samples}}
        if agent == 2 and name in ("default", "rebase"):
            v["cold"] = {"samples_us": [round(20000 + rng.gauss(0, 500), 1) for _ in range(5)],
                         "page_faults": [1200 + rng.randrange(50) for _ in range(5)],
                         "read_bytes": [4096 * (100 + rng.randrange(9)) for _ in range(5)],
                         "cold": True, "method": "evict"}
        variants.append(v)
    return {"facts": facts, "variants": variants}


def play_job(d, tokens, seed, shift, side):
    rng = random.Random(seed)
    job = d.submit({"name": "pinned-%d" % side, "family": "pe",
                    "generator": {"dlls": 2, "exports": 10}, "variants": VARIANTS,
                    "matrix": {"each_agent": {}}})["id"]
    for agent, token in enumerate(tokens):
        lease = d.api("POST", "/api/v1/lease", {}, token=token).json()
        if side == 1 and agent == 9:
            r = d.api("POST", "/api/v1/tasks/%d/fail" % lease["task_id"],
                      {"attempt": lease["attempt"], "reason": "out of memory", "retryable": False},
                      token=token)
            assert r.status == 200, r
            continue
        body = dict(result_body(rng, agent, shift, side), attempt=lease["attempt"])
        r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], body, token=token)
        assert r.status == 200, r
    return job


def get(d, path):
    r = d.api("GET", path, token=d.admin_token, timeout=120)
    assert r.status == 200, r
    return r.body.decode()


def documents(d, base, cand):
    """Every pinned document, by name."""
    q = "/api/v1/compare?baseline=%d&candidate=%d" % (base, cand)
    return {
        "compare": get(d, q + "&max_regression=3&metric=median"),
        "compare_reverse": get(d, "/api/v1/compare?baseline=%d&candidate=%d&metric=median" % (cand, base)),
        "compare_csv": get(d, q + "&format=csv&metric=median"),
        "compare_default": get(d, q + "&max_regression=3"),
        "report_base": get(d, "/api/v1/jobs/%d/report" % base),
        "report_cand": get(d, "/api/v1/jobs/%d/report?modules=1" % cand),
        "report_cand_md": get(d, "/api/v1/jobs/%d/report?format=md" % cand),
    }


def wait_summaries(d):
    deadline = time.time() + 60
    while "loadlab_summaries_pending 0\n" not in d.api("GET", "/metrics").body.decode():
        assert time.time() < deadline, "the summarizer did not finish"
        time.sleep(0.05)


def check(name, got, pinned):
    if got == pinned:
        return
    a, b = pinned.splitlines(), got.splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            break
    raise AssertionError("%s differs from the pinned output (line %d):\n pinned: %s\n    got: %s"
                         % (name, i + 1, x[:400] if a else "", y[:400] if b else ""))


def without_new_fields(text):
    """A compare's JSON as it was before issue 23, once its additions were
    checked: every row within-job (no history here), judged by the median."""
    doc = json.loads(text)
    assert doc.pop("intervals") == {"scope": "within-job", "history_jobs": 0,
                                    "rows_within_and_between_jobs": 0}, doc
    power = doc.pop("power")  # issue 40: what each row could have seen
    assert power["underpowered_rows"] == sum(1 for r in doc["rows"] if r.get("underpowered")), power
    for row in doc["rows"]:
        if row["status"] == "not_comparable":
            assert "interval_scope" not in row, row
            continue
        assert row["metric"] == "median" and row["interval_scope"] == "within-job", row
        assert (row["interval_low"], row["interval_high"]) == (row["ratio_ci_low"], row["ratio_ci_high"]), row
        assert "between_jobs" not in row, row
        for key in NEW_ROW_FIELDS:
            row.pop(key, None)
    return json.dumps(doc, separators=(",", ":"))


def pretty(text):
    """One value per line for JSON, so that a failure points at it."""
    try:
        return json.dumps(json.loads(text), indent=1, sort_keys=False)
    except ValueError:
        return text


def test_compare_and_report_are_pinned():
    d = Daemon().start()
    try:
        tokens = [d.enroll("agent%02d" % i, {"os": "pinned"})[1] for i in range(AGENTS)]
        base = play_job(d, tokens, 1, {}, 0)
        cand = play_job(d, tokens, 2, {"rebase": 1.08, "bind": 0.95, "ordinal+bind": 1.004}, 1)
        assert (base, cand) == (1, 2), (base, cand)
        wait_summaries(d)
        by_summarizer = documents(d, base, cand)
        # Restarted with the summarizer's queue filled from the store: the
        # first reports may race it; both paths must give the same bytes.
        d.restart_without_summaries()
        on_demand = documents(d, base, cand)
        cached = documents(d, base, cand)
    finally:
        d.close()
    for got in (by_summarizer, on_demand, cached):
        default = json.loads(got["compare_default"])
        median = json.loads(got["compare"])
        assert default["metric"] == "auto" and median["metric"] == "median", (default["metric"],)
        default["metric"] = "median"
        assert without_new_fields(json.dumps(default)) == without_new_fields(got["compare"])
        for name in ("compare", "compare_reverse"):
            got[name] = without_new_fields(got[name])
    docs = {k: pretty(v) for k, v in by_summarizer.items() if k != "compare_default"}
    docs_default = {"compare_default": pretty(by_summarizer["compare_default"])}
    if REGEN:
        os.makedirs(os.path.dirname(PINNED), exist_ok=True)
        for path, what in ((PINNED, docs), (PINNED_DEFAULT, docs_default)):
            with open(path, "w") as f:
                json.dump(what, f, indent=0, sort_keys=True)
                f.write("\n")
    with open(PINNED) as f:
        pinned = json.load(f)
    with open(PINNED_DEFAULT) as f:
        pinned.update(json.load(f))
    assert sorted(pinned) == sorted(list(docs) + list(docs_default)), sorted(pinned)
    for source, got in (("summarizer", by_summarizer), ("on demand", on_demand), ("cached", cached)):
        for name in sorted(pinned):
            check("%s (%s)" % (name, source), pretty(got[name]), pinned[name])
    cmp = json.loads(by_summarizer["compare"])
    statuses = {r["status"] for r in cmp["rows"]}
    assert {"slower", "faster", "no_significant_change", "not_comparable"} <= statuses, statuses
    assert cmp["verdict"] == "regression"


run_tests(globals())
