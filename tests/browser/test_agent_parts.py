"""Each part of the browser agent on its own, on static HTML in Chromium: perception,
the FormPolicy decider, the action runner, the observer; and the parts swapped
(DOM and screenshot perception composed for the same decider, a model decider)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest

from si_agent.agent import (
    ActionRunner,
    Agent,
    Combined,
    DomPerception,
    FormPolicy,
    Goal,
    ModelDecider,
    ResultObserver,
    ScreenshotPerception,
    Step,
)
from si_agent.agent.models import Check, Click, Finish, Input, Select
from si_agent.testing import FakeOpenAI
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser

FORM = """<!doctype html><html lang="zh-CN"><head><title>测试表单</title></head><body><main>
<h1>社保卡申领</h1>
<form onsubmit="event.preventDefault(); done()">
  <label for="n">姓名 <span aria-hidden="true">*</span></label>
  <input id="n" required aria-invalid="true" aria-describedby="n-err">
  <p id="n-err">请填写姓名</p>
  <label for="b">开户银行</label>
  <select id="b" required><option value="">请选择</option><option value="icbc">中国工商银行</option>
    <option value="ccb">中国建设银行</option></select>
  <fieldset><legend>户口性质</legend>
    <input type="radio" id="r1" name="h" value="1" required><label for="r1">城镇</label>
    <input type="radio" id="r2" name="h" value="2"><label for="r2">农村</label></fieldset>
  <input type="checkbox" id="c" required><label for="c">我已阅读并同意承诺书</label>
  <label for="m">备注</label><textarea id="m"></textarea>
  <button type="submit">提交申请</button>
</form>
<p id="out"></p>
<script>function done(){ document.querySelector("form").remove();
  document.getElementById("out").textContent = "提交成功，受理编号：SI20261201000042"; }</script>
