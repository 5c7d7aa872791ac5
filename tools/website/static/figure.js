// Figures on a phone: a tap on a figure opens it full-screen at its own pixel size (the 80-dpi PNGs'
// 10 pt text is then 11 CSS px), in a box that scrolls both ways; Escape, the close button or a tap
// outside the image closes it. Without JavaScript the figure's link opens the PNG itself.
(function () {
  "use strict";
  var closeWord = document.body.dataset.figureClose || "Close";
  var dialog = null;

  function viewer() {
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.className = "figure-viewer";
    dialog.innerHTML = '<button type="button" class="figure-close"></button><div class="figure-pane"><img alt=""></div>';
    var button = dialog.querySelector(".figure-close");
    button.textContent = "×";
    button.setAttribute("aria-label", closeWord);
    button.title = closeWord;
    button.addEventListener("click", function () { dialog.close(); });
    dialog.addEventListener("click", function (ev) { if (ev.target === dialog || ev.target.className === "figure-pane") dialog.close(); });
    dialog.addEventListener("close", function () { document.documentElement.classList.remove("figure-open"); });
    document.body.appendChild(dialog);
    return dialog;
  }

  document.querySelectorAll("a.figure-link").forEach(function (link) {
    link.addEventListener("click", function (ev) {
      var small = link.querySelector("img");
      if (!small || ev.ctrlKey || ev.metaKey || ev.shiftKey || typeof HTMLDialogElement === "undefined") return;
      if (small.naturalWidth && small.clientWidth >= small.naturalWidth) return;   // shown at full size already
      ev.preventDefault();
      var d = viewer(), img = d.querySelector("img");
      img.src = small.currentSrc || small.src;
      img.alt = small.alt;
      if (small.naturalWidth) { img.width = small.naturalWidth; img.height = small.naturalHeight; }
      document.documentElement.classList.add("figure-open");
      d.showModal();
      d.querySelector(".figure-pane").scrollTo(0, 0);
    });
  });
})();
