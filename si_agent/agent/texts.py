"""The Chinese texts the browser agent reports as a task's outcome (they may reach
the citizen through the rpa executor's result), in one place."""

from __future__ import annotations

# loop: how a run ended without the decider finishing it
FAILED_IN_A_ROW = "连续{failures}步未成功：{evidence}"
OUT_OF_STEPS = "超过{max_steps}步仍未完成"
NO_RESULT_ON_PAGE = "页面上没有办理结果"

# ModelDecider: a model that gave no valid step twice
NO_VALID_STEP_THOUGHT = "模型没有给出有效的下一步"
NO_VALID_STEP = "未能决定下一步操作"

# loop: a submit held back because values of Goal.must_place are in no control
HELD_BACK_THOUGHT = "还有要填写的信息没有填入表单，不提交"
UNPLACED = "表单上没有找到填写{names}的位置"
