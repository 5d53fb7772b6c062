"""Submit streamparse projects to Storm without Leiningen or ssh.

- :mod:`.project`: load a streamparse project directory (config.json, topologies/, src/).
- :mod:`.jar`: the topology jar (``resources/`` only), built with zipfile.
- :mod:`.operations`: ``submit_project``, ``kill_topology``, ``list_topologies`` over Nimbus Thrift.
- :mod:`.commands`: ``storm-planner submit|kill|list``.
"""
from .operations import SubmitError, kill_topology, list_topologies, submit_project, wait_until_running
from .project import ProjectError, load_project

__all__ = [
    "ProjectError",
    "SubmitError",
    "kill_topology",
    "list_topologies",
    "load_project",
    "submit_project",
    "wait_until_running",
]
