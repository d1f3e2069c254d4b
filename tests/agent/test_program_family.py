"""The program family end to end: a real program this project did not write
(Lua 5.4 from Debian's source package, cross-built with mingw-w64 into
lua.exe and its own lua54.dll by build_lua_mingw.sh, cached in the build
tree) submitted with `loadlab submit --program-dir` to a real loadlabd and
run by the Linux agent under Wine: every variant verified under the debug
probe or invalid with its reason, every module listed with its preferred
and actual base, the warm and cold tables filled; a second job on the same
files downloads nothing. Then a fake server hands the agent hostile
manifests: nothing is written outside its data folder."""
import hashlib
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import program_jobs  # noqa: E402
from schemacheck import validate  # noqa: E402

LUA_DIR = os.path.join(harness.BUILD_DIR, "tests", "program-lua")
VARIANTS = program_jobs.VARIANTS


def build_lua():
    return program_jobs.build_cached("build_lua_mingw.sh", LUA_DIR, 600)


def program_folder(tmp):
    """The Lua build plus a second copy of its DLL (bin/lua54b.dll) that
    the script loads with package.loadlib: two DLLs asking for the same
    base, so `as-built` has a relocation to record and `rebase` a
    collision to remove."""
    folder = os.path.join(tmp, "lua")
    shutil.copytree(build_lua(), folder)
    shutil.copy(os.path.join(folder, "bin", "lua54.dll"), os.path.join(folder, "bin", "lua54b.dll"))
    return folder


def submit(d, folder, tmp, name, timeout_s=60):
    program = {"exe": "bin/lua.exe", "args": ["-e", "assert(package.loadlib('bin/lua54b.dll', '*'))"],
               "until": "exit", "timeout_s": timeout_s}
    return program_jobs.submit_program(d, folder, tmp, name, program)


result_of = program_jobs.result_of


def check_result(result):
    assert result["family"] == "program" and result["runner"] == "wine", result.get("runner")
    variants = {v["name"]: v for v in result["variants"]}
    assert list(variants) == VARIANTS
    for name, v in variants.items():
        assert v["knobs"]["bases"] in ("as-built", "unique"), v["knobs"]
        if not v["valid"]:
            # Invalid only with a reason, and never timed.
            assert v["invalid_reason"] and "warm" not in v, v
            continue
        verify = v["verify"]
        assert verify["ended"] == "exit" and verify["exit_code"] == 0, verify
        modules = verify["modules"]
        # Every module, with its preferred and actual base; the program's
        # exe and DLL among them, matched to their manifest paths.
        assert all(m["preferred"].startswith("0x") and m["actual"].startswith("0x") for m in modules)
        files = {m.get("file") for m in modules if m["program_file"]}
        assert {"bin/lua.exe", "bin/lua54.dll", "bin/lua54b.dll"} <= files, modules
        assert any(not m["program_file"] and m["name"].lower() == "kernel32.dll" for m in modules), modules
        dll = next(m for m in modules if m.get("file") == "bin/lua54.dll")
        if v["knobs"]["bases"] == "unique":
            assert dll["preferred"] == "0x60000000" and not dll["relocated"], dll
            assert verify["dlls_relocated"] == 0 and verify["relocated"] == [], verify
        else:
            assert dll["preferred"] == "0x38a2a0000" or int(dll["preferred"], 16) > 0, dll
        if v["knobs"]["aslr"] == "off":
            assert verify["files_with_aslr"] == 0, verify
        else:
            assert verify["files_with_aslr"] == 3, verify  # mingw sets DYNAMIC_BASE
        binding = verify["binding"]
        if v["knobs"]["bind"]:
            assert binding["present"] and binding["stale"] == 0 and binding["valid"], binding
            assert binding["loader_used_binding"] is False and "Wine" in binding["note"], binding
            names = {m["name"].lower() for m in binding["modules"]}
            assert {"lua54.dll", "kernel32.dll"} <= names, binding
        else:
            assert not binding["present"], binding
        assert {f["name"] for f in v["files"]} == {"bin/lua.exe", "bin/lua54.dll", "bin/lua54b.dll"}
        # Both DLLs loaded; as built they ask for one base, so one moved.
        assert verify["dll_count"] == 2 and verify["dlls_loaded"] == 2, verify
        if v["knobs"]["bases"] == "as-built":
            assert verify["dlls_relocated"] == 1 and len(verify["relocated"]) == 1, verify
        assert len(v["warm"]["samples_us"]) == program_jobs.WARM_RUNS and v["warm"]["min_us"] > 0, v["warm"]
        assert len(v["cold"]["samples_us"]) == 1, v["cold"]
    assert sum(v["valid"] for v in variants.values()) == len(VARIANTS), \
        [(n, v.get("invalid_reason")) for n, v in variants.items()]
    # The transform did what the knobs say to the files themselves.
    as_built = {f["name"]: f["sha256"] for f in variants["as-built"]["files"]}
    rebased = {f["name"]: f["sha256"] for f in variants["rebase"]["files"]}
    assert as_built["bin/lua54.dll"] != rebased["bin/lua54.dll"]
    assert len(result["floor"]["warm"]["samples_us"]) == program_jobs.WARM_RUNS


