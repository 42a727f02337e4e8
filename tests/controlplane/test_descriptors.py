"""NF descriptors as the catalog gives them and `./tandem nfs` shows them (μNF's descriptor, field by field)."""

from __future__ import annotations

import subprocess

from conftest import REPO
from controlplane.cli.authoring import descriptor_line
from controlplane.spec import catalog


def test_every_nf_type_has_a_descriptor_with_an_action_per_layer():
    for nf in catalog.catalog()["nfs"]:
        descriptor = nf["descriptor"]
        assert set(descriptor["layers"]) == {"L2", "L3", "L4", "payload"}, nf["name"]
        assert set(descriptor["writes"]) <= set(descriptor["reads"]) | set(descriptor["writes"])


def test_the_ttl_line_names_the_fields_it_reads_and_writes():
    ttl = next(nf for nf in catalog.catalog()["nfs"] if nf["name"] == "ttl")
    assert descriptor_line(ttl["descriptor"]) == (
        "stateless, may drop; L2 ReadOnly (eth_type), L3 ReadWrite (ipv4_ttl, ipv4_checksum), L4 NOP, payload NOP"
    )
    listing = subprocess.run([str(REPO / "tandem"), "nfs"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    assert descriptor_line(ttl["descriptor"]) in listing.stdout


def test_a_classifier_shows_its_gates_and_an_nf_with_one_output_none():
    nfs = {nf["name"]: nf["descriptor"] for nf in catalog.catalog()["nfs"]}
    assert nfs["http_classifier"]["gates"] == ["other", "http"]
    assert descriptor_line(nfs["http_classifier"]).endswith("; gates other, http")
    assert nfs["ttl"]["gates"] == [] and "gates" not in descriptor_line(nfs["ttl"])
