"""Agno's ``agno.tools.knowledge``: `KnowledgeTools`, a knowledge base the model searches in
steps: ``think`` (notes on what to look for), ``search_knowledge`` (the documents found, as
JSON) and ``analyze`` (whether they answer). Thoughts and analyses are kept in the run's
session state (``thoughts``, ``analysis``)."""

from __future__ import annotations

import json
from typing import Any

from .scratchpad import noted
from .tool_context import RunContext
from .toolkit import Toolkit

__all__ = ["KnowledgeTools"]

INSTRUCTIONS = (
    "You can search a knowledge base with these tools:\n"
    "- think: note what you need and which searches would find it;\n"
    "- search_knowledge: search with one query at a time;\n"
    "- analyze: judge whether what you found answers the question; if not, think and "
    "search again with better queries.\n"
    "Answer from what you found, and say when the knowledge base does not say."
)
FEW_SHOT_EXAMPLES = (
    "<examples>\n"
    "Question: How long is the warranty?\n"
    "think(thought='Look for the warranty terms.')\n"
    "search_knowledge(query='warranty period')\n"
    "analyze(analysis='The terms say two years; that answers it.')\n"
    "Answer: Two years.\n"
    "</examples>"
)


class KnowledgeTools(Toolkit):
    """``KnowledgeTools(knowledge=kb)``: the ``enable_*`` flags (or ``all``) choose the
    tools; ``instructions`` replace the default guidance (added unless
    ``add_instructions=False``), ``add_few_shot`` adds an example."""

    DEFAULT_INSTRUCTIONS = INSTRUCTIONS
    FEW_SHOT_EXAMPLES = FEW_SHOT_EXAMPLES
    knowledge: Any

    def __init__(
        self,
        knowledge: Any,
        enable_think: bool = True,
        *,
        enable_search: bool = True,
        enable_analyze: bool = True,
        instructions: str | None = None,
        add_instructions: bool = True,
        add_few_shot: bool = False,
        few_shot_examples: str | None = None,
        all: bool = False,
        **kwargs: Any,
    ) -> None:
        self.knowledge = knowledge
        chosen = (
            (self.think, enable_think),
            (self.search_knowledge, enable_search),
            (self.analyze, enable_analyze),
        )
        guidance = self.DEFAULT_INSTRUCTIONS if instructions is None else instructions
        if add_few_shot:
            guidance += "\n\n" + (few_shot_examples or self.FEW_SHOT_EXAMPLES)
        super().__init__(
            name=kwargs.pop("name", "knowledge_tools"),
            tools=[tool for tool, wanted in chosen if wanted or all],
            instructions=guidance,
            add_instructions=add_instructions,
            **kwargs,
        )

    def think(self, run_context: RunContext, thought: str) -> str:
        """Note a thought about what to look for; your notes so far.

        Args:
            thought: The thought.
        """
        return noted(run_context, "thoughts", thought, "Thoughts:")

    def search_knowledge(self, run_context: RunContext, query: str) -> str:
        """Search the knowledge base; the documents found, as JSON.

        Args:
            query: What to search for.
        """
        documents = self.knowledge.search(query=query)
        if not documents:
            return "No documents found"
        return json.dumps([d.to_dict() for d in documents])

    def analyze(self, run_context: RunContext, analysis: str) -> str:
        """Note whether what was found answers the question; your analyses so far.

        Args:
            analysis: The analysis.
        """
        return noted(run_context, "analysis", analysis, "Analysis:")
