# SPDX-License-Identifier: Apache-2.0
"""
Each hostile program against agentsbx with no flags (must be BLOCKED),
runc with Docker's defaults and runc with a careful operator's flags (only
measured), and ordinary agent work (must run under agentsbx).  All cells
are computed once per session by the `matrix` fixture (in parallel), which
writes tests/attacks/results.md; these tests read it.
"""

import pytest

import attack_lib as A

ATTACKS = [a for a in A.ATTACKS if A.wanted(a.name)]
TASKS = [t for t in A.TASKS if A.wanted(t.name)]
RUNC = [c for c in A.CONFIGS if c.key != "agentsbx"]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_agentsbx_default_blocks(matrix, attack):
    """A plain `docker run --runtime agentsbx` blocks the attack, and the
    measurement is real: the program ran (unless being refused at create is
    the blocking), or the attack cannot exist on this kernel."""
    cell = matrix.cell(attack.name, "agentsbx")
    assert cell is not None
    assert cell.verdict in ("BLOCKED", "N/A"), cell.describe()
    if cell.verdict == "N/A":
        # the file does not exist here; the policy still masks it
        assert "/proc/sysrq-trigger" in matrix.env.policy["maskedPaths"], cell.describe()
    elif not attack.may_refuse:
        assert cell.started, "vacuous: the program never ran\n" + cell.describe()


@pytest.mark.parametrize("attack,config", [(a, c) for a in ATTACKS for c in RUNC],
                         ids=["%s-%s" % (a.name, c.key) for a in ATTACKS for c in RUNC])
def test_runc_measured(matrix, attack, config):
    """runc's cells are measurements: BLOCKED or ALLOWED (or the attack
    cannot exist here), never a harness error."""
    cell = matrix.cell(attack.name, config.key)
    assert cell is not None
    assert cell.verdict in ("BLOCKED", "ALLOWED", "N/A"), cell.describe()


NET = [a for a in ATTACKS if a.net]


@pytest.mark.parametrize("attack", NET, ids=[a.name for a in NET])
def test_network_allowed_policy(matrix, attack):
    """With networkAllowed, the egress filter drops the metadata service,
    the bridge gateway and RFC 1918/loopback; a public address (the
    reverse shell's listener) stays reachable -- which is also the proof
    that the container was given a working network."""
    cell = matrix.cell(attack.name, A.NET_CONFIG.key)
    assert cell is not None
    want = "ALLOWED" if attack.name == "net-reverse-shell" else "BLOCKED"
    assert cell.verdict == want, cell.describe()


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_agent_work_runs(matrix, task):
    cell = matrix.work.get((task.name, "agentsbx"))
    assert cell is not None
    assert cell.verdict == "OK", cell.describe()


def test_nothing_left_behind(matrix):
    assert not matrix.leftovers, "after the matrix:\n  " + "\n  ".join(matrix.leftovers)
    assert not matrix.env.problems, "\n".join(matrix.env.problems)
