#!/usr/bin/python3
"""scripts/install-deps.sh against stand-ins of its only external commands
(apt-get, dpkg, dpkg-query, sudo: tests/scripts/fake_apt/), on any machine:
a package index that fails once or every time, an optional package that
cannot be installed, a required one that cannot, and the architecture it
adds for wine32:i386 left as dpkg had it.

Each case runs the real script on a package list of the real file's form
and reads what the stand-ins saw (their calls, the packages they
installed, the foreign architectures)."""
import os
import subprocess
import sys
import tempfile

SOURCE = os.environ.get("LOADLAB_SOURCE_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(SOURCE, "scripts", "install-deps.sh")
REAL_LIST = os.path.join(SOURCE, "scripts", "debian-packages.txt")
FAKES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_apt")

LIST = """\
# a list of the real one's form
build-essential   run   required  the C toolchain
wine64            run   required  the pe family under Wine
chromium          test  required  the browser tests
hyperfine         test  optional  the timer benchmark will not run
wine32:i386       test  optional  the XP-class (i686) agent under Wine will not be tested
"""


class Machine:
    """A fake machine: its installed packages and architectures, in a folder."""

    def __init__(self, installed=(), arches=()):
        self.dir = tempfile.mkdtemp(prefix="install-deps-")
        self.write("installed", installed)
        self.write("arches", arches)
        with open(os.path.join(self.dir, "list.txt"), "w") as f:
            f.write(LIST)

    def write(self, name, lines):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write("".join(line + "\n" for line in lines))

    def read(self, name):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return [line.rstrip("\n") for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def run(self, scope="test", package_list=None, update_fails=0, refuse=()):
        env = {
            "PATH": FAKES + ":/usr/bin:/bin",
            "FAKE_APT_STATE": self.dir,
            "FAKE_UPDATE_FAILS": str(update_fails),
            "FAKE_REFUSE": " ".join(refuse),
            "LOADLAB_PACKAGE_LIST": package_list or os.path.join(self.dir, "list.txt"),
            "LOADLAB_APT_PAUSE": "0",
            "TMPDIR": self.dir,
        }
        p = subprocess.run(["sh", SCRIPT, scope], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr

    def calls(self, prefix):
        return [c for c in self.read("calls") if c.startswith(prefix)]


def everything():
    return [line.split()[0] for line in LIST.splitlines() if line and not line.startswith("#")]


def test_nothing_missing_calls_no_apt():
    m = Machine(installed=everything())
    rc, out = m.run()
    assert rc == 0 and out == "", (rc, out)
    assert m.calls("apt-get") == [] and m.calls("dpkg --add") == [], m.read("calls")


def test_a_failed_update_is_tried_again():
    m = Machine()
    rc, out = m.run(update_fails=1)
    assert rc == 0, out
    assert len(m.calls("apt-get update")) == 2, m.read("calls")
    assert sorted(m.read("installed")) == sorted(everything()), m.read("installed")
    assert m.read("arches") == ["i386"], m.read("arches")


def test_an_index_that_always_fails_does_not_stop_the_install():
    m = Machine()
    rc, out = m.run(update_fails=99)
    assert rc == 0, out
    assert len(m.calls("apt-get update")) == 3, m.read("calls")
    assert "going on with the package lists apt has" in out, out
    assert "binary-i386/Packages" in out, "apt's failing index is not named: " + out
    assert set(everything()) <= set(m.read("installed")), m.read("installed")


def test_an_optional_package_that_cannot_be_installed_is_one_line_and_its_arch_goes_again():
    m = Machine()
    rc, out = m.run(update_fails=99, refuse=["wine32:i386"])
    assert rc == 0, out
    warned = [line for line in out.splitlines() if "wine32:i386 cannot be installed" in line]
    assert len(warned) == 1 and "XP-class (i686) agent under Wine will not be tested" in warned[0], out
    # apt names other packages than wine32 in its answer: its error is the reason
    assert "pkgProblemResolver::Resolve generated breaks" in warned[0], "apt's reason is missing: " + warned[0]
    assert set(m.read("installed")) == set(everything()) - {"wine32:i386"}, m.read("installed")
    assert m.read("arches") == [], "the i386 architecture was left behind: %s" % m.read("arches")
    assert m.calls("dpkg --add-architecture i386") and m.calls("dpkg --remove-architecture i386")


def test_an_architecture_the_machine_had_is_kept():
    m = Machine(arches=["i386"])
    rc, out = m.run(refuse=["wine32:i386"])
    assert rc == 0, out
    assert m.read("arches") == ["i386"], m.read("arches")
    assert not m.calls("dpkg --remove-architecture"), m.read("calls")


def test_a_required_package_that_cannot_be_installed_fails_naming_it():
    m = Machine()
    rc, out = m.run(refuse=["chromium"])
    assert rc == 1, (rc, out)
    assert "required package chromium cannot be installed" in out, out
    assert "chromium : Depends: libwine (= 8.0~repack-4) but it is not installable" in out, out
    assert "held broken packages" in out, "apt's error is not shown: " + out
    assert "required package(s) chromium not installed" in out, out
    # The others were installed (each alone), the optional ones tried.
    assert set(m.read("installed")) == set(everything()) - {"chromium"}, m.read("installed")
    assert m.read("arches") == ["i386"], m.read("arches")


def test_run_installs_only_what_the_local_lab_needs():
    m = Machine()
    rc, out = m.run(scope="run", refuse=["chromium", "wine32:i386"])
    assert rc == 0, out
    assert sorted(m.read("installed")) == ["build-essential", "wine64"], m.read("installed")
    assert not m.calls("dpkg --add-architecture"), "make run added an architecture: %s" % m.read("calls")


def test_the_real_list_splits_run_test_and_optional():
    m = Machine()
    rc, out = m.run(scope="run", package_list=REAL_LIST)
    assert rc == 0, out
    run = set(m.read("installed"))
    for needed in ("build-essential", "libmicrohttpd-dev", "mingw-w64", "wine64"):
        assert needed in run, (needed, sorted(run))
    for only_test in ("chromium", "postgresql", "wine32:i386", "hyperfine"):
        assert only_test not in run, (only_test, sorted(run))
    m = Machine()
    rc, out = m.run(scope="test", package_list=REAL_LIST, refuse=["wine32:i386"])
    assert rc == 0, out
    assert "wine32:i386 cannot be installed" in out and "test_xp_agent" in out, out
    assert m.read("arches") == [], m.read("arches")


def test_a_malformed_list_is_refused_before_any_apt_call():
    m = Machine()
    bad = os.path.join(m.dir, "bad.txt")
    with open(bad, "w") as f:
        f.write("cmake run needed the build\n")
    rc, out = m.run(package_list=bad)
    assert rc != 0 and 'bad NEED "needed" for cmake' in out, (rc, out)
    assert m.calls("apt-get") == [], m.read("calls")


def main():
    tests = [(name, fn) for name, fn in sorted(globals().items()) if name.startswith("test_") and callable(fn)]
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print("ok   %s" % name)
        except AssertionError as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
    print("%d passed, %d failed" % (len(tests) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
