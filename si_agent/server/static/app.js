/*
 * si_agent web chat page.
 *
 * Flow: read /ui-config.json → (dev mode) get a token for a per-browser user id →
 * GET /api/session to restore the panel and GET /api/session/history to show the
 * conversation again (a submission still running is followed again) → each message is POST /api/chat with
 * Accept: text/event-stream; `delta` events stream into the reply bubble and the
 * final `turn` event redraws the panel, the state badge and the quick actions.
 *
 * Voice (when /ui-config.json says the server has a recogniser and the browser has
 * MediaRecorder): tap 语音输入 to record, tap again (or reach the time limit) to send
 * the clip to POST /api/voice; the transcript replaces the placeholder in the
 * citizen's bubble and the turn is rendered like a typed one. 朗读回复 speaks replies
 * with the browser's speech synthesis where it has a Chinese voice.
 *
 * Every text the page itself shows is in TEXTS below; replies come from the server.
 * Server data is only ever inserted with textContent, never as HTML.
 *
 * In the widget's frame (/?embed=1, see widget.js) the header is compact; the page
 * tells the widget it runs ("si-agent:ready"), and Esc with nothing of the page's own
 * to close asks the widget to close ("si-agent:close"): two constants, the only
 * messages sent to the host page. Storage may be blocked there (a third-party
 * frame): the page then keeps the user id and token in memory only.
 */
"use strict";

