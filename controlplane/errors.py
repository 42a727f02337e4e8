"""Errors that reach the user as one clear message and an exit status, never as a traceback."""

import re

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # what a shell reports for a process killed by SIGPIPE (128 + 13)

# Line breaks and other control characters, which a problem's text can carry from the spec itself (an NF type the
# data plane quotes as given): written as escapes, so that each problem stays one line starting with the file.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(text: str) -> str:
    return _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)


class TandemError(Exception):
    """An error with a message for the user and the exit status it maps to."""

    exit_status = EXIT_RUN_FAILED


class SpecError(TandemError):
    """A spec that cannot run: each problem names the file and the field."""

    exit_status = EXIT_BAD_INPUT

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = source
        self.problems = problems
        lines = [f"{source}: {_one_line(f'{path}: {message}' if path else message)}" for path, message in problems]
        super().__init__("\n".join(lines))


class SetupError(TandemError):
    """The machine lacks something a run needs (root, hugepages, the build); the message says how to fix it."""

    exit_status = EXIT_BAD_INPUT


class RunFailed(TandemError):
    """A run started but did not complete: an NF crashed or hung, or the data plane failed."""

    exit_status = EXIT_RUN_FAILED
