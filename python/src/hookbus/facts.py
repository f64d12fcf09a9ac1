"""What a call does, as the coordinator computed it once (``docs/facts.md``): ``Call.facts``.

The coordinator parses the call's shell commands, URLs, paths, recipients and secrets once and
hands the same JSON to Cedar, to every worker (the policy request's ``facts``) and to the log
record, so a Python policy reads what a TypeScript policy and a Cedar rule read, without parsing
anything itself. The shapes below are the JSON Schema ``schemas/facts/action-facts.schema.json``
as ``TypedDict``s (camelCase, as on the wire); they are plain dicts at run time.
"""

from __future__ import annotations

from typing import Any, List, Literal, Optional, TypedDict

#: The fact set version this SDK reads; a request with another version gives ``Call.facts = None``.
FACTS_VERSION = 1

PathClass = Literal["root", "home", "inside-home", "system", "project", "outside", "unknown"]


class CommandFact(TypedDict):
    program: str
    argv: List[str]
    flags: List[str]
    operands: List[str]
    paths: List[dict[str, Any]]
    via: List[str]
    dynamic: bool
    operandsFromInput: bool


class NetworkFact(TypedDict):
    program: str
    hosts: List[str]
    upload: bool
    uploadFiles: List[str]


class DeletionFact(TypedDict):
    program: str
    recursive: bool
    targets: List[dict[str, Any]]


class Unparsed(TypedDict):
    reason: Literal["syntax", "too-long", "too-deep", "too-many-commands", "too-many-nodes"]
    code: Literal["HOOKBUS_SHELL_UNPARSED", "HOOKBUS_SHELL_LIMIT"]
    detail: str


class _ShellFactsBase(TypedDict):
    version: int
    commands: List[CommandFact]
    redirects: List[dict[str, Any]]
    network: List[NetworkFact]
    interpreterFeeds: List[dict[str, Any]]
    deletions: List[DeletionFact]
    dangerousCalls: List[dict[str, Any]]
    programs: List[str]
    hosts: List[str]
    decodes: List[str]
    deleteTargetClasses: List[PathClass]
    wrappers: List[str]
    deletes: bool
    deletesRecursively: bool
    targetsRoot: bool
    targetsHome: bool
    targetsSystem: bool
    deletesUnknownTarget: bool
    pipesIntoInterpreter: bool
    pipesDecodedIntoInterpreter: bool
    pipesDecodedIntoShell: bool
    pipesNetworkIntoInterpreter: bool
    usesNetwork: bool
    uploads: bool
    hasDangerousCall: bool
    runsDynamicProgram: bool
    elevated: bool


class ShellFacts(_ShellFactsBase, total=False):
    """One shell command's facts; ``unparsed`` when it does not parse or is over a limit."""

    unparsed: Unparsed


class FoundCommand(TypedDict, total=False):
    text: str
    argv: List[str]
    at: str


class ToolSummary(TypedDict):
    hosts: List[str]
    internalUrl: bool
    metadataUrl: bool
    userinfoUrl: bool
    unparsedUrl: bool
    sensitivePaths: List[str]
    credentialPath: bool
    persistencePath: bool
    outsideProject: bool
    secretKinds: List[str]


class _ToolFactsBase(TypedDict):
    name: str
    commands: List[FoundCommand]
    urls: List[dict[str, Any]]
    paths: List[dict[str, Any]]
    recipients: dict[str, Any]
    secrets: dict[str, Any]
    summary: ToolSummary
    unparsed: List[Literal["depth", "nodes", "too-many"]]


class ToolFacts(_ToolFactsBase, total=False):
    """One tool the call is about; its class is ``tool["class"]`` (a Python keyword)."""

    mcp: dict[str, str]
    cwd: str
    shell: List[ShellFacts]
    """One entry per command in ``commands``, in order."""


class ActionFacts(TypedDict):
    version: int
    hook: str
    tools: List[ToolFacts]


def facts_of(value: Any) -> Optional[ActionFacts]:
    """The request's facts when they are of the version this SDK reads, else None."""
    if (
        isinstance(value, dict)
        # Not ``==``: True == 1 in Python, and JSON's true is no version.
        and type(value.get("version")) is int and value["version"] == FACTS_VERSION
        and isinstance(value.get("tools"), list)
    ):
        return value  # type: ignore[return-value]
    return None
