#!/usr/bin/env python3
"""An MCP server over stdio whose every word is hostile to whoever shows it.

HOSTILE_HEX is the hostile text, hex-encoded (an environment variable
cannot hold NUL, nor bytes that are not UTF-8): its server info, tool names
and descriptions, results and error messages hold it, bytes as they are.
bench's rendering test (cmd/bench/hostile_test.go) passes every hostile
string of issue 16 in it: a newline and a forged verdict heading, table
pipes, an HTML comment, a script, ESC, BEL, CR, NUL, a right-to-left
override, invalid UTF-8.

HOSTILE_VARIANT, when set, is added to every result, so that a replay
against it misses (the miss explanations quote the results);
HOSTILE_CANARY is put in every result, a leak the safety check reports
naming the tool.
"""
import json
import os
import sys

# Bytes that are not UTF-8 become lone surrogates, written back as the
# same bytes (surrogateescape).
HOSTILE = bytes.fromhex(os.environ.get("HOSTILE_HEX", "")).decode("utf-8", "surrogateescape")
TOOLS = ["get_wlan" + HOSTILE, "list" + HOSTILE]


def send(msg):
    line = json.dumps(msg, ensure_ascii=False) + "\n"
    sys.stdout.buffer.write(line.encode("utf-8", "surrogateescape"))
    sys.stdout.buffer.flush()


def result():
    text = "result" + HOSTILE + os.environ.get("HOSTILE_VARIANT", "") + " " + os.environ.get("HOSTILE_CANARY", "")
    return {"content": [{"type": "text", "text": text}]}


def main():
    for raw in sys.stdin.buffer:
        try:
            req = json.loads(raw.decode("utf-8", "surrogateescape"))
        except ValueError:
            continue
        method, rid = req.get("method"), req.get("id")
        if rid is None:
            continue  # a notification
        if method == "initialize":
            params = req.get("params") or {}
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "server" + HOSTILE, "version": "1.0" + HOSTILE},
            }})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [
                {"name": t, "description": "Reads the WLAN " + HOSTILE,
                 "inputSchema": {"type": "object", "properties": {"ssid": {"type": "string", "description": HOSTILE}}}}
                for t in TOOLS]}})
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "id": rid, "result": result()})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no method" + HOSTILE}})


if __name__ == "__main__":
    main()
