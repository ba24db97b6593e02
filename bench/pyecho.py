"""pyecho: the echo plugin in Python, for bench/python_bench.cc: the trivial function whose
per-call overhead the benchmark measures (its args back as output parameters)."""
import plugboard_sdk as pb


@pb.plugin(name="pyecho", version="1.0.0", provides=["template.execute"])
def echo(request):
    return pb.succeeded(request.args)


if __name__ == "__main__":
    pb.run()
