#!/usr/bin/env python3
"""Installs one language's pinned client packages into the build directory.

    install_client.py node   --source DIR --dest DIR --tool NPM
    install_client.py python --source DIR --dest DIR --tool PYTHON3
    install_client.py go     --source DIR --dest DIR --tool GO
    install_client.py java   --source DIR --dest DIR --tool MVN

Each fetches exactly the versions that the source directory pins (the npm
lock file, requirements.txt, go.sum, pom.xml) from its registry and leaves
nothing in the source directory. Any failure, a missing tool included, exits
non-zero: a client that cannot be installed is a failed test.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time


def run(argv, cwd=None, env=None):
    print("+ " + " ".join(argv), flush=True)
    subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, check=True)


def install_node(npm, source, dest):
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(os.path.join(source, name), os.path.join(dest, name))
    # ci installs the lock file's versions and fails if it disagrees with
    # package.json; neither package needs install scripts.
    run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=dest)


def install_python(python, source, dest):
    venv = os.path.join(dest, "venv")
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        run([python, "-m", "venv", venv])
    run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-input",
         "--disable-pip-version-check", "-r", os.path.join(source, "requirements.txt")])


def install_go(go, source, dest):
    env = dict(os.environ)
    # The module cache in the build directory, deletable with it; go.sum must
    # already hold every module (readonly) and no other toolchain is fetched.
    # go-redis is pure Go: built as etcd is (scripts/install-etcd: no cgo,
    # -trimpath), its standard packages come from the build cache that etcd's
    # build filled (19 packages compiled instead of 188).
    env.update({"GOMODCACHE": os.path.join(dest, "mod"), "GOFLAGS": "-modcacherw -mod=readonly",
                "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"})
    run([go, "build", "-trimpath", "-o", os.path.join(dest, "go_redis_client"), "."], cwd=source,
        env=env)


def install_java(mvn, source, dest):
    run([mvn, "-B", "--no-transfer-progress", "-f", os.path.join(source, "pom.xml"),
         "-Dmaven.repo.local=" + os.path.join(dest, "m2"),
         "-Dsnowid.build.directory=" + os.path.join(dest, "target"), "package"])


INSTALLERS = {"node": install_node, "python": install_python, "go": install_go,
              "java": install_java}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("language", choices=sorted(INSTALLERS))
    parser.add_argument("--source", required=True)
    parser.add_argument("--dest", required=True)
    parser.add_argument("--tool", required=True, help="the package tool, by path or name")
    args = parser.parse_args()

    tool = shutil.which(args.tool)
    if tool is None:
        print("FAIL: %s is missing (looked for '%s'): run scripts/install-deps, then re-run cmake"
              % (args.language, args.tool), file=sys.stderr)
        return 1
    os.makedirs(args.dest, exist_ok=True)
    started = time.monotonic()
    try:
        INSTALLERS[args.language](tool, os.path.abspath(args.source), os.path.abspath(args.dest))
    except (subprocess.CalledProcessError, OSError) as e:
        print("FAIL: installing the %s clients: %s" % (args.language, e), file=sys.stderr)
        return 1
    print("installed the %s clients in %.1fs" % (args.language, time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
