"""One loadlab-agent that a lab check keeps running beside its daemon,
in a new data directory (its log in agent.log there), as a context
manager: `with LabAgent(d, "elf-repeat") as agent:` ... Stopping it
(SIGTERM, at most 60 s) kills what it left running under the directory
(Wine) and removes the directory. Needs harness on sys.path."""
import os
import signal
import subprocess
import tempfile

import harness


class LabAgent:
    def __init__(self, d, name, prefix=None):
        """Starts an agent NAME enrolled with daemon D's token, its data
        directory made with PREFIX (default "loadlab-NAME-")."""
        self.data_dir = tempfile.mkdtemp(prefix=prefix or "loadlab-%s-" % name)
        self.log = open(os.path.join(self.data_dir, "agent.log"), "wb")
        self.proc = subprocess.Popen([harness.AGENT, "--server", d.url, "--enroll-token", d.enroll_token,
                                      "--data-dir", self.data_dir, "--name", name],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)

    def close(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        self.log.close()
        harness.kill_processes_under(self.data_dir)
        subprocess.run(["rm", "-rf", self.data_dir])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
