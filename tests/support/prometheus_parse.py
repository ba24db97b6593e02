#!/usr/bin/python3
"""Reads Prometheus text exposition format on stdin with the Prometheus project's own
Python client parser (Debian's python3-prometheus-client) and prints every sample as one
JSON line: {"name": ..., "labels": {...}, "value": ...}. Exits 1, naming the problem, when
the text does not parse: tests hold plugboard's /metrics writer to the format with it."""
import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families

text = sys.stdin.read()
try:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            value = sample.value
            if math.isinf(value):
                value = "+Inf" if value > 0 else "-Inf"
            print(json.dumps({"family": family.name, "type": family.type, "name": sample.name,
                              "labels": sample.labels, "value": value}))
except Exception as e:  # the parser raises ValueError and others on malformed text
    print("does not parse: %s: %s" % (type(e).__name__, e), file=sys.stderr)
    sys.exit(1)
