"""Each task family's inputs, decided before any work: parse → decide inputs (here) → flows/stages.

Every value is decided by the one precedence rule (scheduler_build/settings/precedence.py) through `option`;
the stages receive the result and read no setting. Tasks, tests and benchmarks share these, so
what a benchmark measures is what a task runs.
"""
