"""An Argo-style executor-plugin sidecar, for benchmarks only.

Answers POST /api/v1/template.execute the way Argo's executor-plugin documentation shows a
Python plugin doing it (http.server, JSON in and out), doing the same work as the echo
plugin (its args back as output parameters) or the hello plugin (a greeting). HTTP/1.1 keep-alive with Nagle's algorithm off: its best case.

    /usr/bin/python3 bench/sidecar.py [PORT]     (prints "ready PORT"; 0 or none: any free port)
"""
import http.server
import json
import socket
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/api/v1/template.execute":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        plugin = body.get("template", {}).get("plugin", {})
        if "echo" in plugin:
            params = [{"name": k, "value": v if isinstance(v, str) else json.dumps(v)}
                      for k, v in sorted(plugin["echo"].items())]
            reply = {"node": {"phase": "Succeeded", "outputs": {"parameters": params}}}
        elif "hello" in plugin:
            greeting = "Hello, %s!" % plugin["hello"].get("name", "world")
            reply = {"node": {"phase": "Succeeded", "message": greeting,
                              "outputs": {"parameters": [{"name": "greeting", "value": greeting}]}}}
        else:
            reply = {}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Handler)
    print("ready", server.server_address[1], flush=True)
    server.serve_forever()
