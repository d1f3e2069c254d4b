"""The Windows agents: what they import, and the x64 .exe under Wine.

The i686 (XP-class) .exe cannot run here (wine32:i386 installs, but this
machine's kernel starts no i386 program: test_xp_agent.py), so it is checked
statically: system DLLs only, nothing XP lacks by the headers' account.
The x64 .exe runs under /usr/lib/wine/wine64 with a private WINEPREFIX and
a wineserver this test starts ("-f -p": in the foreground, so the PID held
is the server's) and stops by its PID after `wineserver -k` for the prefix;
a Windows program's output is read through a file, never a pipe (Wine's
services inherit pipes and hold them open).

The Windows programs each agent carries (agent/programs/) are checked
statically too: its architecture, system DLLs only, nothing XP lacks in
the i686 ones.

The fleet test has the .exe enroll with a real loadlabd, lease the column's
job (10 DLLs x 20 exports x 2 globals, every variant) with --once and post
a result whose per-variant verification is checked as
test_pe_pipeline.py checks the Linux pipeline's. Under Wine the .exe builds
with the host's mingw-w64 through Wine's Unix exec (plat_spawn_host).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import schemacheck  # noqa: E402
import wine_template  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pe_checks  # noqa: E402

WIN64_EXE = os.path.join(os.environ.get("LOADLAB_WIN64_DIR",
                                        os.path.join(harness.SOURCE_DIR, "build-win64")),
                         "agent", "loadlab-agent.exe")
WIN32_EXE = os.path.join(os.environ.get("LOADLAB_WIN32_DIR",
                                        os.path.join(harness.SOURCE_DIR, "build-win32")),
                         "agent", "loadlab-agent.exe")
WINE64 = "/usr/lib/wine/wine64"
WINESERVER = "/usr/lib/wine/wineserver"

# What a Windows system provides; anything else would have to sit beside the .exe.
SYSTEM_DLLS = {"kernel32.dll", "advapi32.dll", "ws2_32.dll", "crypt32.dll", "msvcrt.dll",
               "bcrypt.dll", "user32.dll", "secur32.dll", "psapi.dll", "ntdll.dll",
               "shell32.dll", "iphlpapi.dll", "normaliz.dll", "wldap32.dll"}
# DLLs that XP does not have at all.
NOT_ON_XP_DLLS = {"bcrypt.dll", "ncrypt.dll", "normaliz.dll"}
# Functions of XP-era DLLs that only Vista or later export.
NOT_ON_XP_FUNCTIONS = {
    "GetTickCount64", "InitializeConditionVariable", "SleepConditionVariableCS",
    "SleepConditionVariableSRW", "WakeConditionVariable", "WakeAllConditionVariable",
    "InitializeSRWLock", "AcquireSRWLockExclusive", "AcquireSRWLockShared",
    "ReleaseSRWLockExclusive", "ReleaseSRWLockShared", "TryAcquireSRWLockExclusive",
    "CreateSymbolicLinkA", "CreateSymbolicLinkW", "GetFinalPathNameByHandleA",
    "GetFinalPathNameByHandleW", "InetPtonA", "InetPtonW", "InetNtopA", "InetNtopW",
    "inet_pton", "inet_ntop", "WSAPoll", "if_nametoindex", "if_indextoname",
    "GetSystemTimePreciseAsFileTime", "K32GetProcessMemoryInfo", "K32EnumProcessModules",
    "QueryFullProcessImageNameA", "QueryFullProcessImageNameW", "CancelIoEx",
    "GetFileInformationByHandleEx", "SetFileInformationByHandle", "CreateEventExA",
    "CreateEventExW", "InitOnceExecuteOnce", "InitOnceBeginInitialize", "FlsAlloc",
    "FlsFree", "FlsGetValue", "FlsSetValue", "GetLocaleInfoEx", "LCIDToLocaleName",
    "LocaleNameToLCID", "CompareStringEx", "RegGetValueA", "RegGetValueW",
    "GetErrorMode", "CreateThreadpoolWork", "GetCurrentProcessorNumber",
    "GetLogicalProcessorInformation", "SetThreadErrorMode", "GetThreadErrorMode",
}

# The column's job with a small generator, as tests/agent/test_pe_pipeline.py.
DLLS = 10
EXPORTS, GLOBALS, RUNS, VARIANTS = pe_checks.EXPORTS, pe_checks.GLOBALS, pe_checks.RUNS, pe_checks.VARIANTS
COLUMN_JOB = pe_checks.column_job("win-agent-column", DLLS, 1)


def objdump(exe, host):
    out = subprocess.run(["%s-objdump" % host, "-p", exe], check=True, capture_output=True,
                         timeout=120)
    return out.stdout.decode(errors="replace")


def imports_of(exe, host):
    """{dll (lower case): [function, ...]} from objdump -p's import tables."""
    imports, current = {}, None
    for line in objdump(exe, host).splitlines():
        m = re.match(r"\s*DLL Name: (\S+)", line)
        if m:
            current = m.group(1).lower()
            imports[current] = []
            continue
        m = re.match(r"\s+[0-9a-f]+\s+([0-9a-f]+\s+)?(\d+)\s+(\S+)\s*$", line)
        if current and m:
            imports[current].append(m.group(3))
        elif current and not line.strip():
            current = None
    return imports


