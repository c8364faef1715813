"""The deployment files under ``deploy/`` hold together, checked without Docker.

The compose files are checked against the Compose Specification's JSON schema
(as check-jsonschema ships it) and read with PyYAML like the Kubernetes
manifests, the Dockerfile with dockerfile-parse, nginx.conf with crossplane
(NGINX's own configuration parser). What is checked is what breaks a
deployment silently:

- every service the deployment needs exists, the API scales (no fixed name, no
  host port) behind nginx, and its health check asks the port gunicorn binds;
- every ``SI_*`` variable set anywhere is one si_agent reads (a setting of
  ``si_agent/config/settings.py``, or a name the business YAML or the demo portal
  reads), and the settings the files set are valid (``Settings.from_env``);
- every command is real: the ``si-agent`` sub-commands parse with the CLI's own
  parser, gunicorn's options with gunicorn's parser, the WSGI factory and the
  Celery app import;
- the Dockerfile has a builder stage, runs as a non-root user and installs
  extras that pyproject.toml defines; nginx passes streamed responses through
  unbuffered on the API's real streaming routes.
"""

from __future__ import annotations

import importlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import crossplane
import pytest
import yaml
from dockerfile_parse import DockerfileParser

from si_agent.config.settings import Settings, env_variable

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SI_VAR = re.compile(r"\bSI_[A-Z0-9_]+\b")
# ${NAME}, ${NAME:-default}, ${NAME:?message} as docker compose interpolates them.
INTERPOLATION = re.compile(r"\$\{(\w+)(?::?([-?])([^}]*))?\}")
SECRET_SETTINGS = {"SI_JWT_SECRET", "SI_LLM_API_KEY", "SI_MILVUS_TOKEN", "SI_UPLOAD_KEY",
                   "SI_GATEWAY_CLIENTS", "SI_PORTAL_PASSWORD", "SI_PORTAL_SECRET"}
REDIS_URL_SETTINGS = ("SI_REDIS_URL", "SI_RATE_LIMIT_STORAGE", "SI_CELERY_BROKER")


# -- readers -------------------------------------------------------------------------


def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def compose() -> dict:
    return _yaml(DEPLOY / "docker-compose.yml")


@pytest.fixture(scope="module")
def sentinel() -> dict:
    return _yaml(DEPLOY / "docker-compose.sentinel.yml")


@pytest.fixture(scope="module")
def k8s() -> list[dict]:
    text = (DEPLOY / "k8s" / "si-agent.yaml").read_text(encoding="utf-8")
    return [doc for doc in yaml.safe_load_all(text) if doc]


@pytest.fixture(scope="module")
def dockerfile() -> DockerfileParser:
    return DockerfileParser(path=str(DEPLOY / "Dockerfile"))


def _interpolate(value: str) -> str:
    """A compose value as docker compose would make it, with a stand-in for required ones."""
    def one(match: re.Match) -> str:
        kind, default = match.group(2), match.group(3) or ""
        return default if kind == "-" else f"stand-in-{match.group(1).lower()}"

    return INTERPOLATION.sub(one, str(value))


def _environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: _interpolate(value) for key, value in env.items()}


def _env_file_names(path: Path) -> set[str]:
    """Variables an env file sets or shows commented out (``# SI_X=...``)."""
    return set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]*)=", path.read_text("utf-8"), re.M))


def _command(service: dict) -> list[str]:
    command = service.get("command")
    return shlex.split(command) if isinstance(command, str) else list(command or [])


def _stages(dockerfile: DockerfileParser) -> dict[str, dict]:
    """Each stage: its parent (image or stage), instructions, and the user it runs as."""
    stages: dict[str, dict] = {}
    current = None
    for item in dockerfile.structure:
        if item["instruction"] == "FROM":
            parts = item["value"].split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else f"#{len(stages)}"
            parent = stages.get(parts[0])
            current = stages[name] = {"parent": parts[0], "items": [],
                                      "user": parent["user"] if parent else "root"}
        elif current is not None:
            current["items"].append(item)
            if item["instruction"] == "USER":
                current["user"] = item["value"].split(":")[0]
    return stages


def _instructions(stage: dict, instruction: str) -> list[str]:
    return [i["value"] for i in stage["items"] if i["instruction"] == instruction]


