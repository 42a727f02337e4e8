"""Live progress of a run on the terminal: elapsed time, phase, current Mpps, drops."""

from __future__ import annotations

import sys
import time


def say(text: str) -> None:
    """A message about what Tandem is doing (profiling an NF, solving a placement), on standard error."""
    print(f"tandem: {text}", file=sys.stderr)


class ProgressLine:
    """Rewrites one line on a terminal; elsewhere (CI, pipes) prints a line about once a second."""

    # `total_seconds` None: a run until stopped (chains fed by ports), whose progress shows the time so far.
    def __init__(self, label: str, total_seconds: float | None, stream=sys.stderr):
        self.label = label
        self.total = total_seconds
        self.stream = stream
        self.interactive = stream.isatty()
        self._last_print = 0.0
        self._shown = False

    def __call__(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "progress":
            text = (
                f"{self.label}{event['t']:5.1f}{'' if self.total is None else f'/{self.total:.1f}'} s  "
                f"{event['phase']:<7}  {event['mpps']:7.3f} Mpps  "
                f"delivered {event['delivered']:>12,}  dropped {event['dropped']:>10,}"
            )
            if self.interactive:
                self.stream.write("\r" + text + "\033[K")
                self._shown = True
            elif time.monotonic() - self._last_print >= 1.0:
                self.stream.write(text + "\n")
                self._last_print = time.monotonic()
            self.stream.flush()
        elif kind in ("error", "warning"):
            self.finish()
            self.stream.write(f"{self.label}{kind}: {event['message']}\n")
        elif kind == "scale":  # the autoscaler's decision, as it makes it
            self.finish()
            verb = "one more instance" if event["change"] == "out" else "one instance fewer"
            verb = "instances set by command" if event.get("by") == "command" else verb
            self.stream.write(
                f"{self.label}{event['t_s']:5.2f} s  {event['nf']}: {verb}, {event['instances']} in use "
                f"({event['instance']} on core {event['core']}): {event['reason']}\n"
            )
        elif kind == "crash":  # an NF whose spec says restart: it comes back after its back-off
            self.finish()
            # An external application's held packets are told from the ones it freed only at the run's end.
            held = (
                f"holding {event['lost_so_far']} packets (lost)"
                if event.get("held_or_freed") is None
                else f"having held or freed {event['held_or_freed']} packets (split at the end)"
            )
            self.stream.write(
                f"{self.label}{event['t']:5.2f} s  NF {event['nfs']} {event['how']}, {held}: "
                f"restarting in {event['restart_in_s']:.1f} s\n"
            )
        elif kind == "restart":
            self.finish()
            self.stream.write(
                f"{self.label}{event['restarted_at_s']:5.2f} s  NF {event['nfs']} restarted (pid {event['pid']}, "
                f"attached in {event['attach_ms']:.0f} ms)\n"
            )
        elif kind == "started":
            names = ", ".join(f"{w['nfs']} (pid {w['pid']}, core {w['core']})" for w in event["workers"])
            self.stream.write(f"{self.label}started {names}\n")
        elif kind == "done":
            self.finish()

    def finish(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self._shown = False
        self.stream.flush()
