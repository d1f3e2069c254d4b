"""A blob upload by hand on a raw socket (tests/integration): the PUT's
headers and a body that may stop halfway, and the status read back, for
the tests of uploads cut short, streamed or racing a restart."""
import socket
import urllib.parse

BLOBS = "/api/v1/blobs/"


def raw_put(d, name, head_len, body, chunked=False):
    """Opens a socket and sends a PUT's headers and BODY (maybe partial);
    returns the socket."""
    u = urllib.parse.urlparse(d.url)
    s = socket.create_connection((u.hostname, u.port))
    headers = "PUT %s%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n" % (
        BLOBS, name, d.admin_token)
    headers += "Transfer-Encoding: chunked\r\n" if chunked else "Content-Length: %d\r\n" % head_len
    s.sendall(headers.encode() + b"\r\n" + body)
    return s


def read_answer(s):
    s.settimeout(30)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]) if data else None
