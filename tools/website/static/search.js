// Offline search over window.ATTN_SEARCH (assets/search-index.js, written by tools/website/build.py).
// Vietnamese: every text and the query are folded (lower case, NFD without combining marks, đ -> d),
// so "chú ý" and "chu y" find the same places, and a term matches whole syllables only ("trái"
// does not find "train", "mặt nạ" not "math"); Chinese: substring match, so any word is found
// without a word segmenter. Results are grouped by page, best page first.
(function () {
  "use strict";
  var MARKS = /[\u0300-\u036f]/g;

  function foldChar(c) {
    var code = c.charCodeAt(0);
    if (code < 0x80) return c.toLowerCase();
    if (code >= 0x2e80) return c;                       // CJK and beyond: unchanged
    return c.toLowerCase().normalize("NFD").replace(MARKS, "").replace(/đ/g, "d");
  }

  // Folded text and, for each folded character, the index of the raw character it came from.
  function foldWithMap(text) {
    var out = [], map = [];
    for (var i = 0; i < text.length; i++) {
      var f = foldChar(text[i]);
      for (var j = 0; j < f.length; j++) { out.push(f[j]); map.push(i); }
    }
    return { text: out.join(""), map: map };
  }

  function fold(text) { return foldWithMap(text).text; }

  function terms(query) {
    return fold(query).split(/[\s,.;:!?，。；：！？、]+/).filter(function (t) { return t.length > 0; });
  }

  var WORD = /[a-z0-9_]/;                               // folded Latin letters and digits
  // Where ``needle`` occurs in ``hay`` from ``from`` on; whole words (syllables) only if ``whole``.
  function find(hay, needle, from, whole) {
    var i = hay.indexOf(needle, from);
    while (whole && i !== -1 && ((i > 0 && WORD.test(hay[i - 1])) ||
                                 (i + needle.length < hay.length && WORD.test(hay[i + needle.length])))) {
      i = hay.indexOf(needle, i + 1);
    }
    return i;
  }

  function count(hay, needle, whole) {
    var n = 0, i = find(hay, needle, 0, whole);
    while (i !== -1) { n++; i = find(hay, needle, i + needle.length, whole); }
    return n;
  }

  function escapeHtml(s) {
    return s.replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  }

  function snippet(doc, ts, whole) {
    var f = doc.fx || (doc.fx = foldWithMap(doc.x));
    var at = -1, len = 0;
    ts.forEach(function (t) { var i = find(f.text, t, 0, whole); if (i !== -1 && (at === -1 || i < at)) { at = i; len = t.length; } });
    if (at === -1) return escapeHtml(doc.x.slice(0, 160));
    var start = f.map[at], end = f.map[Math.min(at + len, f.map.length) - 1] + 1;
    var from = Math.max(0, start - 70), to = Math.min(doc.x.length, end + 90);
    return (from > 0 ? "… " : "") + escapeHtml(doc.x.slice(from, start)) + "<mark>" + escapeHtml(doc.x.slice(start, end)) +
      "</mark>" + escapeHtml(doc.x.slice(end, to)) + (to < doc.x.length ? " …" : "");
  }

  function search(docs, query, lang) {
    var ts = terms(query);
    if (!ts.length) return [];
    var raw = query.trim().toLowerCase();
    var whole = lang === "vi";                           // syllables; Chinese: substrings
    var pages = {};
    docs.forEach(function (doc) {
      if (doc.l !== lang) return;
      if (doc.ft === undefined) { doc.ft = fold(doc.t); doc.fp = fold(doc.p); doc.fxt = fold(doc.x); }
      // per section: damped count in the text, strong weight on section and page titles
      var score = 0;
      for (var k = 0; k < ts.length; k++) {
        var inText = count(doc.fxt, ts[k], whole), inTitle = count(doc.ft, ts[k], whole),
            inPage = count(doc.fp, ts[k], whole);
        if (!inText && !inTitle) return;                 // every term must occur in the section
        score += 1 + Math.log(1 + inText) + (inTitle ? 8 : 0) + (inPage ? 12 : 0);
      }
      var phrase = ts.join(" ");
      if (ts.length > 1) {                               // the words together, as a phrase
        var inTextP = count(doc.fxt, phrase, whole);
        score += (count(doc.ft, phrase, whole) ? 10 : 0) + (inTextP ? 2 + Math.log(1 + inTextP) : 0);
      }
      // a heading that starts with the query names the section's subject ("3. 因果掩码：…")
      if (find(doc.ft.replace(/^[\d.\s]+/, ""), phrase, 0, whole) === 0) score += 6;
      if (raw && (doc.x.toLowerCase().indexOf(raw) !== -1 || doc.t.toLowerCase().indexOf(raw) !== -1)) score *= 1.5;
      var url = doc.u.split("#")[0];
      var page = pages[url] || (pages[url] = { url: url, title: doc.p, score: 0, sections: [] });
      page.sections.push({ doc: doc, score: score });
    });
    var list = Object.keys(pages).map(function (k) { return pages[k]; });
    // a page: its best section, plus a quarter of the others (many passing mentions rank below one topic)
    list.forEach(function (p) {
      p.sections.sort(function (a, b) { return b.score - a.score; });
      p.score = p.sections.reduce(function (acc, s, i) { return acc + (i ? 0.25 : 1) * s.score; }, 0);
    });
    list.sort(function (a, b) { return b.score - a.score; });
    return list.map(function (p) { p.terms = ts; p.whole = whole; return p; });
  }

  function render(results, query, lang, root) {
    var ui = window.ATTN_UI || {};
    var word = function (key) { return (ui[key] && (ui[key][lang] || ui[key].en)) || ""; };
    var status = document.getElementById("search-status");
    var list = document.getElementById("search-results");
    list.innerHTML = "";
    if (!query.trim()) { status.textContent = ""; return; }
    status.textContent = (results.length ? word("search_count") : word("search_none"))
      .replace("{n}", String(results.length)).replace("{q}", query.trim());
    results.slice(0, 30).forEach(function (page) {
      var li = document.createElement("li");
      var html = '<a class="result-page" href="' + escapeHtml(root + page.url) + '">' + escapeHtml(page.title) + "</a>";
      html += '<ul class="sections">';
      page.sections.slice(0, 3).forEach(function (s) {
        html += '<li><a href="' + escapeHtml(root + s.doc.u) + '">' + escapeHtml(s.doc.t) + "</a><br>" + snippet(s.doc, page.terms, page.whole) + "</li>";
      });
      li.innerHTML = html + "</ul>";
      list.appendChild(li);
    });
  }

  window.attnSearch = { fold: fold, search: search };

  var list = document.getElementById("search-results");
  if (!list || !window.ATTN_SEARCH) return;
  var lang = list.dataset.lang, root = list.dataset.root || "";
  var input = document.getElementById("search-q");
  var params = new URLSearchParams(window.location.search);
  var q = params.get("q") || "";
  input.value = q;
  function run() { render(search(window.ATTN_SEARCH, input.value, lang), input.value, lang, root); }
  input.addEventListener("input", run);
  input.form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var url = new URL(window.location.href);
    url.searchParams.set("q", input.value);
    window.history.replaceState(null, "", url.toString());
    run();
  });
  run();
})();