(() => {
  const TEXTS = {
    greeting: "您好，我是社保智能帮办助手，可以帮您查询和办理社保业务。请问您想办理什么？{pick}",
    greetingPick: "可以点选下面的业务，也可以直接输入。",
    greetingServices: "可以办理的业务",
    modifyItem: "修改{label}",
    restored: "您有一项正在办理的业务【{name}】（{state}），可以继续回答，或点击“重新开始”。",
    restoredRunning: "您的【{name}】正在提交，结果出来后会显示在这里；关闭页面也不影响办理。",
    empty: "请输入内容后再发送。",
    tooLong: "消息不能超过{limit}个字，请精简后再发送。",
    network: "网络异常，请检查网络后重试。",
    unavailable: "服务暂时不可用，请稍后再试。",
    failedStatus: "请求失败（{status}），请稍后再试。",
    incomplete: "（回复不完整，请重试）",
    working: "正在办理，请稍候…",
    notSent: "未发送",
    noBusiness: "暂无",
    you: "您说：",
    assistant: "助手说：",
    staff: "人工客服说：",
    // A hand-off to a person (GET /api/session/handoff/events).
    handoffWaiting: "人工服务排队中（工单号{number}），回复“结束人工”可退出排队。",
    handoffHeld: "人工客服（工号{staff}）正在为您服务，回复“结束人工”可结束。",
    suggestion: "办理【{name}】",
    suspendedFilled: "已填写{filled}项",
    uploadTitle: "上传{label}",
    uploadTitleOptional: "上传{label}（可选）",
    // An upload: 上传中 (with progress) → 识别中 (the step reads it) → 已通过 / 未通过.
    uploading: "上传中…",
    recognising: "识别中…",
    passed: "{label}已通过",
    refused: "未通过：{error}",
    refusedShort: "未通过",
    uploadSent: "[上传照片]",
    resume: "继续办理",
    resumeMessage: "继续办理【{name}】",
    filledCount: "，已填写",
    send: { confirm: "确认", cancel: "取消", retry: "重试", accept: "办理", modify: "修改" },
    askEnd: "结束办理将清除本次对话和办理信息，下一位办事人将从头开始。确定结束吗？",
    askReset: "重新开始将清除正在办理的【{name}】和已填写的信息。确定重新开始吗？",
    askResume: "继续上次的办理？【{name}】",
    choice: { end: "结束办理", reset: "重新开始", keep: "取消", resume: "继续", startOver: "重新开始" },
    ended: "本次办理已结束，对话和身份信息已清除。",
    mic: "语音输入",
    micStop: "说完了",
    micRecording: "正在录音",
    micSending: "正在识别…",
    voiceSent: "（语音）",
    micDenied: "浏览器没有允许使用麦克风。请在浏览器设置中允许本网站使用麦克风，或直接输入文字。",
    micMissing: "没有找到可用的麦克风，请直接输入文字。",
    micFailed: "无法录音，请直接输入文字。",
    micTooShort: "录音太短了，请按下“语音输入”后说完再点“说完了”。",
    feedbackGroup: "这条回答对您有帮助吗？",
    feedbackUp: "有帮助",
    feedbackDown: "没帮助",
    feedbackReason: "哪里没帮到您？（可选，最多{limit}字）",
    feedbackSend: "提交",
    feedbackThanks: "感谢您的反馈！",
    feedbackThanksDown: "感谢您的反馈，我们会改进。",
  };
  const FEEDBACK_REASON_CHARS = 200; // as POST /api/feedback accepts
  // Recording stops itself a little before the server's limit (SI_VOICE_MAX_SECONDS).
  const MIC_MARGIN_SECONDS = 1;
  const MIC_MIN_MS = 400;
  // A page opened again after this long (since the last message) with a business in
  // progress asks before resuming it: on a shared computer it may be the next person.
  const PAUSE_ASK_SECONDS = 30 * 60;
  const STATE_LABELS = {
    idle: "空闲",
    collecting: "信息收集中",
    step_executing: "材料核验中",
    confirming: "待确认",
    executing: "提交中",
    done: "已完成",
    failed: "提交失败",
  };
  const FIELD_STATUS = {
    collected: { icon: "✓", text: "已填写" },
    pending: { icon: "○", text: "待填写" },
    invalid: { icon: "!", text: "格式有误" },
    failed: { icon: "✕", text: "未通过核验" },
    skipped: { icon: "–", text: "未提供" },
  };
  // A photo step in the panel's list of steps (status from the turn's "steps").
  const STEP_STATUS = {
    done: { icon: "✓", text: "已通过", look: "collected" },
    current: { icon: "○", text: "待上传", look: "pending" },
    failed: { icon: "✕", text: "未通过", look: "failed" },
    pending: { icon: "○", text: "待办理", look: "pending" },
    optional: { icon: "○", text: "可选，未上传", look: "pending" },
    skipped: { icon: "–", text: "不上传", look: "skipped" },
  };
  const STORAGE_USER = "si_agent.user_id";
  const STORAGE_TOKEN = "si_agent.token";
  const EMBEDDED = new URLSearchParams(location.search).get("embed") === "1" && window.parent !== window;
  const CLOSE_MESSAGE = "si-agent:close";
  const READY_MESSAGE = "si-agent:ready";
  const NARROW = window.matchMedia("(max-width: 767.98px)");
  const TOAST_MS = 6000;

  const $ = (id) => document.getElementById(id);
  const els = {
    app: $("app"), messages: $("messages"), form: $("composer"), input: $("message-input"),
    send: $("send"), charCount: $("char-count"), actions: $("actions"),
    suggestion: $("suggestion"), services: $("services"), choices: $("choices"),
    confirm: $("confirm"), retry: $("retry"),
    modify: $("modify"), cancel: $("cancel"), reset: $("reset"),
    panel: $("panel"), toggle: $("panel-toggle"), toggleCount: $("toggle-count"),
    close: $("panel-close"), backdrop: $("backdrop"), header: document.querySelector(".topbar"),
    chat: document.querySelector(".chat"), badge: $("state-badge"),
    business: $("business-name"), fields: $("fields"), fieldsEmpty: $("fields-empty"),
    suspended: $("suspended"), suspendedList: $("suspended-list"),
    upload: $("upload"), uploadTitle: $("upload-title"), uploadPrompt: $("upload-prompt"),
    uploadInput: $("upload-input"), uploadCamera: $("upload-camera"), uploadPreview: $("upload-preview"),
    steps: $("steps"), stepsList: $("steps-list"),
    uploadStatus: $("upload-status"), uploadProgress: $("upload-progress"),
    result: $("result"), resultValue: $("result-value"), resultFields: $("result-fields"),
    toast: $("toast"), toastText: $("toast-text"), toastClose: $("toast-close"),
    end: $("end-session"),
    mic: $("mic"), micState: $("mic-state"), micLabel: $("mic-label"), micTimer: $("mic-timer"),
    readAloud: $("read-aloud"),
  };

  let config = { auth_mode: "dev", max_message_chars: 2000, voice: false, voice_max_seconds: 60 };
  let offered = []; // the businesses that can be done here now: {id, name}, catalog order
  let busy = false;
  let accessToken = null;
  let toastTimer = null;
  let currentView = { state: "idle", fields: [] }; // the last view rendered

  const fill = (template, values) =>
    template.replace(/\{(\w+)\}/g, (m, key) => (key in values ? String(values[key]) : m));
  const charLength = (text) => Array.from(text).length; // code points, as the server counts

  // -- errors ------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }
  class NetworkError extends Error {}

  function errorText(err) {
    if (err instanceof ApiError) return err.message;
    return TEXTS.network;
  }

  async function apiErrorFrom(response) {
    const retryAfter = Number(response.headers.get("Retry-After")) || 0;
    try {
      const body = await response.json();
      if (body && body.error && body.error.message) {
        const err = new ApiError(response.status, body.error.code, body.error.message);
        err.retryAfter = retryAfter;
        return err;
      }
    } catch (e) {
      // not our JSON (a proxy page, say): fall through to a generic message
    }
    const message = response.status >= 502 && response.status <= 504
      ? TEXTS.unavailable : fill(TEXTS.failedStatus, { status: response.status });
    return new ApiError(response.status, "http_" + response.status, message);
  }

  // -- auth --------------------------------------------------------------------

  // Reading window.localStorage itself throws where storage is blocked (a third-party
  // frame, private mode), so the store is looked up inside the try.
  const memoryStore = { localStorage: {}, sessionStorage: {} };
  function storageGet(store, key) {
    try { return window[store].getItem(key); } catch (e) { return memoryStore[store][key] || null; }
  }
  function storageSet(store, key, value) {
    try { window[store].setItem(key, value); } catch (e) { memoryStore[store][key] = value; }
  }

  function randomId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function userId() {
    let id = storageGet("localStorage", STORAGE_USER);
    if (!id || !/^[A-Za-z0-9_.@:-]{1,64}$/.test(id)) {
      id = "web-" + randomId();
      storageSet("localStorage", STORAGE_USER, id);
    }
    return id;
  }

  function currentToken() {
    return accessToken || storageGet("sessionStorage", STORAGE_TOKEN);
  }

  async function fetchToken() {
    let response;
    try {
      response = await fetch("/api/token", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ user_id: userId() }),
      });
    } catch (e) {
      throw new NetworkError();
    }
    if (!response.ok) throw await apiErrorFrom(response);
    const body = await response.json();
    accessToken = body.access_token;
    storageSet("sessionStorage", STORAGE_TOKEN, accessToken);
  }

  // -- API ---------------------------------------------------------------------

  /** fetch with the bearer token; on 401 (dev mode) get a new token once and retry. */
  async function api(method, path, body, accept = "application/json", retried = false) {
    if (!currentToken() && config.auth_mode === "dev") await fetchToken();
    const headers = { Accept: accept };
    const token = currentToken();
    if (token) headers.Authorization = "Bearer " + token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
      });
    } catch (e) {
      throw new NetworkError();
    }
    if (response.status === 401 && !retried && config.auth_mode === "dev") {
      accessToken = null;
      await fetchToken();
      return api(method, path, body, accept, true);
    }
    if (!response.ok) throw await apiErrorFrom(response);
    return response;
  }

  /** Read a text/event-stream body, calling onEvent(name, data) per event. */
  async function readEvents(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder("utf-8");
    let buffer = "";
    const dispatch = (block) => {
      let name = "message";
      const data = [];
      for (const line of block.split(/\r\n|\r|\n/)) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      }
      if (!data.length) return;
      let parsed;
      try { parsed = JSON.parse(data.join("\n")); } catch (e) { return; }
      onEvent(name, parsed);
    };
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        throw new NetworkError();
      }
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      const blocks = buffer.split(/\r\n\r\n|\n\n|\r\r/);
      buffer = blocks.pop();
      blocks.forEach(dispatch);
    }
    buffer += decoder.decode();
    if (buffer.trim()) dispatch(buffer);
  }

  // -- messages ----------------------------------------------------------------

  // The list follows new text while the reader is at the bottom; scrolling up stops that.
  let followBottom = true;
  function nearBottom() {
    const m = els.messages;
    return m.scrollHeight - m.scrollTop - m.clientHeight < 80;
  }
  function keepDown() {
    if (followBottom) els.messages.scrollTop = els.messages.scrollHeight;
  }
  function watchScrolling() {
    els.messages.addEventListener("scroll", () => { followBottom = nearBottom(); });
    new MutationObserver(keepDown).observe(els.messages,
      { childList: true, subtree: true, characterData: true });
    new ResizeObserver(keepDown).observe(els.messages);
  }

  /** ID, bank card and mobile numbers the user typed, starred like the server does. */
  function maskPersonal(text) {
    // No regex lookbehind: older iOS Safari cannot parse it.
    const star = (head, tail) => (m, before, number) =>
      before + number.slice(0, head) + "*".repeat(number.length - head - tail) + number.slice(-tail);
    return text
      .replace(/(^|[^0-9A-Za-z])(\d{17}[\dXx])(?![0-9A-Za-z])/g, star(4, 4))
      .replace(/(^|[^0-9*])(\d{15,19})(?![0-9])/g, star(4, 4))
      .replace(/(^|[^0-9*])(1[3-9]\d{9})(?![0-9])/g, star(3, 4));
  }

  function addMessage(role, text) {
    if (role === "user") followBottom = true;
    const row = document.createElement("div");
    // a person's reply looks like the assistant's, with its own avatar and label
    row.className = "msg msg-" + role + (role === "staff" ? " msg-assistant" : "");
    row.dataset.testid = "message-" + role;
    const avatar = document.createElement("span");
    avatar.className = "avatar";
    avatar.setAttribute("aria-hidden", "true");
    avatar.textContent = role === "user" ? "我" : role === "staff" ? "人" : "社";
    const who = document.createElement("span");
    who.className = "visually-hidden";
    who.textContent = role === "user" ? TEXTS.you : role === "staff" ? TEXTS.staff : TEXTS.assistant;
    const bubble = document.createElement("div");
    bubble.className = "bubble";
    const content = document.createElement("span");
    content.className = "content";
    content.dataset.testid = "message-text";
    content.textContent = role === "user" ? maskPersonal(text) : text || "";
    bubble.append(who, content);
    row.append(avatar, bubble);
    els.messages.append(row);
    return row;
  }

  function addNote(text) {
    const note = document.createElement("p");
    note.className = "msg-note";
    note.dataset.testid = "message-note";
    note.textContent = text;
    els.messages.append(note);
    return note;
  }

  /** The greeting, with a button for each business offered (a reload greets again). */
  function greet() {
    const pick = offered.length ? TEXTS.greetingPick : "";
    const row = addMessage("assistant", fill(TEXTS.greeting, { pick }));
    if (!offered.length) return;
    const group = document.createElement("div");
    group.className = "greeting-services";
    group.dataset.testid = "greeting-services";
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", TEXTS.greetingServices);
    group.append(...offered.map(serviceChip));
    row.querySelector(".bubble").append(group);
  }

  function pendingReply() {
    const row = addMessage("assistant", "");
    row.dataset.streaming = "true";
    const dots = document.createElement("span");
    dots.className = "typing";
    dots.setAttribute("aria-hidden", "true");
    dots.append(document.createElement("span"), document.createElement("span"),
      document.createElement("span"));
    row.querySelector(".bubble").append(dots);
    return row;
  }

  function appendDelta(row, text) {
    const dots = row.querySelector(".typing");
    if (dots) dots.remove();
    row.querySelector(".content").textContent += text;
  }

  function finishReply(row, text) {
    const dots = row.querySelector(".typing");
    if (dots) dots.remove();
    row.querySelector(".content").textContent = text;
    row.dataset.streaming = "false";
  }

  /**
   * 有帮助 / 没帮助 under a reply of turn `turn` (POST /api/feedback). 有帮助 is sent at
   * once; 没帮助 opens an optional reason (Enter or 提交 sends it, Esc sends the rating
   * without one).
   */
  function addFeedback(row, turn) {
    if (!Number.isInteger(turn) || turn < 1) return;
    const box = document.createElement("div");
    box.className = "feedback";
    box.dataset.testid = "feedback";
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", TEXTS.feedbackGroup);
    const status = document.createElement("span");
    status.className = "feedback-status";
    status.dataset.testid = "feedback-status";
    status.setAttribute("role", "status");
    const rate = (rating, label) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "feedback-btn";
      b.dataset.rating = rating;
      b.setAttribute("aria-pressed", "false");
      b.textContent = label; // words, not emoji: not every screen has an emoji font
      return b;
    };
    const up = rate("up", TEXTS.feedbackUp);
    const down = rate("down", TEXTS.feedbackDown);
    let reasonForm = null;
    const sendRating = async (rating, reason) => {
      try {
        await api("POST", "/api/feedback", { turn, rating, reason: reason || "" });
        up.setAttribute("aria-pressed", String(rating === "up"));
        down.setAttribute("aria-pressed", String(rating === "down"));
        status.textContent = rating === "up" ? TEXTS.feedbackThanks : TEXTS.feedbackThanksDown;
        if (reasonForm) { reasonForm.remove(); reasonForm = null; }
        return true;
      } catch (err) {
        status.textContent = errorText(err);
        return false;
      }
    };
    up.addEventListener("click", () => sendRating("up"));
    down.addEventListener("click", () => {
      if (reasonForm) { reasonForm.querySelector("input").focus(); return; }
      reasonForm = document.createElement("form");
      reasonForm.className = "feedback-reason";
      const id = "feedback-reason-" + turn;
      const label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = fill(TEXTS.feedbackReason, { limit: FEEDBACK_REASON_CHARS });
      const input = document.createElement("input");
      input.id = id;
      input.type = "text";
      input.maxLength = FEEDBACK_REASON_CHARS;
      input.autocomplete = "off";
      input.dataset.testid = "feedback-reason";
      const submit = document.createElement("button");
      submit.type = "submit";
      submit.className = "btn";
      submit.textContent = TEXTS.feedbackSend;
      reasonForm.append(label, input, submit);
      reasonForm.addEventListener("submit", (event) => {
        event.preventDefault();
        sendRating("down", input.value.trim());
      });
      input.addEventListener("keydown", (event) => {
        if (event.key === "Escape") {
          event.preventDefault();
          event.stopPropagation(); // not the widget's close
          sendRating("down", "").then(() => down.focus());
        }
      });
      box.after(reasonForm);
      input.focus();
    });
    box.append(up, down, status);
    row.querySelector(".bubble").append(box);
  }

  function markNotSent(row) {
    row.classList.add("msg-failed");
    const status = document.createElement("span");
    status.className = "msg-status";
    status.dataset.testid = "message-status";
    status.textContent = TEXTS.notSent;
    row.append(status);
  }

  // -- panel -------------------------------------------------------------------

  function fieldItem(field, awaiting) {
    const status = FIELD_STATUS[field.status] ? field.status : "pending";
    const li = document.createElement("li");
    li.className = "field";
    li.dataset.testid = "field-" + field.key;
    li.dataset.status = status;
    if (field.key === awaiting) li.setAttribute("aria-current", "step");
    const icon = document.createElement("span");
    icon.className = "field-icon";
    icon.setAttribute("aria-hidden", "true");
    icon.textContent = FIELD_STATUS[status].icon;
    const head = document.createElement("div");
    head.className = "field-head";
    const label = document.createElement("span");
    label.className = "field-label";
    label.textContent = field.label;
    const statusText = document.createElement("span");
    statusText.className = "field-status";
    statusText.dataset.testid = "field-status";
    statusText.textContent = FIELD_STATUS[status].text;
    head.append(label, statusText);
    li.append(icon, head);
    if (field.value != null && field.value !== "") {
      const value = document.createElement("div");
      value.className = "field-value";
      value.dataset.testid = "field-value";
      value.textContent = field.value;
      li.append(value);
    }
    if (field.error) {  // why it is asked again, e.g. the web form's own reason
      const error = document.createElement("div");
      error.className = "field-error";
      error.dataset.testid = "field-error";
      error.textContent = field.error;
      li.append(error);
    }
    return li;
  }

  /**
   * A consultation's slots, grouped by theme: each theme with its progress
   * ("2/3": collected or skipped of all), the current one marked.
   */
  function groupItems(fields, view) {
    const groups = new Map();
    for (const f of fields) {
      if (!groups.has(f.group)) groups.set(f.group, []);
      groups.get(f.group).push(f);
    }
    const current = view.theme ? view.theme.label : null;
    return [...groups].map(([label, slots], i) => {
      const li = document.createElement("li");
      li.className = "field-group";
      li.dataset.testid = "group-" + i;
      if (label === current) li.setAttribute("aria-current", "true");
      const head = document.createElement("div");
      head.className = "group-head";
      const name = document.createElement("span");
      name.className = "group-label";
      name.textContent = label;
      const done = slots.filter((f) => f.status === "collected" || f.status === "skipped").length;
      const progress = document.createElement("span");
      progress.className = "group-progress";
      progress.dataset.testid = "group-progress";
      progress.textContent = `${done}/${slots.length}`;
      head.append(name, progress);
      const list = document.createElement("ul");
      list.className = "fields";
      list.append(...slots.map((f) => fieldItem(f, null)));
      li.append(head, list);
      return li;
    });
  }

  /** One photo step in the panel: its label and where it stands (已通过, 未通过...). */
  function stepItem(step) {
    const status = STEP_STATUS[step.status] ? step.status : "pending";
    const li = document.createElement("li");
    li.className = "field step-item";
    li.dataset.testid = "step-" + step.id;
    li.dataset.status = STEP_STATUS[status].look; // the fields' colours
    li.dataset.stepStatus = status;
    if (status === "current" || status === "failed") li.setAttribute("aria-current", "step");
    const icon = document.createElement("span");
    icon.className = "field-icon";
    icon.setAttribute("aria-hidden", "true");
    icon.textContent = STEP_STATUS[status].icon;
    const head = document.createElement("div");
    head.className = "field-head";
    const label = document.createElement("span");
    label.className = "field-label";
    label.textContent = step.label;
    const text = document.createElement("span");
    text.className = "field-status";
    text.dataset.testid = "step-status";
    text.textContent = STEP_STATUS[status].text;
    head.append(label, text);
    li.append(icon, head);
    return li;
  }

  /** The web form's per-field outcome (填写成功 / 填写失败 / 未填写), when a form was filled. */
  function renderFormStatus(rows) {
    const list = Array.isArray(rows) ? rows : [];
    els.resultFields.hidden = list.length === 0;
    els.resultFields.tBodies[0].replaceChildren(...list.map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.status = row.status;
      const label = document.createElement("td");
      label.textContent = row.label;
      const status = document.createElement("td");
      status.textContent = row.reason ? `${row.status}：${row.reason}` : row.status;
      tr.append(label, status);
      return tr;
    }));
  }

  function suspendedItem(flow) {
    const li = document.createElement("li");
    li.className = "suspended-item";
    li.dataset.testid = "suspended-" + flow.business_id;
    const name = document.createElement("span");
    name.className = "field-label";
    name.textContent = flow.name;
    const filled = document.createElement("span");
    filled.className = "field-status";
    filled.textContent = fill(TEXTS.suspendedFilled, { filled: flow.filled });
    const resume = document.createElement("button");
    resume.type = "button";
    resume.className = "btn btn-ghost resume";
    resume.dataset.testid = "resume";
    resume.textContent = TEXTS.resume;
    resume.setAttribute("aria-label", fill(TEXTS.resumeMessage, { name: flow.name }));
    resume.addEventListener("click", () => send(fill(TEXTS.resumeMessage, { name: flow.name })));
    li.append(name, filled, resume);
    return li;
  }

  /** Redraw everything but the message list from a turn or session view. */
  function render(view) {
    currentView = view;
    const state = STATE_LABELS[view.state] ? view.state : "idle";
    els.badge.dataset.state = state;
    els.badge.textContent = STATE_LABELS[state];
    els.business.textContent = view.business ? view.business.name : TEXTS.noBusiness;

    const fields = Array.isArray(view.fields) ? view.fields : [];
    const grouped = fields.length > 0 && fields.every((f) => f.group);
    els.fields.replaceChildren(...(grouped ? groupItems(fields, view)
      : fields.map((f) => fieldItem(f, view.awaiting))));
    els.fieldsEmpty.hidden = fields.length > 0;
    const collected = fields.filter((f) => f.status === "collected" || f.status === "skipped").length;
    els.toggleCount.replaceChildren();
    if (fields.length) {
      const spoken = document.createElement("span");
      spoken.className = "visually-hidden";
      spoken.textContent = TEXTS.filledCount;
      els.toggleCount.append(spoken, `${collected}/${fields.length}`);
    }

    const suspended = Array.isArray(view.suspended) ? view.suspended : [];
    els.suspendedList.replaceChildren(...suspended.slice().reverse().map(suspendedItem));
    els.suspended.hidden = suspended.length === 0;

    const steps = Array.isArray(view.steps) ? view.steps : [];
    els.stepsList.replaceChildren(...steps.map(stepItem));
    els.steps.hidden = steps.length === 0;

    renderUpload(view.step);

    const number = view.result && view.result.application_no;
    els.result.hidden = !number;
    els.resultValue.textContent = number || "";
    renderFormStatus(view.result && view.result.field_status);

    const suggestion = view.suggestion;
    els.suggestion.hidden = !suggestion;
    if (suggestion) {
      els.suggestion.textContent = fill(TEXTS.suggestion, { name: suggestion.name });
      els.suggestion.title = suggestion.text;
      els.suggestion.dataset.businessId = suggestion.business_id;
    }
    // The services the reply listed ("有哪些业务"): one button each, sending its name.
    const services = Array.isArray(view.services) ? view.services : [];
    els.services.replaceChildren(...services.map(serviceChip));
    els.services.hidden = services.length === 0;
    // The awaited choice field's options: each one sent as the message when tapped.
    showChoices(Array.isArray(view.choices) ? view.choices : []);
    els.confirm.hidden = state !== "confirming";
    els.modify.hidden = state !== "confirming";
    els.retry.hidden = state !== "failed";
    els.cancel.hidden = state !== "confirming" && state !== "failed";
    els.actions.hidden = ![els.suggestion, els.services, els.choices, els.confirm, els.retry, els.cancel]
      .some((b) => !b.hidden);
  }

  /** Quick replies: one button per text, sending it. */
  function showChoices(texts) {
    els.choices.replaceChildren(...texts.map((text) => {
      const chip = document.createElement("button");
      chip.type = "button";
      chip.className = "chip";
      chip.textContent = text;
      chip.disabled = busy;
      chip.addEventListener("click", () => {
        if (els.input.value.trim() === TEXTS.send.modify) { // 修改 left half-typed
          els.input.value = "";
          updateInput();
        }
        send(text);
      });
      return chip;
    }));
    els.choices.hidden = texts.length === 0;
    if (texts.length) els.actions.hidden = false;
  }

  function serviceChip(service) {
    const chip = document.createElement("button");
    chip.type = "button";
    chip.className = "chip";
    chip.textContent = service.name;
    chip.dataset.businessId = service.id;
    chip.disabled = busy;
    chip.addEventListener("click", () => send(service.name));
    return chip;
  }

  // -- drawer (narrow screens) ---------------------------------------------------

  function setPanelOpen(open, moveFocus = true) {
    const modal = open && NARROW.matches;
    els.panel.dataset.open = String(open);
    els.toggle.setAttribute("aria-expanded", String(open));
    els.backdrop.hidden = !modal;
    els.chat.inert = modal;
    els.header.inert = modal;
    if (!moveFocus) return;
    if (modal) els.close.focus();
    else if (NARROW.matches) els.toggle.focus();
  }

  // -- toasts and busy state -----------------------------------------------------

  function toast(message) {
    clearTimeout(toastTimer);
    els.toastText.textContent = message;
    els.toast.hidden = false;
    toastTimer = setTimeout(hideToast, TOAST_MS);
  }
  function hideToast() {
    clearTimeout(toastTimer);
    els.toast.hidden = true;
  }

  function setBusy(value) {
    busy = value;
    els.app.dataset.busy = String(value);
    els.messages.setAttribute("aria-busy", String(value));
    for (const b of [els.send, els.reset, els.end, els.suggestion, els.confirm, els.retry, els.modify, els.cancel,
                     els.uploadInput, els.uploadCamera, ...els.services.querySelectorAll("button"),
                     ...els.choices.querySelectorAll("button"),
                     ...els.messages.querySelectorAll(".greeting-services button")]) {
      b.disabled = value;
    }
    els.mic.disabled = value && !recorder; // a recording in progress can always be stopped
  }

  function focusInputIfLost() {
    const active = document.activeElement;
    if (!active || active === document.body || active.disabled || active.closest("[hidden]")) {
      els.input.focus();
    }
  }

  // -- input -------------------------------------------------------------------

  function updateInput() {
    const n = charLength(els.input.value);
    const over = n > config.max_message_chars;
    els.charCount.textContent = n ? `${n}/${config.max_message_chars}` : "";
    els.charCount.classList.toggle("over", over);
    els.input.setAttribute("aria-invalid", String(over));
    els.input.style.height = "auto";
    els.input.style.height = Math.min(els.input.scrollHeight + 2, 168) + "px";
  }

  /** Client-side checks; returns an error text or null. */
  function checkMessage(text) {
    if (!text.trim()) return TEXTS.empty;
    if (charLength(text.trim()) > config.max_message_chars) {
      return fill(TEXTS.tooLong, { limit: config.max_message_chars });
    }
    return null;
  }

  // -- actions -----------------------------------------------------------------

  /** Send one message and stream the reply; true when the turn arrived. */
  async function send(raw) {
    if (busy) return false;
    const problem = checkMessage(raw);
    if (problem) {
      toast(problem);
      return false;
    }
    const text = raw.trim();
    if (pendingAsk) pendingAsk("keep"); // a question left open is answered by moving on
    hideToast();
    setBusy(true);
    const userRow = addMessage("user", text);
    const reply = pendingReply();
    try {
      const response = await api("POST", "/api/chat", { message: text }, "text/event-stream");
      let turn = null;
      let failure = null;
      if ((response.headers.get("Content-Type") || "").includes("text/event-stream")) {
        await readEvents(response, (event, data) => {
          if (event === "delta" && typeof data.text === "string") appendDelta(reply, data.text);
          else if (event === "reset") reply.querySelector(".content").textContent = "";
          else if (event === "turn") turn = data;
          else if (event === "error") failure = new ApiError(response.status, data.code, data.message);
        });
      } else {
        turn = await response.json();
      }
      if (failure) throw failure;
      if (!turn) throw new NetworkError();
      // as the server keeps it (and a reloaded page shows it): its numbers masked
      if (typeof turn.message === "string") userRow.querySelector(".content").textContent = turn.message;
      // A message to the person answering has no reply of the assistant's.
      if (!turn.reply && turn.handoff && turn.handoff.state === "held") reply.remove();
      else {
        finishReply(reply, turn.reply || "");
        addFeedback(reply, turn.turn);
      }
      speak(turn.reply);
      render(turn);
      followHandoff(turn.handoff, false);
      if (turn.state === "executing") followJob();
      return true;
    } catch (err) {
      const partial = reply.querySelector(".content").textContent;
      if (partial) finishReply(reply, partial + "\n" + TEXTS.incomplete);
      else reply.remove();
      markNotSent(userRow);
      toast(errorText(err));
      return false;
    } finally {
      setBusy(false);
      focusInputIfLost();
    }
  }

  /** The upload control for the step awaiting a photo, or hidden. */
  function renderUpload(step) {
    const shown = Boolean(step && step.id);
    if (shown && els.upload.dataset.step !== step.id) {
      const title = step.optional ? TEXTS.uploadTitleOptional : TEXTS.uploadTitle;
      els.uploadTitle.textContent = fill(title, { label: step.label });
      els.uploadPrompt.textContent = step.prompt;
      // 拍照 on phones: the front camera for a selfie, the back camera for a document.
      // 选择照片 forces no camera: a citizen may pick a photo taken before.
      els.uploadCamera.setAttribute("capture", step.capture === "user" ? "user" : "environment");
      clearPreview();
      els.uploadStatus.textContent = "";
      delete els.upload.dataset.outcome;
    }
    els.upload.dataset.step = shown ? step.id : "";
    els.upload.hidden = !shown;
  }

  function clearPreview() {
    if (els.uploadPreview.src) URL.revokeObjectURL(els.uploadPreview.src);
    els.uploadPreview.removeAttribute("src");
    els.uploadPreview.hidden = true;
  }

  /**
   * A preview of the chosen photo, shown only once the browser has drawn it: a file
   * that is not an image, or one it cannot show (HEIC on a desktop), shows none.
   */
  function showPreview(file) {
    clearPreview();
    if (!/^image\//.test(file.type || "")) return;
    const url = URL.createObjectURL(file);
    els.uploadPreview.onload = () => {
      if (els.uploadPreview.src === url) els.uploadPreview.hidden = false;
    };
    els.uploadPreview.onerror = () => {
      if (els.uploadPreview.src === url) clearPreview();
    };
    els.uploadPreview.src = url;
  }

  /** POST the photo as multipart with upload progress; resolves to the turn object. */
  function postPhoto(file, step, retried = false) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", "/api/upload");
      const token = currentToken();
      if (token) xhr.setRequestHeader("Authorization", "Bearer " + token);
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) els.uploadProgress.value = Math.round((100 * e.loaded) / e.total);
      };
      // Sent: the step reads it now (an ID card's text, a face) before the answer comes.
      xhr.upload.onload = () => {
        els.uploadStatus.textContent = TEXTS.recognising;
        els.uploadProgress.removeAttribute("value"); // indeterminate while recognising
      };
      xhr.onerror = () => reject(new NetworkError());
      xhr.onload = () => {
        let body = null;
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
        if (xhr.status === 401 && !retried && config.auth_mode === "dev") {
          accessToken = null;
          fetchToken().then(() => postPhoto(file, step, true)).then(resolve, reject);
        } else if (xhr.status >= 200 && xhr.status < 300 && body) {
          resolve(body);
        } else if (body && body.error && body.error.message) {
          reject(new ApiError(xhr.status, body.error.code, body.error.message));
        } else {
          reject(new ApiError(xhr.status, "", fill(TEXTS.failedStatus, { status: xhr.status })));
        }
      };
      const form = new FormData();
      form.append("file", file);
      form.append("step", step);
      xhr.send(form);
    });
  }

  async function uploadPhoto(file) {
    if (busy || !file) return;
    const step = els.upload.dataset.step;
    const label = (currentView.step && currentView.step.label) || "";
    showPreview(file);
    delete els.upload.dataset.outcome;
    els.uploadStatus.textContent = TEXTS.uploading;
    els.uploadProgress.value = 0;
    els.uploadProgress.hidden = false;
    hideToast();
    setBusy(true);
    try {
      if (!currentToken() && config.auth_mode === "dev") await fetchToken();
      const turn = await postPhoto(file, step);
      addMessage("user", TEXTS.uploadSent);
      const reply = pendingReply();
      finishReply(reply, turn.reply || "");
      render(turn);
      // Said after render: a step passed shows its next one, and this line under it.
      const outcome = turn.photo;
      if (outcome && outcome.passed) {
        els.upload.dataset.outcome = "passed";
        els.uploadStatus.textContent = fill(TEXTS.passed, { label });
        if (els.upload.dataset.step !== step) clearPreview(); // the next step's control
      } else {
        els.upload.dataset.outcome = "failed";
        els.uploadStatus.textContent = outcome && outcome.error
          ? fill(TEXTS.refused, { error: outcome.error }) : TEXTS.refusedShort;
      }
      if (turn.state === "executing") followJob();
    } catch (err) {
      // Refused before the step saw it (not an image, too large): the session did not
      // change. Show why, without a preview, and let the citizen choose another photo.
      clearPreview();
      els.upload.dataset.outcome = "failed";
      els.uploadStatus.textContent = errorText(err);
      toast(errorText(err));
    } finally {
      els.uploadProgress.hidden = true;
      els.uploadProgress.value = 0;
      els.uploadInput.value = "";
      els.uploadCamera.value = "";
      setBusy(false);
    }
  }

  // -- voice -------------------------------------------------------------------

  let recorder = null; // the MediaRecorder while recording
  let micTimer = null;
  let micStarted = 0;

  function voiceSupported() {
    return Boolean(navigator.mediaDevices && navigator.mediaDevices.getUserMedia && window.MediaRecorder);
  }

  function micShowState(recording, label) {
    els.mic.setAttribute("aria-pressed", String(recording));
    els.mic.textContent = recording ? TEXTS.micStop : TEXTS.mic;
    els.micState.hidden = !label;
    els.micLabel.textContent = label || "";
    els.micTimer.hidden = !recording;
  }

  function micTick() {
    const seconds = Math.floor((Date.now() - micStarted) / 1000);
    els.micTimer.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
    if (seconds >= config.voice_max_seconds - MIC_MARGIN_SECONDS) stopRecording();
  }

  function micErrorText(err) {
    if (err && (err.name === "NotAllowedError" || err.name === "SecurityError")) return TEXTS.micDenied;
    if (err && (err.name === "NotFoundError" || err.name === "OverconstrainedError")) return TEXTS.micMissing;
    return TEXTS.micFailed;
  }

  async function toggleRecording() {
    if (recorder) {
      stopRecording();
      return;
    }
    if (busy) return;
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (err) {
      toast(micErrorText(err));
      return;
    }
    const chunks = [];
    const type = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/mp4"]
      .find((t) => MediaRecorder.isTypeSupported && MediaRecorder.isTypeSupported(t));
    try {
      recorder = type ? new MediaRecorder(stream, { mimeType: type }) : new MediaRecorder(stream);
    } catch (err) {
      stream.getTracks().forEach((t) => t.stop());
      toast(micErrorText(err));
      return;
    }
    recorder.ondataavailable = (e) => { if (e.data && e.data.size) chunks.push(e.data); };
    recorder.onstop = () => {
      stream.getTracks().forEach((t) => t.stop());
      const elapsed = Date.now() - micStarted;
      const blob = new Blob(chunks, { type: recorder.mimeType || type || "audio/webm" });
      recorder = null;
      clearInterval(micTimer);
      micShowState(false, "");
      setBusy(false);
      if (elapsed < MIC_MIN_MS || !blob.size) {
        toast(TEXTS.micTooShort);
        return;
      }
      sendVoice(blob);
    };
    hideToast();
    micStarted = Date.now();
    els.micTimer.textContent = "0:00";
    micTimer = setInterval(micTick, 250);
    recorder.start();
    micShowState(true, TEXTS.micRecording);
    setBusy(true);
  }

  function stopRecording() {
    if (recorder && recorder.state !== "inactive") recorder.stop();
  }

  /** POST a recorded clip to /api/voice and render the turn like a typed one. */
  async function sendVoice(blob, row = null, retried = false) {
    setBusy(true);
    micShowState(false, TEXTS.micSending);
    const userRow = row || addMessage("user", TEXTS.voiceSent);
    const reply = pendingReply();
    try {
      if (!currentToken() && config.auth_mode === "dev") await fetchToken();
      const form = new FormData();
      const ext = (blob.type.split("/")[1] || "webm").split(";")[0];
      form.append("file", blob, "voice." + ext);
      const headers = { Accept: "application/json" };
      const token = currentToken();
      if (token) headers.Authorization = "Bearer " + token;
      let response;
      try {
        response = await fetch("/api/voice", { method: "POST", headers, body: form, cache: "no-store" });
      } catch (e) {
        throw new NetworkError();
      }
      if (response.status === 401 && !retried && config.auth_mode === "dev") {
        accessToken = null;
        await fetchToken();
        reply.remove();
        return sendVoice(blob, userRow, true);
      }
      if (!response.ok) throw await apiErrorFrom(response);
      const turn = await response.json();
      if (typeof turn.transcript === "string") {
        userRow.querySelector(".content").textContent = turn.transcript;
        userRow.dataset.voice = "true";
      }
      finishReply(reply, turn.reply || "");
      speak(turn.reply);
      render(turn);
      if (turn.state === "executing") followJob();
    } catch (err) {
      reply.remove();
      markNotSent(userRow);
      toast(errorText(err));
    } finally {
      micShowState(false, "");
      setBusy(false);
    }
  }

  // -- read aloud ----------------------------------------------------------------

  let readAloud = false;

  function chineseVoice() {
    if (!("speechSynthesis" in window)) return null;
    return window.speechSynthesis.getVoices().find((v) => /^zh|cmn/i.test(v.lang)) || null;
  }

  function speak(text) {
    if (!readAloud || !text) return;
    const voice = chineseVoice();
    if (!voice) return;
    window.speechSynthesis.cancel();
    const utterance = new SpeechSynthesisUtterance(text);
    utterance.voice = voice;
    utterance.lang = voice.lang;
    utterance.rate = 0.9; // a little slower: for elderly citizens
    window.speechSynthesis.speak(utterance);
  }

  function showReadAloud() {
    els.readAloud.hidden = !chineseVoice();
  }

  function toggleReadAloud() {
    readAloud = !readAloud;
    els.readAloud.setAttribute("aria-pressed", String(readAloud));
    if (!readAloud && "speechSynthesis" in window) window.speechSynthesis.cancel();
  }

  /** Follow a submission still being processed: progress in a note, then the outcome. */
  async function followJob() {
    const note = addNote(TEXTS.working);
    note.dataset.testid = "job-progress";
    try {
      // The server may serve the stream as a poll (its live streams are all taken) or
      // end it for a newer one: `again` says when to ask again; the outcome is `turn`.
      for (let again = 0; again >= 0;) {
        if (again) await pause(again * 1000);
        // The job this page saw: an outcome its old stream delivered is told here too.
        const job = currentView.job && currentView.job.id;
        const path = "/api/session/events" + (job ? "?job=" + encodeURIComponent(job) : "");
        const response = await api("GET", path, undefined, "text/event-stream");
        again = -1;
        await readEvents(response, (event, data) => {
          if (event === "job") {
            render(data);
            if (data.job && data.job.progress) note.textContent = data.job.progress;
          } else if (event === "turn") {
            render(data);
            if (data.reply) addMessage("assistant", data.reply);
          } else if (event === "again" && currentView.state === "executing") {
            again = againSeconds(data);
          }
        });
      }
    } catch (err) {
      toast(errorText(err));
    } finally {
      note.remove();
    }
  }

  function pause(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  /** The seconds an `again` event (or a 429/503's Retry-After) asks to wait: 1 to 60. */
  function againSeconds(data) {
    const seconds = Number(data && data.seconds);
    return Math.min(60, Math.max(1, Number.isFinite(seconds) ? seconds : 5));
  }

  // -- a person answering (hand-off tickets) -------------------------------------

  let handoffNumber = null; // the ticket followed
  let handoffSeq = 0; // its last message shown (or sent from this page)
  let handoffNote = null; // the status note shown last (not shown twice in a row)
  let handoffBanner = null;

  function showHandoff(state, staff, number) {
    if (!handoffBanner) {
      handoffBanner = document.createElement("p");
      handoffBanner.className = "msg-note";
      handoffBanner.dataset.testid = "handoff-status";
      handoffBanner.setAttribute("role", "status");
      els.messages.parentNode.insertBefore(handoffBanner, els.messages);
    }
    handoffBanner.hidden = !state || state === "closed";
    handoffBanner.dataset.state = state || "";
    handoffBanner.textContent = state === "held" ? fill(TEXTS.handoffHeld, { staff: staff || "" })
      : fill(TEXTS.handoffWaiting, { number: number || "" });
  }

  /** Follow the session's open ticket: a person's replies and the ticket's status, live.
   * Messages the citizen sent from this page are not shown again; a page loaded again
   * (restored) shows them too. */
  async function followHandoff(handoff, restored) {
    if (!handoff) {
      if (handoffNumber) { handoffNumber = null; showHandoff(null); }
      return;
    }
    if (handoff.seq > handoffSeq) handoffSeq = handoff.seq;
    showHandoff(handoff.state, handoff.staff, handoff.number);
    if (handoffNumber === handoff.number) return;
    const number = handoff.number;
    handoffNumber = number;
    let failures = 0;
    let closed = false;
    let again = 0; // seconds to wait before asking again (a poll, or a stream taken over)
    while (handoffNumber === number && !closed) {
      if (again) await pause(again * 1000);
      again = 0;
      if (handoffNumber !== number) break;
      try {
        const path = "/api/session/handoff/events?ticket=" + encodeURIComponent(number) +
          "&after=" + handoffSeq;
        const response = await api("GET", path, undefined, "text/event-stream");
        failures = 0;
        await readEvents(response, (event, data) => {
          if (handoffNumber !== number) return;
          if (event === "again") {
            again = againSeconds(data);
          } else if (event === "message" && data.seq > handoffSeq) {
            handoffSeq = data.seq;
            if (data.sender === "staff") addMessage("staff", data.text);
            else if (data.sender === "system") addMessage("assistant", data.text);
            else if (restored) addMessage("user", data.text);
            keepDown();
          } else if (event === "status") {
            showHandoff(data.state, data.staff, number);
            // (a reconnect is told again that the person's connection ended: shown once)
            if (data.text && data.text !== handoffNote) addNote(data.text);
            handoffNote = data.state === "held" ? null : data.text || handoffNote;
            if (data.state === "closed") closed = true;
          }
        });
      } catch (err) {
        if (err instanceof ApiError && (err.status === 429 || err.status === 503)) {
          // busy or briefly unavailable: keep following, more slowly each time
          failures = Math.min(failures + 1, 5);
          again = againSeconds({ seconds: Math.max(err.retryAfter || 0, 2 * failures) });
          continue;
        }
        failures += 1;
        if (failures > 5 || (err instanceof ApiError && err.status === 404)) break;
        await pause(2000 * failures);
      }
      restored = false;
    }
    if (handoffNumber === number) { handoffNumber = null; showHandoff(null); }
  }

  async function submitInput() {
    const text = els.input.value;
    const problem = checkMessage(text);
    if (problem) {
      toast(problem);
      els.input.focus();
      return;
    }
    if (busy) return;
    els.input.value = "";
    updateInput();
    const ok = await send(text);
    if (!ok && !els.input.value) {
      els.input.value = text; // let the user resend what did not go through
      updateInput();
    }
  }

  async function reset() {
    if (busy) return;
    setBusy(true);
    try {
      const response = await api("DELETE", "/api/session");
      const view = await response.json();
      els.messages.replaceChildren();
      render(view);
      followHandoff(view.handoff, false);
      hideToast();
      greet();
    } catch (err) {
      toast(errorText(err));
    } finally {
      setBusy(false);
      focusInputIfLost();
    }
  }

  /** 修改: which item, as buttons ("修改姓名"), or typed after "修改" in the box. */
  function modify() {
    const fields = Array.isArray(currentView.fields) ? currentView.fields : [];
    showChoices(fields.map((f) => fill(TEXTS.modifyItem, { label: f.label })));
    els.input.value = TEXTS.send.modify;
    updateInput();
    els.input.focus();
    els.input.setSelectionRange(els.input.value.length, els.input.value.length);
  }

  async function restore() {
    const response = await api("GET", "/api/session");
    const view = await response.json();
    const past = await loadHistory();
    if (inProgress(view) && view.state !== "executing" && past.idle_seconds > PAUSE_ASK_SECONDS) {
      askResume(view, past.messages); // not shown (nor resumed) before the citizen says so
      return;
    }
    resumeView(view, past.messages);
  }

  // -- a page loaded again, a shared computer -------------------------------------

  /** The recent messages as the page showed them (from the server, not the browser). */
  async function loadHistory() {
    const response = await api("GET", "/api/session/history");
    const body = await response.json();
    return {
      messages: Array.isArray(body.messages) ? body.messages : [],
      idle_seconds: typeof body.idle_seconds === "number" ? body.idle_seconds : 0,
    };
  }

  /** Show the conversation again and the panel; follow a submission still running. */
  function resumeView(view, messages) {
    for (const m of messages) {
      if (m.role !== "user" && m.role !== "assistant") continue;
      addMessage(m.role, m.text).dataset.restored = "true";
    }
    render(view);
    if (view.business && view.state !== "idle" && view.state !== "done") {
      // While it is submitted, 重新开始 is refused: the note does not offer it then.
      const note = view.state === "executing" ? TEXTS.restoredRunning : TEXTS.restored;
      addNote(fill(note, { name: view.business.name, state: STATE_LABELS[view.state] || "" }));
    }
    // A submission still running, or an outcome that arrived while the page was away.
    if (view.state === "executing" || view.notice) followJob();
    followHandoff(view.handoff, true);
  }

  /** Whether starting again would lose something the citizen began. */
  function inProgress(view) {
    const working = view.business && view.state !== "idle" && view.state !== "done";
    return Boolean(working || (Array.isArray(view.suspended) && view.suspended.length));
  }

  function askResume(view, messages) {
    render({ state: "idle", fields: [] });
    const name = view.business ? view.business.name : (view.suspended[0] || {}).name;
    setComposerOpen(false);
    ask(fill(TEXTS.askResume, { name }), [
      { key: "resume", label: TEXTS.choice.resume, primary: true },
      { key: "startOver", label: TEXTS.choice.startOver },
    ], "resume").then((choice) => {
      setComposerOpen(true);
      if (choice === "resume") resumeView(view, messages);
      else if (choice === "startOver") reset();
    });
  }

  /** Until the citizen answers the question: no typing, and its own choices only. */
  function setComposerOpen(open) {
    for (const b of [els.input, els.send, els.reset, els.end]) b.disabled = !open || busy;
  }

  /**
   * A question in the conversation with one button per choice; resolves to the key
   * of the one chosen ("keep" when another question replaces it). Not a window.confirm:
   * an embedded page may not open dialogs, and this one is read out with the log.
   */
  let pendingAsk = null;
  function ask(question, choices, focusKey) {
    if (pendingAsk) pendingAsk("keep");
    return new Promise((resolve) => {
      const card = document.createElement("div");
      card.className = "ask";
      card.dataset.testid = "ask";
      card.setAttribute("role", "group");
      const text = document.createElement("p");
      text.className = "ask-text";
      text.id = "ask-text-" + Date.now();
      text.dataset.testid = "ask-text";
      text.textContent = question;
      card.setAttribute("aria-labelledby", text.id);
      const row = document.createElement("div");
      row.className = "ask-choices";
      const done = (key) => {
        pendingAsk = null;
        card.remove();
        resolve(key);
      };
      for (const choice of choices) {
        const button = document.createElement("button");
        button.type = "button";
        button.className = "btn " + (choice.primary ? "btn-primary" : "btn-secondary");
        button.dataset.testid = "ask-" + choice.key;
        button.textContent = choice.label;
        button.addEventListener("click", () => done(choice.key));
        row.append(button);
      }
      card.addEventListener("keydown", (e) => {
        if (e.key === "Escape" && choices.some((c) => c.key === "keep")) {
          e.stopPropagation();
          done("keep");
          focusInputIfLost();
        }
      });
      card.append(text, row);
      pendingAsk = done;
      followBottom = true;
      els.messages.append(card);
      const first = row.querySelector(`[data-testid="ask-${focusKey}"]`) || row.firstChild;
      first.focus();
    });
  }

  /** 重新开始: asks first when a business is in progress. */
  async function confirmReset() {
    if (busy) return;
    if (inProgress(currentView)) {
      const name = currentView.business ? currentView.business.name
        : (currentView.suspended[0] || {}).name;
      const choice = await ask(fill(TEXTS.askReset, { name }), [
        { key: "reset", label: TEXTS.choice.reset, primary: true },
        { key: "keep", label: TEXTS.choice.keep },
      ], "keep");
      if (choice !== "reset") {
        focusInputIfLost();
        return;
      }
    }
    await reset();
  }

  /** Forget ``key`` in ``store`` ("localStorage" or "sessionStorage") and its memory stand-in. */
  function storageRemove(store, key) {
    delete memoryStore[store][key];
    try { window[store].removeItem(key); } catch (e) { /* blocked: only the memory copy was kept */ }
  }

  /**
   * 结束办理 (a shared computer): after a confirm, the session is deleted on the
   * server (its token revoked) and the page forgets the identity it kept, so the
   * next person starts as a new citizen.
   */
  async function endSession() {
    if (busy) return;
    const choice = await ask(TEXTS.askEnd, [
      { key: "end", label: TEXTS.choice.end, primary: true },
      { key: "keep", label: TEXTS.choice.keep },
    ], "keep");
    if (choice !== "end") {
      focusInputIfLost();
      return;
    }
    setBusy(true);
    try {
      if (currentToken()) await api("DELETE", "/api/session");
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) { // a submission's outcome comes first
        toast(errorText(err));
        setBusy(false);
        return;
      }
      // Unreachable server: the identity is forgotten all the same (the session expires).
    }
    accessToken = null;
    storageRemove("sessionStorage", STORAGE_TOKEN);
    storageRemove("localStorage", STORAGE_USER);
    els.messages.replaceChildren();
    els.input.value = "";
    updateInput();
    render({ state: "idle", fields: [] });
    hideToast();
    greet();
    addNote(TEXTS.ended);
    setBusy(false);
    focusInputIfLost();
  }

  async function loadJson(path) {
    const response = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store" });
    if (!response.ok) throw await apiErrorFrom(response);
    return response.json();
  }

  function bind() {
    els.form.addEventListener("submit", (e) => {
      e.preventDefault();
      submitInput();
    });
    els.input.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" || e.shiftKey || e.isComposing || e.keyCode === 229) return;
      e.preventDefault();
      submitInput();
    });
    els.input.addEventListener("input", updateInput);
    els.suggestion.addEventListener("click", () => send(TEXTS.send.accept));
    els.uploadInput.addEventListener("change", () => uploadPhoto(els.uploadInput.files[0]));
    els.uploadCamera.addEventListener("change", () => uploadPhoto(els.uploadCamera.files[0]));
    els.confirm.addEventListener("click", () => send(TEXTS.send.confirm));
    els.retry.addEventListener("click", () => send(TEXTS.send.retry));
    els.cancel.addEventListener("click", () => send(TEXTS.send.cancel));
    els.modify.addEventListener("click", modify);
    els.reset.addEventListener("click", confirmReset);
    els.end.addEventListener("click", endSession);
    els.toggle.addEventListener("click", () => setPanelOpen(els.panel.dataset.open !== "true"));
    els.close.addEventListener("click", () => setPanelOpen(false));
    els.backdrop.addEventListener("click", () => setPanelOpen(false));
    els.toastClose.addEventListener("click", hideToast);
    els.mic.addEventListener("click", toggleRecording);
    els.readAloud.addEventListener("click", toggleReadAloud);
    document.addEventListener("keydown", (e) => {
      if (e.key !== "Escape") return;
      if (els.panel.dataset.open === "true" && NARROW.matches) setPanelOpen(false);
      else if (!els.toast.hidden) hideToast();
      else if (EMBEDDED) window.parent.postMessage(CLOSE_MESSAGE, "*"); // a constant, no data
    });
    NARROW.addEventListener("change", () => setPanelOpen(false, false));
  }

  async function init() {
    if (EMBEDDED) {
      els.app.dataset.embed = "true";
      window.parent.postMessage(READY_MESSAGE, "*"); // a constant: the widget shows the frame
    }
    bind();
    watchScrolling();
    const [cfg, businesses] = await Promise.allSettled([
      loadJson("/ui-config.json"), loadJson("/api/businesses"),
    ]);
    if (cfg.status === "fulfilled") config = { ...config, ...cfg.value };
    else toast(errorText(cfg.reason));
    els.mic.hidden = !(config.voice && voiceSupported());
    if ("speechSynthesis" in window) {
      showReadAloud();
      window.speechSynthesis.addEventListener("voiceschanged", showReadAloud);
    }
    if (businesses.status === "fulfilled" && Array.isArray(businesses.value)) {
      offered = businesses.value.filter((b) => b.online !== false)
        .map((b) => ({ id: b.id, name: b.name }));
    }
    updateInput();
    greet();
    try {
      await restore();
    } catch (err) {
      render({ state: "idle", fields: [] });
      toast(errorText(err));
    }
    els.app.dataset.ready = "true";
    if (EMBEDDED) focusInputIfLost(); // focused when the widget focuses its frame
  }

  init();
})();
