"""Bad input gets a clear 4xx JSON error and changes nothing."""
import copy
import http.client
import json
import socket
import urllib.parse

from harness import Daemon, load_example, run_tests
from schemacheck import validate

GOOD = {"name": "ok", "family": "pe", "generator": {"dlls": 2, "exports": 3},
        "variants": ["default"]}


def with_change(path, value):
    """GOOD with the dotted PATH set to VALUE (or removed when VALUE is ...)."""
    job = copy.deepcopy(GOOD)
    node = job
    keys = path.split(".")
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    if value is ...:
        node.pop(keys[-1], None)
    else:
        node[keys[-1]] = value
    return job


BAD_JOBS = [
    ("family", "win32", "invalid_argument", "family"),
    ("family", 3, "invalid_argument", "family"),
    ("name", ..., "invalid_argument", "name"),
    ("name", "", "out_of_range", "name"),
    ("name", "x" * 129, "out_of_range", "name"),
    ("variants", ["default", "turbo"], "invalid_argument", "turbo"),
    ("variants", [], "out_of_range", "variants"),
    ("variants", ["default", "default"], "invalid_argument", "twice"),
    ("variants", "default", "invalid_argument", "variants"),
    ("variants", [{"name": "x", "bases": "random"}], "invalid_argument", "bases"),
    ("variants", [{"name": "x", "bind": True}], "invalid_argument", "binds"),
    ("variants", [{"name": "x", "bogus": 1}], "invalid_argument", "bogus"),
    ("generator.dlls", 0, "out_of_range", "dlls"),
    ("generator.dlls", 257, "out_of_range", "dlls"),
    ("generator.dlls", 2.5, "invalid_argument", "dlls"),
    ("generator.dlls", "10", "invalid_argument", "dlls"),
    ("generator.exports", 4097, "out_of_range", "exports"),
    ("generator.globals_per_function", -1, "out_of_range", "globals_per_function"),
    ("generator.main", "run", "invalid_argument", "main"),
    ("generator.extra", 1, "invalid_argument", "extra"),
    ("generator", ..., "invalid_argument", "generator"),
    ("measure.warm.runs", 0, "out_of_range", "runs"),
    ("measure.warm.runs", 1e300, "invalid_argument", "runs"),
    ("measure.cold.runs", 201, "out_of_range", "runs"),
    ("measure.churn.processes", 5001, "out_of_range", "processes"),
    ("measure.churn.dll_sets", ["kernel32"], "invalid_argument", "DLL set"),
    ("measure", {}, "invalid_argument", "measure"),
    ("matrix", {"cells": {"OS": ["x"]}}, "invalid_argument", "OS"),
    ("matrix", {"cells": {"os": "win10"}}, "invalid_argument", "os"),
    ("matrix", {"cells": {"os": [1]}}, "invalid_argument", "os"),
    ("matrix", {"cells": {"os": ["a"]}, "each_agent": {}}, "invalid_argument", "either"),
    ("matrix", {"cells": {"a": [str(i) for i in range(16)], "b": [str(i) for i in range(17)]}},
     "invalid_argument", "b"),
    ("matrix", {"cells": {k: [str(i) for i in range(4)] for k in ("a", "b", "c", "d", "e")}},
     "out_of_range", "256"),
    ("generator", {"dlls": 256, "exports": 4096}, "out_of_range", "100000"),
    ("priority", 101, "out_of_range", "priority"),
    ("unknown_field", True, "invalid_argument", "unknown_field"),
]


def job_count(d):
    return len(d.api("GET", "/api/v1/jobs?limit=200", token=d.admin_token).json()["jobs"])


