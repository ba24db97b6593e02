"""pycounter: shows requeue. Answers Running (call again in 50 ms) until it has been
called args.times times (default 3) for the same args.id, then Succeeded with the count.

    PYTHONPATH=sdk/python:plugins/python python3 -m pycounter
"""
import threading

import plugboard_sdk as pb

_lock = threading.Lock()
_counts = {}  # args.id -> calls so far


@pb.plugin(
    name="pycounter",
    version="1.0.0",
    provides=["template.execute"],
    description="Counts calls per args.id, requeueing until args.times",
    input_schemas={
        "template.execute": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
            "required": ["id"],
        }
    },
)
def count(request):
    args = request.args if isinstance(request.args, dict) else {}
    key = args.get("id")
    times = args.get("times", 3)
    if not isinstance(key, str):
        return pb.failed("args.id must be a string")
    if not isinstance(times, int) or isinstance(times, bool) or times < 1:
        return pb.failed("args.times must be a positive integer")
    with _lock:
        _counts[key] = _counts.get(key, 0) + 1
        n = _counts[key]
        if n >= times:
            del _counts[key]
    if n < times:
        return pb.running(f"call {n} of {times}", requeue=0.05)
    return pb.succeeded({"count": n}, f"counted {n} calls")


if __name__ == "__main__":
    pb.run()
