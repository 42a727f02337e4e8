"""Errors that reach the user as one clear message and an exit status, never as a traceback."""

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # what a shell reports for a process killed by SIGPIPE (128 + 13)


class TandemError(Exception):
    """An error with a message for the user and the exit status it maps to."""

    exit_status = EXIT_RUN_FAILED


class SpecError(TandemError):
    """A spec that cannot run: each problem names the file and the field."""

    exit_status = EXIT_BAD_INPUT

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = source
        self.problems = problems
        lines = [f"{source}: {path}: {message}" if path else f"{source}: {message}" for path, message in problems]
        super().__init__("\n".join(lines))


class SetupError(TandemError):
    """The machine lacks something a run needs (root, hugepages, the build); the message says how to fix it."""

    exit_status = EXIT_BAD_INPUT


class RunFailed(TandemError):
    """A run started but did not complete: an NF crashed or hung, or the data plane failed."""

    exit_status = EXIT_RUN_FAILED
