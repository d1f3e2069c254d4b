"""A/A of the two-build program job, repeated (issue 29, "How it will be
checked"; a lab check: its goal judges noise, `make lab-check`): zlib's
example.exe (tests/agent/build_zlib_ab_mingw.sh) given twice as one A/B
job's two builds, ten jobs run one after the other by one real Linux agent
under Wine; `loadlab compare --job ID --max-regression 2` must find no
regression in at least 9 of the 10 (the goal, printed, not asserted). The
control: the static build against the one with zlib1.dll, which compare
must call slower (printed too). What is asserted holds on any machine:
every job is done, every comparison's shape and exit code (0 or 1)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "agent"))
import harness  # noqa: E402
import program_jobs  # noqa: E402
import test_program_ab as ab  # noqa: E402
from labgoal import figure  # noqa: E402

REPEATS = int(os.environ.get("LOADLAB_AB_REPEATS", "10"))


def main():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-lab-ab-") as tmp:
        base = ab.copy_build(tmp, "static", "base")
        cand = ab.copy_build(tmp, "dll", "cand")
        data_dir = os.path.join(tmp, "agent")
        os.makedirs(data_dir)
        clean = 0
        for i in range(REPEATS):
            job_id = ab.submit_ab(d, tmp, "aa-%d" % i, [base, base])
            program_jobs.run_job(d, data_dir, job_id, "lab-ab")
            code, aa = ab.compare_job(d, job_id, 2)
            (row,) = aa["rows"]
            print("A/A %d: ratio %.4f [%.4f, %.4f] p=%.2g %s" % (
                i, row["ratio"], row["ci_low"], row["ci_high"], row["p_value"], row["status"]))
            clean += code == 0
        job_id = ab.submit_ab(d, tmp, "ab-control", [base, cand])
        program_jobs.run_job(d, data_dir, job_id, "lab-ab")
        code, control = ab.compare_job(d, job_id, 2)
        (row,) = control["rows"]
        print("A/B control: ratio %.4f [%.4f, %.4f] %s" % (row["ratio"], row["ci_low"], row["ci_high"],
                                                           row["status"]))
        figure("ab-aa-clean-of-%d" % REPEATS, clean, "jobs", "figure>=%d" % (REPEATS * 9 // 10))
        figure("ab-control-slower", 1 if row["status"] == "slower" else 0, "bool", "figure>=1")


if __name__ == "__main__":
    main()
