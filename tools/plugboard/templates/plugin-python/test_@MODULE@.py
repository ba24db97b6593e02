"""Calls @NAME@ through the plugboard CLI, as a workflow step reaches it, and checks its
answers. Run: python3 -m unittest -v test_@MODULE@

Uses the plugboard named by $PLUGBOARD, else the one that made this project (`plugboard
new`), else the one on the PATH."""
import os
import shutil
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MADE_BY = @PLUGBOARD_PY@
PLUGBOARD = os.environ.get("PLUGBOARD") or (
    MADE_BY if os.access(MADE_BY, os.X_OK) else shutil.which("plugboard"))


def call(args):
    if PLUGBOARD is None:
        raise AssertionError(MADE_BY + " is gone and no plugboard is on the PATH; "
                             "set $PLUGBOARD to one")
    return subprocess.run(
        [PLUGBOARD, "call", "@NAME@", "--registry", os.path.join(HERE, "registry.toml"),
         "--args", args],
        capture_output=True, text=True, timeout=60, check=False)


class CallTest(unittest.TestCase):
    def test_greets(self):
        done = call('{"name": "plugboard"}')
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertEqual(done.stdout, "Succeeded\n  greeting = Hello, plugboard!\n")

    def test_fails_without_a_string_name(self):
        done = call('{"name": 42}')
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertEqual(done.stdout, "Failed: args.name must be a string\n")


if __name__ == "__main__":
    unittest.main()
