"""The peers' side of Docs/PERFORMANCE.md's side-by-side table: Yrs (pycrdt) and Loro (loro)
run through the editing traces and the save-at-size cases multidoc's benchmarks run.

Run by Tools/peers-bench.sh, which makes the virtual environment. Prints one JSON row per line:
{"id": ..., "peer": ..., "value": ..., "unit": ...}; ids are stable (Docs/PERFORMANCE.md
quotes them).

  trace.<name>.patch          in-memory replay, nanoseconds per patch (sequential traces: one
                              document; concurrent: one per agent, each transaction applied
                              after its parents, ending when every replica has everything)
  trace.<name>.update_bytes   the final document as one update (Yrs: v1 update; Loro: updates)
  trace.<name>.snapshot_bytes the final document's snapshot (Loro; Yrs has none: its v1 update)
  trace.<name>.load           decoding that snapshot or update into a new document, ms (median)
  trace.<name>.matched        1 when every replica ends at endContent
  save.<size>.insert_and_update  one character inserted into a document of <size> characters
                              and the update to ship produced, µs (median)
  save.<size>.update_bytes    that update's size

--text-only leaves out the save rows.
"""
import gzip
import json
import statistics
import sys
import time

import loro
from pycrdt import Doc, Text


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def utf8_patches(trace):
    """A sequential trace's patches with positions and lengths in UTF-8 bytes, as pycrdt's Text
    counts them (the traces count Unicode scalars), computed before any timing. None when the
    trace is ASCII (the two agree) or concurrent (not needed by the shared traces)."""
    transactions = trace["txns"]
    ascii_only = trace.get("startContent", "").isascii() and all(
        patch[2].isascii() for t in transactions for patch in t["patches"])
    if ascii_only or trace.get("kind") == "concurrent":
        return None
    text, converted = trace.get("startContent", ""), []
    for transaction in transactions:
        patches = []
        for position, deleted, inserted in transaction["patches"]:
            start = len(text[:position].encode())
            patches.append([start, len(text[position:position + deleted].encode()), inserted])
            text = text[:position] + inserted + text[position + deleted:]
        converted.append(patches)
    return converted


class Yrs:
    name = "yrs"

    def __init__(self, client=None):
        self.doc = Doc(client_id=client) if client is not None else Doc()
        self.text = self.doc.get("text", type=Text)

    def apply(self, patches):
        with self.doc.transaction():
            for position, deleted, inserted in patches:
                if deleted:
                    del self.text[position:position + deleted]
                if inserted:
                    self.text.insert(position, inserted)

    def version(self):
        return self.doc.get_state()

    def update_since(self, version):
        return self.doc.get_update(version)

    def receive(self, update):
        self.doc.apply_update(update)

    def value(self):
        return str(self.text)

    def whole_update(self):
        return self.doc.get_update()

    def snapshot(self):
        return self.doc.get_update()

    @classmethod
    def loaded(cls, data):
        peer = cls()
        peer.doc.apply_update(data)
        return peer


class Loro:
    name = "loro"

    def __init__(self, client=None):
        self.doc = loro.LoroDoc()
        self.text = self.doc.get_text("text")

    def apply(self, patches):
        for position, deleted, inserted in patches:
            if deleted:
                self.text.delete(position, deleted)
            if inserted:
                self.text.insert(position, inserted)
        self.doc.commit()

    def version(self):
        return self.doc.oplog_vv

    def update_since(self, version):
        return self.doc.export(loro.ExportMode.Updates(version))

    def receive(self, update):
        self.doc.import_(update)

    def value(self):
        return self.text.to_string()

    def whole_update(self):
        return self.doc.export(loro.ExportMode.Updates(loro.VersionVector()))

    def snapshot(self):
        return self.doc.export(loro.ExportMode.Snapshot())

    @classmethod
    def loaded(cls, data):
        peer = cls()
        peer.doc.import_(data)
        return peer


def row(identifier, peer, value, unit):
    print(json.dumps({"id": identifier, "peer": peer, "value": value, "unit": unit}), flush=True)


