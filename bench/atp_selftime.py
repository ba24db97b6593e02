"""The plugin's own Python time per ATP call (bench/atp_echo.py's step through atpkit's
server: decoding WORK_START, a thread per run, the step, encoding WORK_DONE), with no
pipe and no runtime: one call at a time, from memory to memory. Prints the median µs.
Run: python3 atp_selftime.py [N]"""
import io
import os
import statistics
import sys
import threading
import time

import cbor2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import atp_echo  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
done = threading.Event()


class Sink(io.RawIOBase):
    def writable(self):
        return True

    def write(self, b):
        done.set()
        return len(b)


server = atp_echo.k.Server(atp_echo.SCHEMA, {"echo": lambda run, config: ("success", config)},
                           out=Sink(), inp=io.BytesIO())
samples = []
for i in range(n):
    message = cbor2.dumps({"id": 1, "run_id": "pb-%d" % i,
                           "data": {"id": "echo", "config": {"greeting": "Hello, bench!"}}})
    start = time.perf_counter()
    m = cbor2.loads(message)
    server.start(m["run_id"], m["data"])
    done.wait()
    done.clear()
    samples.append(time.perf_counter() - start)
    server.threads[-1].join()
print("%.1f" % (statistics.median(samples) * 1e6))
