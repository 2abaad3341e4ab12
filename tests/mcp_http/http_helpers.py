# SPDX-License-Identifier: Apache-2.0
"""A small MCP Streamable HTTP client in Python (http.client), for the
tests that need the raw HTTP: status codes, headers, tokens, bodies."""

import http.client
import json
import ssl
import urllib.parse

ACCEPT = "application/json, text/event-stream"


class Mcp:
    def __init__(self, url, token=None, cafile=None, timeout=60):
        u = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = u.hostname, u.port, u.path
        self.tls = u.scheme == "https"
        self.token = token
        self.cafile = cafile
        self.timeout = timeout
        self.session = None
        self.next_id = 0

    def connection(self):
        if self.tls:
            ctx = ssl.create_default_context(cafile=self.cafile)
            return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                               context=ctx)
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def raw(self, method, body=None, headers=None, path=None, session=True):
        """(status, headers dict lowercased, body text)."""
        h = {"Content-Type": "application/json", "Accept": ACCEPT}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if session and self.session:
            h["Mcp-Session-Id"] = self.session
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        c = self.connection()
        try:
            data = json.dumps(body) if isinstance(body, (dict, list)) else body
            c.request(method, path or self.path, body=data, headers=h)
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
        finally:
            c.close()

    def request(self, method, params=None, headers=None):
        """The reply message (from JSON or from the event stream)."""
        self.next_id += 1
        rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        status, h, text = self.raw("POST", msg, headers)
        return status, h, reply_of(h, text, rid)

    def initialize(self):
        status, h, reply = self.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "agentsbx-test", "version": "1"}})
        assert status == 200, (status, reply)
        self.session = h["mcp-session-id"]
        self.raw("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def tool(self, name, **args):
        status, h, reply = self.request("tools/call", {"name": name, "arguments": args})
        return status, reply


def reply_of(headers, text, rid):
    if headers.get("content-type", "").startswith("text/event-stream"):
        for event in text.split("\n\n"):
            data = "".join(l[5:].strip() for l in event.splitlines() if l.startswith("data:"))
            if data:
                msg = json.loads(data)
                if msg.get("id") == rid:
                    return msg
        return None
    return json.loads(text) if text else None
