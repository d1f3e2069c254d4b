#!/usr/bin/env python3
"""Issue 17's capacity checks against a real loadlabd (not part of ctest:
about a minute of two cores; run by hand, see docs/benchmarks.md).

1. 5,000 enrolled agents, each with its own token, long-poll
   POST /api/v1/lease {"wait": 60} at once over 5,000 connections from
   127.0.0.2..127.0.0.26 (200 each, under the default --per-ip-limit of
   256). Every 204 is re-polled at once, so 5,000 distinct long-polls stay
   parked. Throughout, /healthz from 127.0.0.1 must answer in under a
   second; a job submitted meanwhile must be leased by one of the parked
   agents within a second; the daemon's resident memory must stay under
   64 MiB.
2. 1,100 connections from 127.0.0.2..127.0.0.6 (220 each) send a request
   line and then one header line a second, never finishing their headers;
   127.0.0.7 must still be served, and the dribblers must be closed at the
   header deadline.

Usage: bench_fleet.py [BUILD_DIR] [--agents N]   (default: ./build, 5,000
agents; `make bench` runs it with 1,000). Prints the figures, BENCH lines
for bench_table.py, and exits 1 when a check fails.
"""
import json
import os
import resource
import selectors
import socket
import sys
import threading
import time
import http.client

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
AGENTS = 5000
if "--agents" in sys.argv:
    i = sys.argv.index("--agents")
    AGENTS = int(sys.argv[i + 1])
    del sys.argv[i:i + 2]
if len(sys.argv) > 1:
    os.environ["LOADLAB_BUILD_DIR"] = os.path.abspath(sys.argv[1])
from harness import Daemon  # noqa: E402

PER_ADDRESS = 200
DRIBBLERS = 1100
DRIBBLE_ADDRESSES = 5
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def healthz_ms(host, port, source="127.0.0.1"):
    start = time.time()
    s = socket.create_connection((host, port), timeout=5, source_address=(source, 0))
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n")
        got = s.recv(4096)
    finally:
        s.close()
    if not got.startswith(b"HTTP/1.1 200"):
        raise RuntimeError("healthz answered %r" % got[:60])
    return (time.time() - start) * 1000


def enroll_all(d, count):
    """COUNT agents through POST /api/v1/agents/enroll, 16 at a time."""
    host, port = d.url.split("//")[1].split(":")
    tokens = [None] * count

    def worker(first):
        c = http.client.HTTPConnection(host, int(port), timeout=30)
        for i in range(first, count, 16):
            body = json.dumps({"name": "agent-%d" % i, "facts": {"os": "win10"}, "labels": {}})
            c.request("POST", "/api/v1/agents/enroll", body,
                      {"Authorization": "Bearer " + d.enroll_token,
                       "Content-Type": "application/json"})
            r = c.getresponse()
            answer = r.read()
            if r.status != 201:
                raise RuntimeError("enroll: %d %r" % (r.status, answer))
            tokens[i] = json.loads(answer)["token"]
        c.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(tokens)
    return tokens


