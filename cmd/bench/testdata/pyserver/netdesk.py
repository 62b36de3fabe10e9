"""netdesk: a small MCP server for HPE Aruba Networking Central, on the
official Python SDK (mcp). bench's tests use it as a server bench has never
seen: not bench's reference server, not written in Go, named nowhere in
bench's code or golden suite. It reads CENTRAL_BASE_URL, CENTRAL_CLIENT_ID and
CENTRAL_CLIENT_SECRET, gets a token with the client-credentials grant and
calls Central's REST API.
"""
import json
import os
import urllib.parse
import urllib.request

from mcp.server.mcpserver import MCPServer

BASE = os.environ.get("CENTRAL_BASE_URL", "").rstrip("/")
server = MCPServer("netdesk", version="0.3.1")
_token = None


def _get(path, **query):
    global _token
    if _token is None:
        form = urllib.parse.urlencode({
            "grant_type": "client_credentials",
            "client_id": os.environ.get("CENTRAL_CLIENT_ID", ""),
            "client_secret": os.environ.get("CENTRAL_CLIENT_SECRET", ""),
        }).encode()
        with urllib.request.urlopen(urllib.request.Request(BASE + "/oauth2/token", data=form), timeout=30) as r:
            _token = json.load(r)["access_token"]
    q = {k: v for k, v in query.items() if v not in (None, "")}
    url = BASE + path + ("?" + urllib.parse.urlencode(q) if q else "")
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + _token})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


@server.tool()
def active_alerts(severity: str = "") -> str:
    """List the alerts that are active in Central now, optionally of one severity (Critical, Major, Minor)."""
    return json.dumps(_get("/network-notifications/v1/alerts", severity=severity))


@server.tool()
def wireless_clients(site_id: str = "", limit: int = 100) -> str:
    """List the wired and wireless clients connected to the network, optionally at one site."""
    return json.dumps(_get("/network-monitoring/v1/clients", **{"site-id": site_id, "limit": limit}))


@server.tool()
def network_devices(device_type: str = "") -> str:
    """List the network devices (access points, switches, gateways) Central manages."""
    return json.dumps(_get("/network-monitoring/v1/devices", **{"device-type": device_type}))


if __name__ == "__main__":
    server.run()
