"""Widgets as static snapshots in the book and the decks (``make book``, ``make slides``): nothing fetched offline.

A saved widget (coalesce-and-align-accesses' sector explorer) needs require.js and the ipywidgets embed script, which
Jupyter Book loads from CDNs. Instead each widget output is drawn once, at build time, from the widget state that
executing the lesson kept: its controls as their starting values, its images and HTML as they are, and one line saying
that the widget is interactive in JupyterLab. The notebook's widget state is then dropped, so no page loads a script.
"""

from __future__ import annotations

import html
from typing import Any

from .panels import ZOOM

VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
NOTE = ("<p class=\"zc-widget-note\"><small>A snapshot at the controls' starting values: run the lesson in JupyterLab "
        "to move them.</small></p>")


def _models(nb: Any) -> dict[str, dict]:
    return dict(nb.get("metadata", {}).get("widgets", {}).get(STATE, {}).get("state", {}))


def _ref(value: Any) -> str | None:
    return value[len("IPY_MODEL_"):] if isinstance(value, str) and value.startswith("IPY_MODEL_") else None


def _image(model: dict, alt: str) -> str:
    data = next((b["data"] for b in model.get("buffers", []) if b.get("path") == ["value"]), "")
    kind = model["state"].get("format", "png")
    # on a phone it fits the width and zooms when tapped, as a wide figure does (helpers.tools.panels)
    if not data:
        return ""
    return f'<img class="zc-wide" {ZOOM} src="data:image/{kind};base64,{data}" alt="{html.escape(alt)}">'


def _value(state: dict) -> Any:
    """A control's value as shown: a selection's label (its state keeps the index), else the value itself."""
    labels, index = state.get("_options_labels"), state.get("index")
    return labels[index] if labels and isinstance(index, int) else state.get("value")


def _is_control(state: dict) -> bool:
    return bool(state.get("description")) and ("value" in state or "index" in state) and "children" not in state


def _control(state: dict) -> str:
    name = html.escape(str(state.get("description", "")))
    shown = html.escape(str(_value(state)))
    span = f" (of {state['min']}–{state['max']})" if "min" in state and "max" in state else ""
    return f"<span class=\"zc-widget-control\">{name} = <code>{shown}</code>{span}</span>"


def render(model_id: str, models: dict[str, dict], alt: str = "") -> str:
    """HTML for one widget and its children (boxes, controls, images, HTML) as the saved state shows them."""
    model = models.get(model_id)
    if model is None:
        return ""
    state, name = model["state"], model.get("model_name", "")
    if "children" in state:
        inner = " ".join(render(c, models, alt) for c in map(_ref, state["children"]) if c)
        tag = "div" if name.startswith("VBox") else "p"
        return f"<{tag} class=\"zc-widget-box\">{inner}</{tag}>"
    if name == "ImageModel":
        return _image(model, alt)
    if name in ("HTMLModel", "HTMLMathModel"):
        return f"<div>{state.get('value', '')}</div>"
    if name in ("LabelModel", "TextModel", "TextareaModel"):
        return f"<p>{html.escape(str(state.get('value', '')))}</p>"
    if _is_control(state):
        return _control(state)
    return ""


def alt_for(model_id: str, models: dict[str, dict]) -> str:
    """Alt text for a widget's images: the figure drawn at its controls' starting values."""
    controls: list[str] = []

    def walk(mid: str) -> None:
        state = models.get(mid, {}).get("state", {})
        for child in map(_ref, state.get("children", [])):
            if child:
                walk(child)
        if _is_control(state):
            controls.append(f"{state['description']} {_value(state)}")

    walk(model_id)
    return "The widget's figure at " + ", ".join(controls) + "." if controls else "The widget's figure."


def freeze(nb: Any) -> int:
    """Replace every widget output of an executed notebook by its static snapshot (HTML, with :data:`NOTE`) and drop
    the widget state; returns how many outputs were replaced."""
    models = _models(nb)
    replaced = 0
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(VIEW)
            if not view:
                continue
            mid = view.get("model_id", "")
            snapshot = render(mid, models, alt_for(mid, models)) if mid in models else ""
            output["data"] = {"text/html": f"<div class=\"zc-widget\">{snapshot}{NOTE}</div>",
                              "text/plain": "A widget: run the lesson in JupyterLab to use it."}
            replaced += 1
    nb.get("metadata", {}).pop("widgets", None)
    return replaced


CSS = """\
.zc-widget img { max-width: 100%; height: auto; display: block; }
.zc-widget-control { margin-right: 1.5em; white-space: nowrap; }
"""
