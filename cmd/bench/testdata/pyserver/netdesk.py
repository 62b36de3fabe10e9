"""netdesk: a small MCP server for HPE Aruba Networking Central, on the
official Python SDK (mcp). bench's tests use it as a server bench has never
seen: not bench's reference server, not written in Go, named nowhere in
bench's code or golden suite. It reads CENTRAL_BASE_URL, CENTRAL_CLIENT_ID and
CENTRAL_CLIENT_SECRET, gets a token with the client-credentials grant and
calls Central's REST API.

NETDESK_MODE picks how its tools are exposed: all three directly (the
default), behind one router tool (router: run_tool(tool, params), with the meta tools
list_tools and describe_tool), or behind
a code-mode tool that runs a Python block calling them (code:
run_python(source), with `await call_tool(name, params)` in scope).
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


def active_alerts(severity: str = "") -> str:
    """List the alerts that are active in Central now, optionally of one severity (Critical, Major, Minor)."""
    return json.dumps(_get("/network-notifications/v1/alerts", severity=severity))


def wireless_clients(site_id: str = "", limit: int = 100) -> str:
    """List the wired and wireless clients connected to the network, optionally at one site."""
    return json.dumps(_get("/network-monitoring/v1/clients", **{"site-id": site_id, "limit": limit}))


def network_devices(device_type: str = "") -> str:
    """List the network devices (access points, switches, gateways) Central manages."""
    return json.dumps(_get("/network-monitoring/v1/devices", **{"device-type": device_type}))


TOOLS = {f.__name__: f for f in (active_alerts, wireless_clients, network_devices)}
MODE = os.environ.get("NETDESK_MODE", "")


def run_tool(tool: str, params: dict | None = None) -> str:
    """Run one of netdesk's tools by name: active_alerts(severity), wireless_clients(site_id, limit) or network_devices(device_type)."""
    if tool not in TOOLS:
        raise ValueError(f"no tool {tool!r}; have {', '.join(sorted(TOOLS))}")
    return TOOLS[tool](**(params or {}))


async def run_python(source: str) -> str:
    """Run a Python block; `await call_tool(name, params)` calls active_alerts(severity), wireless_clients(site_id, limit) or network_devices(device_type). Use `return` to produce output."""
    async def call_tool(name, params):
        return json.loads(run_tool(name, params))

    scope = {"call_tool": call_tool, "json": json}
    exec("async def __block():\n" + "".join("    " + line + "\n" for line in source.splitlines()), scope)
    return json.dumps(await scope["__block"]())


SCHEMAS = {
    "active_alerts": {"type": "object", "properties": {"severity": {"type": "string", "enum": ["Critical", "Major", "Minor"]}}},
    "wireless_clients": {"type": "object", "properties": {"site_id": {"type": "string"}, "limit": {"type": "integer"}}},
    "network_devices": {"type": "object", "properties": {"device_type": {"type": "string"}}},
}


def list_tools() -> dict:
    """List the tools run_tool runs (their names; describe_tool gives one's schema)."""
    return {"tools": [{"name": n} for n in TOOLS]}


def describe_tool(name: str) -> dict:
    """Describe one of the tools run_tool runs: its description and input schema."""
    return {"tool": {"name": name, "description": TOOLS[name].__doc__, "input_schema": SCHEMAS[name],
                     "annotations": {"readOnlyHint": True}}}


if MODE == "router":
    server.tool()(run_tool)
    server.tool()(list_tools)
    server.tool()(describe_tool)
elif MODE == "code":
    server.tool()(run_python)
else:
    for f in TOOLS.values():
        server.tool()(f)

if __name__ == "__main__":
    server.run()
