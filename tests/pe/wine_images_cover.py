#!/usr/bin/python3
"""Makes wine_images_sanitize.txt: the fewest Wine images (found greedily)
whose `loadlab pe dump --json` runs reach every line and every branch
outcome of our code that the runs over every image reach, by gcov. Not a
test: run by hand when the wine64 package (or the PE reader) changes,
then commit the list.

Usage: wine_images_cover.py COV_BUILD DIR... > tests/pe/wine_images_sanitize.txt

COV_BUILD is a build tree made with gcov counters, e.g.
    cmake -S . -B /tmp/cov -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="--coverage -O0"
    cmake --build /tmp/cov --target loadlab
DIR... as tests/pe/CMakeLists.txt gives them to test_wine_images.py.

Each image is dumped alone (the counters cleared before) and its lines
of the PE reader and the dump (common/src/pe/, cli/cmd_pe.c, the JSON
writer: PER_IMAGE; the rest runs the same for every image, and gcov over
every file for each of hundreds of images takes long) read with `gcov
--json-format -b`; the list is grown by the image that adds the most
lines or branch outcomes not yet reached, until none adds any.
Then the check the list's header reports: the lines and branch outcomes
of one run over every image and those of one run over the list, counted
over every source file of loadlab, must be the same set."""
import glob
import json
import os
import subprocess
import sys

# The counters read for each image alone (the final check reads them all).
PER_IMAGE = ("/src/pe/", "/cmd_pe.c.gcda", "/json_print.c.gcda", "/json.c.gcda", "/buf.c.gcda")


def clear(build):
    for g in glob.glob(os.path.join(build, "**", "*.gcda"), recursive=True):
        os.remove(g)


def reached(build, only=None):
    """The (source file, line) pairs with a count above 0 in BUILD's
    counters (those whose path holds one of ONLY, when given), and the
    (source file, line, branch) triples of the branch outcomes taken."""
    gcdas = [g for g in glob.glob(os.path.join(build, "**", "*.gcda"), recursive=True)
             if only is None or any(part in g for part in only)]
    out = subprocess.run(["gcov", "-b", "--stdout", "--json-format"] + gcdas, capture_output=True, text=True,
                         cwd=build).stdout
    lines = set()
    for doc in out.splitlines():
        if doc.strip().startswith("{"):
            for f in json.loads(doc)["files"]:
                for x in f["lines"]:
                    if x["count"] > 0:
                        lines.add((f["file"], x["line_number"]))
                    lines |= {(f["file"], x["line_number"], i) for i, b in enumerate(x["branches"]) if b["count"]}
    return lines


def dump(loadlab, paths):
    for p in paths:
        subprocess.run([loadlab, "pe", "dump", "--json", p], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    build, dirs = sys.argv[1], sys.argv[2:]
    loadlab = os.path.join(build, "cli", "loadlab")
    images = [os.path.join(d, n) for d in dirs for n in sorted(os.listdir(d)) if os.path.isfile(os.path.join(d, n))]
    each = {}
    for p in images:
        clear(build)
        dump(loadlab, [p])
        each[p] = reached(build, PER_IMAGE)
    chosen, have = [], set()
    while True:
        best = max(images, key=lambda p: len(each[p] - have))
        if not each[best] - have:
            break
        chosen.append(best)
        have |= each[best]
    clear(build)
    dump(loadlab, images)
    whole = reached(build)
    clear(build)
    dump(loadlab, chosen)
    listed = reached(build)
    assert whole == listed, "the list misses %d: %s" % (len(whole - listed), sorted(whole - listed)[:10])
    n_lines = len([x for x in whole if len(x) == 2])
    print("# The images test_wine_images.py reads in the sanitizer build (tests/pe/CMakeLists.txt):")
    print("# made by tests/pe/wine_images_cover.py from the %d images of %s;" % (len(images), ", ".join(dirs)))
    print("# one run of loadlab pe dump --json over them reaches the same %d lines and" % n_lines)
    print("# %d branch outcomes of loadlab's sources (gcov) as one over all %d images;" % (
        len(whole) - n_lines, len(images)))
    print("# the plain build reads every image.")
    for p in chosen:
        print(os.path.join(os.path.basename(os.path.dirname(p)), os.path.basename(p)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
