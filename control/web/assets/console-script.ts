/**
 * The listing console's only script (served as /assets/console.<hash>.js, loaded by the "Try it" section): it posts
 * the console's forms with fetch and swaps the section in place, so the page does not reload and focus lands on the
 * result. Without it (or when it fails) the same forms post as plain HTML forms and get the same answer.
 */
export const CONSOLE_JS = `"use strict";
document.addEventListener("submit", async function (ev) {
  var form = ev.target;
  if (!(form instanceof HTMLFormElement) || form.dataset.plain) return;
  if (!form.hasAttribute("data-console-form") && !form.hasAttribute("data-console-cap")) return;
  var section = form.closest("[data-console]");
  if (!section) return;
  ev.preventDefault();
  var submitter = ev.submitter;
  var data = new FormData(form);
  if (submitter && submitter.name) data.set(submitter.name, submitter.value);
  section.setAttribute("aria-busy", "true");
  var buttons = section.querySelectorAll("button");
  buttons.forEach(function (b) { b.disabled = true; });
  try {
    // getAttribute: the form's "action" button shadows the form.action property.
    var res = await fetch(form.getAttribute("action") || location.href, { method: "POST", body: new URLSearchParams(data), credentials: "same-origin" });
    var doc = new DOMParser().parseFromString(await res.text(), "text/html");
    var fresh = doc.getElementById("try");
    if (!fresh) throw new Error("no console in the answer");
    section.replaceWith(fresh);
    var target = fresh.querySelector("[aria-invalid=true]") || fresh.querySelector(".notice.error[role=alert]") ||
      (fresh.querySelector("#try-result h3") ? fresh.querySelector("#try-result") : fresh.querySelector("#try-title"));
    if (target) target.focus();
  } catch (e) {
    buttons.forEach(function (b) { b.disabled = false; });
    section.removeAttribute("aria-busy");
    form.dataset.plain = "1";
    form.requestSubmit(submitter || undefined);
  }
});
`;
