"""The README is true as typed (issue 41): every command line of its quick
start (the code blocks and the examples table) is accepted by the CLI's
parser and names files that exist; the quick start's `export` line is right
for any LISTEN and DATA_DIR; and every link of the README and of docs/*.md
resolves to a file of the repository (and a heading of it, for an anchor),
none outside it.

A command is "accepted" when the real `loadlab` runs it as typed against a
server that is not there and gets as far as trying to reach it: a
misspelt option, a missing argument or a job file that is missing or not
JSON stops it before that, with another message.
"""
import glob
import json
import os
import re
import shlex
import subprocess
import tempfile

from harness import EXAMPLES, LOADLAB, SOURCE_DIR, free_port, run_tests

README = os.path.join(SOURCE_DIR, "README.md")


def quick_start():
    """The README's "## Quick start" section."""
    with open(README) as f:
        text = f.read()
    start = text.index("## Quick start")
    end = text.find("\n## ", start + 5)
    return text[start:end if end >= 0 else len(text)]


def code_lines(section):
    """The lines of SECTION's fenced code blocks, comments removed."""
    lines = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", section, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line:
                lines.append(line)
    return lines


def table_commands(section):
    """Each row of the examples table: its first cell's commands, in order
    ("`A` then `B`" is two)."""
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split(" | ")[0].lstrip("| ")
        rows.append(re.findall(r"`([^`]+)`", first))
    return rows



def program_folder(tmp):
    """A folder with the files local/program-ci.json names, standing in for
    the one the row's first command builds."""
    folder = os.path.join(tmp, "dist")
    with open(os.path.join(EXAMPLES, "local", "program-ci.json")) as f:
        files = json.load(f)["program"]["files"]
    for path in files:
        os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
        with open(os.path.join(folder, path), "wb") as f:
            f.write(b"MZ not a real program: " + path.encode())
    return folder


def repository_paths(argv):
    """The arguments that name a file of the clone (relative paths with a
    folder: schemas/..., tests/...); build/ outputs aside."""
    return [a for a in argv if "/" in a and not a.startswith(("/", "$", "http", "build/", "-"))]


def check_command(line, made, tmp):
    """LINE of the quick start: its files exist and, for the CLI, the parser
    takes it. MADE: folders earlier commands of the row write (the Lua
    build's output), each standing in by a folder of the files it holds."""
    argv = shlex.split(line)
    for path in repository_paths(argv):
        assert os.path.exists(os.path.join(SOURCE_DIR, path)), "%r names %s, which is missing" % (line, path)
    if argv[0] == "sh":
        script = os.path.join(SOURCE_DIR, argv[1])
        p = subprocess.run(["sh", "-n", script], capture_output=True, text=True)
        assert p.returncode == 0, (line, p.stderr)
        made.update(a for a in argv[2:] if a.startswith("/"))
        return
    assert argv[0] == "build/cli/loadlab", "%r: not a command the test knows" % line
    args = []
    for a in argv[1:]:
        if a.startswith("/"):
            assert a in made, "%r names %s, which nothing before it makes" % (line, a)
            a = program_folder(tmp)
        args.append(a)
    url = "http://127.0.0.1:%d" % free_port()
    p = subprocess.run([LOADLAB, "--server", url, "--token", "t"] + args, cwd=SOURCE_DIR,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "Cannot reach the server" in p.stderr, (
        "%r is not accepted as typed: exit %d, %s" % (line, p.returncode, p.stderr.strip()))


def test_quick_start_commands_are_accepted_and_name_files_that_exist():
    section = quick_start()
    lines = [l for l in code_lines(section) if l.startswith(("build/", "sh "))]
    rows = table_commands(section)
    assert len(lines) >= 2 and len(rows) >= 5, (lines, rows)
    with tempfile.TemporaryDirectory(prefix="loadlab-readme-") as tmp:
        for line in lines:
            check_command(line, set(), tmp)
        for row in rows:
            made = set()
            for line in row:
                check_command(line, made, tmp)


def test_export_line_follows_listen_and_data_dir():
    """The quick start's lines that set the environment, run by bash with the
    README's LISTEN and DATA_DIR, and with others in their place."""
    setup = [l for l in code_lines(quick_start()) if not l.startswith(("build/", "sh "))]
    assert any(l.startswith("export ") for l in setup), setup
    script = "\n".join(setup) + '\nprintf "%s %s" "$LOADLAB_SERVER" "$LOADLAB_TOKEN"\n'
    with tempfile.TemporaryDirectory(prefix="loadlab-readme-") as tmp:
        for data_dir in ("var", os.path.join(tmp, "moved")):
            os.makedirs(os.path.join(tmp, data_dir), exist_ok=True)
            with open(os.path.join(tmp, data_dir, "admin.token"), "w") as f:
                f.write("token-of-" + os.path.basename(data_dir))
            moved = script
            if data_dir != "var":
                moved = re.sub(r"\bLISTEN=\S+", "LISTEN=127.0.0.1:9000", moved, count=1)
                moved = re.sub(r"\bDATA_DIR=\S+", "DATA_DIR=" + data_dir, moved, count=1)
            p = subprocess.run(["bash", "-c", moved], cwd=tmp, capture_output=True, text=True,
                               env={"PATH": os.environ["PATH"]})
            port = "8080" if data_dir == "var" else "9000"
            assert p.returncode == 0 and p.stdout == "http://127.0.0.1:%s token-of-%s" % (
                port, os.path.basename(data_dir)), (moved, p.stdout, p.stderr)


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    return {slug(m) for m in re.findall(r"^#+ (.+)$", text, re.M)}


def test_every_link_of_the_readme_and_docs_resolves():
    root = os.path.realpath(SOURCE_DIR)
    pages = [README] + sorted(glob.glob(os.path.join(SOURCE_DIR, "docs", "*.md")))
    broken = []
    for page in pages:
        with open(page) as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            where = os.path.realpath(os.path.join(os.path.dirname(page), path)) if path else page
            name = os.path.relpath(page, SOURCE_DIR)
            if not (where == root or where.startswith(root + os.sep)):
                broken.append("%s: %s points outside the repository" % (name, target))
            elif not os.path.exists(where):
                broken.append("%s: %s does not exist" % (name, target))
            elif anchor and where.endswith(".md") and anchor not in anchors(where):
                broken.append("%s: %s has no heading '%s'" % (name, target, anchor))
    assert not broken, "\n".join(broken)
    with open(README) as f:
        assert "../shared" not in f.read(), "the README points outside the repository"


run_tests(globals())
