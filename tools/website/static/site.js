// Copy buttons on every code cell (no external library).
(function () {
  "use strict";
  var d = document.body.dataset;   // the words, in the page's language, from tools/website/ui.json
  var w = { copy: d.copy || "Copy", copied: d.copied || "Copied", failed: d.copyFailed || "Copy failed",
            label: d.copyLabel || "Copy this code" };

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy"));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return fallbackCopy(text); });
    }
    return fallbackCopy(text);
  }

  document.querySelectorAll(".code-wrap").forEach(function (wrap) {
    var pre = wrap.querySelector("pre");
    if (!pre) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.textContent = w.copy;
    button.setAttribute("aria-label", w.label);
    button.addEventListener("click", function () {
      copy(pre.innerText).then(function () { button.textContent = w.copied; },
                                function () { button.textContent = w.failed; });
      setTimeout(function () { button.textContent = w.copy; }, 2000);
    });
    wrap.appendChild(button);
  });

  // Scrollable blocks (wide outputs, formulas, tables) must be reachable by keyboard.
  function markScrollable() {
    document.querySelectorAll("pre, .math-display, .math-inline, .table-wrap").forEach(function (el) {
      if (el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight) el.setAttribute("tabindex", "0");
      else if (el.getAttribute("tabindex") === "0") el.removeAttribute("tabindex");
    });
  }
  markScrollable();
  // A block's width changes after this script runs (web fonts, images, the window): mark it again then.
  window.addEventListener("resize", markScrollable);
  window.addEventListener("load", markScrollable);
  if (document.fonts && document.fonts.ready) document.fonts.ready.then(markScrollable);
  if (window.ResizeObserver) {
    var observer = new ResizeObserver(markScrollable);
    document.querySelectorAll("pre, .math-display, .math-inline, .table-wrap").forEach(function (el) {
      observer.observe(el);
      if (el.firstElementChild) observer.observe(el.firstElementChild);
    });
  }

  // Search works with JavaScript only: its forms are hidden in the HTML and shown here.
  document.querySelectorAll("form.search-form[hidden], form.search-page-form[hidden]").forEach(function (f) {
    f.hidden = false;
  });

  // On a phone the lesson list starts folded, so that the lesson's title is on the first screen.
  if (window.matchMedia && window.matchMedia("(max-width: 50em)").matches) {
    document.querySelectorAll("details.lesson-nav[open]").forEach(function (d) { d.open = false; });
  }
})();
