# The server of tests/support/argo_python_plugin: reads the template's input parameters
# from template.inputs.parameters ([{name, value}], as Argo's agent sends the template its
# controller wrote) into a dict and answers {"sum": int(parameters["value"]) + add}, the
# sum as a number, as Argo's own example plugins answer. A template that is not its own
# gets JSON null, as Argo's e2e sidecars answer. A parameter that is missing is a Failed
# node naming it (KeyError('value')).
import json
from http.server import BaseHTTPRequestHandler, HTTPServer

with open("/var/run/argo/token") as f:
    TOKEN = f.read().strip()


class Adder(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, reply):
        body = json.dumps(reply).encode("UTF-8")
        self.send_response(status)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length))
        if self.path != "/api/v1/template.execute":
            return self.answer(404, None)
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            return self.answer(403, None)
        template = request["template"]
        plugin = template.get("plugin", {})
        if "adder" not in plugin:
            return self.answer(200, None)
        parameters = {}
        for p in template.get("inputs", {}).get("parameters", []):
            parameters[p["name"]] = p["value"]
        try:
            total = int(parameters["value"]) + int((plugin["adder"] or {}).get("add", 1))
        except Exception as e:
            return self.answer(200, {"node": {"phase": "Failed", "message": repr(e)}})
        self.answer(200, {"node": {"phase": "Succeeded", "message": "added",
                                   "outputs": {"parameters": [{"name": "sum", "value": total}]}}})


if __name__ == "__main__":
    HTTPServer(("", 7984), Adder).serve_forever()