class Poller:
    """AGENTS long-polls over raw sockets and one selector."""

    def __init__(self, host, port, tokens):
        self.sel = selectors.DefaultSelector()
        self.host, self.port = host, port
        self.leased = []          # (time, agent index)
        self.answers = {}         # status -> count
        self.socks = []
        for i, tok in enumerate(tokens):
            source = "127.0.0.%d" % (2 + i // PER_ADDRESS)
            s = socket.socket()
            s.setblocking(False)
            s.bind((source, 0))
            s.connect_ex((host, port))
            self.sel.register(s, selectors.EVENT_WRITE, [i, tok, b""])
            self.socks.append(s)

    def request(self, tok):
        body = b'{"wait":60}'
        return (b"POST /api/v1/lease HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer %s\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (tok.encode(), len(body), body))

    def run_for(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            for key, events in self.sel.select(timeout=0.05):
                s, state = key.fileobj, key.data
                if events & selectors.EVENT_WRITE:
                    s.send(self.request(state[1]))
                    self.sel.modify(s, selectors.EVENT_READ, state)
                    continue
                try:
                    chunk = s.recv(65536)
                except ConnectionError:
                    chunk = b""
                if not chunk:
                    self.answers["closed"] = self.answers.get("closed", 0) + 1
                    self.sel.unregister(s)
                    continue
                state[2] += chunk
                head, sep, rest = state[2].partition(b"\r\n\r\n")
                if not sep:
                    continue
                status = int(head.split(b" ", 2)[1])
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if len(rest) < length:
                    continue
                state[2] = b""
                self.answers[status] = self.answers.get(status, 0) + 1
                if status == 200:
                    self.leased.append((time.time(), state[0]))
                    self.sel.unregister(s)   # this agent is busy now
                else:
                    s.send(self.request(state[1]))


def metric(d, name):
    text = d.api("GET", "/metrics").body.decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def fleet():
    with Daemon() as d:
        host, port = d.url.split("//")[1].split(":")
        port = int(port)
        start = time.time()
        tokens = enroll_all(d, AGENTS)
        print("enrolled %d agents in %.1f s" % (AGENTS, time.time() - start), flush=True)
        rss_idle = rss_kib(d.proc.pid)
        poller = Poller(host, port, tokens)
        start = time.time()
        while time.time() - start < 30:
            poller.run_for(0.5)
            if (metric(d, "loadlab_long_polls") or 0) >= AGENTS:
                break
        parked = metric(d, "loadlab_long_polls")
        print("%d long-polls parked after %.1f s" % (parked, time.time() - start), flush=True)
        check(parked == AGENTS, "all %d agents long-poll at once (%d parked)" % (AGENTS, parked))
        latencies, rss_peak = [], 0
        for _ in range(20):
            poller.run_for(0.25)
            latencies.append(healthz_ms(host, port))
            rss_peak = max(rss_peak, rss_kib(d.proc.pid))
        submitted = time.time()
        d.submit({"name": "fleet", "family": "pe", "generator": {"dlls": 2, "exports": 3},
                  "variants": ["default"]})
        while not poller.leased and time.time() - submitted < 5:
            poller.run_for(0.02)
        leased_after = (poller.leased[0][0] - submitted) if poller.leased else None
        for _ in range(8):
            poller.run_for(0.25)
            latencies.append(healthz_ms(host, port))
            rss_peak = max(rss_peak, rss_kib(d.proc.pid))
        print("healthz under load: max %.1f ms, median %.1f ms over %d probes"
              % (max(latencies), sorted(latencies)[len(latencies) // 2], len(latencies)))
        print("daemon RSS: %.1f MiB idle after enrolment, %.1f MiB peak with %d long-polls "
              "(%.1f KiB per long-poll)" % (rss_idle / 1024, rss_peak / 1024, AGENTS,
                                            (rss_peak - rss_idle) / AGENTS))
        print("answers seen by the agents: %r" % poller.answers)
        print("BENCH fleet_rss_%d_long_polls %.1f MiB %.1f - figure<=64" % (AGENTS, rss_peak / 1024,
                                                                        rss_idle / 1024))
        print("BENCH fleet_healthz_max_%d %.1f ms - - figure<=1000" % (AGENTS, max(latencies)))
        check(max(latencies) < 1000, "/healthz answered in under a second throughout")
        check(leased_after is not None and leased_after < 1.0,
              "a job submitted meanwhile is leased within a second (%s s)"
              % ("%.3f" % leased_after if leased_after is not None else "never"))
        check(len(poller.leased) == 1, "exactly one agent leased the one task")
        check(rss_peak < 64 * 1024, "daemon RSS under 64 MiB (%.1f MiB)" % (rss_peak / 1024))
        for s in poller.socks:
            s.close()


def dribblers():
    with Daemon() as d:
        host, port = d.url.split("//")[1].split(":")
        port = int(port)
        socks = []
        for i in range(DRIBBLERS):
            source = "127.0.0.%d" % (2 + i % DRIBBLE_ADDRESSES)
            s = socket.create_connection((host, port), timeout=5, source_address=(source, 0))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: b\r\n")
            socks.append(s)
        opened = time.time()
        print("%d dribbling connections open from %d addresses" % (DRIBBLERS, DRIBBLE_ADDRESSES))
        served, worst = 0, 0.0
        closed = 0
        while time.time() - opened < 14:
            for s in socks:
                try:
                    s.send(b"X-Dribble: 1\r\n")
                except OSError:
                    pass
            try:
                ms = healthz_ms(host, port, source="127.0.0.7")
                served += 1
                worst = max(worst, ms)
            except (OSError, RuntimeError):
                pass
            time.sleep(1)
        for s in socks:
            s.settimeout(0.01)
            try:
                if s.recv(1) == b"":
                    closed += 1
            except socket.timeout:
                pass
            except OSError:
                closed += 1
            s.close()
        print("127.0.0.7 served %d of its probes, slowest %.1f ms; %d of %d dribblers closed "
              "by the header deadline; loadlab_http_header_timeouts_total %s"
              % (served, worst, closed, DRIBBLERS, metric(d, "loadlab_http_header_timeouts_total")))
        check(served >= 14 and worst < 1000, "a sixth address is served throughout")
        check(closed == DRIBBLERS, "every dribbler closed at the header deadline")


def raise_open_files():
    """This process holds AGENTS + DRIBBLERS sockets at once: the soft
    open-files limit is raised to the hard one (often 1,024 soft), and
    the run stops early when even that is too few. The daemon raises its
    own (it logs `capacity open_files=...`; --max-connections caps it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(AGENTS, DRIBBLERS) + 100
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    if soft != resource.RLIM_INFINITY and soft < need:
        sys.exit("bench_fleet: needs %d open files, the hard limit is %d" % (need, soft))


if __name__ == "__main__":
    raise_open_files()
    fleet()
    dribblers()
    print("%d checks failed" % len(failures))
    sys.exit(1 if failures else 0)