</main></body></html>"""

GOAL = Goal(task="申领社保卡", values={"name": "张伟", "bank": "建设银行", "hukou": "城镇"},
            labels={"name": ["姓名"], "bank": ["开户银行"], "hukou": ["户口性质"]})


@pytest.fixture(scope="module")
def browser(playwright_driver) -> Iterator:
    b = playwright_driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(locale="zh-CN")
    page.set_content(FORM)
    yield page
    page.close()


def by_name(view, name):
    return next(e for e in view.elements if e.name == name)


def test_dom_perception_reads_labels_state_options_errors_and_boxes(page):
    view = DomPerception().perceive(page)
    assert view.title == "测试表单" and "社保卡申领" in view.summary
    name = by_name(view, "姓名")
    assert (name.role, name.required, name.error, name.value) == ("textbox", True, "请填写姓名", "")
    bank = by_name(view, "开户银行")
    assert bank.role == "combobox" and bank.options == ("请选择", "中国工商银行", "中国建设银行")
    radios = [e for e in view.elements if e.role == "radio"]
    assert [(r.name, r.group, r.checked) for r in radios] == [
        ("城镇", "户口性质", False), ("农村", "户口性质", False)]
    assert by_name(view, "我已阅读并同意承诺书").checked is False
    assert by_name(view, "提交申请").role == "button"
    x, y, w, h = name.box
    assert 0 <= x < 1000 and 0 <= y < 1000 and w > 0 and h > 0
    assert page.locator(f"aria-ref={name.ref}").evaluate("e => e.id") == "n"


def test_the_form_policy_chooses_one_action_at_a_time(page):
    view = DomPerception().perceive(page)
    policy = FormPolicy()
    first = policy.decide(GOAL, view, [])
    assert first.action == Input(ref=by_name(view, "姓名").ref, text="{{name}}")
    page.fill("#n", "张伟")
    view = DomPerception().perceive(page)
    assert policy.decide(GOAL, view, []).action == Select(ref=by_name(view, "开户银行").ref,
                                                          option="中国建设银行")
    missing = policy.decide(Goal(task="x", values={}), view, [])
    assert isinstance(missing.action, Finish) and not missing.action.success
    assert missing.action.missing == ["开户银行", "户口性质"]  # 姓名 has a value already


def test_runner_and_observer_do_and_check_each_action(page):
    runner, observer, perceive = ActionRunner(), ResultObserver(), DomPerception().perceive
    before = perceive(page)
    steps = [Step(thought="t", action=Input(ref=by_name(before, "姓名").ref, text="{{name}}")),
             Step(thought="t", action=Select(ref=by_name(before, "开户银行").ref,
                                             option="中国建设银行")),
             Step(thought="t", action=Check(ref=by_name(before, "城镇").ref)),
             Step(thought="t", action=Check(ref=by_name(before, "我已阅读并同意承诺书").ref))]
    for step in steps:
        runner.perform(page, step, GOAL.values)
        after = perceive(page)
        assert observer.observe(step, before, after, GOAL.values).status == "ok", step
        before = after
    assert page.input_value("#n") == "张伟" and page.input_value("#b") == "ccb"
    wrong = Step(thought="t", action=Input(ref=by_name(before, "姓名").ref, text="李四"))
    assert observer.observe(wrong, before, before, GOAL.values).status == "failed"
    submit = Step(thought="t", action=Click(ref=by_name(before, "提交申请").ref))
    runner.perform(page, submit, GOAL.values)
    after = perceive(page)
    assert observer.observe(submit, before, after, GOAL.values).status == "ok"
    assert "受理编号：SI20261201000042" in after.summary


def test_the_loop_with_dom_and_screenshot_perception_composed(page, tmp_path):
    perception = Combined(DomPerception(), ScreenshotPerception())
    view = perception.perceive(page)
    assert view.elements and base64.b64decode(view.screenshot)[:2] == b"\xff\xd8"
    result = Agent(perception, FormPolicy()).run(page, GOAL, trace_dir=tmp_path)
    assert result.success and result.output == {"application_no": "SI20261201000042"}
    assert [r.step.action.type for r in result.steps] == [
        "input", "select", "check", "check", "click", "finish"]
    lines = (tmp_path / "steps.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 6 and len(list(tmp_path.glob("*.png"))) == 6
    assert "张伟" not in "".join(lines)  # the values are masked in the trace


def test_no_submit_while_a_value_that_must_be_placed_is_in_no_control(page):
    # 手机号码 has no control on this form: the policy fills the rest, and its submit
    # is held back; so is a decider that presses submit at once (a careless model).
    goal = GOAL.model_copy(update={
        "values": {**GOAL.values, "phone": "13800138001"},
        "labels": {**GOAL.labels, "phone": ["手机号码"]},
        "must_place": ["name", "bank", "hukou", "phone"]})
    result = Agent(DomPerception(), FormPolicy()).run(page, goal)
    assert not result.success and result.unplaced == ["phone"]
    assert result.message == "表单上没有找到填写手机号码的位置"
    assert [r.step.action.type for r in result.steps] == [
        "input", "select", "check", "check", "finish"]
    assert page.locator("form").count() == 1  # nothing was submitted

    class Hasty:
        def decide(self, goal, view, memory):
            return Step(thought="提交", action=Click(ref=by_name(view, "提交申请").ref))

    page.set_content(FORM)
    result = Agent(DomPerception(), Hasty()).run(page, goal)
    assert not result.success and result.unplaced == ["name", "bank", "hukou", "phone"]
    assert page.locator("form").count() == 1
    done = Agent(DomPerception(), FormPolicy()).run(  # all placed: it goes through
        page, goal.model_copy(update={"must_place": ["name", "bank", "hukou"]}))
    assert done.success and done.unplaced == []


def test_a_model_decider_sees_placeholders_never_the_values(page):
    fake = FakeOpenAI()
    fake.start()
    try:
        view = DomPerception().perceive(page)
        fake.push({"tool_calls": [{"name": "next_step", "arguments": {
            "thought": "先填姓名", "action": {"type": "input", "ref": by_name(view, "姓名").ref,
                                              "text": "{{name}}"}}}]})
        page.fill("#m", "张伟的备注")  # a value of the task is on the page already
        decider = ModelDecider(fake.chat_model())
        step = decider.decide(GOAL, DomPerception().perceive(page), [])
        assert step.action == Input(ref=by_name(view, "姓名").ref, text="{{name}}")
        body = fake.requests[-1]
        assert body["tool_choice"] == {"type": "function", "function": {"name": "next_step"}}
        assert body["tools"][0]["function"]["parameters"] == Step.model_json_schema()
        sent = json.dumps(body, ensure_ascii=False)
        assert "张伟" not in sent and "{{name}}" in sent
        assert decider.calls == 1 and decider.prompt_chars > 0
    finally:
        fake.stop()


def test_a_screenshot_only_decider_acts_on_points_and_a_model_settles_doubt(page):
    """Perception swapped for a screenshot: the (scripted) model clicks a point; the
    observer cannot see a button by ref, so a model check settles the outcome."""
    from si_agent.agent import ModelCheck
    from si_agent.agent.models import Goal as G

    fake = FakeOpenAI()
    fake.start()
    try:
        for selector, value in (("#n", "张伟"), ("#b", "ccb")):
            page.locator(selector).fill(value) if selector == "#n" else page.select_option(
                selector, value)
        page.check("#r1")
        page.check("#c")
        x, y, w, h = by_name(DomPerception().perceive(page), "提交申请").box
        fake.push({"tool_calls": [{"name": "next_step", "arguments": {
            "thought": "点提交", "action": {"type": "click", "point": [x + w // 2, y + h // 2]}}}]})
        fake.push({"content": "yes"})  # the model check
        fake.push({"tool_calls": [{"name": "next_step", "arguments": {
            "thought": "完成", "action": {"type": "finish", "success": True,
                                          "output": {"application_no": "SI20261201000042"}}}}]})
        checker = ModelCheck(fake.chat_model())
        agent = Agent(ScreenshotPerception(), ModelDecider(fake.chat_model()), checker=checker)
        result = agent.run(page, G(task="提交"))
        assert result.success and result.output["application_no"] == "SI20261201000042"
        assert "受理编号" in page.inner_text("#out")
        click = result.steps[0]
        assert click.observation.status == "ok" and "the model says yes" in click.observation.evidence
        assert checker.calls == 1
        image = fake.requests[0]["messages"][1]["content"][1]["image_url"]["url"]
        assert image.startswith("data:image/jpeg;base64,")
    finally:
        fake.stop()


def test_the_agent_command(tmp_path):
    """``si-agent agent run`` on a local page: each step printed, the output last."""
    import subprocess
    import sys

    form = tmp_path / "form.html"
    form.write_text(FORM, "utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "si_agent.cli", "agent", "run", "--url", form.as_uri(),
         "--goal", "申领社保卡", "--values", json.dumps(GOAL.values, ensure_ascii=False),
         "--trace", str(tmp_path / "trace")],
        capture_output=True, text=True, timeout=120, env={**__import__("os").environ,
                                                          "SI_RPA_CHROMIUM": str(CHROMIUM)})
    lines = run.stdout.strip().splitlines()
    assert run.returncode == 1, run.stderr  # 户口性质 has no synonyms: the label is the key
    assert json.loads(lines[-1]) == {"success": False, "output": {}, "message": "缺少：户口性质",
                                     "missing": ["户口性质"]}
    assert lines[0].startswith("填写姓名 → input") and "{{name}}" in lines[0]


SILENT = FORM.replace('done()', 'this.reset()')  # submitted: the same empty form again


def test_a_submit_with_no_answer_is_never_pressed_twice(browser, tmp_path):
    page = browser.new_page(locale="zh-CN")
    page.set_content(SILENT)
    page.evaluate("window.submits = 0; document.querySelector('form')"
                  ".addEventListener('submit', () => window.submits++)")
    goal = GOAL.model_copy(update={"values": {**GOAL.values, "consent": "true"},
                                   "labels": {**GOAL.labels, "consent": ["我已阅读并同意承诺书"]}})
    result = Agent(DomPerception(), FormPolicy()).run(page, goal, trace_dir=tmp_path)
    assert not result.success and result.unknown and "请勿重复提交" in result.message
    assert page.evaluate("window.submits") == 1
    lines = [json.loads(x) for x in (tmp_path / "steps.jsonl").read_text("utf-8").splitlines()]
    assert lines[-1]["step"]["action"]["unknown"] is True  # a "true" value breaks nothing
    page.close()


def test_a_success_the_page_does_not_show_is_no_success(page):
    fake = FakeOpenAI()
    fake.start()
    try:
        fake.push({"tool_calls": [{"name": "next_step", "arguments": {
            "thought": "完成", "action": {"type": "finish", "success": True,
                                          "output": {"application_no": "SI20991231999999"}}}}]})
        decider = ModelDecider(fake.chat_model("m"))
        result = Agent(DomPerception(), decider).run(page, GOAL)
    finally:
        fake.stop()
    assert not result.success and result.unknown and result.output == {}


def test_a_model_reply_that_is_no_step_is_asked_again_then_ends(page):
    fake = FakeOpenAI()
    fake.start()
    try:
        fake.push({"content": "我觉得应该先填姓名"})  # no tool call
        fake.push({"tool_calls": [{"name": "next_step", "arguments": {"thought": "x"}}]})
        decider = ModelDecider(fake.chat_model("m", llm_max_retries=0))
        step = decider.decide(GOAL, DomPerception().perceive(page), [])
        assert step.action == Finish(success=False, message="未能决定下一步操作")
        assert decider.calls == 2 and "上一次的回复无效" in json.dumps(
            fake.requests[-1], ensure_ascii=False)
    finally:
        fake.stop()
    with pytest.raises(KeyError):  # a placeholder the task has no value for is never typed
        ActionRunner().perform(page, Step(thought="t", action=Input(ref="e1", text="{{nope}}")),
                               GOAL.values)


def test_a_confirm_dialog_and_a_dashed_placeholder(browser):
    page = browser.new_page(locale="zh-CN")
    page.set_content(FORM.replace('<option value="">请选择</option>',
                                  '<option value="">--请选择--</option>')
                         .replace('onsubmit="event.preventDefault(); done()"',
                                  'onsubmit="event.preventDefault(); if (confirm(\'确定提交？\')) done()"'))
    view = DomPerception().perceive(page)
    assert by_name(view, "开户银行").value == ""  # the placeholder is no choice
    result = Agent(DomPerception(), FormPolicy()).run(
        page, GOAL.model_copy(update={"values": {**GOAL.values, "c": "true"}}))
    assert result.success and result.output == {"application_no": "SI20261201000042"}
    page.close()