def test_real_program_end_to_end():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-program-") as tmp:
        folder = program_folder(tmp)
        data_dir = os.path.join(tmp, "agent")
        os.makedirs(data_dir)
        first = submit(d, folder, tmp, "lua-1")
        result = program_jobs.run_job(d, data_dir, first, "program-test")
        check_result(result)
        validate("result.json", result)
        cache = result["program"]["blob_cache"]
        # lua54b.dll is lua54.dll's bytes: one blob, fetched once.
        assert cache["fetched"] == 2 and cache["cached"] == 1, cache
        r = d.api("GET", "/api/v1/jobs/%d/report" % first, token=d.admin_token)
        assert r.status == 200, r
        rows = {row["variant"]: row for row in r.json()["warm"]["variants"]}
        assert set(rows) == set(VARIANTS) and all(c["status"] == "ok" for row in rows.values()
                                                  for c in row["cells"]), rows
        # A program is compared with itself as built, warm and cold.
        report = r.json()
        assert report["warm"]["baseline"] == "as-built", report["warm"]["baseline"]
        assert report["cold"]["baseline"] == "as-built", report["cold"]["baseline"]
        assert os.path.exists(os.path.join(data_dir, "blobs", "index.json"))
        # The same files again: nothing downloaded, both from the cache.
        second = submit(d, folder, tmp, "lua-2")
        code, log = program_jobs.run_agent_once(d.url, data_dir, d.enroll_token, "program-test")
        assert code == 0, log[-4000:]
        cache = result_of(d, second)["program"]["blob_cache"]
        assert cache["fetched"] == 0 and cache["cached"] == 3 and cache["bytes_fetched"] == 0, cache
        assert "program_blobs cached=3 fetched=0 bytes_fetched=0" in log, log[-2000:]


class FakeServer(http.server.BaseHTTPRequestHandler):
    """Enrolls anyone, leases the next of LEASES once each, serves BLOBS."""
    leases = []
    blobs = {}
    outcomes = []

    def log_message(self, *args):
        pass

    def answer(self, status, body=None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/api/v1/agents/enroll":
            return self.answer(201, {"id": 1, "token": "llagt_" + "0123456789abcdef" * 4})
        if self.path == "/api/v1/lease":
            return self.answer(200, FakeServer.leases.pop(0)) if FakeServer.leases else self.answer(204)
        if self.path.endswith("/fail") or self.path.endswith("/result"):
            FakeServer.outcomes.append((self.path, body.decode(errors="replace")))
        return self.answer(200, {})

    def do_GET(self):
        name = self.path.rsplit("/", 1)[-1]
        if self.path.startswith("/api/v1/blobs/") and name in FakeServer.blobs:
            data = FakeServer.blobs[name]
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        return self.answer(404, {"error": {"code": "not_found", "message": "no such blob"}})


def lease(task_id, files, exe):
    return {"task_id": task_id, "attempt": 1, "heartbeat_seconds": 5, "cell": {},
            "job": {"id": task_id, "name": "hostile", "family": "program",
                    "program": {"files": files, "exe": exe, "args": [], "until": "exit", "timeout_s": 10},
                    "variants": ["as-built"], "measure": {"warm": {"runs": 1, "warmup": 0}}}}


def tree(root):
    out = set()
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            out.add(os.path.relpath(os.path.join(base, name), root))
    return out


def test_hostile_manifest_writes_nothing_outside():
    payload = b"MZ not what the name says"
    good = hashlib.sha256(b"MZ something else").hexdigest()
    ref = "sha256:" + good
    FakeServer.blobs = {good: payload}  # served under a name it does not hash to
    FakeServer.leases = [
        lease(1, {"../../escaped.exe": ref}, "../../escaped.exe"),
        lease(2, {"bin/app.exe": ref, "/tmp/abs.dll": ref}, "bin/app.exe"),
        lease(3, {"bin/app.exe": ref, "C:/win.dll": ref, "bin/CON.dll": ref}, "bin/app.exe"),
        lease(4, {"bin/app.exe": ref, "bin/APP.exe": ref}, "bin/app.exe"),
        lease(5, {"bin/app.exe": ref}, "bin/app.exe"),
    ]
    FakeServer.outcomes = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory(prefix="loadlab-hostile-") as root:
            data_dir = os.path.join(root, "a", "b", "agent")
            os.makedirs(data_dir)
            before = tree(root)
            url = "http://127.0.0.1:%d" % server.server_address[1]
            for _ in range(5):
                code, log = program_jobs.run_agent_once(url, data_dir, "enroll", "program-test", timeout=300)
            after = tree(root)
            outside = {p for p in after - before if not p.startswith(os.path.join("a", "b", "agent"))}
            assert not outside, outside
            assert not os.path.exists("/tmp/abs.dll")
            # Every task failed, each with its reason; none produced a result.
            assert len(FakeServer.outcomes) == 5, (FakeServer.outcomes, log[-3000:])
            assert all(path.endswith("/fail") for path, _ in FakeServer.outcomes), FakeServer.outcomes
            assert "SHA-256" in FakeServer.outcomes[4][1], FakeServer.outcomes[4]
            # The mismatched blob was not kept in the cache.
            blobs = os.path.join(data_dir, "blobs")
            assert not os.path.exists(os.path.join(blobs, good))
            assert not [n for n in os.listdir(blobs) if n.endswith(".part")] if os.path.isdir(blobs) else True
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    harness.run_tests(dict(globals()))
