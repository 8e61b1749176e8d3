"""Reader: what an app's settings build, beyond the variables they read.

Three shapes matter to a run. A broker that is RabbitMQ (an ``amqp://`` /
``pyamqp://`` URL, ``RABBITMQ_*`` / ``AMQP_*`` parts, ``Celery(broker=...)``
naming them): jobquake runs Redis, so the broker setting must be pointed at
``{redis_url}`` (a TODO naming it). A database URL built from host and port
(``PostgresDsn.build`` / ``MultiHostUrl.build(host=...)``, an f-string
``"...@{host}:{port}/..."``): such a URL cannot name a Unix socket's folder
as its host, so the database is reached through the fault proxy's TCP
address (``proxied`` lists ``postgres``). A secret made per process
(``secrets.token_urlsafe()``, ``Fernet.generate_key()``, or no default):
every process of a test must share one, so it gets a fixed throwaway value.
"""
from __future__ import annotations

import ast
import re

from harness.scaffold import roles
from harness.scaffold.findings import Findings
from harness.scaffold.project import Project
from harness.scaffold.syntax import call_name, dotted, keywords, literal

AMQP_SCHEMES = ("amqp://", "amqps://", "pyamqp://", "librabbitmq://")
AMQP_WORDS = re.compile(r"(^|_)(RABBITMQ|RABBIT|AMQP)(_|$)")
URL_BUILDERS = {"build"}  # PostgresDsn.build, MultiHostUrl.build, AnyUrl.build
HOST_PORT = re.compile(r"@\{[^}]+\}:\{[^}]+\}")  # f"...@{host}:{port}/..."
PER_PROCESS = ("secrets.", "token_urlsafe", "token_hex", "token_bytes", "generate_key", "uuid4", "urandom")


def read(project: Project, found: Findings) -> None:
    for module, tree in project.modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and call_name(node) == "Celery":
                _celery_broker(node, module, found)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in URL_BUILDERS and "host" in keywords(node) and _database_scheme(node):
                found.database_built_from_parts = found.database_built_from_parts or \
                    f"{dotted(node.func)}(host=...) in {module}"
            elif isinstance(node, ast.JoinedStr) and HOST_PORT.search(_fstring_text(node)) and \
                    _names_postgres(ast.unparse(node)):
                found.database_built_from_parts = found.database_built_from_parts or \
                    f"an f-string \"...@{{host}}:{{port}}/...\" in {module}"
            elif isinstance(node, ast.ClassDef):
                _secrets(node, module, found)
    _amqp_variables(found)


def _celery_broker(node: ast.Call, module: str, found: Findings) -> None:
    broker = keywords(node).get("broker")
    if broker is None:
        return
    text = literal(broker) if isinstance(literal(broker), str) else ast.unparse(broker)
    if str(text).startswith(AMQP_SCHEMES) or AMQP_WORDS.search(str(text).upper().replace(".", "_")):
        found.amqp_broker = f"Celery(broker={ast.unparse(broker)}) in {module}"


def _amqp_variables(found: Findings) -> None:
    urls = [n for n, d in found.env_vars.items() if isinstance(d, str) and d.startswith(AMQP_SCHEMES)]
    if urls and all(roles.broker(n) for n in urls) and not found.amqp_broker:
        return  # named as a broker URL: [tool.jobquake.env] gives it {redis_url} already
    parts = [n for n in found.env_vars if AMQP_WORDS.search(n) and n not in urls]
    if not (found.amqp_broker or urls or parts):
        return
    where = "; ".join(filter(None, [found.amqp_broker, ", ".join(urls), ", ".join(parts) and
                                    f"its parts {', '.join(sorted(parts))}"]))
    setting = urls[0] if urls else "CELERY_BROKER_URL"
    found.env_todos.append(
        f"the app's broker is RabbitMQ (AMQP: {where}); jobquake runs Redis: point the app's broker setting at "
        f"{{redis_url}}, e.g. {setting} = \"{{redis_url}}\" (Celery reads CELERY_BROKER_URL before the app's "
        f"own broker)")


def _database_scheme(node: ast.Call) -> bool:
    scheme = literal(keywords(node).get("scheme"))
    owner = dotted(node.func.value) if isinstance(node.func, ast.Attribute) else ""
    return (isinstance(scheme, str) and scheme.startswith("postgres")) or "Postgres" in owner


def _names_postgres(text: str) -> bool:
    """An f-string of a PostgreSQL URL: its scheme, or parts named for the database (not Redis, AMQP, MySQL)."""
    lowered = text.lower()
    return ("postgres" in lowered or bool(re.search(r"database|\bdb_|_db\b", lowered))) and \
        not any(word in lowered for word in ("redis", "amqp", "rabbit", "mysql", "mongo"))


def _fstring_text(node: ast.JoinedStr) -> str:
    return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{x}"
                   for v in node.values)


def _secrets(node: ast.ClassDef, module: str, found: Findings) -> None:
    """A settings field named for a secret whose default is made per process, or that has none."""
    if not any(dotted(b).endswith("BaseSettings") for b in node.bases):
        return
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        source = f"{module}.{node.name}.{item.target.id}"
        names = [n for n, d in found.env_details.items() if d.source == source] or [item.target.id.upper()]
        if not roles.secret(item.target.id):
            continue
        made = item.value is not None and any(word in ast.unparse(item.value) for word in PER_PROCESS)
        if item.value is None or made:
            why = "made anew in every process" if made else "with no default"
            for name in (n for n in names if n not in found.env_values):
                found.env_values[name] = (roles.THROWAWAY_SECRET, f"a secret {why}: every process of a test must share "
                                                            "one, so a fixed throwaway value")
