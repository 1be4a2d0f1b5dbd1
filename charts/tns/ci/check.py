"""Render the TNS chart with every value set in this folder, lint it, validate every object
strictly against Kubernetes' schemas, and assert what the chart promises. Then render the sets in
bad/ and check that each is refused, so every assertion is shown able to fail.

Run through check.sh, which installs the tools; see the chart's README.md.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kubernetes_validate
import yaml
from kubernetes_validate import utils as kv

CI = Path(__file__).resolve().parent
CHART = CI.parent
REPO = CHART.parent.parent
RELEASE = "tns"
NAMESPACE = "tns"
VALUE_SETS = ["defaults", "ha", "existing-secrets", "features"]
TNS_ROLES = {"api", "scheduler", "jobs", "migrate"}
SECRET_VARS = {"TNS_SIGNING_SECRET", "TNS_DATA_KEY", "TNS_DATABASE_URL", "TNS_REDIS_URL"}
# Validated against prometheus-operator's schema (kubernetes-validate has no CRDs).
PROM_OPERATOR_KINDS = {"ServiceMonitor", "PrometheusRule"}
# An adapter plugin's own setting, TNS_ADAPTER_<NAME>_<SETTING>: the plugin reads it (`tns env` does
# not list it) and refuses one it does not have. Plugin names are lowercase letters and digits,
# starting with a letter, at most 32, and never dir, timeout or concurrency (the host's own).
PLUGIN_SETTING = re.compile(r"TNS_ADAPTER_(?!(?:DIR|TIMEOUT|CONCURRENCY)_)[A-Z][A-Z0-9]{0,31}_[A-Z0-9_]+")
# The roles whose processes export metrics, each from its crate's sources.
METRIC_ROLES = ("api", "scheduler", "jobs")
# The value set ci/alerts-test.yaml is written against (release tns in namespace tns, its values).
ALERT_TESTS_SET = "features"


class Failed(Exception):
    pass


def helm(args, helm_bin):
    return subprocess.run([helm_bin, *args], capture_output=True, text=True)


def render(helm_bin, values_file=None, extra=()):
    args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE, *extra]
    if values_file:
        args += ["-f", str(values_file)]
    return helm(args, helm_bin)


def docs_of(text):
    return [d for d in yaml.safe_load_all(text) if d]


def name_of(obj):
    return f"{obj['kind']}/{obj['metadata']['name']}"


def pod_specs(objs):
    """(owner, pod spec) of every workload."""
    for o in objs:
        if o["kind"] in ("Deployment", "Job"):
            yield o, o["spec"]["template"]["spec"]


def config_map(objs):
    """The ConfigMap holding TNS's configuration (not the dashboard's)."""
    return next(o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == f"{RELEASE}-config")


def containers(spec):
    return [(c, False) for c in spec.get("containers", [])] + [(c, True) for c in spec.get("initContainers", [])]


# --- assertions on one rendered value set ------------------------------------------------------


def check_validates(objs, k8s_version, sm_validator):
    errs = []
    for o in objs:
        if o["kind"] in PROM_OPERATOR_KINDS:
            r = subprocess.run(["node", str(sm_validator)], input=json.dumps(o), capture_output=True, text=True)
            if r.returncode != 0:
                errs.append(f"{name_of(o)}: {r.stdout.strip()} {r.stderr.strip()}")
            continue
        try:
            kv.validate(o, k8s_version, strict=True)
        except kubernetes_validate.ValidationError as e:
            errs.append(f"{name_of(o)}: {e.message} at {'.'.join(str(p) for p in e.path)}")
        except kubernetes_validate.SchemaNotFoundError as e:
            errs.append(f"{name_of(o)}: {e.message}")
    return errs


def check_migration_hook(objs):
    errs = []
    jobs = [o for o in objs if o["kind"] == "Job"]
    if not jobs:
        return ["no migration Job rendered"]
    rendered = {(o["kind"], o["metadata"]["name"]) for o in objs}
    for job in jobs:
        ann = job["metadata"].get("annotations", {})
        if ann.get("helm.sh/hook") != "pre-install,pre-upgrade":
            errs.append(f"{name_of(job)}: helm.sh/hook is {ann.get('helm.sh/hook')!r}, not pre-install,pre-upgrade")
        if not re.fullmatch(r"-?[0-9]+", ann.get("helm.sh/hook-weight", "")):
            errs.append(f"{name_of(job)}: no integer helm.sh/hook-weight")
        if "hook-succeeded" not in ann.get("helm.sh/hook-delete-policy", ""):
            errs.append(f"{name_of(job)}: not deleted on success (helm.sh/hook-delete-policy)")
        spec = job["spec"]["template"]["spec"]
        if job["spec"]["template"]["spec"]["containers"][0].get("args") != ["migrate"]:
            errs.append(f"{name_of(job)}: does not run `tns migrate`")
        # A pre-install hook runs before the chart's objects exist: it may name none of them.
        sa = spec.get("serviceAccountName")
        if sa and ("ServiceAccount", sa) in rendered:
            errs.append(f"{name_of(job)}: uses the chart's ServiceAccount {sa}, which does not exist yet")
        for c, _ in containers(spec):
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef") or e.get("valueFrom", {}).get("configMapKeyRef")
                if ref and (("Secret", ref["name"]) in rendered or ("ConfigMap", ref["name"]) in rendered):
                    errs.append(f"{name_of(job)}: {e['name']} comes from {ref['name']}, which the chart creates")
            for ef in c.get("envFrom", []):
                errs.append(f"{name_of(job)}: envFrom {ef} (the hook may use only pre-existing objects)")
    for o in objs:
        if o["kind"] != "Job" and "helm.sh/hook" in o["metadata"].get("annotations", {}):
            errs.append(f"{name_of(o)}: an unexpected hook")
    return errs


def effective_replicas(objs, deploy):
    for o in objs:
        if o["kind"] == "HorizontalPodAutoscaler" and o["spec"]["scaleTargetRef"]["name"] == deploy["metadata"]["name"]:
            return o["spec"]["minReplicas"]
    return deploy["spec"].get("replicas", 1)


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def check_pdbs(objs, values):
    errs = []
    pdbs = [o for o in objs if o["kind"] == "PodDisruptionBudget"]
    deploys = [o for o in objs if o["kind"] == "Deployment"]
    for pdb in pdbs:
        targets = [d for d in deploys if selects(pdb["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"])]
        if len(targets) != 1:
            errs.append(f"{name_of(pdb)} selects {len(targets)} Deployments")
            continue
        n = effective_replicas(objs, targets[0])
        if n <= 1:
            errs.append(f"{name_of(pdb)} exists while {name_of(targets[0])} runs {n} replica(s)")
    for d in deploys:
        role = d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        covered = any(selects(p["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"]) for p in pdbs)
        if role in ("api", "scheduler") and effective_replicas(objs, d) > 1 and not covered:
            errs.append(f"{name_of(d)} runs {effective_replicas(objs, d)} replicas without a PDB")
    return errs


def check_image_tag(objs, app_version, repository):
    errs = []
    want = f"{repository}:{app_version}"
    for owner, spec in pod_specs(objs):
        for c, _ in containers(spec):
            if c["image"].startswith(repository + ":") and c["image"] != want:
                errs.append(f"{name_of(owner)}/{c['name']}: image {c['image']}, not {want}")
        if not any(c["image"] == want for c, _ in containers(spec)):
            errs.append(f"{name_of(owner)}: no container runs {want}")
    return errs


def check_probes_and_security(objs):
    errs = []
    for owner, spec in pod_specs(objs):
        psc = spec.get("securityContext", {})
        if psc.get("runAsNonRoot") is not True or psc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
            errs.append(f"{name_of(owner)}: pod securityContext lacks runAsNonRoot or seccomp RuntimeDefault")
        for c, init in containers(spec):
            where = f"{name_of(owner)}/{c['name']}"
            sc = c.get("securityContext")
            if not sc:
                errs.append(f"{where}: no securityContext")
                continue
            if sc.get("runAsNonRoot") is not True:
                errs.append(f"{where}: not runAsNonRoot")
            if sc.get("readOnlyRootFilesystem") is not True:
                errs.append(f"{where}: root filesystem writable")
            if sc.get("allowPrivilegeEscalation") is not False:
                errs.append(f"{where}: privilege escalation allowed")
            if sc.get("privileged"):
                errs.append(f"{where}: privileged")
            caps = sc.get("capabilities", {})
            if "ALL" not in caps.get("drop", []) or caps.get("add"):
                errs.append(f"{where}: capabilities not all dropped")
            if sc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
                errs.append(f"{where}: seccomp profile not RuntimeDefault")
            # Probes on every long-running container; init containers and the Job run to completion.
            if owner["kind"] == "Deployment" and not init:
                ports = {p["name"] for p in c.get("ports", [])}
                for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
                    get = c.get(probe, {}).get("httpGet", {})
                    if get.get("path") != path or get.get("port") not in ports:
                        errs.append(f"{where}: {probe} is not GET {path} on a port of the container")
    return errs


def check_rbac(objs, values_jobs_enabled=True):
    errs = []
    rbac = [o for o in objs if o["apiVersion"].startswith("rbac.authorization.k8s.io/")]
    kinds = sorted(o["kind"] for o in rbac)
    if kinds not in ([], ["Role", "RoleBinding"]):
        errs.append(f"RBAC beyond one Role and its RoleBinding: {kinds}")
    sas = {}
    for o in rbac:
        if o["kind"] == "Role":
            for rule in o["rules"]:
                if rule.get("apiGroups") != ["coordination.k8s.io"] or rule.get("resources") != ["leases"]:
                    errs.append(f"{name_of(o)}: a rule beyond coordination.k8s.io leases: {rule}")
                if not set(rule.get("verbs", [])) <= {"get", "create", "update", "patch"} or "*" in rule.get("verbs", []):
                    errs.append(f"{name_of(o)}: verbs beyond get/create/update/patch: {rule.get('verbs')}")
                if set(rule.get("verbs", [])) - {"create"} and not rule.get("resourceNames"):
                    errs.append(f"{name_of(o)}: {rule.get('verbs')} on every Lease, not only its own")
        if o["kind"] == "RoleBinding":
            if o["roleRef"]["kind"] != "Role":
                errs.append(f"{name_of(o)}: binds a {o['roleRef']['kind']}")
            for s in o["subjects"]:
                sas[s["name"]] = o
    for owner, spec in pod_specs(objs):
        role = owner["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component")
        sa = spec.get("serviceAccountName", "default")
        if sa in sas and role != "jobs":
            errs.append(f"{name_of(owner)} runs as {sa}, which holds the Lease Role")
        if role != "jobs" and spec.get("automountServiceAccountToken") is not False:
            errs.append(f"{name_of(owner)} mounts a Kubernetes API token it never uses")
    return errs


def set_env_names(objs):
    """Every variable name the rendered chart puts in a TNS container's environment."""
    configmaps = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ConfigMap"}
    secrets = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Secret"}
    names = {}
    for owner, spec in pod_specs(objs):
        for c, _ in containers(spec):
            for e in c.get("env", []):
                names.setdefault(e["name"], f"{name_of(owner)}/{c['name']}")
            for ef in c.get("envFrom", []):
                ref = ef.get("configMapRef") or ef.get("secretRef")
                src = configmaps.get(ref["name"]) or secrets.get(ref["name"])
                if src is None:
                    names.setdefault(f"<envFrom {ref['name']}: not rendered, names unknown>", name_of(owner))
                    continue
                for k in src.get("data", {}):
                    names.setdefault(ef.get("prefix", "") + k, f"{name_of(owner)}/{c['name']} via {ref['name']}")
    return names


