"""Request bodies that cannot hold the daemon's resources, against a real
loadlabd over raw sockets: an upload's quota is reserved as its bytes
arrive, not from its Content-Length; a connection closed mid-body releases
its temporary file, descriptor and reservation at once (not at
--connection-timeout); a body trickled below --body-min-rate or running past
--body-timeout is cut; an unknown route or a missing token is answered
before any body byte is read."""
import hashlib
import os
import re
import socket
import urllib.parse

from harness import Daemon, run_tests, wait_for

BLOBS = "/api/v1/blobs/"


def sha(data):
    return hashlib.sha256(data).hexdigest()


def address(d):
    u = urllib.parse.urlparse(d.url)
    return u.hostname, u.port


def metric(d, name):
    text = d.api("GET", "/metrics").body.decode()
    m = re.search(r"^%s (\d+)$" % re.escape(name), text, re.M)
    assert m, (name, text)
    return int(m.group(1))


def tmp_files(d):
    return os.listdir(os.path.join(d.data_dir, "blobs", "tmp"))


def open_put(d, name, length, body=b"", token=None):
    s = socket.create_connection(address(d), timeout=10)
    s.sendall(("PUT %s%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
               "Content-Length: %d\r\n\r\n" % (BLOBS, name, token or d.admin_token, length)).encode()
              + body)
    return s


def status_of(s, timeout=10):
    """The status of the answer on S, or None when the daemon closed it unanswered."""
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else None


def closed_by_daemon(s, timeout):
    """True once the daemon closes S (EOF or reset) within TIMEOUT seconds."""
    s.settimeout(timeout)
    try:
        while True:
            if s.recv(4096) == b"":
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def trickle_until_closed(s, piece):
    """Sends PIECE on S every 0.5 s for up to 30 s; True once the daemon
    closed S. Closes S."""
    try:
        for _ in range(60):
            s.sendall(piece)
            if closed_by_daemon(s, 0.5):
                return True
        return False
    except OSError:
        return True
    finally:
        s.close()


def test_quota_is_reserved_as_bytes_arrive():
    # 2 MiB of quota; an upload that announces 1.5 MiB and sends 10 bytes
    # holds 10 bytes of it, so a 1 MiB blob still fits.
    with Daemon(["--blob-quota-bytes", str(2 << 20)]) as d:
        s = open_put(d, sha(b"never"), 3 << 19, b"0123456789")
        wait_for("the upload's start", lambda: len(tmp_files(d)) == 1)
        assert metric(d, "loadlab_blob_reserved_bytes") <= 10
        data = os.urandom(1 << 20)
        r = d.api("PUT", BLOBS + sha(data), data, token=d.admin_token)
        assert r.status == 201, r
        # An announced size beyond what is free is still refused at once.
        t = open_put(d, sha(b"big"), 2 << 20)
        assert status_of(t) == 507
        t.close()
        s.close()


def test_closed_mid_body_releases_at_once():
    # The idle timeout (600 s) is not what ends these uploads.
    with Daemon(["--connection-timeout", "600"]) as d:
        socks = []
        for i in range(100):
            socks.append(open_put(d, sha(b"%d" % i), 1 << 20, b"x" * 1000))
        wait_for("the uploads' start", lambda: metric(d, "loadlab_blob_uploads_open") == 100)
        assert metric(d, "loadlab_blob_reserved_bytes") <= 100 * 1000
        for s in socks:
            s.close()
        # Closed right after the headers, on any route, with a body to come.
        for path in ("/api/v1/jobs", "/api/v1/tokens"):
            s = socket.create_connection(address(d))
            s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                       "Content-Length: 5000\r\n\r\n{" % (path, d.admin_token)).encode())
            s.close()
        wait_for("every upload released", lambda: metric(d, "loadlab_blob_uploads_open") == 0
                 and metric(d, "loadlab_blob_reserved_bytes") == 0 and tmp_files(d) == []
                 and metric(d, "loadlab_http_requests_in_flight") <= 1, timeout=20)


def test_trickled_body_is_cut_below_the_minimum_rate():
    with Daemon(["--connection-timeout", "600", "--body-min-rate", "1000"]) as d:
        s = open_put(d, sha(b"slow"), 100000, b"x")
        wait_for("the upload's start", lambda: metric(d, "loadlab_blob_uploads_open") == 1)
        assert trickle_until_closed(s, b"x")  # a byte every 0.5 s
        wait_for("the upload released", lambda: metric(d, "loadlab_blob_uploads_open") == 0
                 and tmp_files(d) == [])
        assert metric(d, "loadlab_http_body_timeouts_total") == 1
        assert "body_timeout" in d.read_log()


def test_body_past_its_absolute_deadline_is_cut():
    # Fast enough for the minimum rate, but never done: cut at --body-timeout.
    with Daemon(["--connection-timeout", "600", "--body-timeout", "2", "--body-min-rate", "1"]) as d:
        s = open_put(d, sha(b"long"), 10 << 20, b"x")
        assert trickle_until_closed(s, b"x" * 100)
        wait_for("the upload released", lambda: metric(d, "loadlab_blob_uploads_open") == 0)
        assert metric(d, "loadlab_http_body_timeouts_total") == 1