def _si_services(compose: dict) -> dict[str, dict]:
    """The services that run an si_agent image."""
    return {name: s for name, s in compose["services"].items()
            if str(s.get("image", "")).startswith("si-agent-")}


def _assistant_services(compose: dict) -> dict[str, dict]:
    """The si_agent services that run the assistant (all but the demo portal, a stand-in
    web site that reads only SI_PORTAL_* and SI_DATA_DIR)."""
    return {name: s for name, s in _si_services(compose).items() if name != "portal"}


def _known_variables() -> set[str]:
    """Every SI_* variable si_agent reads: its settings, and the names read outside them."""
    known = {env_variable(name) for name in Settings.model_fields}
    for path in [*ROOT.glob("businesses/*.yaml"), *ROOT.glob("examples/**/*.yaml")]:
        known |= set(re.findall(r"\$\{(SI_[A-Z0-9_]+)", path.read_text("utf-8")))
    for path in (ROOT / "si_agent").rglob("*.py"):
        known |= set(re.findall(r"environ\.get\(\"(SI_[A-Z0-9_]+)\"", path.read_text("utf-8")))
    return known


# -- docker-compose.yml -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["docker-compose.yml", "docker-compose.sentinel.yml"])
def test_compose_file_follows_the_compose_specification(name):
    """What `docker compose config` would refuse: unknown keys, wrong types, bad names."""
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
         str(DEPLOY / name)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_has_every_service_of_a_multi_machine_deployment(compose):
    services = compose["services"]
    for name in ("nginx", "api", "redis", "etcd", "minio", "milvus", "worker", "portal"):
        assert name in services, f"docker-compose.yml has no {name!r} service"
    assert services["api"]["build"]["target"] == "api"
    assert services["worker"]["build"]["target"] == "worker"
    assert services["milvus"]["environment"]["ETCD_ENDPOINTS"] == "etcd:2379"
    assert services["milvus"]["environment"]["MINIO_ADDRESS"] == "minio:9000"


def test_api_and_workers_can_be_scaled(compose):
    for name in ("api", "worker"):
        service = compose["services"][name]
        assert "replicas" in service.get("deploy", {}), name
        # A fixed container name or a host port would stop `--scale api=N`.
        assert "container_name" not in service, name
        assert "ports" not in service, name
    assert "ports" in compose["services"]["nginx"]


def test_nginx_waits_for_healthy_api_containers(compose):
    depends = compose["services"]["nginx"]["depends_on"]
    assert depends["api"]["condition"] == "service_healthy"
    test = " ".join(compose["services"]["api"]["healthcheck"]["test"])
    port = _gunicorn_port(DockerfileParser(path=str(DEPLOY / "Dockerfile")))
    assert re.search(rf"http://127\.0\.0\.1:{port}/(healthz|readyz)\b", test), test


def test_every_service_that_builds_an_image_builds_it_from_the_dockerfile(compose):
    """No si_agent image is ever pulled from a registry by its name."""
    stages = _stages(DockerfileParser(path=str(DEPLOY / "Dockerfile")))
    for name, service in _si_services(compose).items():
        build = service.get("build")
        assert build, f"{name} would pull {service['image']} instead of building it"
        assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
        assert build["target"] in stages, f"{name}: no stage {build['target']!r}"


def test_compose_settings_are_valid_and_point_at_the_compose_services(compose):
    services = compose["services"]
    for name, service in _assistant_services(compose).items():
        settings = Settings.from_env(_environment(service))
        assert settings.session_store == "redis", name
        assert settings.job_backend == "celery", name
        assert settings.kb_uri == "http://milvus:19530", name
        for variable in REDIS_URL_SETTINGS:
            host = re.match(r"redis://(?::[^@]*@)?([\w-]+):(\d+)/\d+$", _environment(service)[variable])
            assert host and host.group(1) in services, f"{name}: {variable} names no service"


def test_redis_keeps_sessions_and_jobs_across_restarts(compose):
    redis = compose["services"]["redis"]
    command = " ".join(_command(redis))
    assert "--appendonly yes" in command
    assert "--maxmemory-policy noeviction" in command
    assert any(volume.endswith(":/data") for volume in redis["volumes"])


