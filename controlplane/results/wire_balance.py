"""The accounts of one direction of a link between two Tandem nodes, from the sending node's wire port and the
receiving node's: what left = what came in + what the wire lost + what was still on it at the stop."""

from __future__ import annotations


def wire_balance(sender: dict, receiver: dict) -> dict:
    """`sender` and `receiver`: the two ends' port reports (a run's `ports` entries, each with its `wire`).

    The receiver finds the wire's losses as gaps in the numbers it saw; what the sender numbered after the last one
    the receiver saw was on the wire at the stop (or lost there: no later frame showed the gap). Exact when every
    number the receiver saw was sent, and every frame it took off the link is counted once."""
    sent, came = sender["wire"], receiver["wire"]
    after_last = sent["sent"] - came["expected"]
    frames_in = came["received"] + came["duplicates"] + came["implausible"] + came["foreign"]
    return {
        "sent": sent["sent"],
        "received": came["received"],
        "lost": came["lost"],
        "after_last": after_last,
        "exact": after_last >= 0
        and sent["sent"] == came["received"] + came["lost"] + after_last
        and frames_in == receiver["received"],
    }
