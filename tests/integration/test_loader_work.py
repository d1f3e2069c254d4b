"""The report's loader-work table (issue 40; server/reports/
report_loader_work.h): results carrying variants[].loader, posted to the
real daemon as an agent posts them, give the report a "loader_work" table
beside the times, in the JSON, the Markdown and `loadlab report`'s text,
and every row whose counts contradict its transform is flagged with the
reason and a finding:

- a pe job under Wine: `rebase` at its base (nothing to flag, the static
  count beside the probe's), `bind` whose binding holds in the files while
  Wine resolves every import (not flagged; the note says what Wine hides),
  `ordinal+bind` whose files hold no valid binding (flagged),
  `ordinal+rebase` that still applied 1,900 relocations (flagged), and
  `ordinal`, which verification refused for a moved DLL: its row is kept,
  "valid": false, and flagged;
- an elf job: `default` lazy, `now` bound now yet with lazy bindings after
  the start (flagged), the floor's time in the loader in glibc's unit;
- a job whose results carry no loader object has no table (no
  "loader_work" in its report).
The results are checked against schemas/result.json as posted, the
report against schemas/report.json."""
import random
import subprocess

from harness import LOADLAB, Daemon, load_example, run_tests
from schemacheck import validate

WINE_NOTE = "Wine ignores bound imports and resolves every import"


def warm(rng, center):
    return {"runs": 20, "samples_us": [round(center + rng.gauss(0, 3), 1) for _ in range(20)]}


def pe_loader(relocations, images_relocated, by_name, by_ordinal, static_bound, static_relocations=None):
    """A pe variant's loader as agent/family/pe/pe_loader.c writes it under Wine."""
    static = {"source": "static", "relocations": relocations if static_relocations is None else static_relocations,
              "images": 11, "images_relocated": images_relocated, "imports_by_name": by_name - static_bound,
              "imports_by_ordinal": by_ordinal, "imports_bound": static_bound}
    return {"source": "probe", "relocations": relocations, "images": 11, "images_relocated": images_relocated,
            "imports_by_name": by_name, "imports_by_ordinal": by_ordinal, "imports_bound": 0,
            "static": static, "cannot_show": WINE_NOTE + ": a valid binding saves nothing here."}


def post(d, token, body):
    lease = d.api("POST", "/api/v1/lease", {}, token=token).json()
    body = dict(body, attempt=lease["attempt"])
    validate("result.json", body)
    r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], body, token=token)
    assert r.status == 200, r


def cli(d, *args):
    r = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token] + list(args),
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def rows_of(report):
    return {(r["variant"], r["cell"]): r for r in report["loader_work"]["rows"]}


def test_pe_table():
    rng = random.Random(40)
    with Daemon() as d:
        job = d.submit(dict(load_example("pietrek-2000.json"), matrix={"cells": {"os": ["win10"]}},
                            variants=["default", "rebase", "bind", "ordinal", "ordinal+rebase",
                                      "ordinal+bind"]))
        _, token = d.enroll("pe-loader", {"os": "win10"})
        knobs = {"default": ("same", False, "name"), "rebase": ("unique", False, "name"),
                 "bind": ("unique", True, "name"), "ordinal+rebase": ("unique", False, "ordinal"),
                 "ordinal+bind": ("unique", True, "ordinal")}
        loaders = {"default": pe_loader(9000, 9, 1010, 0, 0),
                   "rebase": pe_loader(0, 0, 1010, 0, 0),
                   "bind": pe_loader(0, 0, 1010, 0, 1000),
                   "ordinal+rebase": pe_loader(1900, 1, 10, 1000, 0, static_relocations=1900),
                   "ordinal+bind": pe_loader(0, 0, 10, 1000, 0)}
        variants = [{"name": n, "valid": True, "knobs": {"bases": k[0], "bind": k[1], "imports": k[2],
                                                          "order": "link"},
                     "warm": warm(rng, 1000), "loader": loaders[n]} for n, k in knobs.items()]
        # verification refused it: not timed, its counts still shown
        variants.append({"name": "ordinal", "valid": False, "knobs": {"bases": "unique", "bind": False,
                                                                       "imports": "ordinal", "order": "link"},
                         "invalid_reason": "Bases 'unique': 1 DLLs relocated, expected none.",
                         "loader": pe_loader(40, 1, 10, 1000, 0)})
        post(d, token, {"facts": {"os": "win10"}, "family": "pe", "runner": "wine", "variants": variants})
        report = d.api("GET", "/api/v1/jobs/%d/report" % job["id"], token=d.admin_token).json()
        validate("report.json", report)
        rows = rows_of(report)
        assert len(rows) == 6 and report["loader_work"]["flagged"] == 3, report["loader_work"]
        assert [r["variant"] for r in report["loader_work"]["rows"]] == [
            "default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind"], report["loader_work"]
        refused = rows[("ordinal", "os=win10")]
        assert refused["valid"] is False and refused["flagged"] and "40 relocations" in refused["flag"], refused
        assert "valid" not in rows[("rebase", "os=win10")], rows
        assert not rows[("rebase", "os=win10")]["flagged"], rows
        assert not rows[("default", "os=win10")]["flagged"], rows
        bind = rows[("bind", "os=win10")]
        assert not bind["flagged"] and bind["imports_bound"] == 0 and bind["static_imports_bound"] == 1000, bind
        assert bind["source"] == "probe" and WINE_NOTE in bind["cannot_show"], bind
        moved = rows[("ordinal+rebase", "os=win10")]
        assert moved["flagged"] and "1900 relocations" in moved["flag"], moved
        unbound = rows[("ordinal+bind", "os=win10")]
        assert unbound["flagged"] and "no import has a valid binding" in unbound["flag"], unbound
        findings = [f for f in report["findings"] if "contradicts its transform" in f]
        assert len(findings) == 3 and any(f.startswith("ordinal+bind on os=win10") for f in findings), findings

        md = d.api("GET", "/api/v1/jobs/%d/report?format=md" % job["id"], token=d.admin_token).body.decode()
        assert "## Loader work" in md, md
        assert "| rebase | os=win10 | probe | 0 | – | – | 1010 | 0 | 0 | – |" in md, md
        assert "| bind | os=win10 | probe | 0 | – | – | 1010 | 0 | 0 (files: 1000) | – |" in md, md
        assert "| ordinal+rebase ⚑ | os=win10 | probe | 1900 |" in md, md
        assert "| ordinal (invalid, not timed) ⚑ | os=win10 | probe | 40 |" in md, md
        assert md.count(WINE_NOTE) == 1, md

        code, out, err = cli(d, "report", str(job["id"]))
        assert code == 0, (code, out, err)
        print(md)
        print(out)
        assert "0 (files 1000)" in out and "ordinal (invalid) !" in out, out
        assert "Loader work" in out and "ordinal+bind !" in out and "! ordinal+rebase: rebased" in out, out
        assert out.count(WINE_NOTE) == 1, out


