# An Argo executor plugin as Argo's documentation shows one (docs/executor_plugins.md):
# Python's http.server, checking the bearer token it reads from /var/run/argo/token, and
# answering {} for templates of other plugins. The template's arguments choose what it
# does, for the tests of the argo deployer:
#   {"name": X}            Succeeded, parameter greeting = "Hello, X!"
#   {"mode": "garbage"}    200 with a body that is not JSON
#   {"mode": "boom"}       500 with the body "boom"
#   {"mode": "phase"}      a node whose phase is not one of Argo's
#   {"mode": "hang"}       never answers
#   {"mode": "crash"}      the process exits (code 3)
#   {"mode": "busy"}       503 the first time, then Succeeded
#   {"mode": "slowly"}     Running with requeue "1s" the first time, then Succeeded
# Environment: PORT (default 4355); KEEP_ALIVE=1 answers as HTTP/1.1 with a
# Content-Length, keeping connections open, and serves each connection on a thread of its
# own (the documentation's plugin answers as HTTP/1.0, closing the connection, one at a
# time);
# EXPECTED_TOKEN replaces the token read from the file (to test a wrong token);
# NO_LISTEN=1 never opens the port.
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer

with open("/var/run/argo/token") as f:
    token = f.read().strip()
token = os.environ.get("EXPECTED_TOKEN", token)
NAME = os.environ.get("PLUGIN_NAME", "argo-greeter")
seen = {}


class Plugin(BaseHTTPRequestHandler):
    # The headers and the body go out in two writes: without this, Nagle's algorithm holds
    # the body until the client's delayed acknowledgement of the headers (40 ms).
    disable_nagle_algorithm = True
    if os.environ.get("KEEP_ALIVE") == "1":
        protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body):
        data = body.encode("UTF-8")
        self.send_response(status)
        if self.protocol_version == "HTTP/1.1":
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Authorization") != "Bearer " + token:
            return self.send(403, "forbidden")
        if self.path != "/api/v1/template.execute":
            return self.send(404, "")
        args = json.loads(body)
        plugin = args["template"].get("plugin", {})
        if NAME not in plugin:
            return self.send(200, "{}")
        mine = plugin[NAME] or {}
        mode = mine.get("mode", "")
        key = args["template"].get("name", "") + "/" + mode
        seen[key] = seen.get(key, 0) + 1
        if mode == "garbage":
            return self.send(200, "this is not JSON")
        if mode == "boom":
            return self.send(500, "boom")
        if mode == "phase":
            return self.send(200, json.dumps({"node": {"phase": "Exploded"}}))
        if mode == "hang":
            time.sleep(3600)
        if mode == "crash":
            sys.stdout.write("crashing as asked\n")
            sys.stdout.flush()
            os._exit(3)
        if mode == "busy" and seen[key] == 1:
            return self.send(503, "busy")
        if mode == "slowly" and seen[key] == 1:
            return self.send(200, json.dumps({"node": {"phase": "Running", "message": "started"},
                                              "requeue": "1s"}))
        who = mine.get("name", "world")
        reply = {"node": {"phase": "Succeeded", "message": "greeted " + who,
                          "outputs": {"parameters": [
                              {"name": "greeting", "value": "Hello, " + who + "!"},
                              {"name": "workflow", "value": args["workflow"]["metadata"].get("name", "")},
                              {"name": "template", "value": args["template"].get("name", "")}]}}}
        return self.send(200, json.dumps(reply))


if __name__ == "__main__":
    print("greeter: starting", flush=True)
    if os.environ.get("NO_LISTEN") == "1":
        print("greeter: not listening, as asked", flush=True)
        time.sleep(3600)
    server = ThreadingHTTPServer if os.environ.get("KEEP_ALIVE") == "1" else HTTPServer
    server(("", int(os.environ.get("PORT", "4355"))), Plugin).serve_forever()
