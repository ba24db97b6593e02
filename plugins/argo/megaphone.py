"""megaphone: an Argo Workflows executor plugin, written as Argo's documentation writes one
(Python's http.server, one POST /api/v1/template.execute a template), which plugboard's
argo deployer runs from its image and calls as Argo's agent would.

A template for it carries `plugin: {megaphone: {text: ...}}`; it answers Succeeded with the
output parameter `text` in capitals and an exclamation mark, and `{}` for a template of
another plugin. It checks the bearer token Argo's agent (or plugboard) wrote to
/var/run/argo/token, and keeps connections alive (HTTP/1.1), as Argo's agent expects.
examples/argo.toml runs it between two native steps; tools/python-plugin-image.sh makes its
image (localhost/plugboard-example/megaphone:1.0.0, the name plugin.yaml gives).
"""
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

with open("/var/run/argo/token") as f:
    TOKEN = f.read().strip()


class Plugin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        args = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            return self.reply(403, {"error": "forbidden"})
        if self.path != "/api/v1/template.execute":
            return self.reply(404, {})
        mine = args.get("template", {}).get("plugin", {}).get("megaphone")
        if mine is None:
            return self.reply(200, {})  # not a template for this plugin
        text = str(mine.get("text", "")).upper() + "!"
        return self.reply(200, {"node": {
            "phase": "Succeeded",
            "message": "shouted %d characters" % len(text),
            "outputs": {"parameters": [{"name": "text", "value": text}]}}})


if __name__ == "__main__":
    ThreadingHTTPServer(("", 4355), Plugin).serve_forever()
