"""pytest plugin (-p upstream_deselect): leaves out the tests expected.txt skips, by the rule the
check uses (an exact node id or an fnmatch glob), and writes their ids for upstream.py.

UPSTREAM_SKIP: the patterns, a JSON list; UPSTREAM_DESELECTED: the file the ids go to.
"""
import fnmatch
import json
import os

import pytest


# Last, so that tests -m already left out are not counted as the list's.
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    patterns = json.loads(os.environ.get("UPSTREAM_SKIP", "[]"))
    listed = [i for i in items if any(i.nodeid == p or fnmatch.fnmatchcase(i.nodeid, p) for p in patterns)]
    if listed:
        config.hook.pytest_deselected(items=listed)
        items[:] = [i for i in items if i not in listed]
    with open(os.environ["UPSTREAM_DESELECTED"], "w") as f:
        json.dump([i.nodeid for i in listed], f)
