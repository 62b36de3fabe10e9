"""An MCP server over stdio whose messages are hostile, for the recorder's
tests (issue 16). It answers initialize and tools/list as a server should,
and HOSTILE_WIRE picks how it answers a tools/call:

    long-line   one 50 MB line (over bench's 32 MiB limit), then no more
    deep-json   a result nested 100,000 arrays deep
    wrong-id    a response whose id is not the call's
    null-id     a response whose id is null
    big-limits  answer (the tool list's input schema has integer keywords
                far beyond 64 bits: maxLength 1.2e29 and the like)

and init-wrong-id answers initialize with an id that is not its own;
huge-definitions describes its tool in 5 MiB (well under the size of one
message); endless-pages lists 100 tools a page with a new tools/list cursor each time,
repeat-cursor with the same cursor each time.

Its one tool is named HOSTILE_TOOL (default get_status). Every process it
starts appends its pid to HOSTILE_PIDFILE. Python 3
standard library only.
"""

import json
import os
import sys

HUGE_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 1.2e29, "minLength": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 1e19},
        "opts": {"type": "object", "maxProperties": 18446744073709551616},
        "count": {"type": "integer", "maximum": 1e300, "minimum": -1e300},
    },
}


def send(out, msg):
    out.write(json.dumps(msg).encode() + b"\n")
    out.flush()


def main():
    mode = os.environ.get("HOSTILE_WIRE", "")
    pidfile = os.environ.get("HOSTILE_PIDFILE")
    if pidfile:
        with open(pidfile, "a") as f:
            f.write("%d\n" % os.getpid())
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "id" not in msg or "method" not in msg:
            continue  # notifications and responses
        mid, method = msg["id"], msg["method"]

        def reply(result):
            send(out, {"jsonrpc": "2.0", "id": mid, "result": result})

        if method == "initialize" and mode == "init-wrong-id":
            send(out, {"jsonrpc": "2.0", "id": "not-yours", "result": {}})
        elif method == "initialize":
            reply({"protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
                   "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile-wire", "version": "1"}})
        elif method == "tools/list" and mode in ("endless-pages", "repeat-cursor"):
            page = int(msg.get("params", {}).get("cursor", "page-0").split("-")[-1]) + 1
            cursor = "page-%d" % page if mode == "endless-pages" else "page-1"
            reply({"tools": [{"name": "t%d_%d" % (page, i), "inputSchema": {"type": "object"}} for i in range(100)],
                   "nextCursor": cursor})
        elif method == "tools/list":
            schema = HUGE_SCHEMA if mode == "big-limits" else {"type": "object", "properties": {}}
            desc = "Get the status of the network." * 180000 if mode == "huge-definitions" else "Get the status of the network."
            reply({"tools": [{"name": os.environ.get("HOSTILE_TOOL", "get_status"), "description": desc,
                              "inputSchema": schema}]})
        elif method == "tools/call":
            ok = {"content": [{"type": "text", "text": '{"status":"ok"}'}]}
            if mode == "long-line":
                head = b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % json.dumps(mid).encode()
                out.write(head)
                chunk = b"x" * (1 << 20)
                for _ in range(50):
                    out.write(chunk)
                out.write(b'"}]}}\n')
                out.flush()
            elif mode == "deep-json":
                n = 100000
                out.write(b'{"jsonrpc":"2.0","id":%s,"result":' % json.dumps(mid).encode() + b"[" * n + b"]" * n + b"}\n")
                out.flush()
            elif mode == "wrong-id":
                wrong = mid + 1000 if isinstance(mid, int) else str(mid) + "-not-yours"
                send(out, {"jsonrpc": "2.0", "id": wrong, "result": ok})
            elif mode == "null-id":
                send(out, {"jsonrpc": "2.0", "id": None, "result": ok})
            else:
                reply(ok)
        else:
            reply({})


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        pass
