"""A streamable HTTP MCP server whose answers never end, for the recorder's
tests (issue 16). It listens on 127.0.0.1:PORT (its one argument), answers
initialize and tools/list as a server should, and HOSTILE_WIRE picks how it
answers a tools/call:

    sse-line      an event stream of one line that never ends: "data: xxx..."
    json-body     an application/json body that never ends
    redirect      a 307 to HOSTILE_REDIRECT (another origin than its own)
    wrong-id      an application/json answer whose id is not the call's
    sse-wrong-id  an event stream of one answer whose id is not the call's,
                  left open
    ok            a short answer (the control)

Its one tool is named HOSTILE_TOOL (default get_status). Every process it
starts appends its pid to HOSTILE_PIDFILE. Python 3
standard library only.
"""

import http.server
import json
import os
import sys

MODE = os.environ.get("HOSTILE_WIRE", "ok")


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        # No standalone event stream.
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_DELETE(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            msg = json.loads(body)
        except ValueError:
            msg = {}
        if "id" not in msg:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        method, result = msg.get("method"), {}
        if method == "initialize":
            result = {"protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile-http", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": os.environ.get("HOSTILE_TOOL", "get_status"), "description": "Get the status of the network.",
                                 "inputSchema": {"type": "object", "properties": {}}}]}
        elif method == "tools/call":
            if MODE == "redirect":
                self.send_response(307)
                self.send_header("Location", os.environ["HOSTILE_REDIRECT"])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if MODE == "sse-line":
                self.endless("text/event-stream", b"data: ")
                return
            if MODE == "json-body":
                self.endless("application/json", b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"'
                             % json.dumps(msg["id"]).encode())
                return
            result = {"content": [{"type": "text", "text": '{"status":"ok"}'}]}
        mid = msg["id"]
        if method == "tools/call" and MODE in ("wrong-id", "sse-wrong-id"):
            mid = mid + 1000 if isinstance(mid, int) else str(mid) + "-not-yours"
        out = json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}).encode()
        if method == "tools/call" and MODE == "sse-wrong-id":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"event: message\r\ndata: " + out + b"\r\n\r\n")
            self.wfile.flush()
            self.rfile.read(1)  # until the client hangs up
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def endless(self, content_type, head):
        """Send head and then "x" until the client hangs up."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"x" * (1 << 20)
        try:
            self.wfile.write(head)
            while True:
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    pidfile = os.environ.get("HOSTILE_PIDFILE")
    if pidfile:
        with open(pidfile, "a") as f:
            f.write("%d\n" % os.getpid())
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