def check_static(exe, host):
    assert os.path.exists(exe), "%s is missing: run make windows" % exe
    imports = imports_of(exe, host)
    assert "kernel32.dll" in imports and imports["kernel32.dll"], imports
    extra = set(imports) - SYSTEM_DLLS
    assert not extra, "imports DLLs that are not the system's: %s" % sorted(extra)
    # Nothing sits beside the .exe either.
    beside = [n for n in os.listdir(os.path.dirname(exe)) if n.lower().endswith(".dll")]
    assert not beside, beside
    return imports


def test_x64_agent_imports_only_system_dlls():
    check_static(WIN64_EXE, "x86_64-w64-mingw32")


def test_xp_agent_imports_nothing_xp_lacks():
    imports = check_static(WIN32_EXE, "i686-w64-mingw32")
    assert not [d for d in imports if d.startswith("api-ms-win-")], imports.keys()
    assert not set(imports) & NOT_ON_XP_DLLS, sorted(imports)
    late = sorted({f for funcs in imports.values() for f in funcs} & NOT_ON_XP_FUNCTIONS)
    assert not late, "post-XP imports: %s" % late
    assert len(imports["kernel32.dll"]) > 20  # the parser really read the table
    # And it was compiled for XP: the flags of its build tree.
    flags = os.path.join(os.path.dirname(WIN32_EXE), "CMakeFiles", "loadlab-agent.dir", "flags.make")
    with open(flags) as f:
        text = f.read()
    assert "-D_WIN32_WINNT=0x0501" in text and "-DPSAPI_VERSION=1" in text, text


def test_helper_programs_ship_for_the_agents_architecture():
    """The Windows programs inside each agent (agent/programs/programs.h),
    as its build made them: PE32+ in build-win64, PE32 in build-win32,
    system DLLs only, and for the XP-class agent nothing XP lacks."""
    names = {"churn_parent.exe", "churn_child.exe", "debug_probe.exe", "idle_launcher.exe",
             "empty_program.exe"}
    for exe, host, arch, magic in ((WIN64_EXE, "x86_64-w64-mingw32", "x86_64", "pei-x86-64"),
                                   (WIN32_EXE, "i686-w64-mingw32", "i686", "pei-i386")):
        folder = os.path.join(os.path.dirname(exe), "programs", arch)
        assert set(os.listdir(folder)) == names, (folder, os.listdir(folder))
        for name in sorted(names):
            path = os.path.join(folder, name)
            assert "file format %s" % magic in objdump(path, host), path
            imports = imports_of(path, host)
            assert "kernel32.dll" in imports and not set(imports) - SYSTEM_DLLS, (path, imports)
            if arch == "i686":
                assert not set(imports) & NOT_ON_XP_DLLS, (path, imports)
                late = sorted({f for funcs in imports.values() for f in funcs} & NOT_ON_XP_FUNCTIONS)
                assert not late, "%s: post-XP imports: %s" % (path, late)


