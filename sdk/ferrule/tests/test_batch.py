"""Batch agent runs (`ferrule.batch`, ``ferrule batch``): results as they complete, per-input
errors, resuming without redoing finished inputs."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent.langmodel import LangModel
from ferrule.batch import finished_ids, run_file
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel

seen: list[str] = []
#: The rates of a progress line ("... 0.0123 runs/s, 4.56 tokens/s").
RATES = re.compile(r"([0-9.]+) (?:runs|tokens)/s")


def reply(inputs: Any) -> str:
    prompt = inputs.messages[-1].text
    seen.append(prompt)
    if "boom" in prompt:
        raise ValueError(f"cannot answer {prompt!r}")
    return prompt.upper()


def write_inputs(path: Path, prompts: dict[str, str]) -> None:
    path.write_text("".join(json.dumps({"id": k, "prompt": v}) + "\n" for k, v in prompts.items()))


def results(path: Path) -> dict[str, dict[str, Any]]:
    return {line["id"]: line for line in map(json.loads, path.read_text().splitlines())}


async def run(tmp_path: Path, **options: Any) -> dict[str, int]:
    with Runtime() as rt:
        lm = await LangModel.new(TestModel(function=reply), runtime=rt)
        return await run_file(
            lm, tmp_path / "in.jsonl", tmp_path / "out.jsonl", progress=None, **options
        )


async def test_every_input_gets_its_result_or_its_own_error(tmp_path: Path):
    prompts = {f"p{i}": f"prompt {i}" for i in range(20)} | {"bad": "boom now"}
    write_inputs(tmp_path / "in.jsonl", prompts)
    counts = await run(tmp_path, concurrency=4)
    assert counts == {"total": 21, "skipped": 0, "ok": 20, "failed": 1, "ignored_lines": 0}
    out = results(tmp_path / "out.jsonl")
    assert {k: v.get("output") for k, v in out.items() if k != "bad"} == {
        k: v.upper() for k, v in prompts.items() if k != "bad"
    }
    assert out["bad"]["error"]["kind"] == "plugin_error"
    assert "cannot answer 'boom now'" in out["bad"]["error"]["message"]


async def test_a_run_resumes_after_a_crash_without_redoing_finished_inputs(tmp_path: Path):
    write_inputs(tmp_path / "in.jsonl", {"a": "one", "b": "two", "c": "boom", "d": "four"})
    # what a crash leaves: two whole lines, an error, and a line cut short
    (tmp_path / "out.jsonl").write_text(
        '{"id": "a", "output": "ONE"}\n{"id": "c", "error": {"kind": "plugin_error"}}\n{"id": "b", "outp'
    )
    seen.clear()
    counts = await run(tmp_path)
    assert counts == {"total": 4, "skipped": 2, "ok": 2, "failed": 0, "ignored_lines": 0}
    assert sorted(seen) == ["four", "two"]
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines][:2] == ["a", "c"]
    assert sorted(results(tmp_path / "out.jsonl")) == ["a", "b", "c", "d"]
    seen.clear()
    counts = await run(tmp_path, retry_errors=True)
    assert seen == ["boom"] and counts["failed"] == 1


@pytest.mark.parametrize(
    ("text", "key", "field"),
    [
        (b"not json\n", "line 2", "line 2"),
        (b'{"id": "b", "text": "x"}\n', "b", "line 2.prompt"),
        (b'{"prompt": 5}\n', "2", "line 2.prompt"),
        (b'["x"]\n', "line 2", "line 2"),
        (b'{"id": "a", "prompt": "y"}\n', "line 2", "line 2.id"),
        (b'{"id": [1], "prompt": "x"}\n', "line 2", "line 2.id"),
        (b'{"id": "b", "prompt": "\xff"}\n', "line 2", "line 2"),
    ],
)
async def test_a_bad_input_line_ends_as_its_own_error_naming_it(
    tmp_path: Path, text: bytes, key: str, field: str
):
    (tmp_path / "in.jsonl").write_bytes(
        b'{"id": "a", "prompt": "one"}\n' + text + b'{"id": "c", "prompt": "three"}\n'
    )
    counts = await run(tmp_path)
    assert counts == {"total": 3, "skipped": 0, "ok": 2, "failed": 1, "ignored_lines": 0}
    out = results(tmp_path / "out.jsonl")
    assert (out["a"]["output"], out["c"]["output"]) == ("ONE", "THREE")
    error = out[key]["error"]
    assert error["kind"] == "invalid_input"
    assert error["details"]["errors"][0]["path"] == field
    assert error["message"].startswith(field)
    # a resume does not read it again; --retry-errors does, and it is still bad
    assert (await run(tmp_path))["skipped"] == 3
    assert (await run(tmp_path, retry_errors=True))["failed"] == 1


def test_the_command_writes_results_and_progress_and_resumes(tmp_path: Path):
    write_inputs(tmp_path / "in.jsonl", {"a": "hello there", "b": "second one"})
    command = [sys.executable, "-m", "ferrule.cli", "batch", "in.jsonl", "-o", "out.jsonl"]
    first = subprocess.run(
        [*command, "-m", "test"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert first.returncode == 0, first.stderr
    # stderr is a pipe here, as a log file would be: a line of its own per run, no \r
    *progress, summary = first.stderr.splitlines()
    assert "\r" not in first.stderr
    assert [line.split(", ")[0] for line in progress] == [
        "batch: 1/2 done (0 before)",
        "batch: 2/2 done (0 before)",
    ]
    assert all(float(rate) > 0 for line in progress for rate in RATES.findall(line))
    assert summary == "2 run, 0 failed, 0 already done; results in out.jsonl"
    assert {k: v["output"] for k, v in results(tmp_path / "out.jsonl").items()} == {
        "a": "hello there",
        "b": "second one",
    }
    again = subprocess.run(
        [*command, "-m", "test"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert again.returncode == 0 and "0 run, 0 failed, 2 already done" in again.stderr
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


async def test_a_prompt_with_a_lone_surrogate_gets_its_result_and_the_run_goes_on(tmp_path: Path):
    # valid JSON (a \ud800 escape), but not text UTF-8 can carry
    prompts = {f"p{i}": f"prompt {i}" for i in range(21)} | {"odd": "bad \ud800 char"}
    write_inputs(tmp_path / "in.jsonl", prompts)
    counts = await run(tmp_path, concurrency=1)
    assert counts == {"total": 22, "skipped": 0, "ok": 22, "failed": 0, "ignored_lines": 0}
    out = results(tmp_path / "out.jsonl")
    assert out["odd"]["output"] == "BAD \ud800 CHAR"  # kept as sent: escaped in the JSON line
    assert len(out) == 22
    again = await run(tmp_path)
    assert (again["skipped"], again["ok"]) == (22, 0)


async def test_a_corrupt_output_line_is_reported_by_number_and_its_input_runs_again(
    tmp_path: Path,
):
    write_inputs(tmp_path / "in.jsonl", {"a": "one", "b": "two", "c": "three", "d": "four"})
    (tmp_path / "out.jsonl").write_bytes(
        b'{"id": "a", "output": "ONE"}\n'
        b'{"id": "b", "outp\x00ut": "TW\n'  # a line an editor or a full disk mangled
        b"\xff\xfe not text\n"
        b'["c"]\n'
        b'{"id": "c", "output": "THREE"}\n'
    )
    seen.clear()
    progress = io.StringIO()
    with Runtime() as rt:
        lm = await LangModel.new(TestModel(function=reply), runtime=rt)
        counts = await run_file(
            lm, tmp_path / "in.jsonl", tmp_path / "out.jsonl", progress=progress
        )
    assert counts == {"total": 4, "skipped": 2, "ok": 2, "failed": 0, "ignored_lines": 3}
    assert sorted(seen) == ["four", "two"]
    report = progress.getvalue()
    for number, why in [(2, "not JSON"), (3, "not UTF-8"), (4, 'not an object with an "id"')]:
        assert f"out.jsonl line {number} is not a result ({why}" in report
    assert sorted(results_of_lines(tmp_path / "out.jsonl")) == ["a", "b", "c", "d"]


def results_of_lines(path: Path) -> dict[str, Any]:
    """The results among an output file's lines, skipping those that are not."""
    found = {}
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found[record["id"]] = record
    return found


