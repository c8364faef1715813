"""Every Chinese text the executors put in front of a citizen, in one place."""

from __future__ import annotations

# ExecutorError messages
UNREACHABLE = "业务系统暂时无法连接，请稍后再试。"
BUSY = "业务系统暂时无法办理，请稍后再试。"
BAD_RESPONSE = "业务系统返回的结果无法识别，请稍后再试。"
REJECTED = "业务系统未能受理，请核对信息后重新提交。"
MISCONFIGURED = "该业务暂时无法在线办理，请联系工作人员。"

# rpa: filling a government web form
RPA_OPENING = "正在打开办理页面…"
RPA_FILLING = "正在填写 {done}/{total} 项…"
RPA_SUBMITTING = "正在提交…"
RPA_FIELDS_FAILED = "办理网站提示部分信息填写失败。"
RPA_PORTAL_DOWN = "办理网站暂时无法访问，请稍后回复“重试”。"
RPA_MODEL_DOWN = "智能填表服务暂时不可用，请稍后回复“重试”。"
RPA_FORM_CHANGED = "办理网站的表单已变化，暂时无法自动填写，请稍后再试或到窗口办理。"
RPA_REFUSED = "办理网站提示：{reason}"
RPA_NO_OPTION = "办理网站上只能选择：{options}。"
RPA_NOT_TYPED = "办理网站这一项只能填写{kind}，无法识别所给的内容。"
# Values the form had no place for: nothing is submitted without them.
RPA_UNPLACED = "办理网站的表单上没有找到填写{labels}的位置。为避免提交不完整的申请，申请没有提交。"
RPA_NO_PLACE = "表单上没有找到填写这一项的位置"  # 未填写's reason, per field
RPA_NOT_REACHED = "办理在填写这一项之前已停止"  # 未填写's reason: a page never reached
# This machine cannot fill web forms (no Playwright or no browser): retrying cannot help.
RPA_UNAVAILABLE = ("该业务暂时无法在线办理，申请没有提交。请携带身份证到社保经办窗口办理，"
                   "或联系{handoff}咨询。")
RPA_LOGIN_FAILED = "无法登录办理网站，请联系工作人员。"
# The browser agent's task when it takes a form over (it shows in the agent's trace).
RPA_AGENT_TASK = "在办理网站上填写并提交【{name}】"
# A resumed draft was submitted already, with the values before the citizen's change.
RPA_SUBMITTED_BEFORE = ("办理网站显示您之前的申请已经受理，受理编号：{number}。该申请使用的是修改前的信息，"
                        "本次修改的内容没有提交。如需更改已受理的申请，请携带身份证到经办窗口办理。")
RPA_NO_RESULT = "已提交，但未能读取到受理编号，请稍后通过“办理进度查询”核实，不要重复提交。"
# The portal's page tried to send the browser (or the citizen's data) to another site.
RPA_UNSAFE_SITE = ("办理网站的页面试图跳转到无法确认安全的网址，为保护您的信息已停止办理，申请没有提交。"
                   "请稍后再试，或到窗口办理。")
RPA_UNSAFE_SUBMITTED = ("办理网站的页面试图跳转到无法确认安全的网址，为保护您的信息已停止办理。"
                        "申请可能已经提交，请稍后通过“办理进度查询”核实，不要重复提交。")
