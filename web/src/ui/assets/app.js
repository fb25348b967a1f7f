// hetsim's web UI: comfort on top of pages that work without it.
"use strict";

// A select marked data-autosubmit submits its form when changed (filters, plot choices).
// One marked data-reload reloads the launch form with the new choice (the system's labels
// and the app's variables change with it).
function wireAutosubmit() {
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.submit());
  }
  for (const select of document.querySelectorAll("select[data-reload]")) {
    select.addEventListener("change", () => {
      const form = select.form;
      const query = new URLSearchParams();
      for (const name of ["app", "system", "queue"]) {
        query.set(name, form.elements[name].value);
      }
      window.location.search = query.toString();
    });
  }
}

// The launch form's run count: the product of the comma lists' lengths.
function wireRunCount() {
  const form = document.getElementById("launch");
  const output = document.getElementById("run-count");
  const button = form && form.querySelector("button[type=submit]");
  // Without an app and a system there is nothing to count (the page says so).
  if (!form || !output || (button && button.disabled)) return;
  const update = () => {
    let runs = 1;
    for (const input of form.querySelectorAll("input.count")) {
      const text = input.value.trim();
      if (text !== "") runs *= text.split(",").length;
    }
    output.textContent = runs === 1 ? "1 run" : `${runs} runs (a sweep)`;
  };
  form.addEventListener("input", update);
  update();
}

// The editor's line numbers follow the text while typing and scroll with it.
function wireEditors() {
  for (const editor of document.querySelectorAll(".editor")) {
    const gutter = editor.querySelector(".gutter");
    const text = editor.querySelector("textarea");
    const bad = Number(editor.dataset.errorLine || 0);
    const number = () => {
      const lines = text.value.split("\n").length;
      if (gutter.childElementCount === lines) return;
      gutter.replaceChildren();
      for (let n = 1; n <= lines; n++) {
        const span = document.createElement("span");
        span.id = `line-${n}`;
        if (n === bad) span.className = "bad";
        span.textContent = `${n}\n`;
        gutter.appendChild(span);
      }
    };
    text.addEventListener("input", number);
    text.addEventListener("scroll", () => { gutter.scrollTop = text.scrollTop; });
    text.addEventListener("keydown", (event) => {
      if (event.key !== "Tab") return;
      event.preventDefault();
      text.setRangeText("    ", text.selectionStart, text.selectionEnd, "end");
      number();
    });
    if (bad > 0) {
      const lineHeight = text.scrollHeight / text.value.split("\n").length;
      text.scrollTop = Math.max(0, (bad - 3) * lineHeight);
    }
  }
}

// A form marked data-confirm (cancel, delete) asks before it posts.
function wireConfirmations() {
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  wireConfirmations();
  wireAutosubmit();
  wireRunCount();
  wireEditors();
});
