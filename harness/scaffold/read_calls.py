"""Reader: how the code calls its model provider (timeouts, model names, hard-coded endpoints).

* Timeouts written in calls (``timeout=45``, ``httpx.Timeout(60)``,
  ``ClientTimeout(total=120)``) in modules that use an HTTP or provider
  client, and the official clients' own 600 s default where one is built
  without ``timeout=``: production seconds, which ``scale_paid_call_timeouts``
  lists so a run scales them.
* Model names: literal ``model=`` arguments, constants and settings named
  like a model (``SUMMARY_MODEL = "..."``), so the fake provider knows them.
* Endpoints: URLs in the code whose path is a model API's
  (``.../chat/completions``, ``/v1/messages``, ``/api/chat``...).
"""
from __future__ import annotations

import ast
import re

from harness.scaffold.findings import Findings
from harness.scaffold.project import Project
from harness.scaffold.syntax import call_name, keywords, literal

HTTP_CLIENTS = {"httpx", "requests", "aiohttp", "openai", "anthropic", "ollama", "httpx2"}
PROVIDER_CLIENTS = {"OpenAI", "AsyncOpenAI", "AzureOpenAI", "AsyncAzureOpenAI", "Anthropic", "AsyncAnthropic"}
CLIENT_DEFAULT_TIMEOUT = 600.0  # openai's and anthropic's, when a client is built without one
TIMEOUT_CALLS = {"Timeout": 0, "ClientTimeout": "total"}  # the call and where its read bound is
ENDPOINT = re.compile(r"^https?://[^\s]+/(chat/completions|completions|messages|responses|embeddings|"
                      r"api/chat|api/generate)/?$")
# calls that name a provider's model (a client's create / stream, litellm's completion, LangChain's chat
# models), unlike a local model's loader (transformers' pipeline(model=...))
MODEL_CALLS = {"create", "stream", "parse", "generate", "chat", "completion", "acompletion", "embedding",
               "aembedding", "ChatOpenAI", "ChatAnthropic", "ChatOllama", "OpenAIEmbeddings", "ChatLiteLLM"}
MODEL_NAME = re.compile(r"^[A-Za-z][\w.:/-]*[\w]$")


def read(project: Project, found: Findings) -> None:
    for module, tree in project.modules:
        if _imports(tree) & HTTP_CLIENTS:
            names = _numbers_by_name(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    _timeout(node, found, names)
        for node in ast.walk(tree):
            _model_and_endpoint(node, found)
    for name, default in found.env_vars.items():
        if "MODEL" in name and isinstance(default, str) and MODEL_NAME.match(default) and not default.isdigit():
            found.model_names.add(default)


def _imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def _number(node: ast.AST | None) -> float | None:
    value = literal(node)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _numbers_by_name(tree: ast.Module) -> dict[str, set[float]]:
    """Numbers assigned to each name of the module (``TIMEOUT_S = 45``; ``t = None if c else 45``)."""
    found: dict[str, set[float]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
            numbers = {n for n in (_number(v) for v in values) if n is not None}
            if numbers:
                found.setdefault(node.targets[0].id, set()).update(numbers)
    return found


def _seconds(node: ast.AST | None, names: dict[str, set[float]]) -> set[float]:
    if isinstance(node, ast.Name):
        return names.get(node.id, set())
    number = _number(node)
    return set() if number is None else {number}


def _timeout(node: ast.Call, found: Findings, names: dict[str, set[float]]) -> None:
    name = call_name(node)
    given = keywords(node)
    if name in TIMEOUT_CALLS:
        where = TIMEOUT_CALLS[name]
        value = node.args[0] if where == 0 and node.args else given.get(str(where)) if where else None
        found.paid_timeouts.update(_seconds(value, names) | _seconds(given.get("read"), names))
        return
    found.paid_timeouts.update(_seconds(given.get("timeout"), names))
    if name in PROVIDER_CLIENTS and "timeout" not in given:
        found.client_default_timeouts.add(CLIENT_DEFAULT_TIMEOUT)


def _model_and_endpoint(node: ast.AST, found: Findings) -> None:
    if isinstance(node, ast.Call) and call_name(node) in MODEL_CALLS:
        model = literal(keywords(node).get("model"))
        if isinstance(model, str) and MODEL_NAME.match(model):
            found.model_names.add(model)
    elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and \
            node.targets[0].id.upper().endswith(("MODEL", "MODEL_NAME", "MODEL_ID")):
        model = literal(node.value)
        if isinstance(model, str) and MODEL_NAME.match(model):
            found.model_names.add(model)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ENDPOINT.match(node.value):
        found.provider_urls.add(node.value)
