# Runs pcs commands one after the other in this one Python process: a JSON list of argument
# lists on standard input, each given to pcs's own entry point as its command line would be.
# pcs has no batch mode, and each run of its command spends most of its time importing its
# modules (0.6 of 0.7 s on a build host, about 13 s on an emulated one-vCPU guest). Stops at the
# first command that fails and names it on standard error.
import json
import shlex
import sys
from importlib.metadata import distribution


def pcs_main():
    for entry in distribution("pcs").entry_points:
        if entry.group == "console_scripts" and entry.name == "pcs":
            return entry.load()
    sys.exit("pcs's console script is not installed")


def main():
    run = pcs_main()
    commands = json.load(sys.stdin)
    for argv in commands:
        try:
            code = run(argv)
        except SystemExit as exit:
            code = exit.code
            if isinstance(code, str):
                print(code, file=sys.stderr)
                code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        if code not in (None, 0):
            sys.exit("pcs %s: exit %s" % (shlex.join(argv), code))


main()
