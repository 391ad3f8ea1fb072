"""The course on Kubernetes (hub/kubernetes/), read as the tools that would deploy it read it.

No cluster runs here; what can be checked without one is:

* ``values.yaml`` merged over Zero to JupyterHub's own defaults validates against the
  chart's own schema (both from the chart's repository, tests/data/kubernetes/), as
  ``helm install`` validates it;
* the hub's code that gives each student a uid and writes it to the accounts file, run
  as the hub would run it, gives distinct uids, and the grading service reads the file back
  (autograder.course.exchange) as the hub meant it;
* ``grading.yaml``'s resources are whole (what the Dask operator's CRDs require, every
  volume claim that is mounted defined), and every image named is one the Dockerfile
  builds;
* the students' image holds nothing of the grader.
"""

from __future__ import annotations

import copy
import re
import types

import jsonschema
import yaml

from autograder.course.exchange import Exchange
from tests.conftest import REPO

KUBERNETES = REPO / "hub" / "kubernetes"
CHART = REPO / "tests" / "data" / "kubernetes"


def _merged(defaults: dict, ours: dict) -> dict:
    """Helm's merge of a values file over the chart's defaults (maps merge, the rest replaces)."""
    merged = copy.deepcopy(defaults)
    for key, value in ours.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _values() -> dict:
    return yaml.safe_load((KUBERNETES / "values.yaml").read_text())


def test_the_values_are_valid_for_zero_to_jupyterhub_s_chart():
    schema = yaml.safe_load((CHART / "z2jh-values.schema.yaml").read_text())
    defaults = yaml.safe_load((CHART / "z2jh-values.yaml").read_text())
    jsonschema.validate(_merged(defaults, _values()), schema)
    broken = _merged(defaults, {"singleuser": {"storage": {"capacity": 2}}})
    try:                                    # the schema does refuse what is wrong
        jsonschema.validate(broken, schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("the chart's schema accepted a number for a capacity")


def test_each_student_gets_a_uid_of_their_own_that_the_grader_reads_back(tmp_path):
    code = _values()["hub"]["extraConfig"]["10-uid-of-each-student"]
    accounts = tmp_path / "passwd"
    code = code.replace('"/srv/accounts/passwd"', repr(str(accounts)))
    config = types.SimpleNamespace(KubeSpawner=types.SimpleNamespace())
    exec(compile(code, "values.yaml: hub.extraConfig", "exec"), {"c": config})
    uid_of, before_start = config.KubeSpawner.uid, config.KubeSpawner.pre_spawn_hook

    def spawner(user_id: int, name: str):
        return types.SimpleNamespace(user=types.SimpleNamespace(id=user_id, name=name))

    students = [spawner(1, "alice"), spawner(2, "bob"), spawner(3, "zhang.wei")]
    for student in students + students:          # each start, and each start again
        before_start(student)
    uids = [uid_of(s) for s in students]
    assert len(set(uids)) == 3 and min(uids) >= 200000, uids
    assert len(accounts.read_text().splitlines()) == 3, accounts.read_text()
    assert oct(accounts.stat().st_mode & 0o777) == "0o640"
    exchange = Exchange(tmp_path, accounts=accounts)
    assert [exchange.user_of(uid) for uid in uids] == ["alice", "bob", "zhang.wei"]
    assert exchange.user_of(1000) == "uid 1000"    # the image's jovyan is nobody's


def _documents() -> list[dict]:
    return [d for d in yaml.safe_load_all((KUBERNETES / "grading.yaml").read_text()) if d]


def test_the_grading_resources_are_whole():
    documents = _documents()
    kinds = {(d["kind"], d["metadata"]["name"]) for d in documents}
    assert {("Deployment", "grader"), ("DaskCluster", "grading"),
            ("DaskAutoscaler", "grading"), ("Deployment", "class-report"),
            ("Service", "class-report"), ("NetworkPolicy", "grading-scheduler-clients")} <= kinds
    claims = {d["metadata"]["name"] for d in documents if d["kind"] == "PersistentVolumeClaim"}
    values = _values()
    volumes = values["hub"]["extraVolumes"] + values["singleuser"]["storage"]["extraVolumes"]
    mounted = [v["persistentVolumeClaim"]["claimName"] for v in volumes]
    for document in documents:
        text = yaml.safe_dump(document)
        mounted += re.findall(r"claimName: (\S+)", text)
    assert set(mounted) <= claims, set(mounted) - claims
    cluster = next(d for d in documents if d["kind"] == "DaskCluster")
    # what dask-kubernetes' CRD templates require of a DaskCluster
    assert {"scheduler", "worker"} <= set(cluster["spec"])
    assert {"spec", "service"} <= set(cluster["spec"]["scheduler"])
    assert "spec" in cluster["spec"]["worker"]
    worker = cluster["spec"]["worker"]["spec"]
    assert worker["hostUsers"] is False       # root of the pod's user namespace only
    grader = next(d for d in documents if d["kind"] == "Deployment"
                  and d["metadata"]["name"] == "grader")
    command = grader["spec"]["template"]["spec"]["containers"][0]["command"]
    address = command[command.index("--scheduler") + 1]
    assert address.startswith("tcp://grading-scheduler.")
    assert grader["spec"]["replicas"] == 1      # the gradebook has one writer
    policy = next(d for d in documents if d["kind"] == "NetworkPolicy")
    allowed = [rule["podSelector"]["matchLabels"] for rule in policy["spec"]["ingress"][0]["from"]]
    assert grader["spec"]["template"]["metadata"]["labels"].items() >= allowed[0].items()


def _stages(dockerfile: str) -> dict[str, str]:
    """{stage: its instructions} of a multi-stage Dockerfile."""
    stages, current = {}, None
    for line in dockerfile.splitlines():
        match = re.match(r"FROM \S+ AS (\S+)", line)
        if match:
            current = match[1]
            stages[current] = ""
        elif current:
            stages[current] += line + "\n"
    return stages


def test_every_image_named_is_built_and_the_students_holds_nothing_of_the_grader():
    dockerfile = (KUBERNETES / "Dockerfile").read_text()
    built = set(re.findall(r"--target (\S+)\s+-t (\S+) \.", dockerfile))
    assert {target for target, _ in built} == {"student", "grader"}
    tags = {tag for _, tag in built}
    named = set(re.findall(r"image: (\S+)", (KUBERNETES / "grading.yaml").read_text()))
    image = _values()["singleuser"]["image"]
    named.add(f"{image['name']}:{image['tag']}")
    assert named <= tags, named - tags
    student = _stages(dockerfile)["student"]
    copied = re.findall(r"^COPY (?:--from=\S+ )?(\S+)", student, flags=re.MULTILINE)
    assert copied == ["attention_course", "/opt/student-jupyter"], copied
    for secret in ("autograder", "solutions", "hub", "tests"):
        assert not re.search(rf"^COPY .*\b{secret}\b", student, flags=re.MULTILINE), secret

