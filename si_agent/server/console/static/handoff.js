/* The hand-off pages of the staff console (console/handoff*.html).
 * Queue: keeps the staff member at the queue (a heartbeat) and refreshes the list.
 * Ticket: renews the hold while the page is open, and shows the citizen's new messages.
 * A page that is closed or dies stops both: the ticket returns to the queue. */
(function () {
  "use strict";

  function post(url, csrf) {
    return fetch(url, { method: "POST", headers: { "X-CSRFToken": csrf, Accept: "application/json" },
      credentials: "same-origin", cache: "no-store" });
  }

  const queue = document.getElementById("handoff-queue");
  if (queue) {
    const every = Number(queue.dataset.beat || 10) * 1000;
    setInterval(function () {
      post(queue.dataset.presenceUrl, queue.dataset.csrf).then(function () {
        // the list with fresh waiting times; the heartbeat came first
        if (!document.querySelector("form:focus-within")) window.location.reload();
      }).catch(function () {});
    }, every);
  }

  const ticket = document.getElementById("handoff-ticket");
  if (!ticket) return;
  const every = Number(ticket.dataset.beat || 10) * 1000;
  let last = Number(ticket.dataset.last || 0);
  const list = document.getElementById("ticket-messages");
  const names = { citizen: "市民", system: "系统" };

  function show(m) {
    if (m.seq <= last) return;
    last = m.seq;
    const li = document.createElement("li");
    li.dataset.seq = String(m.seq);
    li.dataset.sender = m.sender;
    const who = document.createElement("strong");
    who.textContent = (m.sender === "staff" ? (m.staff || "客服") : names[m.sender]) + "：";
    li.append(who, document.createTextNode(m.text));
    list.append(li);
  }

  function poll() {
    fetch(ticket.dataset.messagesUrl + "?after=" + last, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) { if (body) body.messages.forEach(show); })
      .catch(function () {});
  }
  setInterval(poll, 2000);

  if (ticket.dataset.held === "true") {
    setInterval(function () {
      post(ticket.dataset.renewUrl, ticket.dataset.csrf).then(function (r) {
        if (r.status === 409) {
          const lost = document.querySelector("[data-testid=lease-lost]");
          if (lost) lost.hidden = false;
        }
      }).catch(function () {});
    }, every);
  }
})();