class Wine:
    """A private WINEPREFIX with a persistent wineserver started here: a
    copy of the booted template (wine_template.py), else booted here."""

    # The first command run in a new prefix, which inits it.
    BOOT = ["wineboot", "-i"]
    # The first command run in a copy of the template: the loader's init
    # of the session (services.exe and the services it starts), which it
    # waits for; the command itself does nothing more.
    SESSION_START = ["cmd", "/c", "exit", "0"]

    def __enter__(self):
        self.prefix = tempfile.mkdtemp(prefix="loadlab-wine-")
        copied = wine_template.copy_to(self.prefix)
        self.env = dict(os.environ, WINEPREFIX=self.prefix, **wine_template.ENV)
        self.server = subprocess.Popen([WINESERVER, "-f", "-p"], stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=self.env)
        time.sleep(0.5)
        subprocess.run([WINE64] + (self.SESSION_START if copied else self.BOOT), stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env, timeout=300)
        self.tmp = tempfile.mkdtemp(prefix="loadlab-win-agent-")
        return self

    def start(self, args, name):
        """Starts the x64 agent with ARGS; its output goes to a file."""
        path = os.path.join(self.tmp, name + ".log")
        log = open(path, "wb")
        proc = subprocess.Popen([WINE64, WIN64_EXE] + args, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, env=self.env, cwd=self.tmp)
        log.close()
        return proc, path

    def run(self, args, name, timeout=120):
        proc, path = self.start(args, name)
        code = proc.wait(timeout)
        with open(path, "rb") as f:
            return code, f.read().decode(errors="replace")

    @staticmethod
    def windows_path(path):
        return "Z:" + path.replace("/", "\\")

    def __exit__(self, *exc):
        # The server ends every process of the prefix, then itself, by PID.
        subprocess.run([WINESERVER, "-k"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=self.env, timeout=60)
        self.server.terminate()
        try:
            self.server.wait(30)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


def parse_json_output(text):
    start = text.index("{")
    return json.loads(text[start:text.rindex("}") + 1])


def test_x64_agent_facts_under_wine():
    with Wine() as wine:
        code, out = wine.run(["facts"], "facts")
        assert code == 0, out
        facts = parse_json_output(out)
        assert facts["runner"] == "wine", facts
        assert re.match(r"^win(xp|vista|7|8|81|10|11)$", facts["os"]), facts
        assert re.match(r"^\d+\.\d+\.\d+$", facts["os_version"]), facts
        assert facts["arch"] == "x86_64" and facts["cores"] >= 1 and facts["ram_mb"] > 0
        assert facts["fs"] != "unknown" and facts["disk"] in ("hdd", "ssd", "nvme", "unknown")
        # The host's mingw-w64 is reachable from Windows as a Unix path on Z:.
        if os.path.exists("/usr/bin/x86_64-w64-mingw32-gcc"):
            i = facts["toolchains"].index("x86_64-w64-mingw32-gcc")
            assert facts["toolchain_paths"][i] == "Z:\\usr\\bin\\x86_64-w64-mingw32-gcc", facts


def verification_failures(result):
    """What the result's per-variant verification gets wrong (pe_checks.py)."""
    return pe_checks.verification_failures(result, VARIANTS, DLLS, EXPORTS, GLOBALS, RUNS)


def test_x64_agent_runs_the_column_job_under_wine():
    """Enrolls, leases the column's job, heartbeats, builds with the host's
    mingw-w64 through Wine, and posts a result whose verification holds."""
    with Wine() as wine, harness.Daemon(["--lease-seconds", "3"]) as d:
        data_dir = os.path.join(wine.tmp, "data")
        job = d.submit(COLUMN_JOB)
        proc, log_path = wine.start(
            ["--server", d.url, "--enroll-token", d.enroll_token, "--data-dir",
             wine.windows_path(data_dir), "--name", "wine-x64", "--labels", "lab=wine",
             "--log-format", "json", "--once"], "agent")
        try:
            agents = []
            deadline = time.time() + 120
            while time.time() < deadline and not agents:
                agents = d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"]
                time.sleep(0.3)
            assert agents, "the Windows agent did not enroll"
            agent = agents[0]
            assert agent["name"] == "wine-x64" and agent["labels"] == {"lab": "wine"}
            assert agent["facts"]["runner"] == "wine" and agent["facts"]["os"].startswith("win")
            with open(os.path.join(data_dir, "agent.json")) as f:
                assert json.load(f)["id"] == agent["id"]
            # Leased, and kept leased past the 3 s lease by heartbeats or
            # progress (the pipeline takes longer than that).
            expiries = set()
            deadline = time.time() + 900
            while time.time() < deadline and proc.poll() is None:
                task = d.api("GET", "/api/v1/jobs/%d" % job["id"],
                             token=d.admin_token).json()["tasks"][0]
                if task["state"] == "leased":
                    expiries.add(task["lease_expires_at"])
                time.sleep(0.3)
            code = proc.wait(60)
            task = d.api("GET", "/api/v1/jobs/%d" % job["id"], token=d.admin_token).json()["tasks"][0]
            with open(log_path, "rb") as f:
                log = f.read().decode(errors="replace")
            assert any('"event":"task_leased"' in line for line in log.splitlines()), log
            assert task["attempt"] == 1, (task, log[-3000:])
            assert task["state"] == "done", "the pe pipeline failed under the Windows agent: %s\n%s" % (
                task["last_error"], log[-3000:])
            assert code == 0, (code, log[-3000:])
            assert len(expiries) >= 2, expiries  # heartbeats renewed the lease

            results = harness.results_of(d, task["id"])
            assert len(results) == 1, results
            attempt, body = results[0]
            assert body["attempt"] == attempt == 1
            schemacheck.validate("result.json", body)
            # Built by the host's cross compiler, reached through Wine's Z: drive.
            assert body["toolchain"]["compiler"] == "Z:\\usr\\bin\\x86_64-w64-mingw32-gcc", body["toolchain"]
            assert body["facts"]["runner"] == "wine", body["facts"]
            failures = verification_failures(body)
            assert not failures, "\n".join(failures)
            # Delivered and cleaned up: nothing spooled, the work folder
            # removed, no exit-code markers of host programs left behind.
            assert not os.listdir(os.path.join(data_dir, "spool"))
            left = [os.path.relpath(os.path.join(root, n), data_dir)
                    for root, dirs, names in os.walk(os.path.join(data_dir, "work")) for n in names]
            assert not os.listdir(os.path.join(data_dir, "work")), (left[:20], log[-2000:])
            leftovers = [os.path.join(root, n) for root, _, names in os.walk(wine.prefix)
                         for n in names if n.startswith("loadlab-host-")]
            assert not leftovers, leftovers
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    harness.run_tests(globals())