def raw_post(d, path, body, token, headers=None):
    u = urllib.parse.urlparse(d.url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    h = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    h.update(headers or {})
    c.request("POST", path, body=body, headers=h)
    r = c.getresponse()
    out = (r.status, r.read())
    c.close()
    return out


def post_oversized(d, path, body, token):
    """POST BODY, larger than the route takes: the daemon answers from the
    headers and may close before the body is sent, so a send that fails
    is not the answer. (status, answer body)."""
    u = urllib.parse.urlparse(d.url)
    s = socket.create_connection((u.hostname, u.port), timeout=30)
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n"
               "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
               % (path, token, len(body))).encode())
    try:
        s.sendall(body)
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer = b""
    try:
        while True:
            got = s.recv(65536)
            if not got:
                break
            answer += got
    except ConnectionResetError:
        pass
    s.close()
    head, _, text = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), text


def test_bad_jobs_are_refused_with_a_clear_error():
    with Daemon() as d:
        for path, value, code, word in BAD_JOBS:
            r = d.api("POST", "/api/v1/jobs", with_change(path, value), token=d.admin_token)
            assert r.status == 400, (path, value, r)
            validate("error.json", r.json())
            err = r.json()["error"]
            assert err["code"] == code, (path, value, err)
            assert word in err["message"], (path, value, err)
        assert job_count(d) == 0
        # The schema agrees with the daemon on every one of them, except the
        # rules JSON Schema cannot state: products of sizes (cells, dlls *
        # exports), distinct names, and knob combinations.
        daemon_only = ("256", "100000", "twice", "binds")
        for path, value, _, word in BAD_JOBS:
            try:
                validate("job_submit.json", with_change(path, value))
            except Exception:
                continue
            if word not in daemon_only:
                raise AssertionError("schema accepts %s=%r" % (path, value))


def test_malformed_bodies():
    with Daemon() as d:
        cases = [b"", b"{", b"[1,2]", b"null", b"{\"name\": \"x\"} trailing", b"\xff\xfe",
                 b"{\"a\":\"\x00\"}", b"[" * 100 + b"]" * 100, b"{\"a\":" * 40 + b"1" + b"}" * 40]
        for body in cases:
            status, text = raw_post(d, "/api/v1/jobs", body, d.admin_token)
            assert status == 400, (body[:20], status, text)
            err = json.loads(text)["error"]
            assert err["code"] in ("malformed", "invalid_argument", "too_deep"), err
            assert err["message"].endswith("."), err
        status, text = raw_post(d, "/api/v1/jobs", b"[" * 100 + b"]" * 100, d.admin_token)
        assert json.loads(text)["error"]["code"] == "too_deep"
        assert job_count(d) == 0


def test_oversized_bodies_get_413_before_the_body_is_read():
    with Daemon() as d:
        # Jobs take 1 MiB (a program's manifest of 4,096 files).
        big = json.dumps(dict(GOOD, name="x" * (1100 * 1024))).encode()
        status, text = post_oversized(d, "/api/v1/jobs", big, d.admin_token)
        assert status == 413 and json.loads(text)["error"]["code"] == "too_large", (status, text)
        # The daemon answers from the header alone: announce 1 GiB, send nothing.
        u = urllib.parse.urlparse(d.url)
        s = socket.create_connection((u.hostname, u.port), timeout=10)
        s.sendall(("POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                   "Content-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n"
                   % d.admin_token).encode())
        head = s.recv(4096).decode()
        s.close()
        assert head.startswith("HTTP/1.1 413"), head
        # Chunked, with no length: cut off at the limit.
        def chunks():
            for _ in range(600):
                yield b"[" + b"1," * 1000 + b"1]"
        u = urllib.parse.urlparse(d.url)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        c.request("POST", "/api/v1/jobs", body=chunks(), encode_chunked=True,
                  headers={"Authorization": "Bearer " + d.admin_token})
        r = c.getresponse()
        assert r.status == 413, r.status
        c.close()
        assert job_count(d) == 0
        # Results may be larger (4 MiB), jobs 1 MiB, other routes are 64 KiB.
        token = json.dumps({"kind": "user", "name": "x" * 70000}).encode()
        status, text = raw_post(d, "/api/v1/tokens", token, d.admin_token)
        assert status == 413, (status, text)
        assert d.api("GET", "/healthz").status == 200