def test_si_agent_commands_parse_with_the_cli(compose):
    from si_agent.cli import _parser

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert scripts["si-agent"] == "si_agent.cli:main"
    commands = [_command(s) for s in _si_services(compose).values() if s.get("command")]
    assert len(commands) >= 3  # worker, kb-ingest, portal
    for command in commands:
        assert command[0] == "si-agent", command
        args = _parser().parse_args(command[1:])  # exits on an unknown sub-command or option
        assert callable(args.func), command


def test_k8s_commands_parse_with_the_cli(k8s):
    from si_agent.cli import _parser

    commands = [c["args"] for doc in k8s if doc["kind"] in ("Deployment", "Job")
                for c in doc["spec"]["template"]["spec"]["containers"] if "args" in c]
    assert len(commands) >= 2  # the worker and the knowledge-base ingest
    for command in commands:
        assert command[0] == "si-agent", command
        assert callable(_parser().parse_args(command[1:]).func), command


def test_the_worker_command_builds_the_celery_app():
    from si_agent.jobs.celery import TASK, celery_app

    app = celery_app(Settings(job_backend="celery", celery_broker="redis://redis:6379/2"))
    assert TASK in app.tasks


def test_every_si_variable_in_the_deployment_is_one_si_agent_reads(compose, sentinel, k8s,
                                                                   dockerfile):
    used: dict[str, set[str]] = {}

    def note(where: str, names) -> None:
        for name in names:
            if name.startswith("SI_"):
                used.setdefault(name, set()).add(where)

    for label, data in (("docker-compose.yml", compose), ("docker-compose.sentinel.yml", sentinel)):
        for name, service in data["services"].items():
            note(f"{label}:{name}", _environment(service))
    for doc in k8s:
        note(f"k8s:{doc['kind']}", (doc.get("data") or {}) | (doc.get("stringData") or {}))
    for path in (DEPLOY / ".env.example", DEPLOY / "si-agent.env.example"):
        note(path.name, _env_file_names(path))
    for item in dockerfile.structure:
        if item["instruction"] in ("ENV", "ARG"):
            note("Dockerfile", SI_VAR.findall(item["value"]))
    unknown = {name: sorted(where) for name, where in used.items() if name not in _known_variables()}
    assert not unknown, f"SI_* variables si_agent does not read: {unknown}"
    assert {"SI_REDIS_URL", "SI_MILVUS_URI", "SI_JOB_BACKEND"} <= used.keys()


def test_no_secret_is_written_into_the_deployment_files(compose, dockerfile):
    for name, service in compose["services"].items():
        for variable, value in (service.get("environment") or {}).items():
            if variable in SECRET_SETTINGS or "PASSWORD" in variable or "SECRET" in variable:
                assert "${" in str(value), f"{name}: {variable} is written in the compose file"
            for url in re.findall(r"redis://:([^@]*)@", str(value)):
                assert url.startswith("${"), f"{name}: {variable} holds a Redis password"
    for item in dockerfile.structure:
        if item["instruction"] in ("ENV", "ARG"):
            assert not SECRET_SETTINGS & set(SI_VAR.findall(item["value"])), item["content"]
    for path in (DEPLOY / ".env.example", DEPLOY / "si-agent.env.example"):
        values = dict(re.findall(r"^([A-Z][A-Z0-9_]*)=(.*)$", path.read_text("utf-8"), re.M))
        for variable, value in values.items():
            if variable in SECRET_SETTINGS - {"SI_PORTAL_PASSWORD"} or variable.endswith(
                    ("_PASSWORD", "_SECRET_KEY", "_ACCESS_KEY")):
                assert value == "", f"{path.name}: {variable} has a value"


# -- docker-compose.sentinel.yml ----------------------------------------------------------


def test_sentinel_variant_sends_every_redis_client_to_the_master_proxy(compose, sentinel):
    services = sentinel["services"]
    for name in ("redis-replica", "sentinel", "redis-proxy"):
        assert name in services, name
    assert services["sentinel"]["deploy"]["replicas"] >= 3
    conf = services["sentinel"]["command"][-1]
    assert re.search(r"sentinel monitor (\S+) redis 6379 2\b", conf)
    # Every service the override changes exists in the base file or is new here.
    overridden = [n for n, s in services.items() if "image" not in s and n != "redis"]
    assert set(overridden) <= set(compose["services"]), overridden
    for name in _assistant_services(compose):
        env = _environment(services[name])
        for variable in REDIS_URL_SETTINGS:
            assert "@redis-proxy:6379/" in env[variable], (name, variable)
        assert "redis-proxy" in services[name]["depends_on"]


