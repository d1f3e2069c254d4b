"""A lease long-poll parked before its agent's token was revoked is
answered 401 when it wakes, and the task it would have had stays queued
for another agent."""
from harness import Daemon, park_lease, run_tests


def test_parked_poll_of_a_revoked_token_gets_401():
    with Daemon() as d:
        agent_id, tok = d.enroll("a", {"os": "win10"})
        poll, answers = park_lease(d, tok, 20)
        # Agent tokens are not listed; the store names this one's id.
        (token_id,), = d.store_sql("SELECT id FROM tokens WHERE agent_id = %d" % int(agent_id))
        token_id = int(token_id)
        assert d.api("DELETE", "/api/v1/tokens/%d" % token_id, token=d.admin_token).status == 200
        # New work wakes the parked poll.
        job = d.submit({"name": "x", "family": "pe", "generator": {"dlls": 2, "exports": 3},
                        "variants": ["default"]})
        poll.join(60)
        assert answers and answers[0].status == 401, answers
        assert d.job(job["id"])["tasks"][0]["state"] == "queued"


if __name__ == "__main__":
    run_tests(globals())
