# SPDX-License-Identifier: Apache-2.0
"""The floor oracle's tests run under the integration suite's discipline:
this conftest *is* tests/integration/conftest.py (loaded from there, every
name re-exported), so pytest here is the child subreaper with the same
reaper thread, the same spawn()/run_cmd(), the same fixtures (runtime,
base_rootfs, penv, env) and the same teardown that asserts nothing is
left.  Nothing is copied: a change there is a change here."""

import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_IT = os.path.join(os.path.dirname(_HERE), "integration")
for _d in (_HERE, _IT):
    if _d not in sys.path:
        sys.path.insert(0, _d)

_spec = importlib.util.spec_from_file_location("integration_conftest",
                                               os.path.join(_IT, "conftest.py"))
_it = importlib.util.module_from_spec(_spec)
sys.modules["integration_conftest"] = _it
_spec.loader.exec_module(_it)
globals().update({k: v for k, v in vars(_it).items() if not k.startswith("__")})


# The host objects a trial's spec points at (floor_harness.HostObjects),
# one set per test module.
import pytest  # noqa: E402


@pytest.fixture(scope="module")
def floor_objects(runtime, base_rootfs):
    import floor_harness as fh  # here: floor_checker imports this conftest

    if os.path.exists("/etc/agentsbx/policy.json"):
        pytest.skip("/etc/agentsbx/policy.json exists: the built-in policy is not in force")
    o = fh.HostObjects(runtime, base_rootfs).start()
    yield o
    left = o.close()
    assert not left, "the harness left things behind: %s" % left
