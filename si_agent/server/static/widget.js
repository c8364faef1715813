/*
 * si_agent widget: the assistant as a floating button on another site.
 *
 *   <script src="https://HOST/widget.js" data-title="社保智能帮办" defer></script>
 *
 * Optional: data-position="left" (default right). The button opens a panel holding
 * an iframe of HOST's chat page (/?embed=1), so the conversation, the citizen's
 * token and everything typed stay on HOST's origin: the host page sees none of it.
 * HOST must list the site in SI_EMBED_ORIGINS, or the browser refuses the frame.
 *
 * Everything the widget draws sits in a shadow root, so the host page's styles and
 * the widget's do not touch each other. Plain ES5, no eval, no inline handlers.
 * The chat page sends this script two constant messages and nothing else:
 * "si-agent:ready" (it runs in the frame) and "si-agent:close" (Esc in the frame).
 * A frame that is not ready soon after it loaded (the site is not in
 * SI_EMBED_ORIGINS, the assistant is down) is replaced by a link that opens the
 * assistant in a new window.
 *
 * window.SiAgentWidget: open(), close(), toggle(), isOpen().
 */
(function () {
  "use strict";

  if (window.SiAgentWidget) return; // the snippet was included twice

  var DEFAULT_TITLE = "社保智能帮办";
  var CLOSE_MESSAGE = "si-agent:close";
  var READY_MESSAGE = "si-agent:ready";
  var READY_GRACE_MS = 3000; // after the frame's load event
  var FONTS = '"PingFang SC", "Hiragino Sans GB", "Microsoft YaHei", "Noto Sans CJK SC", ' +
    '"Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei", system-ui, sans-serif';
  var CSS = [
    ":host { all: initial; }",
    "[hidden] { display: none !important; }",
    ".box, .box * { box-sizing: border-box; }",
    ".launcher { position: fixed; right: 20px; bottom: 20px; z-index: 2147483000;",
    "  display: flex; align-items: center; gap: 8px; min-height: 48px; margin: 0;",
    "  padding: 6px 18px 6px 6px; border: 2px solid #fff; border-radius: 999px;",
    "  background: #1659a8; color: #fff; font: 600 16px/1.2 " + FONTS + ";",
    "  box-shadow: 0 4px 14px rgba(13, 58, 110, .35); cursor: pointer; }",
    ".launcher:hover { background: #114a8b; }",
    ".launcher:focus-visible, .close:focus-visible { outline: 3px solid #0b2e5c; outline-offset: 3px; }",
    ".mark { display: inline-flex; align-items: center; justify-content: center;",
    "  width: 34px; height: 34px; border-radius: 50%; background: #fff; color: #114a8b;",
    "  font-weight: 700; flex: none; }",
    ".panel { position: fixed; right: 20px; bottom: 84px; z-index: 2147483001;",
    "  display: flex; flex-direction: column; width: 400px; height: 640px;",
    "  max-width: calc(100vw - 40px); max-height: calc(100vh - 104px);",
    "  background: #f2f5f9; border: 1px solid #d5dfeb; border-radius: 12px; overflow: hidden;",
    "  box-shadow: 0 12px 40px rgba(13, 58, 110, .3); font: 16px/1.4 " + FONTS + "; }",
    ".head { display: flex; align-items: center; justify-content: space-between; gap: 8px;",
    "  padding: 6px 8px 6px 16px; background: #114a8b; color: #fff;",
    "  border-bottom: 3px solid #c9a14a; }",
    ".title { margin: 0; font-size: 16px; font-weight: 600; overflow: hidden;",
    "  white-space: nowrap; text-overflow: ellipsis; }",
    ".close { flex: none; min-width: 44px; min-height: 40px; margin: 0; padding: 4px 12px;",
    "  border: 1px solid rgba(255, 255, 255, .6); border-radius: 8px; background: transparent;",
    "  color: #fff; font: inherit; cursor: pointer; }",
    ".close:hover { background: rgba(255, 255, 255, .14); }",
    ".close:focus-visible { outline-color: #fff; }",
    ".frame { flex: 1; display: block; width: 100%; min-height: 0; border: 0; }",
    ".notice { margin: 0; padding: 24px 16px; color: #1e293b; }",
    ".notice a { color: #1659a8; font-weight: 600; }",
    ".notice a:focus-visible { outline: 3px solid #0b2e5c; outline-offset: 2px; }",
    ".left .launcher, .left .panel { right: auto; left: 20px; }",
    "@media (max-width: 480px) {",
    "  .launcher { right: 12px; bottom: 12px; }",
    "  .left .launcher { left: 12px; }",
    "  .panel, .left .panel { top: 0; right: 0; bottom: 0; left: 0; width: auto; height: auto;",
    "    max-width: none; max-height: none; border: 0; border-radius: 0; }",
    "}",
    "@media (prefers-reduced-motion: no-preference) {",
    "  .launcher { transition: background-color .15s; }",
    "}"
  ].join("\n");

  var script = document.currentScript || findScript();
  if (!script || !script.src) return;
  var origin = originOf(script.src);
  var title = (script.getAttribute("data-title") || "").trim() || DEFAULT_TITLE;
  var position = script.getAttribute("data-position") === "left" ? "left" : "right";
  var ui = null; // built on DOM ready: {launcher, panel, close, frame}
  var wanted = false; // open() called before the DOM was ready

  function findScript() {
    var scripts = document.getElementsByTagName("script");
    for (var i = scripts.length - 1; i >= 0; i--) {
      if (/\/widget\.js([?#]|$)/.test(scripts[i].src)) return scripts[i];
    }
    return null;
  }

  function originOf(url) {
    var a = document.createElement("a");
    a.href = url;
    return a.protocol + "//" + a.host;
  }

  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    for (var name in attributes) {
      if (Object.prototype.hasOwnProperty.call(attributes, name)) node.setAttribute(name, attributes[name]);
    }
    if (text) node.appendChild(document.createTextNode(text));
    return node;
  }

  function addStyles(root) {
    // A constructed sheet is not inline style, so a host page's strict CSP allows it.
    if (root.adoptedStyleSheets !== undefined && window.CSSStyleSheet) {
      try {
        var sheet = new CSSStyleSheet();
        sheet.replaceSync(CSS);
        root.adoptedStyleSheets = [sheet];
        return;
      } catch (e) { /* an older engine: a <style> element below */ }
    }
    root.appendChild(element("style", {}, CSS));
  }

  function build() {
    var host = element("si-agent-widget", { "data-testid": "si-agent-widget" });
    var root = host.attachShadow ? host.attachShadow({ mode: "open" }) : host;
    addStyles(root);
    var box = element("div", { "class": "box " + position });
    var launcher = element("button", {
      type: "button", "class": "launcher", "aria-expanded": "false",
      "aria-controls": "si-agent-panel", "data-testid": "si-agent-launcher"
    });
    launcher.appendChild(element("span", { "class": "mark", "aria-hidden": "true" }, "社"));
    launcher.appendChild(element("span", { "class": "label" }, title));
    var panel = element("div", {
      id: "si-agent-panel", "class": "panel", role: "dialog", "aria-label": title,
      "data-testid": "si-agent-panel"
    });
    panel.hidden = true;
    var head = element("div", { "class": "head" });
    head.appendChild(element("p", { "class": "title" }, title));
    var close = element("button", {
      type: "button", "class": "close", "aria-label": "关闭" + title, "data-testid": "si-agent-close"
    }, "关闭");
    head.appendChild(close);
    panel.appendChild(head);
    var notice = element("p", { "class": "notice", role: "status", "data-testid": "si-agent-notice" },
      "智能帮办暂时无法在本页打开，");
    notice.appendChild(element("a", { href: origin + "/", target: "_blank", rel: "noopener" },
      "请点此在新窗口中打开"));
    notice.appendChild(document.createTextNode("。"));
    notice.hidden = true;
    panel.appendChild(notice);
    // Until the frame says it is ready it stays invisible (a refused frame would show the
    // browser's error page): a line says it is opening.
    var loading = element("p", { "class": "notice", role: "status", "data-testid": "si-agent-loading" },
      "正在打开" + title + "……");
    loading.hidden = true;
    panel.appendChild(loading);
    box.appendChild(launcher);
    box.appendChild(panel);
    root.appendChild(box);
    document.body.appendChild(host);

    launcher.addEventListener("click", toggle);
    close.addEventListener("click", closePanel);
    box.addEventListener("keydown", function (event) {
      if ((event.key === "Escape" || event.key === "Esc") && !panel.hidden) {
        event.preventDefault();
        closePanel();
      }
    });
    window.addEventListener("message", function (event) {
      if (!ui.frame || event.source !== ui.frame.contentWindow || event.origin !== origin) return;
      if (event.data === CLOSE_MESSAGE) closePanel();
      else if (event.data === READY_MESSAGE) showFrame(true);
    });
    ui = { launcher: launcher, panel: panel, close: close, notice: notice, loading: loading,
      root: root, frame: null, ready: false };
    if (wanted) openPanel();
  }

  function openPanel() {
    if (!ui) { wanted = true; return; }
    if (!ui.frame) {
      // Made on first open only: a visitor who never opens it loads nothing more.
      ui.frame = element("iframe", {
        "class": "frame", title: title, src: origin + "/?embed=1", allow: "microphone",
        "data-testid": "si-agent-frame"
      });
      ui.frame.style.visibility = "hidden";
      ui.loading.hidden = false;
      ui.frame.addEventListener("load", function () {
        setTimeout(function () { if (!ui.ready) showFrame(false); }, READY_GRACE_MS);
        if (!ui.panel.hidden) ui.frame.focus();
      });
      ui.panel.appendChild(ui.frame);
    }
    ui.panel.hidden = false;
    ui.launcher.setAttribute("aria-expanded", "true");
    ui.frame.focus();
  }

  /** The frame (it said it is ready) or, in its place, the link to a new window. */
  function showFrame(ready) {
    var active = ui.root.activeElement !== undefined ? ui.root.activeElement : document.activeElement;
    ui.ready = ready;
    ui.loading.hidden = true;
    ui.frame.style.visibility = "";
    ui.frame.hidden = !ready;
    ui.notice.hidden = ready;
    // Focus follows what is shown, unless the visitor has moved it elsewhere meanwhile.
    var waiting = active === ui.frame || active === ui.launcher || active === null ||
      active === document.body;
    if (ui.panel.hidden || !waiting) return;
    if (ready) ui.frame.focus();
    else ui.notice.querySelector("a").focus();
  }

  function closePanel() {
    wanted = false;
    if (!ui || ui.panel.hidden) return;
    ui.panel.hidden = true;
    ui.launcher.setAttribute("aria-expanded", "false");
    ui.launcher.focus();
  }

  function toggle() {
    if (ui && !ui.panel.hidden) closePanel();
    else openPanel();
  }

  window.SiAgentWidget = {
    open: openPanel,
    close: closePanel,
    toggle: toggle,
    isOpen: function () { return Boolean(ui && !ui.panel.hidden); }
  };

  if (document.body) build();
  else document.addEventListener("DOMContentLoaded", build);
})();
