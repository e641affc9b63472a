"""Agno's context providers on ferrule: a folder, a project and a wiki (in a folder, and in
a git repository on this machine, committed and pushed) answering questions and taking
instructions through sub-agents on the loopback `wire`, never out of their folder; what is
refused (SQLAlchemy, Notion) names the ferrule way."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
from ferrule.agent import Agent
from ferrule.context import Answer, ContextMode, Status
from ferrule.context.database import DatabaseContextProvider
from ferrule.context.fs import FilesystemContextProvider
from ferrule.context.provider import serialize_answer
from ferrule.context.wiki import (
    FileSystemBackend,
    GitBackend,
    NotionDatabaseBackend,
    WikiBackendError,
    WikiContextProvider,
)
from ferrule.context.workspace import WorkspaceContextProvider
from ferrule.models.openai import OpenAIChat
from ferrule_kernel import InvalidInputError


def tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def names(tools) -> list[str]:
    out = []
    for tool in tools:
        functions = getattr(tool, "functions", None)
        out += sorted(functions) if functions is not None else [tool.name]
    return out


@pytest.fixture
def docs(tmp_path):
    root = tmp_path / "docs"
    (root / "node_modules").mkdir(parents=True)
    (root / "guide.md").write_text("# Guide\nThe harbour opens at six.\n")
    (root / "node_modules" / "noise.md").write_text("harbour harbour")
    (tmp_path / "secret.txt").write_text("the host's secret")
    return root


def test_a_folder_answers_through_its_sub_agent(docs, wire):
    fs = FilesystemContextProvider(docs, model=OpenAIChat(id="gpt-4o"))
    assert fs.status() == Status(True, str(docs.resolve()))
    assert names(fs.get_tools()) == ["query_fs"]
    wire.calls("search_content", query="harbour")
    wire.calls("read_file", file_name="../secret.txt")
    wire.says("It opens at six (guide.md).")
    answer = fs.query("When does the harbour open?")
    assert answer == Answer(text="It opens at six (guide.md).")
    assert "guide.md" in tool_results(wire.bodies[1])[-1]
    assert "outside" in tool_results(wire.bodies[2])[-1]
    assert "the host's secret" not in json.dumps(wire.bodies)
    tools_mode = FilesystemContextProvider(docs, mode=ContextMode.tools)
    assert "save_file" not in names(tools_mode.get_tools())
    assert "read_file" in names(tools_mode.get_tools())
    assert "query_fs" in fs.instructions()
    assert not FilesystemContextProvider(docs / "missing").status().ok


def test_an_agent_asks_the_provider_with_its_query_tool(docs, wire):
    fs = FilesystemContextProvider(docs, id="docs", model=OpenAIChat(id="gpt-4o"))
    wire.calls("query_docs", question="When does the harbour open?")  # the agent asks
    wire.says("At six.")  # the sub-agent answers
    wire.says("The harbour opens at six.")  # the agent replies
    run = Agent(model=OpenAIChat(id="gpt-4o"), tools=fs.get_tools()).run("Harbour hours?")
    assert run.content == "The harbour opens at six."
    assert json.loads(tool_results(wire.bodies[2])[-1]) == {"text": "At six."}
    assert serialize_answer(Answer()) == {}


def test_a_workspace_leaves_out_dependencies(docs, wire):
    workspace = WorkspaceContextProvider(docs, mode=ContextMode.tools, max_file_lines=50)
    (tool,) = workspace.get_tools()
    assert json.loads(tool.list_files()) == ["guide.md"]  # node_modules left out
    assert "save_file" not in tool.functions
    assert WorkspaceContextProvider().root.is_dir()


def test_a_wiki_in_a_folder_is_read_and_written(tmp_path, wire):
    wiki = WikiContextProvider(
        backend=FileSystemBackend(tmp_path / "wiki"), model=OpenAIChat(id="gpt-4o")
    )
    assert names(wiki.get_tools()) == ["query_wiki", "update_wiki"]
    wire.calls("save_file", contents="# Deploys\nRun make deploy.\n", file_name="deploys.md")
    wire.says("Added deploys.md.")
    assert wiki.update("Note that deploys run with make deploy.").text == "Added deploys.md."
    assert (tmp_path / "wiki" / "deploys.md").read_text().startswith("# Deploys")
    wire.calls("read_file", file_name="deploys.md")
    wire.says("With make deploy.")
    assert asyncio.run(wiki.aquery("How do deploys run?")).text == "With make deploy."
    read_only = WikiContextProvider(backend=FileSystemBackend(tmp_path / "wiki"), write=False)
    assert names(read_only.get_tools()) == ["query_wiki"]


def git(*args, cwd):
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def test_a_wiki_in_git_commits_and_pushes_with_a_written_message(tmp_path, wire):
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    git("init", "--bare", "-b", "main", str(origin), cwd=tmp_path)
    git("clone", str(origin), str(seed), cwd=tmp_path)
    (seed / "index.md").write_text("# Wiki\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "-A", cwd=seed)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-m", "start", cwd=seed)
    git("push", "origin", "main", cwd=seed)
    backend = GitBackend(
        repo_url=f"file://{origin}", github_token="ghp_secret", local_path=tmp_path / "clone"
    )
    wiki = WikiContextProvider(backend=backend, model=OpenAIChat(id="gpt-4o"))
    wire.calls(
        "save_file", contents="# Runbook\nRestart the pier lights.\n", file_name="runbook.md"
    )
    wire.says("Added the runbook.", "Add the pier lights runbook")  # the writer, the summary
    answer = wiki.update("Add a runbook: restart the pier lights.")
    assert "Committed" in answer.text and "Add the pier lights runbook" in answer.text
    log = git("log", "--format=%s|%an", "main", cwd=origin)
    assert log.splitlines()[0] == "Add the pier lights runbook|Agno Wiki Bot"
    assert "runbook.md" in git("ls-tree", "--name-only", "main", cwd=origin)
    other = GitBackend(
        repo_url="https://example.invalid/other.git",
        github_token="ghp_secret",
        local_path=tmp_path / "clone",
    )
    with pytest.raises(WikiBackendError) as caught:
        asyncio.run(other.setup())  # a clone of another remote is there
    assert "ghp_secret" not in str(caught.value)
    with pytest.raises(InvalidInputError, match="https"):
        GitBackend(repo_url="git@github.com:acme/wiki.git", github_token="t")


def test_what_context_refuses_names_the_way(tmp_path):
    with pytest.raises(InvalidInputError, match="SQLAlchemy"):
        DatabaseContextProvider(sql_engine=object(), readonly_engine=object())
    with pytest.raises(InvalidInputError, match="Notion"):
        NotionDatabaseBackend(database_id="db")
    with pytest.raises(InvalidInputError, match="read or write"):
        WikiContextProvider(backend=FileSystemBackend(tmp_path), read=False, write=False)