def test_redis_proxy_checks_each_server_for_the_master_role(sentinel):
    volume = sentinel["services"]["redis-proxy"]["volumes"][0]
    cfg = (DEPLOY / volume.split(":")[0]).read_text("utf-8")
    assert "tcp-check expect string role:master" in cfg
    servers = {line.split()[1]: line.split()[2] for line in cfg.splitlines()
               if line.strip().startswith("server ")}
    assert servers == {"redis": "redis:6379", "redis-replica": "redis-replica:6379"}
    assert "on-marked-down shutdown-sessions" in cfg


# -- Dockerfile ------------------------------------------------------------------------------


def _gunicorn_port(dockerfile: DockerfileParser) -> str:
    cmd = yaml.safe_load(_instructions(_stages(dockerfile)["api"], "CMD")[-1])
    bind = cmd[cmd.index("--bind") + 1]
    return bind.rsplit(":", 1)[1]


def test_dockerfile_builds_in_a_builder_stage_and_copies_the_result(dockerfile):
    stages = _stages(dockerfile)
    assert len(stages) >= 2
    assert "builder" in stages
    copies = _instructions(stages["runtime"], "COPY")
    assert any(c.startswith("--from=builder ") for c in copies), copies
    for stage in stages.values():
        for source in _instructions(stage, "COPY"):
            if not source.startswith("--from="):
                for path in source.split()[:-1]:
                    assert (ROOT / path).exists(), f"COPY {path}: not in the repository"