def check_env(objs, binary_vars):
    errs = []
    for n, where in sorted(set_env_names(objs).items()):
        if n not in binary_vars and not PLUGIN_SETTING.fullmatch(n):
            errs.append(f"{where} sets {n}, which the tns binary does not read (nor is it a plugin's setting)")
    # Secrets only ever arrive from a Secret, never as literal values in a pod spec.
    for owner, spec in pod_specs(objs):
        for c, _ in containers(spec):
            for e in c.get("env", []):
                if e["name"] in SECRET_VARS and "secretKeyRef" not in e.get("valueFrom", {}):
                    errs.append(f"{name_of(owner)}/{c['name']}: {e['name']} not from a Secret")
    for cm in (o for o in objs if o["kind"] == "ConfigMap"):
        for k in SECRET_VARS & set(cm.get("data", {})):
            errs.append(f"{name_of(cm)} holds {k}")
    # What each role cannot start without.
    need = {"api": SECRET_VARS, "scheduler": {"TNS_DATA_KEY", "TNS_DATABASE_URL"},
            "jobs": {"TNS_DATA_KEY", "TNS_DATABASE_URL", "TNS_REDIS_URL"}, "migrate": {"TNS_DATABASE_URL"}}
    for owner, spec in pod_specs(objs):
        role = owner["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        have = {e["name"] for e in spec["containers"][0].get("env", [])}
        for missing in sorted(need.get(role, set()) - have):
            errs.append(f"{name_of(owner)}: {missing} not set")
    return errs


def check_ingress_and_policies(objs):
    errs = []
    api_svc = f"{RELEASE}-api"
    for ing in (o for o in objs if o["kind"] == "Ingress"):
        for rule in ing["spec"]["rules"]:
            for p in rule["http"]["paths"]:
                svc = p["backend"]["service"]
                if svc["name"] != api_svc or svc["port"].get("name") != "http":
                    errs.append(f"{name_of(ing)} routes to {svc}, not {api_svc}:http")
    for np in (o for o in objs if o["kind"] == "NetworkPolicy"):
        for rule in np["spec"].get("ingress", []):
            if not rule.get("ports"):
                errs.append(f"{name_of(np)} has an ingress rule for every port")
    return errs


def check_admin_api(objs, open_on_purpose=False):
    """The operators' admin API: served (TNS_ADMIN_ADDR) exactly when its Service exists; that
    Service is ClusterIP and the only one leading to the admin port; no Ingress routes to it;
    a NetworkPolicy governs the api pods' ingress and lets only named peers reach the port,
    unless the values said it may be open cluster-wide (admin.allowFromAnywhere)."""
    errs = []
    admin_svc = f"{RELEASE}-admin"
    services = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Service"}
    svc = services.get(admin_svc)
    cm = config_map(objs)
    addr = cm["data"].get("TNS_ADMIN_ADDR")
    if bool(addr) != bool(svc):
        errs.append(f"TNS_ADMIN_ADDR is {addr!r} while Service/{admin_svc} {'exists' if svc else 'does not'}")
    for s in services.values():
        leads_to_admin = any(p.get("targetPort") == "admin" or p.get("name") == "admin" for p in s["spec"]["ports"])
        if leads_to_admin and s["metadata"]["name"] != admin_svc:
            errs.append(f"{name_of(s)} exposes the admin port")
    if svc:
        spec = svc["spec"]
        if spec.get("type", "ClusterIP") != "ClusterIP" or spec.get("externalIPs") or any("nodePort" in p for p in spec["ports"]):
            errs.append(f"{name_of(svc)} is {spec.get('type')}, not a plain ClusterIP")
        for ing in (o for o in objs if o["kind"] == "Ingress"):
            for rule in ing["spec"].get("rules", []):
                for p in rule.get("http", {}).get("paths", []):
                    b = p["backend"].get("service", {})
                    if b.get("name") == admin_svc or b.get("port", {}).get("name") == "admin":
                        errs.append(f"{name_of(ing)} routes to the admin API ({b})")
        api = [d for d in objs if d["kind"] == "Deployment" and d["metadata"]["name"] == f"{RELEASE}-api"]
        want = int(addr.rsplit(":", 1)[1])
        ports = [p for c in api[0]["spec"]["template"]["spec"]["containers"] for p in c.get("ports", []) if p["name"] == "admin"]
        if [p["containerPort"] for p in ports] != [want]:
            errs.append(f"the api pods' admin containerPort is {ports}, TNS_ADMIN_ADDR listens on {want}")
        pod_labels = api[0]["spec"]["template"]["metadata"]["labels"]
        governed = [np for np in objs if np["kind"] == "NetworkPolicy" and "Ingress" in np["spec"].get("policyTypes", [])
                    and selects(np["spec"]["podSelector"], pod_labels)]
        if not governed and not open_on_purpose:
            errs.append("the admin port is open to every pod in the cluster: no NetworkPolicy governs the api pods' "
                        "ingress, and admin.allowFromAnywhere does not say so on purpose")
    for np in (o for o in objs if o["kind"] == "NetworkPolicy"):
        for rule in np["spec"].get("ingress", []):
            if any(p.get("port") == "admin" for p in rule.get("ports", [])) and not rule.get("from"):
                errs.append(f"{name_of(np)} lets anyone reach the admin port")
    return errs


def check_rollout(objs):
    errs = []
    for d in (o for o in objs if o["kind"] == "Deployment"):
        ann = d["spec"]["template"]["metadata"].get("annotations", {})
        if "checksum/config" not in ann or "checksum/secret" not in ann:
            errs.append(f"{name_of(d)}: no checksum annotations, a config change would not roll it")
        if d["metadata"]["name"].endswith("-scheduler"):
            cm = config_map(objs)
            env = {e["name"]: e.get("value") for e in d["spec"]["template"]["spec"]["containers"][0].get("env", [])}
            grace = int(env.get("TNS_SCHEDULER_SHUTDOWN_GRACE_SECS") or cm["data"].get("TNS_SCHEDULER_SHUTDOWN_GRACE_SECS") or 25)
            if d["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] <= grace:
                errs.append(f"{name_of(d)}: terminationGracePeriodSeconds not above the {grace} s drain")
    return errs


# --- monitoring: the Grafana dashboard and the PrometheusRule ----------------------------------


def source_metrics():
    """{metric name: the roles that define it}, read from each role's crate: the name a metric's
    constructor is given (`Opts::new("tns_…"`, `IntGauge::new(`, `HistogramOpts::new(`, …)."""
    names = {}
    for role in METRIC_ROLES:
        for rs in sorted((REPO / role / "src").rglob("*.rs")):
            for n in re.findall(r'(?:new|gauge)\(\s*"(tns_[a-z0-9_]+)"', rs.read_text()):
                names.setdefault(n, set()).add(role)
    return names


def metric_roles(name, known):
    """The roles exporting a series: a histogram's are its name plus _bucket, _sum or _count."""
    return known.get(name) or known.get(re.sub(r"_(bucket|sum|count)$", "", name))


def selector_errors(where, expr, known, namespace, job_of_role):
    """Every TNS series an expression reads is one a role exports, selected by braces that name
    the namespace and that role's job (so two releases never mix)."""
    errs = []
    for m in re.finditer(r"\b(tns_[a-z0-9_]+)\b(\{[^}]*\})?", expr):
        name, sel = m.group(1), m.group(2) or ""
        roles = metric_roles(name, known)
        if not roles:
            errs.append(f"{where}: {name} is not a metric the api, scheduler or jobs sources define")
            continue
        if f'namespace="{namespace}"' not in sel:
            errs.append(f'{where}: {name}{sel} does not select namespace="{namespace}"')
        if not any(f'job="{job_of_role(role)}"' in sel for role in roles):
            errs.append(f"{where}: {name}{sel} does not select the job of {' or '.join(sorted(roles))}")
    return errs


def slug(heading):
    """The anchor GitHub gives a README heading."""
    text = heading.lstrip("#").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def readme_anchors():
    return {slug(l) for l in (CHART / "README.md").read_text().splitlines() if re.match(r"#{1,6} ", l)}


def panels_of(node):
    for p in node.get("panels", []):
        yield p
        yield from panels_of(p)


def dashboard_errors(where, dash, known):
    errs = []
    want_ds = {"type": "prometheus", "uid": "${datasource}"}
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        errs.append(f"{where}: no `datasource` variable of type datasource (prometheus)")
    for name in ("namespace", "release"):
        if name not in variables:
            errs.append(f"{where}: no `{name}` variable")
    for v in variables.values():
        if v.get("type") == "query" and v.get("datasource") != want_ds:
            errs.append(f"{where}: variable {v.get('name')} queries {v.get('datasource')}, not ${{datasource}}")
    if not dash.get("uid") or len(dash["uid"]) > 40 or not dash.get("title"):
        errs.append(f"{where}: a uid of 1-40 characters and a title are needed, not {dash.get('uid')!r}")
    ids, exprs = set(), 0
    for p in panels_of(dash):
        title = f"{where} panel {p.get('title')!r}"
        if p.get("id") in ids:
            errs.append(f"{title}: id {p.get('id')} used twice")
        ids.add(p.get("id"))
        g = p.get("gridPos", {})
        if g.get("x", 0) + g.get("w", 0) > 24:
            errs.append(f"{title}: wider than the grid")
        if p.get("type") == "row":
            continue
        if p.get("datasource") != want_ds:
            errs.append(f"{title}: datasource {p.get('datasource')}, not the ${{datasource}} variable")
        if not p.get("targets"):
            errs.append(f"{title}: no query")
        for t in p.get("targets", []):
            if t.get("datasource") != want_ds:
                errs.append(f"{title}: query {t.get('refId')} uses {t.get('datasource')}, not ${{datasource}}")
            exprs += 1
            errs += selector_errors(f"{title} {t.get('refId')}", t.get("expr", ""), known, "$namespace",
                                    lambda role: f"$release-{role}-metrics")
    if not exprs:
        errs.append(f"{where}: no queries at all")
    return errs


def check_dashboard(objs, values_set, known):
    errs = []
    d = ((values_set.get("metrics") or {}).get("dashboard") or {})
    cms = [o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == f"{RELEASE}-dashboard"]
    if bool(cms) != bool(d.get("enabled")):
        errs.append(f"metrics.dashboard.enabled is {bool(d.get('enabled'))} but {len(cms)} dashboard ConfigMap(s) rendered")
    want_labels = d.get("labels", {"grafana_dashboard": "1"})
    for cm in cms:
        labels = cm["metadata"].get("labels", {})
        if any(labels.get(k) != v for k, v in want_labels.items()):
            errs.append(f"{name_of(cm)}: labels {labels} lack the sidecar's {want_labels}")
        if d.get("folder") and cm["metadata"].get("annotations", {}).get(d.get("folderAnnotation", "grafana_folder")) != d["folder"]:
            errs.append(f"{name_of(cm)}: no folder annotation for {d['folder']!r}")
        if len(cm.get("data", {})) != 1:
            errs.append(f"{name_of(cm)}: holds {len(cm.get('data', {}))} files, not one dashboard")
        for key, text in cm.get("data", {}).items():
            if not key.endswith(".json"):
                errs.append(f"{name_of(cm)}: {key} does not end in .json (the sidecar's file name)")
            try:
                dash = json.loads(text)
            except json.JSONDecodeError as e:
                errs.append(f"{name_of(cm)}: {key} is not JSON: {e}")
                continue
            errs += dashboard_errors(f"{name_of(cm)}/{key}", dash, known)
            current = {v["name"]: v.get("current", {}).get("value") for v in dash["templating"]["list"]}
            if current.get("namespace") != NAMESPACE or current.get("release") != RELEASE:
                errs.append(f"{name_of(cm)}: does not open on this release ({current})")
    return errs


def rule_errors(spec, known, anchors, base_url):
    errs = []
    alerts = [r for g in spec.get("groups", []) for r in g.get("rules", [])]
    if not alerts:
        errs.append("the PrometheusRule holds no rules")
    for r in alerts:
        where = f"alert {r.get('alert')}"
        if "alert" not in r:
            errs.append(f"a recording rule {r.get('record')}: only alerts are expected")
            continue
        if not r.get("labels", {}).get("severity"):
            errs.append(f"{where}: no severity label")
        ann = r.get("annotations", {})
        for a in ("summary", "description", "runbook_url"):
            if not ann.get(a):
                errs.append(f"{where}: no {a} annotation")
        want = f"{base_url}#{r['alert'].lower()}"
        if ann.get("runbook_url") != want:
            errs.append(f"{where}: runbook_url {ann.get('runbook_url')!r}, not {want!r}")
        if r["alert"].lower() not in anchors:
            errs.append(f"{where}: README.md has no section #{r['alert'].lower()} for its runbook")
        errs += selector_errors(where, r.get("expr", ""), known, NAMESPACE, lambda role: f"{RELEASE}-{role}-metrics")
    return errs


def promtool_rules(promtool, spec, unit_tests=None):
    """`promtool check rules` (its lint fatal) on the spec; with unit_tests, `promtool test rules`
    on that file. promtool compares every annotation of a firing alert, so the tests get the spec
    with the annotations only of the alerts they give exp_annotations for (the others' templates
    are what check rules parses)."""
    errs = []
    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.yaml"
        rules.write_text(yaml.safe_dump(spec, sort_keys=False))
        r = subprocess.run([promtool, "check", "rules", "--lint-fatal", str(rules)], capture_output=True, text=True)
        if r.returncode != 0:
            errs.append(f"promtool check rules: {(r.stdout + r.stderr).strip()}")
        if unit_tests is not None:
            test = yaml.safe_load(Path(unit_tests).read_text())
            annotated = {case["alertname"] for group in test["tests"] for case in group.get("alert_rule_test", [])
                         if any("exp_annotations" in a for a in case.get("exp_alerts") or [])}
            bare = {"groups": [{**g, "rules": [{k: v for k, v in rule.items()
                                                 if k != "annotations" or rule.get("alert") in annotated}
                                                for rule in g["rules"]]} for g in spec["groups"]]}
            (Path(tmp) / "bare-rules.yaml").write_text(yaml.safe_dump(bare, sort_keys=False))
            test["rule_files"] = ["bare-rules.yaml"]
            (Path(tmp) / "test.yaml").write_text(yaml.safe_dump(test, sort_keys=False))
            r = subprocess.run([promtool, "test", "rules", "test.yaml"], capture_output=True, text=True, cwd=tmp)
            if r.returncode != 0:
                errs.append(f"promtool test rules {Path(unit_tests).name}: {(r.stdout + r.stderr).strip()}")
    return errs


def check_prometheus_rule(objs, values_set, known, promtool, unit_tests):
    errs = []
    pr_values = ((values_set.get("metrics") or {}).get("prometheusRule") or {})
    rules = [o for o in objs if o["kind"] == "PrometheusRule"]
    if bool(rules) != bool(pr_values.get("enabled")):
        errs.append(f"metrics.prometheusRule.enabled is {bool(pr_values.get('enabled'))} but {len(rules)} PrometheusRule(s) rendered")
    anchors = readme_anchors()
    for pr in rules:
        errs += rule_errors(pr["spec"], known, anchors, pr_values.get("runbookBaseUrl", ""))
        errs += promtool_rules(promtool, pr["spec"], unit_tests)
    return errs


CHECKS = {
    "the migration Job is a hook using only pre-existing objects": lambda ctx: check_migration_hook(ctx["objs"]),
    "a PDB exists exactly when api/scheduler run more than one replica": lambda ctx: check_pdbs(ctx["objs"], None),
    "the image tag follows the chart's appVersion": lambda ctx: check_image_tag(ctx["objs"], ctx["app_version"], ctx["repository"]),
    "probes and securityContext on every container": lambda ctx: check_probes_and_security(ctx["objs"]),
    "the Lease RBAC is the only RBAC": lambda ctx: check_rbac(ctx["objs"]),
    "every environment variable set is one the binary reads": lambda ctx: check_env(ctx["objs"], ctx["binary_vars"]),
    "the Ingress routes only to the API's http port; no NetworkPolicy rule opens every port":
        lambda ctx: check_ingress_and_policies(ctx["objs"]),
    "a configuration change rolls the pods": lambda ctx: check_rollout(ctx["objs"]),
    "the admin API: its own ClusterIP Service, never behind the Ingress, its port open to named peers only"
    " (or, said so, cluster-wide)":
        lambda ctx: check_admin_api(ctx["objs"], ctx["admin_open"]),
    "the Grafana dashboard exactly when asked: JSON, every panel on the ${datasource} variable, every query"
    " on this release's series":
        lambda ctx: check_dashboard(ctx["objs"], ctx["values_set"], ctx["metrics"]),
    "the PrometheusRule exactly when asked: promtool check rules (and test rules, ci/alerts-test.yaml, for the"
    " features set), severity, summary, description, a runbook section in README.md, only this release's series":
        lambda ctx: check_prometheus_rule(ctx["objs"], ctx["values_set"], ctx["metrics"], ctx["promtool"],
                                          ctx["alert_tests"]),
}


# --- checks on the chart itself ----------------------------------------------------------------


def walk_strings(node, path=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk_strings(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_strings(v, f"{path}[{i}]")
    elif isinstance(node, str):
        yield path, node


def check_defaults_hold_no_secret(values, helm_bin):
    errs = []
    for key in ("signingSecret.value", "dataKey.value", "externalDatabase.url", "externalRedis.url"):
        a, b = key.split(".")
        if values[a][b]:
            errs.append(f"values.yaml: {key} has a default")
    for path, s in walk_strings(values):
        if re.search(r"[0-9a-fA-F]{32,}", s) or re.search(r"://[^/\s]*:[^/\s]*@", s):
            errs.append(f"values.yaml: {path} looks like a secret")
    r = render(helm_bin)
    if r.returncode == 0:
        errs.append("the chart renders with no values at all: it must refuse without secrets")
    else:
        for key in ("signingSecret", "dataKey", "externalDatabase", "externalRedis"):
            if key not in r.stderr:
                errs.append(f"rendering without values does not name {key}: {r.stderr.strip()}")
    return errs


def check_schema_names(binary_vars):
    """The names config/env accept: the binary's own variables (an enum), and the adapter plugins'
    settings by pattern, which must take exactly what PLUGIN_SETTING takes (never the host's own
    TNS_ADAPTER_DIR, and none of the old TNS_<NAME>_* names the binary refuses)."""
    schema = json.loads((CHART / "values.schema.json").read_text())
    names = schema["$defs"]["configVars"]["propertyNames"]
    branches = names.get("anyOf", [names])
    allowed = set().union(*(set(b.get("enum", [])) for b in branches))
    errs = [f"values.schema.json accepts {n} in config/env, which the tns binary does not read"
            for n in sorted(allowed - binary_vars)]

    def accepts(name):
        def one(b):
            if "enum" in b and name not in b["enum"]:
                return False
            if "pattern" in b and not re.search(b["pattern"], name):
                return False
            return not ("not" in b and one(b["not"]))
        return any(one(b) for b in branches)

    plugin_settings = ["TNS_ADAPTER_UETDS_BASE_URL", "TNS_ADAPTER_SANDBOX_STATE_DIR", "TNS_ADAPTER_ACME2_X"]
    not_plugin_settings = ["TNS_ADAPTER_DIR", "TNS_ADAPTER_DIR_X", "TNS_ADAPTER_TIMEOUT_SECONDS",
                           "TNS_ADAPTER_CONCURRENCY_MAX", "TNS_ADAPTER_UETDS", "TNS_ADAPTER_UETDS_",
                           "TNS_ADAPTER_2X_Y", "TNS_ADAPTER_uetds_BASE_URL", "TNS_UETDS_BASE_URL",
                           "TNS_SANDBOX_STATE_DIR", "X_TNS_ADAPTER_UETDS_BASE_URL", "TNS_ADAPTER_UETDS_BASE-URL"]
    for n in plugin_settings:
        if not PLUGIN_SETTING.fullmatch(n):
            errs.append(f"check.py: PLUGIN_SETTING does not take {n}")
        if not accepts(n):
            errs.append(f"values.schema.json refuses {n}, an adapter plugin's setting")
    for n in not_plugin_settings:
        if PLUGIN_SETTING.fullmatch(n):
            errs.append(f"check.py: PLUGIN_SETTING takes {n}")
        if accepts(n) and n not in binary_vars:
            errs.append(f"values.schema.json accepts {n}, which is neither a variable of the binary nor a plugin's")
    if accepts("TNS_ADAPTER_DIR"):
        errs.append("values.schema.json accepts TNS_ADAPTER_DIR, which the chart sets itself")
    return errs


def check_app_version(chart):
    cargo = (REPO / "Cargo.toml").read_text()
    m = re.search(r"\[workspace\.package\][^\[]*?\nversion\s*=\s*\"([^\"]+)\"", cargo)
    if not m:
        return ["Cargo.toml: no [workspace.package] version"]
    if str(chart["appVersion"]) != m.group(1):
        return [f"Chart.yaml appVersion {chart['appVersion']} is not the crates' version {m.group(1)}"]
    return []


def check_dockerfile(values, hadolint):
    """No Docker engine runs in CI: the Dockerfile is parsed with BuildKit's parser, linted with
    hadolint, and held to what the chart expects of the image."""
    import dockerfile

    errs = []
    lint = subprocess.run([hadolint, "--no-color", str(REPO / "Dockerfile")], capture_output=True, text=True)
    if lint.returncode != 0:
        errs.append(f"hadolint: {lint.stdout.strip()} {lint.stderr.strip()}")
    cmds = dockerfile.parse_file(str(REPO / "Dockerfile"))
    froms = [i for i, c in enumerate(cmds) if c.cmd == "FROM"]
    if len(froms) < 2:
        errs.append("not multi-stage")
        return errs
    final = cmds[froms[-1]:]
    by = lambda cmd: [c for c in final if c.cmd == cmd]
    users = by("USER")
    uid = users[-1].value[0].split(":")[0] if users else "0"
    want = str(values["podSecurityContext"]["runAsUser"])
    if uid != want or uid == "0" or str(values["containerSecurityContext"]["runAsUser"]) != want:
        errs.append(f"the image runs as {uid}; the chart as {want}; both must be the same non-root uid")
    ep = by("ENTRYPOINT")
    if not ep or not ep[-1].json or list(ep[-1].value) != ["/usr/local/bin/tns"]:
        errs.append("ENTRYPOINT is not [\"/usr/local/bin/tns\"] (the chart passes the role as the argument)")
    env = {c.value[i]: c.value[i + 1] for c in by("ENV") for i in range(0, len(c.value), 2)}
    builtin = values["plugins"]["builtinPath"]
    if env.get("TNS_ADAPTER_DIR") != builtin:
        errs.append(f"the image's TNS_ADAPTER_DIR {env.get('TNS_ADAPTER_DIR')} is not plugins.builtinPath {builtin}")
    if not any(c.value[-1].rstrip("/") == builtin for c in by("COPY")):
        errs.append(f"nothing is copied into {builtin}")
    if not any(c.value[-1] == "/usr/local/bin/tns" for c in by("COPY")):
        errs.append("the binary is not copied to /usr/local/bin/tns")
    # Every plugin built is copied, by pattern (the Dockerfile names no plugin but in the build
    # line); the plugins built are exactly the shipped cdylib crates.
    build = " ".join(c.value[0] for c in cmds[: froms[-1]] if c.cmd == "RUN")
    built = set(re.findall(r"-p (\S+)", build))
    glob = "target/release/libtns_adapter_*.so"
    copy = re.search(r"\bcp (?:\S+ )*" + re.escape(glob) + r" (?:\S+ )*/out/adapters/?(?:\s|$)", build)
    if not copy:
        errs.append(f"the plugins are not copied by pattern (cp {glob} /out/adapters/)")
    named = sorted(set(re.findall(r"libtns_adapter_(\w+)\.so", build)))
    if named:
        errs.append(f"plugins copied by name ({', '.join(named)}): copy {glob}")
    # The target directory is a cache: plugins an earlier build left there must not be shipped.
    clean = re.search(r"\brm -f " + re.escape(glob) + r"\b", build)
    cached = any("type=cache" in f and "target=/src/target" in f
                 for c in cmds[: froms[-1]] if c.cmd == "RUN" for f in c.flags)
    if cached and (not clean or clean.start() > build.find("cargo build")):
        errs.append(f"the cached target directory is not rid of {glob} before cargo build")
    crates = {}
    for toml in REPO.glob("adapters/**/Cargo.toml"):
        text = toml.read_text()
        m = re.search(r'^name = "([^"]+)"', text, re.M)
        crates[m.group(1)] = ("cdylib" in text, "fixtures" in toml.parts)
    for crate in sorted(c for c in built if c.startswith("tns-adapter-")):
        if crate not in crates or not crates[crate][0] or crates[crate][1]:
            errs.append(f"{crate} is built for the image but is not a shipped cdylib plugin")
    for crate in sorted(built):
        if crate in crates and crates[crate][1]:
            errs.append(f"the test fixture {crate} is built for the image")
    for crate, (cdylib, fixture) in crates.items():
        if cdylib and not fixture and crate not in built:
            errs.append(f"the plugin {crate} is not in the image")
    if "tns" not in built:
        errs.append("the tns binary is not built")
    ignored = (REPO / ".dockerignore").read_text().split()
    for must in ("target/", ".git/"):
        if must not in ignored:
            errs.append(f".dockerignore does not exclude {must}")
    return errs


LEAF_MAPS = {"config", "env", "podAnnotations", "podLabels", "nodeSelector", "affinity", "resources", "annotations",
             "labels", "behavior", "podSecurityContext", "containerSecurityContext", "commonLabels", "alertLabels"}


def value_keys(node, path=""):
    if isinstance(node, dict) and node and path.rsplit(".", 1)[-1] not in LEAF_MAPS and not path.endswith("Probe"):
        for k, v in node.items():
            yield from value_keys(v, f"{path}.{k}" if path else k)
    else:
        yield path


def check_readme(values):
    readme = (CHART / "README.md").read_text()
    errs = []
    for key in value_keys(values):
        role, _, rest = key.partition(".")
        if f"`{key}`" not in readme and not (role in ("api", "scheduler", "jobs") and f"`<role>.{rest}`" in readme):
            errs.append(f"README.md does not describe `{key}`")
    return errs


# --- the run -----------------------------------------------------------------------------------


def binary_vars_of(args):
    if args.env_list:
        return {l.strip() for l in Path(args.env_list).read_text().splitlines() if l.strip()}
    r = subprocess.run([args.tns, "env"], capture_output=True, text=True, timeout=30)
    names = {l.strip() for l in r.stdout.splitlines() if l.strip()}
    if r.returncode != 0 or not names or not all(re.fullmatch(r"[A-Z][A-Z0-9_]*", n) for n in names):
        raise Failed(f"`{args.tns} env` must print one variable name per line and exit 0; it exited "
                     f"{r.returncode}: {(r.stdout + r.stderr).strip()[:300]}")
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--helm", required=True)
    ap.add_argument("--sm-validator", required=True)
    ap.add_argument("--k8s-version", required=True)
    ap.add_argument("--hadolint", required=True)
    ap.add_argument("--promtool", required=True)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--tns", help="the tns binary: `tns env` lists what it reads")
    src.add_argument("--env-list", help="a file of variable names, instead of a binary")
    args = ap.parse_args()

    started = time.monotonic()
    failures = []
    binary_vars = binary_vars_of(args)
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    metrics = source_metrics()

    def record(what, errs):
        status = "ok" if not errs else "FAILED"
        print(f"  {status:6} {what}")
        for e in errs:
            print(f"         - {e}")
        failures.extend(f"{what}: {e}" for e in errs)

    print("chart:")
    record("no default value holds a usable secret; the chart refuses to render without one",
           check_defaults_hold_no_secret(values, args.helm))
    record("every name values.schema.json accepts is one the binary reads", check_schema_names(binary_vars))
    record("appVersion is the crates' version", check_app_version(chart))
    record("README.md describes every value", check_readme(values))
    record("the Dockerfile: hadolint, multi-stage, non-root as the chart, plugins where the chart looks",
           check_dockerfile(values, args.hadolint))

    for name in VALUE_SETS:
        vf = CI / f"{name}-values.yaml"
        print(f"{name} ({vf.name}):")
        lint = helm(["lint", "--strict", str(CHART), "--namespace", NAMESPACE, "-f", str(vf)], args.helm)
        record("helm lint --strict", [] if lint.returncode == 0 else [lint.stdout + lint.stderr])
        r = render(args.helm, vf)
        if r.returncode != 0:
            record("helm template", [r.stderr])
            continue
        objs = docs_of(r.stdout)
        crds = sorted({o["kind"] for o in objs if o["kind"] in PROM_OPERATOR_KINDS})
        record(f"{len(objs)} objects validate strictly against Kubernetes {args.k8s_version}"
               + (f" ({' and '.join(crds)} against prometheus-operator's schema)" if crds else ""),
               check_validates(objs, args.k8s_version, args.sm_validator))
        values_set = yaml.safe_load(vf.read_text()) or {}
        admin_open = (values_set.get("admin") or {}).get("allowFromAnywhere", False)
        ctx = {"objs": objs, "app_version": str(chart["appVersion"]), "repository": values["image"]["repository"],
               "binary_vars": binary_vars, "admin_open": admin_open, "values_set": values_set, "metrics": metrics,
               "promtool": args.promtool, "alert_tests": CI / "alerts-test.yaml" if name == ALERT_TESTS_SET else None}
        for what, check in CHECKS.items():
            record(what, check(ctx))

    # Every assertion must be able to fail: these sets are wrong on purpose.
    print("refused on purpose (bad/):")
    def refused(bad, what, says):
        """`bad/<bad>-values.yaml` must fail to render, saying `says`."""
        r = render(args.helm, CI / f"bad/{bad}-values.yaml")
        record(what, [] if r.returncode != 0 and says in r.stderr
               else [f"rendered anyway (exit {r.returncode}) {r.stderr.strip()}"])

    for bad, what, says in (
        ("typo", "a typo'd key is refused by values.schema.json", "additional properties 'replicas' not allowed"),
        ("hook-without-existing-secret", "the migration hook refuses a database URL the chart would create",
         "externalDatabase.existingSecret"),
        ("admin-without-policy", "the admin API without a NetworkPolicy, not said to be open, is refused",
         "admin.allowFromAnywhere=true"),
        ("admin-anywhere-with-policy", "admin.allowFromAnywhere beside a NetworkPolicy is refused",
         "networkPolicy.admin.from"),
    ):
        refused(bad, what, says)
    unknown = render(args.helm, CI / "bad/unknown-env-values.yaml")
    caught = check_env(docs_of(unknown.stdout), binary_vars) if unknown.returncode == 0 else []
    record("a variable the binary does not read is caught by the environment check",
           [] if any("TNS_SCHEDULER_BATCH_SIZE" in e for e in caught)
           else [f"not caught (render exit {unknown.returncode}: {unknown.stderr.strip()})"])
    ok = docs_of(render(args.helm, CI / "ha-values.yaml").stdout)
    broken = [o for o in ok if o["kind"] != "PodDisruptionBudget"] + [
        {**o, "spec": {**o["spec"], "selector": {"matchLabels": {**o["spec"]["selector"]["matchLabels"], "app.kubernetes.io/component": "jobs"}}}}
        for o in ok if o["kind"] == "PodDisruptionBudget"][:1]
    record("a PDB over a single replica is caught", [] if check_pdbs(broken, None) else ["not caught"])
    insecure = json.loads(json.dumps(ok))
    for o in insecure:
        if o["kind"] == "Deployment":
            o["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"] = False
            del o["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
            break
    caught = check_probes_and_security(insecure)
    record("a writable root filesystem and a missing probe are caught",
           [] if len(caught) == 2 else [f"caught {caught}"])
    wide = json.loads(json.dumps(ok))
    for o in wide:
        if o["kind"] == "Role":
            o["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})
    record("RBAC beyond the Lease is caught", [] if check_rbac(wide) else ["not caught"])

    typo_obj = json.loads(json.dumps(ok))
    for o in typo_obj:
        if o["kind"] == "Deployment":
            o["spec"]["replicass"] = 2
            break
    record("an unknown field is caught by strict validation",
           [] if check_validates(typo_obj, args.k8s_version, args.sm_validator) else ["not caught"])
    features = docs_of(render(args.helm, CI / "features-values.yaml").stdout)
    exposed = json.loads(json.dumps(features))
    for o in exposed:
        if o["kind"] == "Service" and o["metadata"]["name"] == f"{RELEASE}-admin":
            o["spec"]["type"] = "LoadBalancer"
    routed = json.loads(json.dumps(features))
    for o in routed:
        if o["kind"] == "Ingress":
            o["spec"]["rules"][0]["http"]["paths"].append(
                {"path": "/admin", "pathType": "Prefix",
                 "backend": {"service": {"name": f"{RELEASE}-admin", "port": {"name": "admin"}}}})
    record("an admin Service that is not ClusterIP, and an Ingress routing to it, are caught",
           [] if len(check_admin_api(exposed)) == 1 and len(check_admin_api(routed)) == 1
           else [f"caught {check_admin_api(exposed)} and {check_admin_api(routed)}"])
    ungoverned = [o for o in features if o["kind"] != "NetworkPolicy"]
    record("an admin port no NetworkPolicy governs is caught, unless said to be open",
           [] if len(check_admin_api(ungoverned)) == 1 and not check_admin_api(ungoverned, open_on_purpose=True)
           else [f"caught {check_admin_api(ungoverned)}"])
    sm = [o for o in features if o["kind"] == "ServiceMonitor"]
    sm[0]["spec"]["endpoints"][0]["interval"] = "thirty seconds"
    record("a malformed ServiceMonitor is caught by its schema",
           [] if check_validates(sm, args.k8s_version, args.sm_validator) else ["not caught"])

    # The monitoring objects: refused without what they need, and each assertion able to fail.
    for bad, what, says in (
        ("prometheusrule-without-servicemonitor", "the PrometheusRule without the ServiceMonitor is refused",
         "metrics.serviceMonitor.enabled"),
        ("prometheusrule-without-runbook", "the PrometheusRule without runbookBaseUrl is refused",
         "metrics.prometheusRule.runbookBaseUrl"),
    ):
        refused(bad, what, says)
    features_values = yaml.safe_load((CI / "features-values.yaml").read_text())
    base_url = features_values["metrics"]["prometheusRule"]["runbookBaseUrl"]
    rule = next(o for o in features if o["kind"] == "PrometheusRule")
    slow = json.loads(json.dumps(rule))
    slow["spec"]["groups"][0]["rules"][0]["for"] = "five minutes"
    record("a malformed PrometheusRule is caught by its schema",
           [] if check_validates([slow], args.k8s_version, args.sm_validator) else ["not caught"])
    wide_rule = json.loads(json.dumps(rule["spec"]))
    wide_rule["groups"][0]["rules"][0]["expr"] = wide_rule["groups"][0]["rules"][0]["expr"].replace(f'namespace="{NAMESPACE}",', "")
    wrong_role = json.loads(json.dumps(rule["spec"]))
    wrong_role["groups"][0]["rules"][0]["expr"] = wrong_role["groups"][0]["rules"][0]["expr"].replace(
        f"{RELEASE}-api-metrics", f"{RELEASE}-scheduler-metrics")
    unknown_metric = json.loads(json.dumps(rule["spec"]))
    unknown_metric["groups"][0]["rules"][0]["expr"] = unknown_metric["groups"][0]["rules"][0]["expr"].replace(
        "tns_http_requests_total", "tns_http_request_total")
    no_runbook = json.loads(json.dumps(rule["spec"]))
    no_runbook["groups"][0]["rules"][0]["alert"] = "TNSNotInTheReadme"
    caught = [rule_errors(s, metrics, readme_anchors(), base_url) for s in (wide_rule, wrong_role, unknown_metric, no_runbook)]
    record("an alert reading other releases' series, another role's job, an unknown metric or lacking a runbook"
           " section is caught", [] if all(caught) else [f"caught {caught}"])
    broken = json.loads(json.dumps(rule["spec"]))
    broken["groups"][0]["rules"][0]["expr"] = "sum(rate(tns_http_requests_total[5m]"
    record("an expression Prometheus cannot parse is caught by promtool check rules",
           [] if promtool_rules(args.promtool, broken) else ["not caught"])
    lax = render(args.helm, CI / "features-values.yaml",
                 ["--set-json", "metrics.prometheusRule.alerts.apiErrorRatio.threshold=0.5",
                  "--set", "metrics.prometheusRule.alerts.jobsNoLeader.for=30m"])
    lax_rule = next(o for o in docs_of(lax.stdout) if o["kind"] == "PrometheusRule")
    failed = promtool_rules(args.promtool, lax_rule["spec"], CI / "alerts-test.yaml")
    record("the alert unit tests fail once a threshold or a `for` is not what they prove (values reach the rule)",
           [] if failed and "TNSApiHighErrorRatio" in failed[0] and "TNSJobsNoLeader" in failed[0]
           else [f"not caught: {failed}"])
    dash_cm = next(o for o in features if o["kind"] == "ConfigMap" and o["metadata"]["name"] == f"{RELEASE}-dashboard")
    dash = json.loads(next(iter(dash_cm["data"].values())))
    fixed = json.loads(json.dumps(dash))
    next(p for p in panels_of(fixed) if p["type"] != "row")["datasource"] = {"type": "prometheus", "uid": "prometheus"}
    unscoped = json.loads(json.dumps(dash))
    t = next(p for p in panels_of(unscoped) if p["type"] != "row")["targets"][0]
    t["expr"] = t["expr"].replace('namespace="$namespace",', "")
    caught = [dashboard_errors("fixed", fixed, metrics), dashboard_errors("unscoped", unscoped, metrics)]
    record("a dashboard panel on a fixed data source, and a query on every namespace, are caught",
           [] if all(len(c) == 1 for c in caught) else [f"caught {caught}"])

    print(f"chart check: {time.monotonic() - started:.1f} s")
    if failures:
        print(f"\nchart check FAILED ({len(failures)}):", file=sys.stderr)
        for f in failures:
            print(f"  - {f}", file=sys.stderr)
        sys.exit(1)
    print("chart check passed")


if __name__ == "__main__":
    try:
        main()
    except Failed as e:
        print(f"chart check FAILED: {e}", file=sys.stderr)
        sys.exit(1)