def test_elf_table_and_none():
    rng = random.Random(41)
    with Daemon() as d:
        job = d.submit(dict(load_example("elf-relocations.json"), variants=["default", "now"]))
        _, token = d.enroll("elf-loader", {"os": "linux"})
        glibc = "glibc LD_DEBUG=statistics, one untimed run"
        loaders = {"default": {"source": glibc, "relocations": 333, "relative_relocations": 267,
                               "final_relocations": 359, "startup_time": 3145216, "time_unit": "cycles"},
                   "now": {"source": glibc, "relocations": 1333, "relative_relocations": 267,
                           "final_relocations": 1340, "startup_time": 4000000, "time_unit": "cycles"}}
        variants = [{"name": n, "valid": True, "knobs": {"bind": "lazy" if n == "default" else "now",
                                                         "relocs": "rela"},
                     "warm": warm(rng, 2000), "loader": loaders[n]} for n in ("default", "now")]
        post(d, token, {"facts": {"os": "linux"}, "family": "elf", "variants": variants,
                        "floor": {"loader": {"source": glibc, "not_counted": "the run exited with 1"}}})
        report = d.api("GET", "/api/v1/jobs/%d/report" % job["id"], token=d.admin_token).json()
        validate("report.json", report)
        rows = rows_of(report)
        lazy, now = rows[("default", "os=linux")], rows[("now", "os=linux")]
        assert not lazy["flagged"] and lazy["lazy_after_start"] == 26 and lazy["startup_time"] == 3145216, lazy
        assert now["flagged"] and "7 symbols were bound lazily" in now["flag"], now
        md = d.api("GET", "/api/v1/jobs/%d/report?format=md" % job["id"], token=d.admin_token).body.decode()
        assert "| default | os=linux | %s | 333 | 267 | 26 | – | – | – | 3145216 cycles |" % glibc in md, md
        code, out, err = cli(d, "report", str(job["id"]))
        assert code == 0 and "3145216 cycles" in out and "now !" in out, (code, out, err)

        # results without loader objects: no table
        job = d.submit(dict(load_example("elf-relocations.json"), name="plain", variants=["default"]))
        _, token = d.enroll("elf-plain", {"os": "linux"})
        post(d, token, {"facts": {"os": "linux"}, "variants": [{"name": "default", "valid": True,
                                                                "warm": warm(rng, 2000)}]})
        report = d.api("GET", "/api/v1/jobs/%d/report" % job["id"], token=d.admin_token).json()
        validate("report.json", report)
        assert "loader_work" not in report, report["loader_work"]
        code, out, err = cli(d, "report", str(job["id"]))
        assert code == 0 and "Loader work" not in out, out


run_tests(globals())