def replay(kind, trace, converted=None):
    """Every replica after the trace, and the seconds the replay took. `converted`: the
    patches as ``utf8_patches`` made them, for Yrs."""
    transactions = trace["txns"]
    start_content = trace.get("startContent", "")
    concurrent = any("parents" in t for t in transactions) and trace.get("kind") == "concurrent"
    began = time.perf_counter()
    if not concurrent:
        replica = kind(1)
        if start_content:
            replica.apply([[0, 0, start_content]])
        for index, transaction in enumerate(transactions):
            replica.apply(converted[index] if converted else transaction["patches"])
        return [replica], time.perf_counter() - began
    agents = max(t.get("agent", 0) for t in transactions) + 1
    replicas = [kind(agent + 1) for agent in range(agents)]
    has = [set() for _ in range(agents)]
    updates = []
    for index, transaction in enumerate(transactions):
        agent = transaction.get("agent", 0)
        missing, stack = [], list(transaction.get("parents", []))
        while stack:
            parent = stack.pop()
            if parent in has[agent]:
                continue
            has[agent].add(parent)
            missing.append(parent)
            stack.extend(transactions[parent].get("parents", []))
        for parent in sorted(missing):
            replicas[agent].receive(updates[parent])
        before = replicas[agent].version()
        replicas[agent].apply(transaction["patches"])
        updates.append(replicas[agent].update_since(before))
        has[agent].add(index)
    for agent in range(agents):
        for index in range(len(transactions)):
            if index not in has[agent]:
                replicas[agent].receive(updates[index])
    return replicas, time.perf_counter() - began


def median_seconds(action, runs):
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        action()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def traces(paths):
    for path in paths:
        trace = load(path)
        name = path.rsplit("/", 1)[-1].split(".")[0]
        patches = sum(len(t["patches"]) for t in trace["txns"])
        converted = utf8_patches(trace)
        for kind in (Yrs, Loro):
            replicas, seconds = replay(kind, trace, converted if kind is Yrs else None)
            final = replicas[0]
            row(f"trace.{name}.patch", kind.name, round(seconds / max(1, patches) * 1e9, 1), "ns")
            row(f"trace.{name}.matched", kind.name, int(all(r.value() == trace["endContent"] for r in replicas)), "bool")
            update, snapshot = final.whole_update(), final.snapshot()
            row(f"trace.{name}.update_bytes", kind.name, len(update), "B")
            row(f"trace.{name}.snapshot_bytes", kind.name, len(snapshot), "B")
            row(f"trace.{name}.load", kind.name, round(median_seconds(lambda: kind.loaded(snapshot).value(), 5) * 1e3, 3), "ms")


def saves(sizes, repeats):
    line = "The quick brown fox jumps over the lazy dog, again and again and again.\n"
    for size in sizes:
        text = (line * (size // len(line) + 1))[:size]
        for kind in (Yrs, Loro):
            peer = kind(1)
            peer.apply([[0, 0, text]])
            samples, last = [], b""
            for index in range(repeats + 3):
                began = time.perf_counter()
                version = peer.version()
                peer.apply([[size + index, 0, "x"]])
                last = peer.update_since(version)
                if index >= 3:
                    samples.append(time.perf_counter() - began)
            row(f"save.{size}.insert_and_update", kind.name, round(statistics.median(samples) * 1e6, 2), "us")
            row(f"save.{size}.update_bytes", kind.name, len(last), "B")


def main(arguments):
    sizes = [10_000, 100_000, 1_000_000]
    paths = [a for a in arguments if not a.startswith("--")]
    row("peers.versions", "yrs+loro", f"pycrdt {version('pycrdt')}, loro {version('loro')}", "text")
    if "--text-only" not in arguments:
        saves(sizes, 50)
    traces(paths)


def version(package):
    from importlib.metadata import version as installed
    return installed(package)


if __name__ == "__main__":
    main(sys.argv[1:])