def test_dockerfile_installs_the_hash_locked_production_extras(dockerfile):
    """The image installs requirements/deploy.lock with --require-hashes (its extras:
    the production ones pyproject defines; test_locks.py checks it is not stale), then
    si_agent alone."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"][
        "optional-dependencies"]
    lock = ROOT / "requirements" / "deploy.lock"
    wanted = lock.read_text("utf-8").splitlines()[0].removeprefix("# extras: ").split(",")
    assert set(wanted) == {"server", "rag", "llm", "dates", "jobs", "rpa"}
    assert set(wanted) <= extras.keys()
    runs = _instructions(_stages(dockerfile)["builder"], "RUN")
    assert "pip install --require-hashes -r requirements/deploy.lock" in runs, runs
    assert "pip install --no-deps ." in runs, runs
    assert runs.index("pip install --require-hashes -r requirements/deploy.lock") < runs.index(
        "pip install --no-deps .")
    assert any("import jionlp" in run for run in runs)


def test_images_run_as_a_non_root_user(dockerfile):
    stages = _stages(dockerfile)
    for target in ("api", "worker"):
        assert stages[target]["user"] not in ("root", "0"), target
    # A numeric user, so that Kubernetes' runAsNonRoot can verify it, created in the image.
    runtime_runs = " ".join(_instructions(stages["runtime"], "RUN"))
    for target in ("api", "worker"):
        assert stages[target]["user"].isdigit(), target
        assert f"useradd --system --uid {stages[target]['user']} " in runtime_runs, target


def test_worker_image_has_chromium_where_the_settings_expect_it(dockerfile):
    worker = _stages(dockerfile)["worker"]
    assert re.search(r"apt-get install .*\bchromium\b.*\bfonts-noto-cjk\b",
                     " ".join(_instructions(worker, "RUN")))
    assert f"SI_RPA_CHROMIUM={Settings().rpa_chromium}" in _instructions(worker, "ENV")


def test_api_image_serves_the_real_wsgi_factory_with_real_gunicorn_options(dockerfile):
    from gunicorn.config import Config

    api = _stages(dockerfile)["api"]
    cmd = yaml.safe_load(_instructions(api, "CMD")[-1])
    assert cmd[0] == "gunicorn"
    options = Config().parser().parse_args(cmd[1:])  # exits on an option gunicorn lacks
    module, _, call = options.args[0].partition(":")
    assert call == "create_app()"
    assert callable(importlib.import_module(module).create_app)
    default_args = next(e for e in _instructions(api, "ENV") if e.startswith("GUNICORN_CMD_ARGS="))
    extra = Config().parser().parse_args(shlex.split(default_args.split("=", 1)[1].strip('"')))
    assert extra.threads > 1  # a streamed turn must not block the worker (docs/deploy.md)
    healthcheck = " ".join(_instructions(api, "HEALTHCHECK"))
    assert f"http://127.0.0.1:{_gunicorn_port(dockerfile)}/healthz" in healthcheck


# -- nginx.conf ------------------------------------------------------------------------------


def _nginx() -> list[dict]:
    parsed = crossplane.parse(str(DEPLOY / "nginx.conf"), single=True)
    assert parsed["status"] == "ok", parsed["errors"]
    return parsed["config"][0]["parsed"]


def _blocks(directives: list[dict], name: str) -> list[dict]:
    return [d for d in directives if d["directive"] == name]


def _walk(directives: list[dict]):
    for d in directives:
        yield d
        yield from _walk(d.get("block", []))


def test_nginx_proxies_every_location_to_the_api_service(compose):
    http = _blocks(_nginx(), "http")[0]["block"]
    upstream = _blocks(http, "upstream")[0]
    servers = [d["args"][0] for d in _blocks(upstream["block"], "server")]
    port = _gunicorn_port(DockerfileParser(path=str(DEPLOY / "Dockerfile")))
    assert servers == [f"api:{port}"]
    assert "api" in compose["services"]
    passes = [d["args"][0] for d in _walk(http) if d["directive"] == "proxy_pass"]
    assert passes and set(passes) == {f"http://{upstream['args'][0]}"}
    # Any API container serves any request: no affinity to one of them.
    assert not {"ip_hash", "hash", "sticky"} & {d["directive"] for d in upstream["block"]}


def test_nginx_streams_the_api_s_event_stream_routes_unbuffered():
    from flask import Flask

    from si_agent.server import chat

    app = Flask(__name__)
    app.register_blueprint(chat.bp)
    routes = {rule.rule: rule.methods for rule in app.url_map.iter_rules()}
    server = _blocks(_blocks(_nginx(), "http")[0]["block"], "server")[0]["block"]
    locations = {" ".join(d["args"]): d["block"] for d in _blocks(server, "location")}
    for path, method in (("/api/chat", "POST"), ("/api/session/events", "GET")):
        assert method in routes[path], path
        block = locations[f"= {path}"]
        settings = {d["directive"]: d["args"] for d in block}
        assert settings["proxy_buffering"] == ["off"], path
        timeout = int(settings["proxy_read_timeout"][0].rstrip("s"))
        assert timeout >= chat.WATCH_SECONDS, path
    assert _blocks(locations["^~ /demo"], "return")[0]["args"] == ["404"]


# -- Kubernetes ------------------------------------------------------------------------------


def _kind(k8s: list[dict], kind: str, name: str) -> dict:
    return next(d for d in k8s if d["kind"] == kind and d["metadata"]["name"] == name)


def test_k8s_api_probes_readiness_and_liveness(k8s):
    pod = _kind(k8s, "Deployment", "si-agent-api")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert str(ports[container["readinessProbe"]["httpGet"]["port"]]) == _gunicorn_port(
        DockerfileParser(path=str(DEPLOY / "Dockerfile")))
    assert pod["securityContext"]["runAsNonRoot"] is True


def test_k8s_scales_api_and_workers_without_affinity(k8s):
    for deployment in ("si-agent-api", "si-agent-worker"):
        _kind(k8s, "Deployment", deployment)
        hpa = _kind(k8s, "HorizontalPodAutoscaler", deployment)
        assert hpa["spec"]["scaleTargetRef"]["name"] == deployment
        assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    assert _kind(k8s, "Service", "si-agent-api")["spec"].get("sessionAffinity", "None") == "None"


def test_k8s_settings_are_valid_and_secrets_stay_out_of_the_configmap(k8s):
    config = _kind(k8s, "ConfigMap", "si-agent-config")["data"]
    secret = _kind(k8s, "Secret", "si-agent-secrets")["stringData"]
    assert not (SECRET_SETTINGS | set(REDIS_URL_SETTINGS)) & config.keys()
    settings = Settings.from_env(config | secret)
    assert (settings.session_store, settings.job_backend, settings.auth_mode) == (
        "redis", "celery", "prod")
