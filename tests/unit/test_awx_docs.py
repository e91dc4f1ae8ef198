"""docs/awx.md stays true to the playbooks: its table says which exist, and a survey for an existing playbook asks
only for variables that playbook reads."""

from __future__ import annotations

import pathlib
import re
import textwrap

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "awx.md").read_text()
PLAYBOOKS = {path.stem for path in (REPO / "playbooks").glob("*.yml")}
# The survey section of docs/awx.md for each playbook.
SURVEYS = {"create_cluster": "Create", "update_cluster": "Update", "rolling_update": "Roll",
           "validate_cluster": "Validate", "delete_cluster": "Delete"}


def table_rows():
    rows = re.findall(r"^\| [^|]+ \| `kubeops\.kops\.(\w+)` \| ([^|]+) \|", DOC, re.M)
    assert rows, "docs/awx.md has no job template table"
    return {name: exists.strip() for name, exists in rows}


def test_table_says_which_playbooks_exist():
    for name, exists in table_rows().items():
        assert (exists == "yes") == (name in PLAYBOOKS), "docs/awx.md: %s is marked %r" % (name, exists)


def test_every_playbook_but_nodeup_has_a_job_template():
    # nodeup.yml runs on the nodes (boot script, or SSH with the inventory plugin), not from a job template on localhost.
    assert PLAYBOOKS - {"nodeup"} <= set(table_rows())


def survey(section):
    text = DOC.split("\n### %s\n" % section, 1)[1].split("\n### ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
    return yaml.safe_load(textwrap.dedent(block))["survey_spec"]["spec"]


def playbook_variables(name):
    """What the playbook reads: its play vars, the variables its tasks name, and for create the option list."""
    text = (REPO / "playbooks" / ("%s.yml" % name)).read_text()
    names = set(re.findall(r"\b([a-z_][a-z0-9_]*)\b", text))
    if name == "create_cluster":
        # Its survey answers reach it through create_cluster_from_survey.yml, which gathers every option.
        names |= set(yaml.safe_load((REPO / "playbooks" / "vars" / "create_cluster_options.yml").read_text())
                     ["kops_create_cluster_option_names"])
    return names


@pytest.mark.parametrize("playbook", sorted(SURVEYS))
def test_survey_variables_are_read_by_the_playbook(playbook):
    questions = survey(SURVEYS[playbook])
    assert questions and all({"question_name", "variable", "type", "required"} <= set(q) for q in questions)
    if playbook not in PLAYBOOKS:
        pytest.skip("playbooks/%s.yml does not exist yet (docs/awx.md marks it so)" % playbook)
    unknown = sorted(q["variable"] for q in questions if q["variable"] not in playbook_variables(playbook))
    assert unknown == [], "docs/awx.md asks %s for variables it does not read" % playbook
