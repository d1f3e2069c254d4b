"""What `loadlab submit` says about a job file it cannot send (issue 27),
against a real loadlabd: a file that is not JSON is named with the line
and column of its mistake (never a byte offset, never "the body"); a
program job whose files were never uploaded is refused before it is
submitted, each missing file named by its path, with the hint to give
the folder with --program-dir; given that folder, the same job is
accepted."""
import hashlib
import json
import os
import shutil
import subprocess
import tempfile

from harness import EXAMPLES, LOADLAB, Daemon, run_tests

_tmp = tempfile.mkdtemp(prefix="loadlab-submit-errors-")


def cli(d, *args, stdin=None):
    p = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token] + list(args),
                       capture_output=True, text=True, timeout=60, input=stdin)
    return p.returncode, p.stdout, p.stderr


def write(name, data):
    path = os.path.join(_tmp, name)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


def refused(d, path, *needles, stdin=None):
    code, out, err = cli(d, "submit", path, stdin=stdin)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, (code, out, err)
    for n in needles:
        assert n in err, (n, err)
    assert "byte" not in err and "body" not in err, err
    return err


def test_malformed_json_is_placed_by_line_and_column():
    with Daemon() as d:
        cases = [
            # a missing comma on line 3: where the next member starts
            ('{\n  "name": "x",\n  "family": "pe" "variants": ["default"]\n}\n', "bad-comma.json:3:18:", "'\"variants\""),
            # a trailing comma: at the brace that came instead of a member
            ('{\n  "name": "x",\n}\n', "trailing.json:3:1:", "'}'"),
            ('{"name": "caf\u00e9", "ok": tru}', "word.json:1:24:", "'tru}'"),  # columns count characters
            ('{"name": "x"} {"name": "y"}', "two.json:1:15:", "more after the JSON value"),
            ('[1, 2]', "array.json:", "must be a JSON object, not an array"),
            ('', "empty.json is empty", ""),
        ]
        for text, where, what in cases:
            name = where.split(":")[0].split(" ")[0]
            refused(d, write(name, text), where, what)
        refused(d, write("latin1.json", b'{\n "name": "caf\xe9"}'), "latin1.json:2:14:", "not valid UTF-8")
        refused(d, write("twice.json", '{"name": "x", "name": "y"}'), "twice.json:", "'name'")
        refused(d, "-", "stdin:2:1:", stdin='{"name": "x",\n}')
        # nothing was submitted
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"] == []


def test_missing_blobs_are_named_by_path_with_the_hint():
    with Daemon() as d:
        example = os.path.join(EXAMPLES, "program-ci.json")
        err = refused(d, example, "program-ci.json: 2 of the program's files are not uploaded",
                      "bin/app.exe", "bin/core.dll", "--program-dir DIR")
        assert "sha256" not in err and "8f434346" not in err, err
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"] == []
        # the folder with the files: uploaded, accepted
        folder = os.path.join(_tmp, "dist")
        os.makedirs(os.path.join(folder, "bin"))
        for name in ("app.exe", "core.dll"):
            with open(os.path.join(folder, "bin", name), "wb") as f:
                f.write(b"MZ " + name.encode())
        code, out, err = cli(d, "submit", example, "--program-dir", folder)
        assert code == 0 and "program: 2 files, 2 uploaded" in out, (code, out, err)
        # the uploaded files named by their hashes, one more that is not
        # there: only the missing one is named
        with open(example) as f:
            job = json.load(f)
        for name in ("app.exe", "core.dll"):
            with open(os.path.join(folder, "bin", name), "rb") as f:
                job["program"]["files"]["bin/" + name] = "sha256:" + hashlib.sha256(f.read()).hexdigest()
        code, out, err = cli(d, "submit", write("uploaded.json", json.dumps(job)))
        assert code == 0 and out.startswith("job "), (code, out, err)
        job["program"]["files"]["bin/extra.dll"] = "sha256:" + "ab" * 32
        err = refused(d, write("one-missing.json", json.dumps(job)), "1 of the program's files is not uploaded: bin/extra.dll;")
        assert "app.exe" not in err, err


try:
    run_tests(globals())
finally:
    shutil.rmtree(_tmp, ignore_errors=True)
