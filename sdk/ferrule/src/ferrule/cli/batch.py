"""``ferrule batch IN.jsonl -o OUT.jsonl``: an agent run per input line, each result
appended as it completes; run again to resume (`ferrule.batch`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ferrule_kernel import FerruleError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "batch",
        help="run an agent on every line of a JSONL file, results as JSONL",
        description='Each input line is {"id": ..., "prompt": "..."}; each output line '
        '{"id", "output"} or {"id", "error": {"kind", "message"}}, written as runs '
        "complete (an input line that is not one gets an error line naming it). Inputs the output file already answers are skipped, so running again "
        "after a crash resumes; a line of it that is not a result is reported by number "
        "and skipped (its input runs again). Progress goes to stderr.",
    )
    parser.add_argument("input", help="the JSONL file of inputs")
    parser.add_argument("-o", "--output", required=True, help="the JSONL file of results")
    parser.add_argument(
        "-m", "--model", help="a model id, as for ferrule chat (default: the offline model)"
    )
    parser.add_argument("--provider", help="the API provider, for a model id without a prefix")
    parser.add_argument("--system", help="a system message for every run")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=16,
        help="runs at once (default 16); on a local llama.cpp model, the sequences it "
        "decodes together (its parallel attribute)",
    )
    parser.add_argument(
        "--placement",
        metavar="JSON",
        help='where the model runs, e.g. \'{"kind": "ray", "replicas": 4, "num_gpus": 1}\' '
        "(docs/deployment.md)",
    )
    parser.add_argument(
        "--retry-errors", action="store_true", help="run again the inputs that ended in an error"
    )
    parser.set_defaults(func=_batch)


def _batch(args: argparse.Namespace) -> int:
    import asyncio

    from ..agent.langmodel import LangModel
    from ..batch import run_file
    from ..runtime import Runtime
    from .chat import ModelId, chosen_model
    from .kernel import fail, read_input

    async def run(rt: Runtime) -> dict[str, int]:
        placement = None if args.placement is None else read_input(args.placement)
        model = _BatchModel(ModelId(chosen_model(args), args.provider, {}), args.concurrency)
        lm = await LangModel.new(model, runtime=rt, placement=placement)
        options = {} if args.system is None else {"system_message": args.system}
        return await run_file(
            lm,
            args.input,
            args.output,
            concurrency=args.concurrency,
            retry_errors=args.retry_errors,
            **options,
        )

    try:
        with Runtime() as rt:
            counts = asyncio.run(run(rt))
    except FerruleError as exc:
        return fail(exc)
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    ignored = counts["ignored_lines"]
    print(
        f"{counts['ok'] + counts['failed']} run, {counts['failed']} failed, "
        f"{counts['skipped']} already done"
        + (f", {ignored} output line{'s' * (ignored != 1)} ignored" if ignored else "")
        + f"; results in {args.output}",
        file=sys.stderr,
    )
    return 1 if counts["failed"] else 0


class _BatchModel:
    """The batch's model: a local backend that decodes requests together (one whose
    attributes take ``parallel``, as ferrule-llamacpp's) gets ``parallel`` = --concurrency,
    so that the runs are decoded at once rather than in line."""

    def __init__(self, model: Any, parallel: int) -> None:
        self.model, self.parallel = model, parallel

    def route(self, kernel: Any) -> Any:
        import attrs

        route = self.model.route(kernel)
        for info in kernel.component_types():
            if route.component_type in (info["name"], *info["aliases"]):
                field = info.get("attributes_schema", {}).get("properties", {}).get("parallel")
                if field is not None:  # at most what the backend takes; the rest wait in line
                    parallel = min(self.parallel, field.get("maximum", self.parallel))
                    attributes = {**route.attributes, "parallel": parallel}
                    return attrs.evolve(route, attributes=attributes)
        return route
