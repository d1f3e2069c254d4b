"""`loadlab help`, `loadlab alerts` and `loadlab agents` (issue 27) against a
real loadlabd: help lists every command and gives each one's own --help;
alerts lists the regression alerts a series opened (exit 1 while one is
open), acks one (exit 0), refuses a second ack and an unknown id (exit 2,
one line); agents shows every fact of an agent, the long ones on lines of
their own or on one line with --wide, never cut."""
import random
import re
import subprocess
import time

from harness import LOADLAB, Daemon, run_tests, wait_for
from schemacheck import validate

COMMANDS = ("help", "submit", "status", "jobs", "cancel", "agents", "calibrate", "report", "compare",
            "series", "schedule", "alerts", "pe")


def cli(d, *args):
    argv = [LOADLAB] + (["--server", d.url, "--token", d.admin_token] if d else []) + list(args)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def one_error_line(result, *needles):
    code, out, err = result
    assert code == 2 and out == "" and len(err.splitlines()) == 1, result
    for n in needles:
        assert n in err, (n, err)


def test_help_lists_every_command_and_gives_each_ones_help():
    code, out, err = cli(None, "help")
    assert code == 0 and err == "", (code, err)
    assert cli(None, "--help")[1] == out
    listed = re.findall(r"^  (\w+) ", out, re.M)
    assert set(COMMANDS) <= set(listed), listed
    for name in COMMANDS:
        code, own, err = cli(None, "help", name)
        assert code == 0 and own == cli(None, name, "--help")[1], (name, code, err)
        if name != "help":
            assert own.startswith("usage: loadlab " + name), (name, own)
    one_error_line(cli(None, "help", "staus"), "unknown command 'staus'", "did you mean 'status'")
    one_error_line(cli(None, "help", "a", "b"), "at most one COMMAND")
    one_error_line(cli(None, "alrets"), "did you mean 'alerts'")


JOB = {"name": "nightly", "family": "pe", "generator": {"dlls": 2, "exports": 10},
       "variants": ["default", "rebase"]}
FACTS = {"os": "winxp", "disk": "ssd", "runner": "wine"}


def play(d, token, rng, shift):
    lease = wait_for("a lease", lambda: d.api("POST", "/api/v1/lease", {}, token=token).json())
    variants = [{"name": name, "valid": True,
                 "warm": {"runs": 30, "samples_us": [round(center * (shift if name == "rebase" else 1)
                                                           + rng.gauss(0, 5), 1) for _ in range(30)]}}
                for name, center in (("default", 1000), ("rebase", 1100))]
    r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
              {"attempt": lease["attempt"], "facts": FACTS, "variants": variants}, token=token)
    assert r.status == 200, r


def test_alerts_lists_and_acks():
    with Daemon(extra_args=["--schedule-tick-ms", "100"]) as d:
        code, out, err = cli(d, "alerts")
        assert (code, out.strip()) == (0, "no alerts"), (code, out, err)
        assert d.api("PUT", "/api/v1/series/perf%2Fnightly", {"threshold_pct": 5},
                     token=d.admin_token).status == 200
        _, token = d.enroll("lab-1", FACTS)
        rng = random.Random(7)
        ids = []
        for rev, shift in (("r1", 1.0), ("r2", 1.2)):
            ids.append(d.submit(dict(JOB, series="perf/nightly", revision=rev))["id"])
            play(d, token, rng, shift)
        alerts = wait_for("the alert", lambda: d.api("GET", "/api/v1/alerts", token=d.admin_token).json()["alerts"])
        validate("alert_list.json", {"alerts": alerts})
        a = alerts[0]
        code, out, err = cli(d, "alerts")
        assert code == 1, (code, out, err)  # an open alert: the negative verdict
        lines = out.splitlines()
        assert lines[0].split()[:4] == ["ID", "SERIES", "JOB", "BASELINE"], out
        row = lines[1].split()
        assert row[:4] == [str(a["id"]), "perf/nightly", str(ids[1]), str(ids[0])], out
        assert row[4] == "%+.1f%%" % a["worst_change_pct"] and row[5] == "5.0%", out
        assert "rebase any +" in out and row[-1] == "open", out
        assert cli(d, "alerts", "--open")[:2] == (1, out)
        code, out, err = cli(d, "alerts", "ack", str(a["id"]))
        assert code == 0 and out.startswith("alert %d: acknowledged by " % a["id"]), (code, out, err)
        assert d.api("GET", "/api/v1/alerts?open=true", token=d.admin_token).json()["alerts"] == []
        code, out, err = cli(d, "alerts")
        assert code == 0 and "open" not in out.splitlines()[1], (code, out, err)
        assert cli(d, "alerts", "--open")[:2] == (0, "no alerts\n")
        one_error_line(cli(d, "alerts", "ack", str(a["id"])), "HTTP 409")
        one_error_line(cli(d, "alerts", "ack", "999"), "HTTP 404")
        one_error_line(cli(d, "alerts", "ack", "x"), "alert id")
        one_error_line(cli(d, "alerts", "ack"), "one alert ID")
        one_error_line(cli(d, "alerts", "nack", "1"), "unknown action 'nack'")
        one_error_line(cli(d, "alerts", "--colour"), "unknown option")


LONG = "/usr/lib/gcc-cross/x86_64-w64-mingw32/12/../../../../x86_64-w64-mingw32/bin/ld"


def test_agents_shows_every_fact_wrapped_or_wide():
    facts = {"os": "linux", "os_version": "6.1.0-18-amd64", "distro": "debian-12", "arch": "x86_64",
             "cpu_model": "AMD EPYC 7B13 64-Core Processor", "cores": 2, "ram_mb": 24105,
             "toolchain_paths": [LONG, "/usr/bin/gcc", "/usr/bin/clang"], "disk": "hdd", "fs": "ext4",
             "runner": "wine"}
    with Daemon() as d:
        d.enroll("lab-linux", facts, {"rack": "north", "owner": "perf-team"})
        code, out, err = cli(d, "agents")
        assert code == 0, (code, out, err)
        text = " ".join(out.split())
        for key, value in facts.items():
            shown = ",".join(value) if isinstance(value, list) else str(value)
            assert "%s=%s" % (key, shown) in text, (key, out)
        assert "rack=north" in text and "owner=perf-team" in text, out
        assert "..." not in out, out
        lines = out.splitlines()
        assert len(lines) > 2, out  # wrapped: continuation lines under the row
        facts_column = lines[0].index("FACTS")
        for line in lines[2:]:
            assert line[:facts_column].strip() in ("", "rack=north", "owner=perf-team"), out
        code, wide, err = cli(d, "agents", "--wide")
        assert code == 0 and len(wide.splitlines()) == 2, (code, wide, err)
        row = wide.splitlines()[1]
        for key, value in facts.items():
            shown = ",".join(value) if isinstance(value, list) else str(value)
            assert " %s=%s" % (key, shown) in row, (key, wide)
        assert row.endswith(" runner=wine"), wide
        one_error_line(cli(d, "agents", "extra"), "takes no arguments")


run_tests(globals())
