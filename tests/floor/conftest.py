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
