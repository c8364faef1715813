"""What the agent's parts pass each other: the ``View`` perception makes of a page,
the ``Step`` a decider chooses, the ``Observation`` of what the step did, and the
``Record`` memory keeps of each."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from si_agent.labels import (
    RESULT_PATTERN,  # where a result is read (kept importable here)
    normalize,
)

Box = tuple[int, int, int, int]  # x, y, width, height in 0-1000 of the viewport


class Element(BaseModel):
    """One thing on the page a person could read or use."""

    model_config = ConfigDict(frozen=True)

    ref: str  # "e12": Playwright's aria ref, found again with page.locator("aria-ref=e12")
    role: str  # textbox, combobox, radio, checkbox, button, link, heading, alert...
    name: str = ""  # its accessible name (the label)
    group: str = ""  # the radio group, or checkbox group, it belongs to (its label)
    input_type: str = ""  # an input's type attribute (date, time, number...)
    hint: str = ""  # what the page says of the form of its value ("DD/MM/YYYY")
    submits: bool = False  # a button that submits its form (type=submit)
    value: str = ""
    enabled: bool = True
    required: bool = False
    checked: bool | None = None
    error: str | None = None  # the message announced for it (aria-invalid + describedby)
    options: tuple[str, ...] = ()
    option_values: tuple[str, ...] = ()  # the options' value attributes, in their order
    box: Box | None = None

    def choices(self) -> tuple[list[str], list[str]]:
        """The options a person could choose (not a "请选择" placeholder, whose value
        is empty) and their values, in order."""
        values = self.option_values or self.options
        pairs = [(o, v) for o, v in zip(self.options, values, strict=False)
                 if v and normalize(o) != "请选择"]
        return [o for o, _ in pairs], [v for _, v in pairs]


class View(BaseModel):
    """A page as perception understood it."""

    url: str
    title: str = ""
    summary: str = ""  # visible text, shortened
    elements: tuple[Element, ...] = ()
    screenshot: str | None = Field(default=None, repr=False)  # base64 JPEG, for a vision model

    def element(self, ref: str) -> Element | None:
        return next((e for e in self.elements if e.ref == ref), None)

    def digest(self) -> str:
        """A short, stable text of the view for traces and prompts."""
        lines = [f"{self.title} {self.url}"]
        for e in self.elements:
            state = [f"={e.value!r}" if e.value else "", "必填" if e.required else "",
                     "已勾选" if e.checked else "", f"错误:{e.error}" if e.error else "",
                     f"选项:{'/'.join(e.options)}" if e.options else ""]
            group = f" 属于{e.group!r}" if e.group else ""
            lines.append(f"[{e.ref}] {e.role} {e.name!r}{group} "
                         + " ".join(s for s in state if s))
        return "\n".join(lines)


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str | None = Field(default=None, description="the element's ref, e.g. e12")
    point: tuple[int, int] | None = Field(
        default=None, description="x, y in 0-1000 of the viewport, when only a screenshot is known")


class Click(_Action):
    type: Literal["click"] = "click"


class Input(_Action):
    type: Literal["input"] = "input"
    text: str = Field(description="what to type; a value of the task as {{key}}")


class Select(_Action):
    type: Literal["select"] = "select"
    option: str = Field(description="the option's text")
    also: list[str] = Field(default=[], description="further options' texts, for a select "
                                                    "taking several")


class Check(_Action):
    type: Literal["check"] = "check"
    checked: bool = True


class Scroll(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["scroll"] = "scroll"
    direction: Literal["down", "up"] = "down"


class Wait(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["wait"] = "wait"
    seconds: float = Field(default=1.0, ge=0, le=10)


class Outcome(BaseModel):
    """How a task ended: ``success``, what it produced (``output``, e.g. the 受理编号),
    and for a failure what stopped it: ``message``, the labels ``missing``, the values
    the form ``failed`` (key -> its reason), the value keys ``unplaced`` (no control of
    the form took them), or ``unknown`` (something was submitted and the outcome
    cannot be told)."""

    success: bool
    output: dict[str, str] = {}
    message: str = ""
    missing: list[str] = []
    failed: dict[str, str] = {}
    unplaced: list[str] = []
    unknown: bool = False


class Finish(Outcome):
    """The action that ends the task, with its ``Outcome``."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["finish"] = "finish"


Action = Annotated[Click | Input | Select | Check | Scroll | Wait | Finish,
                   Field(discriminator="type")]


class Step(BaseModel):
    """One decision: why, and the one action to take next."""

    model_config = ConfigDict(extra="forbid")

    thought: str
    action: Action


class Observation(BaseModel):
    """Whether the action did what it was expected to, and what shows it."""

    status: Literal["ok", "failed", "uncertain"]
    evidence: str = ""


class Record(BaseModel):
    """One step of the task, as memory keeps it (``target``: the name of the
    element acted on, ``group``: its radio group, ``submitted``: it pressed submit)."""

    step: Step
    observation: Observation
    url: str = ""
    target: str = ""
    group: str = ""  # the radio group of the element acted on
    submitted: bool = False  # the step pressed a button that submits the form


class Goal(BaseModel):
    """What the agent is asked to do: the task in words, the values it may type (by
    key, with the labels forms may give them), the keys of those that must each be
    in a control before the form is submitted (``must_place``), and where a result
    would be read."""

    task: str
    # A list value goes to a checkbox group or a multi-select (one item per option).
    values: dict[str, str | list[str]] = {}
    labels: dict[str, list[str]] = {}  # value key -> labels a form may use for it
    # Keys of values never to be left out: a submit while one of them is in no control
    # is not pressed, the task ends with them as ``unplaced`` (see ``loop``).
    must_place: list[str] = []
    target: str = ""  # what to look for when the form must be found first (a link name)
    success: str = RESULT_PATTERN
    # Names of the form's buttons, besides the usual words (labels.button_meaning).
    next: list[str] = []
    submit: list[str] = []

    def text(self, key: str) -> str:
        """The value of ``key`` as typed in a text box (a list's items joined by 、)."""
        value = self.values[key]
        return value if isinstance(value, str) else "、".join(value)

    def texts(self) -> dict[str, str]:
        """Every value as ``text`` gives it."""
        return {key: self.text(key) for key in self.values}
