"""A parsed portal page: elements by id, labels, the error summary (stdlib HTML parser)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

NUMBER = re.compile(r"受理编号：(SI\d{14})")
_VOID = {"input", "meta", "br", "link", "img", "hr"}


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[dict] = []  # {"tag", "attrs", "text"}
        self._open: list[dict] = []

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in _VOID:
            self._open.append(element)

    def handle_endtag(self, tag):
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i]["tag"] == tag:
                del self._open[i:]
                break

    def handle_data(self, data):
        for element in self._open:
            element["text"] += data


class Page:
    """What a test reads off a response."""

    def __init__(self, response) -> None:
        self.status = response.status_code
        self.html = response.get_data(as_text=True)
        self.url = response.request.path
        parser = _Collector()
        parser.feed(self.html)
        self.elements = parser.elements

    def by_id(self, element_id: str) -> dict:
        found = [e for e in self.elements if e["attrs"].get("id") == element_id]
        assert len(found) == 1, f"{len(found)} elements with id {element_id!r}"
        return found[0]

    def has_id(self, element_id: str) -> bool:
        return any(e["attrs"].get("id") == element_id for e in self.elements)

    def text(self, tag: str) -> list[str]:
        return [" ".join(e["text"].split()) for e in self.elements if e["tag"] == tag]

    def label_of(self, element_id: str) -> str:
        """The visible text of the label tied to a control, without the required star."""
        labels = [e for e in self.elements if e["tag"] == "label"
                  and e["attrs"].get("for") == element_id]
        assert len(labels) == 1, f"{len(labels)} labels for {element_id!r}"
        return labels[0]["text"].strip().removesuffix("*")

    def labels(self) -> dict[str, str]:
        """Each form control's label (legend for a radio group), by control id."""
        out = {}
        for e in self.elements:
            if e["tag"] == "fieldset":
                out[e["attrs"]["id"]] = next(
                    x for x in self.elements[self.elements.index(e):] if x["tag"] == "legend"
                )["text"].strip().removesuffix("*")
            elif e["tag"] in ("input", "select", "textarea") and e["attrs"].get("type") not in (
                    "hidden", "radio"):
                out[e["attrs"]["id"]] = self.label_of(e["attrs"]["id"])
        return out

    def alert(self) -> str:
        alerts = [e for e in self.elements if e["attrs"].get("role") == "alert"]
        return " ".join(alerts[0]["text"].split()) if alerts else ""

    def field_errors(self) -> dict[str, str]:
        """Messages by control id, checked against the markup contract on the way."""
        errors = {}
        for e in self.elements:
            if e["attrs"].get("class") == "field-error":
                control_id = e["attrs"]["id"].removesuffix("-error")
                errors[control_id] = e["text"].strip()
        for control_id in errors:
            controls = [e for e in self.elements if e["tag"] in ("input", "select", "textarea")
                        and (e["attrs"].get("id") == control_id
                             or e["attrs"].get("name") == control_id)]
            assert controls, f"no control for error {control_id!r}"
            for c in controls:
                assert c["attrs"].get("aria-invalid") == "true", control_id
                assert c["attrs"].get("aria-describedby") == f"{control_id}-error", control_id
        for e in self.elements:
            if e["attrs"].get("aria-invalid") == "true":
                assert (e["attrs"].get("id") in errors or e["attrs"].get("name") in errors)
        return errors

    @property
    def application_no(self) -> str | None:
        m = NUMBER.search(self.html)
        return m.group(1) if m else None
