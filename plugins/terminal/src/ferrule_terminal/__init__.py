"""A shell for agents: the ``terminal`` operator (Ailoy's builtin ``terminal`` tool), run
for code in the same process only, with a working directory, a timeout, output limits and
an optional allow-list of programs."""
