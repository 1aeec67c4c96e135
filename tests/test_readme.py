"""README's table of served kinds is what the API server serves: it is rendered here from
`draplane.api.kinds.SERVED` through the discovery documents, and must appear in README.md
verbatim (the failure message shows the table to paste)."""

from __future__ import annotations

from pathlib import Path

from draplane.api import kinds
from draplane.apiserver import discovery

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- served-kinds: start -->", "<!-- served-kinds: end -->"


def served_kinds_table() -> str:
    rows = [
        "| kind | apiVersion | resource (short names) | scope | verbs | subresources (verbs) |",
        "|---|---|---|---|---|---|",
    ]
    for rt in kinds.SERVED:
        listing = discovery.api_resource_list(rt.group, rt.version)
        assert listing is not None
        entries = {e["name"]: e for e in listing["resources"]}
        main = entries[rt.resource]
        verbs = (
            "all" if sorted(main["verbs"]) == sorted(kinds.ALL_VERBS) else ", ".join(main["verbs"])
        )
        short = f" ({', '.join(main['shortNames'])})" if main.get("shortNames") else ""
        subresources = "; ".join(
            f"`{sub}` ({', '.join(entries[f'{rt.resource}/{sub}']['verbs'])})"
            for sub in rt.subresources
        )
        scope = "namespaced" if rt.namespaced else "cluster"
        rows.append(
            f"| {rt.kind} | `{rt.api_version}` | `{rt.resource}`{short} | {scope} | {verbs} "
            f"| {subresources or '-'} |"
        )
    return "\n".join(rows)


def test_readme_lists_exactly_the_served_kinds() -> None:
    text = README.read_text()
    assert START in text and END in text, f"README.md needs {START} ... {END}"
    listed = text.split(START, 1)[1].split(END, 1)[0].strip()

    assert listed == served_kinds_table(), "README.md's table must be:\n" + served_kinds_table()
