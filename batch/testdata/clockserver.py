#!/usr/bin/env python3
"""clockserver.py: an MCP server over stdio (newline-delimited JSON-RPC)
that reads the wall clock, for the tests of bench's pinned clock
(docs/clock.md). Its one tool, events_now, puts the current time in a query
to Central (an events window: the last hour) and in its result. Central is
reached as real servers reach it: a token from the SSO host and the API
host over TLS through HTTPS_PROXY, trusting SSL_CERT_FILE, so the fake's
certificates are checked against this process's clock. It sleeps a little
and waits on a thread with a timeout in every call, as servers do, so that
a clock that breaks time.sleep or timed waits fails the call."""
import datetime
import json
import sys
import threading
import time
import urllib.parse
import urllib.request


def events_now():
    now = datetime.datetime.now(datetime.timezone.utc)
    time.sleep(0.001)
    threading.Event().wait(0.001)
    form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": "clockserver", "client_secret": "x"}).encode()
    with urllib.request.urlopen("https://sso.common.cloud.hpe.com/as/token.oauth2", data=form, timeout=30) as r:
        tok = json.load(r)["access_token"]
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ"
    q = urllib.parse.urlencode({"context-type": "SITE", "context-identifier": "2001", "site-id": "2001",
                                "start-at": (now - datetime.timedelta(hours=1)).strftime(fmt), "end-at": now.strftime(fmt)})
    req = urllib.request.Request("https://apigw-uswest4.central.arubanetworks.com/network-troubleshooting/v1/events?" + q,
                                 headers={"Authorization": "Bearer " + tok})
    with urllib.request.urlopen(req, timeout=30) as r:
        page = json.load(r)
    return json.dumps({"now": now.isoformat(), "events": len(page["events"])})


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in iter(sys.stdin.readline, ""):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if "id" not in m:
        continue  # a notification
    method, mid = m.get("method"), m["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": m["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "clockserver-python", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "events_now",
              "description": "List the events of the last hour at site HQ-Building-A.", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        try:
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": events_now()}]}})
        except Exception as e:  # the model sees the failure
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "error: %s" % e}], "isError": True}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no method %s" % method}})