def test_unknown_route_and_missing_token_answer_before_the_body():
    with Daemon() as d:
        for path, token, expected in (("/nope", None, 404), ("/api/v1/jobs", None, 401),
                                      ("/api/v1/jobs", "wrong", 401),
                                      ("/api/v1/healthz", None, 404)):
            s = socket.create_connection(address(d))
            auth = "Authorization: Bearer %s\r\n" % token if token else ""
            s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Length: 5000\r\n\r\n"
                       % (path, auth)).encode())
            # No body byte is sent: the answer comes from the headers alone.
            assert status_of(s) == expected, path
            s.close()
        # Without a body an unknown route keeps its connection.
        s = socket.create_connection(address(d))
        s.sendall(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(10)
        data = b""
        while data.count(b"HTTP/1.1 ") < 2:
            chunk = s.recv(65536)
            assert chunk, data
            data += chunk
        assert data.startswith(b"HTTP/1.1 404") and b"HTTP/1.1 200" in data
        s.close()


def test_result_with_more_samples_than_a_job_can_ask_for_is_refused():
    # 1,000 runs x 20 rounds per variant at most; a result beyond that would
    # cost seconds of the HTTP thread in reports and calibration.
    with Daemon() as d:
        d.submit({"name": "one", "family": "pe", "generator": {"dlls": 2, "exports": 3},
                  "variants": ["default"]})
        _, tok = d.enroll("a", {"os": "win10"})
        t = d.api("POST", "/api/v1/lease", {"wait": 0}, token=tok).json()
        path = "/api/v1/tasks/%d/result" % t["task_id"]
        for part, key in (("warm", "samples_us"), ("cold", "page_faults")):
            body = {"attempt": 1, "facts": {"os": "win10"},
                    "variants": [{"name": "default", part: {key: [1000] * 20001}}]}
            r = d.api("POST", path, body, token=tok)
            assert r.status == 413 and "20000" in r.json()["error"]["message"], r
            assert "%s.%s" % (part, key) in r.json()["error"]["message"], r
        body = {"attempt": 1, "facts": {"os": "win10"},
                "variants": [{"name": "default", "warm": {"samples_us": [1000] * 20000}}]}
        assert d.api("POST", path, body, token=tok).status == 200


def test_full_disk_is_reported_and_refuses_uploads_with_507():
    # More kept free than any disk has: the disk is "full" for the daemon.
    with Daemon(["--min-free-bytes", str(1 << 61)]) as d:
        r = d.api("GET", "/healthz")
        assert r.status == 503 and r.json()["disk"] == "full" and r.json()["store"] == "ok", r
        data = b"a blob"
        r = d.api("PUT", BLOBS + sha(data), data, token=d.admin_token)
        assert r.status == 507 and r.json()["error"]["code"] == "storage_full", r
        message = r.json()["error"]["message"]
        assert "--min-free-bytes" in message and d.data_dir not in message, message
        assert tmp_files(d) == []
    with Daemon() as d:
        r = d.api("GET", "/healthz")
        assert r.status == 200 and r.json()["disk"] == "ok" and r.json()["disk_free_bytes"] > 0, r


def test_answers_held_for_slow_readers_are_bounded():
    # A 3.5 MB result; answers held at most 6 MB: one slow reader holds
    # its answer, the next large answer gets 503 busy until it is gone.
    with Daemon(["--answer-memory-bytes", "6000000"]) as d:
        d.submit({"name": "one", "family": "pe", "generator": {"dlls": 2, "exports": 3},
                  "variants": ["default"]})
        _, tok = d.enroll("a", {"os": "win10"})
        t = d.api("POST", "/api/v1/lease", {"wait": 0}, token=tok).json()
        samples = [1234567.25] * 20000
        body = {"attempt": 1, "facts": {"os": "win10"},
                "variants": [{"name": "v%d" % i, "warm": {"samples_us": samples},
                              "cold": {"samples_us": samples}} for i in range(8)]}
        r = d.api("POST", "/api/v1/tasks/%d/result" % t["task_id"], body, token=tok)
        assert r.status == 200, r
        result_id = r.json()["result_id"]

        def slow_get():
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(address(d))
            s.sendall(("GET /api/v1/results/%d HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s"
                       "\r\n\r\n" % (result_id, d.admin_token)).encode())
            return s

        first = slow_get()
        wait_for("the first answer held", lambda: metric(d, "loadlab_http_answer_bytes") > 3000000)
        second = slow_get()
        assert status_of(second) == 503
        second.close()
        assert metric(d, "loadlab_http_answers_refused_total") == 1
        first.close()
        wait_for("the answer released", lambda: metric(d, "loadlab_http_answer_bytes") < 100000)
        r = d.api("GET", "/api/v1/results/%d" % result_id, token=d.admin_token)
        assert r.status == 200 and len(r.body) > 3000000, r.status


if __name__ == "__main__":
    run_tests(globals())
