"""The kernel's equivalent of a lab's chains, for the benchmark that holds Tandem against it: an nftables ruleset for a
Linux bridge between the lab's veths, one regular chain per firewall NF with the same rules in the same order (the
synthetic ones included, as nfs/firewall_rules.cc makes them), jumped to in chain order for frames from the chain's
`from` port. Frames that are not IP cross untouched, as Tandem's ports pass them."""

from __future__ import annotations

import ipaddress

# NF types the kernel does the same for without a rule: pass changes nothing, and checkip's checks are the ones the
# receiving host's IP stack makes anyway.
NO_RULE_NEEDED = ("pass", "checkip")


def untranslatable(chains: list[dict]) -> str | None:
    """Why the chains (as in the run config) have no nftables equivalent here; None if they have one."""
    for chain in chains:
        if chain.get("from_port") is None:
            return f"chain {chain['name']} is fed by the generator, not by a lab host"
        for nf in chain["nfs"]:
            if nf["type"] != "firewall" and nf["type"] not in NO_RULE_NEEDED:
                return f"NF {nf['name']} ({nf['type']}) has no nftables equivalent here"
    return None


def _ports(field: str, value) -> str:
    text = str(value)
    return f"{field} {text}" if "-" not in text else f"{field} {text.replace(' ', '')}"


def rule_text(rule: dict) -> str:
    """One firewall rule (src, dst, src_port, dst_port, proto, action) as an nftables rule."""
    matches = []
    family = None
    for field in ("src", "dst"):
        if field in rule:
            network = ipaddress.ip_network(rule[field], strict=False)
            family = "ip" if network.version == 4 else "ip6"
            matches.append(f"{family} {'saddr' if field == 'src' else 'daddr'} {network}")
    proto = rule.get("proto", "any")
    if proto in ("tcp", "udp"):
        matches.append(f"meta l4proto {proto}")
        for field in ("src_port", "dst_port"):
            if field in rule:
                matches.append(_ports(f"{proto} {'sport' if field == 'src_port' else 'dport'}", rule[field]))
    elif proto in ("icmp", "icmpv6"):
        matches.append(f"meta l4proto {'icmp' if proto == 'icmp' else 'ipv6-icmp'}")
    elif family is None:
        matches.append("meta protocol { ip, ip6 }")
    return " ".join(matches) + (" return" if rule["action"] == "allow" else " drop")


def synthetic_rules(count: int) -> list[dict]:
    """The firewall's synthetic deny rules (nfs/firewall_rules.cc): 172.16.0.0/12 sources, which no lab sends."""
    return [
        {
            "src": str(ipaddress.ip_address((172 << 24) | (16 << 16) | (i & 0xFFFFF))),
            "dst_port": 1 + i % 65535,
            "proto": "udp" if i % 2 == 0 else "tcp",
            "action": "deny",
        }
        for i in range(count)
    ]


def ruleset(chains: list[dict], interfaces: list[str]) -> str:
    """The `nft -f` text: table bridge tandem, its forward chain jumping to each firewall's chain in order for frames
    that entered from the chain's `from` port (`interfaces[port]` is that port's bridge member)."""
    lines = ["table bridge tandem {"]
    jumps = ["meta protocol != { ip, ip6 } accept"]
    for chain in chains:
        member = interfaces[chain["from_port"]]
        for nf in chain["nfs"]:
            if nf["type"] != "firewall":
                continue
            args = nf.get("args", {})
            name = f"nf_{nf['name']}".replace("-", "_").replace(".", "_")
            given = args.get("rules", []) + synthetic_rules(args.get("synthetic_rules", 0))
            rules = [rule_text(rule) for rule in given]
            if args.get("default", "allow") == "deny":
                rules.append("drop")
            lines += [f"  chain {name} {{", *(f"    {rule}" for rule in rules), "  }"]
            jumps.append(f'iifname "{member}" jump {name}')
    lines += ["  chain forward {", "    type filter hook forward priority 0; policy accept;"]
    lines += [f"    {jump}" for jump in jumps] + ["  }", "}"]
    return "\n".join(lines) + "\n"


def rule_count(chains: list[dict]) -> int:
    """The most rules a frame walks: its chain's firewalls' together, synthetic ones included, in the longest chain."""
    return max(
        (
            sum(
                len(nf.get("args", {}).get("rules", [])) + nf.get("args", {}).get("synthetic_rules", 0)
                for nf in chain["nfs"]
                if nf["type"] == "firewall"
            )
            for chain in chains
        ),
        default=0,
    )
