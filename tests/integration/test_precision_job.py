"""A job that asks for a precision instead of a number of runs (issue 40):
`measure.warm.precision_pct` and `max_seconds`, through a real loadlabd.
Bad input is refused with 400 and a message naming the field, and nothing
is stored; the issue's form is accepted and its normalized spec says runs
"auto", the precision, the time and the cap."""
import harness
from schemacheck import validate


def job(warm):
    return {"name": "precise", "family": "elf", "generator": {"dlls": 2, "exports": 10},
            "variants": ["default", "now"], "measure": {"warm": warm},
            "matrix": {"cells": {"os": ["linux"]}}}


def test_precision_pct_is_validated():
    bad = [
        ({"precision_pct": 0}, "precision_pct"),
        ({"precision_pct": 51}, "precision_pct"),
        ({"precision_pct": "1"}, "precision_pct"),
        ({"precision_pct": 1, "max_seconds": 0}, "max_seconds"),
        ({"precision_pct": 1, "max_seconds": 3601}, "max_seconds"),
        ({"precision_pct": 1, "runs": 30}, "runs"),
        ({"precision_pct": 1, "precision": 0.02}, "precision"),
        ({"max_seconds": 300}, "max_seconds"),
    ]
    with harness.Daemon() as d:
        for warm, field in bad:
            r = d.api("POST", "/api/v1/jobs", job(warm), token=d.admin_token)
            assert r.status == 400, (warm, r.status, r.body)
            validate("error.json", r.json())
            assert field in r.json()["error"]["message"], (warm, r.json())
        listed = d.api("GET", "/api/v1/jobs", token=d.admin_token).json()
        assert listed["jobs"] == [], listed
        r = d.api("POST", "/api/v1/jobs", job({"precision_pct": 1, "max_seconds": 300}),
                  token=d.admin_token)
        assert r.status == 201, r.body
        spec = d.api("GET", "/api/v1/jobs/%d" % r.json()["id"], token=d.admin_token).json()["spec"]
        warm = spec["measure"]["warm"]
        assert warm["runs"] == "auto" and warm["precision_pct"] == 1 and warm["max_seconds"] == 300, warm
        assert warm["max_runs"] == 200 and "precision" not in warm, warm


if __name__ == "__main__":
    harness.run_tests({"test_precision_pct_is_validated": test_precision_pct_is_validated})
