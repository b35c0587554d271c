"""YAML read from users' files (manifests, claims) with the safe loader and a guard against alias bombs.

``yaml.safe_load`` builds no objects but still expands aliases: nine lines of nested ``&a``/``*a`` ("billion
laughs") grow to 10^9 strings and exhaust memory as soon as anything walks them. :func:`load` refuses a document
with more than :data:`MAX_ALIASES` alias references or whose aliases expand to more than :data:`MAX_NODES` values,
counted on the composed node graph (once per distinct node) before anything is constructed.
"""

from __future__ import annotations

from typing import Any

import yaml

from analysis.text import whole

MAX_ALIASES = 100  # a manifest or a claim needs few anchors (``&name`` / ``*name``)
MAX_NODES = 100_000  # values after expanding every alias; a real manifest has a few hundred


class AliasBomb(ValueError):
    """The document's aliases were refused (see the module note); the message says which limit."""


class LimitedLoader(yaml.SafeLoader):
    """The safe loader, refusing alias bombs (see the module note)."""

    def __init__(self, stream):
        super().__init__(stream)
        self._aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise AliasBomb(f"more than {MAX_ALIASES} YAML aliases (*name): refused as a possible alias "
                                "bomb; write the values out")
        return super().compose_node(parent, index)

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None and expanded_size(node, {}) > MAX_NODES:
            raise AliasBomb(f"YAML aliases expand to more than {whole(MAX_NODES)} values: refused as an alias bomb")
        return node


def expanded_size(node, memo: dict) -> int:
    """Values ``node`` stands for once every alias is expanded."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # a node reached again while being counted (a recursive alias) counts once
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(expanded_size(k, memo) + expanded_size(v, memo) for k, v in node.value)
    else:
        size = 1
    memo[key] = size
    return size


def load(text: str) -> Any:
    """The document in ``text`` (safe loader, alias bombs refused with :class:`AliasBomb`); RecursionError for a
    document nested too deeply, yaml.YAMLError for invalid YAML."""
    return yaml.load(text, Loader=LimitedLoader)
