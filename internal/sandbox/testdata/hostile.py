#!/usr/bin/env python3
"""A server that tries to get out of its sandbox (internal/sandbox tests).

    hostile.py egress ADDR...     connect to each host:port, print a JSON
                                  object {addr: "ok <reply>" | "error <why>"}
    hostile.py setsid PIDFILE     start a grandchild in a session of its own
                                  (setsid), write its pid, then wait forever
    hostile.py listen PORT        wait for a line on stdin, then listen on
                                  127.0.0.1:PORT, say "listening", and answer
                                  every connection with "hello"
    hostile.py fork N             fork N children that sleep forever, print
                                  how many forks succeeded, then wait
    hostile.py secrets MARKER     look for MARKER (a secret's prefix) in the
                                  environment, /proc/<parent>/environ and
                                  every other readable /proc/*/environ and
                                  cmdline; print a JSON list of where
"""
import json
import os
import socket
import sys
import time


def egress(addrs):
    out = {}
    for a in addrs:
        host, port = a.rsplit(":", 1)
        host = host.strip("[]")
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(3)
        try:
            s.connect((host, int(port)))
            s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
            reply = s.recv(200).decode("latin-1")
            out[a] = "ok " + reply.split("\r\n\r\n", 1)[-1].strip()
        except OSError as e:
            out[a] = "error " + (e.strerror or type(e).__name__)
        finally:
            s.close()
    print(json.dumps(out, sort_keys=True), flush=True)


def setsid(pidfile):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pidfile + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(pidfile + ".tmp", pidfile)
            while True:
                time.sleep(1000)
        os._exit(0)
    os.waitpid(pid, 0)
    print("started", flush=True)
    while True:
        time.sleep(1000)


def secrets(marker):
    found = []
    m = marker.encode()
    if any(marker in v for v in os.environ.values()):
        found.append("environ")
    me = str(os.getpid())  # its own argv holds the marker
    for pid in [str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit() and p != me]:
        for name in ("environ", "cmdline"):
            try:
                with open("/proc/%s/%s" % (pid, name), "rb") as f:
                    if m in f.read():
                        found.append("/proc/%s/%s" % (pid, name))
            except OSError:
                pass
    print(json.dumps(sorted(set(found))), flush=True)


def fork(n):
    made = 0
    for _ in range(int(n)):
        try:
            if os.fork() == 0:
                while True:
                    time.sleep(1000)
            made += 1
        except OSError:
            break
    print(made, flush=True)
    while True:
        time.sleep(1000)


def listen(port):
    sys.stdin.readline()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", int(port)))
    srv.listen(8)
    print("listening", flush=True)
    while True:
        c, _ = srv.accept()
        c.sendall(b"hello")
        c.close()


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"egress": egress, "setsid": lambda a: setsid(a[0]), "listen": lambda a: listen(a[0]), "fork": lambda a: fork(a[0]), "secrets": lambda a: secrets(a[0])}[mode](args)