def test_without_a_report_a_corrupt_output_line_is_an_error_naming_it(tmp_path: Path):
    (tmp_path / "out.jsonl").write_text('{"id": "a", "output": "A"}\n{"id": \n{"id": "b"}\n')
    with pytest.raises(InvalidInputError) as caught:
        finished_ids(tmp_path / "out.jsonl")
    assert caught.value.errors[0]["path"] == "line 2"
    assert "out.jsonl line 2 is not a result (not JSON" in caught.value.message
    lines = []
    assert finished_ids(tmp_path / "out.jsonl", on_bad_line=lambda n, why: lines.append(n)) == {
        "a",
        "b",
    }
    assert lines == [2]


def test_the_command_resumes_past_a_corrupt_output_line_and_says_so(tmp_path: Path):
    write_inputs(tmp_path / "in.jsonl", {"a": "hello there", "b": "second \ud800 one"})
    (tmp_path / "out.jsonl").write_text('{"id": "a", "output": "hello there"}\n{"id": "b", "ou\n')
    command = [sys.executable, "-m", "ferrule.cli", "batch", "in.jsonl", "-o", "out.jsonl"]
    done = subprocess.run(
        [*command, "-m", "test"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "out.jsonl line 2 is not a result (not JSON" in done.stderr
    assert "1 run, 0 failed, 1 already done, 1 output line ignored" in done.stderr
    assert results_of_lines(tmp_path / "out.jsonl")["b"]["output"] == "second \ud800 one"


class Clock:
    """A stand-in for ``time`` in `ferrule.batch`: each reading 20 s after the last, as
    with a model that takes its time."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 20.0
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream", [io.StringIO, Terminal])
async def test_progress_is_a_line_per_run_in_a_log_and_one_line_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: type[io.StringIO]
):
    write_inputs(tmp_path / "in.jsonl", {f"p{i}": f"prompt {i}" for i in range(3)})
    monkeypatch.setattr("ferrule.batch.time", Clock())
    progress = stream()
    with Runtime() as rt:
        lm = await LangModel.new(TestModel(function=reply), runtime=rt)
        await run_file(
            lm, tmp_path / "in.jsonl", tmp_path / "out.jsonl", progress=progress, concurrency=1
        )
    text = progress.getvalue()
    if stream is Terminal:  # rewritten in place, ended once
        assert text.startswith("\r") and text.endswith("\n") and text.count("\n") == 1
        lines = text.strip().split("\r")
    else:
        assert "\r" not in text
        lines = text.splitlines()
    assert [line.split(" (")[0] for line in lines] == [f"batch: {n}/3 done" for n in (1, 2, 3)]
    for line in lines:  # a run every 40 s or more: a rate well under 0.05 runs/s, not "0.0"
        runs = RATES.findall(line)[0]
        assert 0 < float(runs) < 0.05
        assert len(runs.lstrip("0.")) >= 3, line  # three significant digits
