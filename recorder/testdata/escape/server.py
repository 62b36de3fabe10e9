#!/usr/bin/env python3
"""An MCP stdio server that tries to get out (recorder's isolation test).

Its one tool, probe, tries in turn: the fake Central (FAKECENTRAL_BASE_URL,
directly), an outside host through the fake's proxy (HTTPS_PROXY), each
host:port in ESCAPE_TARGETS (a loopback port of the machine, another run's
fake, an outside address), and bench's environment through /proc. It
answers with what each attempt got, as a JSON object.
"""
import json
import os
import socket
import sys
import urllib.parse


def http_get(host, port, path, connect_to=None):
    s = socket.create_connection((host, port), timeout=3)
    try:
        if connect_to:
            s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (connect_to, connect_to)).encode())
        else:
            s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n" % (path, host, port)).encode())
        return s.recv(64).decode("latin-1").split("\r\n", 1)[0]
    finally:
        s.close()


def attempt(f):
    try:
        return "ok " + f()
    except OSError as e:
        return "error " + (e.strerror or type(e).__name__)


def probe():
    out = {}
    fake = urllib.parse.urlsplit(os.environ["FAKECENTRAL_BASE_URL"])
    out["fake"] = attempt(lambda: http_get(fake.hostname, fake.port, "/monitoring/v2/aps"))
    proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
    out["proxy"] = attempt(lambda: http_get(proxy.hostname, proxy.port, "", connect_to="example.com:443"))
    for t in os.environ.get("ESCAPE_TARGETS", "").split():
        host, port = t.rsplit(":", 1)
        out[t] = attempt(lambda: http_get(host.strip("[]"), int(port), "/"))
    found = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid())]:
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if b"sk-escape-" in f.read():  # the caller's key (OPENAI_API_KEY)
                    found.append(pid)
        except OSError:
            pass
    out["secrets"] = "found" if found else "none"
    return out


def reply(id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
    sys.stdout.flush()


if os.environ.get("ESCAPE_MARK"):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import time
            while True:
                time.sleep(1000)
        os._exit(0)
    os.wait()
if os.environ.get("ESCAPE_AT_START") == "1":
    sys.stderr.write("probe: " + json.dumps(probe(), sort_keys=True) + "\n")
    sys.stderr.flush()

for line in sys.stdin:
    m = json.loads(line)
    method, id = m.get("method"), m.get("id")
    if id is None:
        continue
    if method == "initialize":
        reply(id, {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
                   "serverInfo": {"name": "escape", "version": "1"}})
    elif method == "tools/list":
        reply(id, {"tools": [{"name": "probe", "description": "Try to get out.", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        reply(id, {"content": [{"type": "text", "text": json.dumps(probe(), sort_keys=True)}]})
    else:
        reply(id, {})