def test_bad_agent_and_task_bodies():
    with Daemon() as d:
        d.submit(GOOD)
        for body in ({"name": ""}, {"name": "a", "facts": []}, {"name": "a", "facts": {"Bad": 1}},
                     {"name": "a", "facts": {"x": {"y": 1}}}, {"name": "a", "labels": {"a": 1}},
                     {"name": "a", "extra": 1}, {"facts": {}}):
            r = d.api("POST", "/api/v1/agents/enroll", body, token=d.enroll_token)
            assert r.status == 400, (body, r)
        assert d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"] == []
        aid, tok = d.enroll("a", {"os": "x"})
        t = d.api("POST", "/api/v1/lease", {}, token=tok).json()
        path = "/api/v1/tasks/%d/" % t["task_id"]
        for sub, body in (("progress", {"attempt": 1, "phase": "nap", "percent": 1}),
                          ("progress", {"attempt": 1, "phase": "build", "percent": 101}),
                          ("progress", {"attempt": "1", "phase": "build", "percent": 1}),
                          ("result", {"attempt": 1, "facts": {}}),
                          ("result", {"attempt": 1, "facts": {}, "variants": [{"no": "name"}]}),
                          ("result", {"attempt": 0, "facts": {}, "variants": []}),
                          ("fail", {"attempt": 1}),
                          ("fail", {"attempt": 1, "reason": "x" * 2001})):
            r = d.api("POST", path + sub, body, token=tok)
            assert r.status == 400, (sub, body, r)
        r = d.api("POST", "/api/v1/lease", {"wait": 61}, token=tok)
        assert r.status == 400 and "wait" in r.json()["error"]["message"], r
        r = d.api("PATCH", "/api/v1/agents/%d" % aid, {"quarantined": "yes"}, token=d.admin_token)
        assert r.status == 400, r
        r = d.api("POST", "/api/v1/tasks/999/result", {"attempt": 1, "facts": {}, "variants": []},
                  token=tok)
        assert r.status == 404, r
        job = d.api("GET", "/api/v1/jobs/1", token=d.admin_token).json()
        assert job["tasks"][0]["state"] == "leased" and job["tasks"][0]["phase"] is None


def test_routing_errors():
    with Daemon() as d:
        assert d.api("GET", "/api/v1/nothing").status == 404
        r = d.api("DELETE", "/api/v1/jobs", token=d.admin_token)
        assert r.status == 405 and r.json()["error"]["code"] == "method_not_allowed", r
        assert d.api("GET", "/api/v1/jobs/0", token=d.admin_token).status == 404
        assert d.api("GET", "/api/v1/jobs/12x", token=d.admin_token).status == 404
        assert d.api("GET", "/api/v1/jobs/99999999999999999999", token=d.admin_token).status == 404
        r = d.api("GET", "/api/v1/jobs/42", token=d.admin_token)
        assert r.status == 404 and "42" in r.json()["error"]["message"], r
        # Reports check their arguments.
        jid = d.submit(load_example("pietrek-2000.json"))["id"]
        assert d.api("GET", "/api/v1/jobs/77/report", token=d.admin_token).status == 404
        assert d.api("GET", "/api/v1/jobs/%d/report?format=pdf" % jid,
                     token=d.admin_token).status == 400
        assert d.api("GET", "/api/v1/compare?baseline=%d" % jid, token=d.admin_token).status == 400
        assert d.api("GET", "/api/v1/compare?baseline=%d&candidate=x" % jid,
                     token=d.admin_token).status == 400
        r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d&max_regression=-1" % (jid, jid),
                  token=d.admin_token)
        assert r.status == 400 and "max_regression" in r.json()["error"]["message"], r


run_tests(globals())
