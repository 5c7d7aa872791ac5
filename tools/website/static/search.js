// Offline search over window.ATTN_SEARCH (assets/search-index.js, written by tools/website/build.py).
// Vietnamese: every text and the query are folded (lower case, NFD without combining marks, đ -> d),
// so "chú ý" and "chu y" find the same places, and a term matches whole syllables only ("trái"
// does not find "train", "mặt nạ" not "math"); Chinese: substring match, so any word is found
// without a word segmenter. Results are grouped by page, best page first.
// Vietnamese words that differ only by their marks fold to the same letters ("mất", "mát", "mặt" ->
// "mat"), so a query typed with marks looks for its marked syllables exactly: the sections that
// have every one of them as typed are the results (ranked by those syllables, which are what is
// highlighted); only if there are none, the folded matches are. A query without marks is folded.
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

  var LETTER = /[\p{L}\p{N}_]/u;                        // a syllable's neighbours, in any script
  function lowerNFC(text) { return text.normalize("NFC").toLowerCase(); }

  // The marked terms of a query, exactly as typed (lower case, NFC): "mất mát" -> ["mất", "mát"].
  function markedTerms(query) {
    return lowerNFC(query).split(/[\s,.;:!?，。；：！？、]+/).filter(function (t) { return t && fold(t) !== t; });
  }

  // Where ``needle`` occurs in ``hay`` (both lower case, NFC) as whole syllables, from ``from`` on.
  function findExact(hay, needle, from) {
    var i = hay.indexOf(needle, from);
    while (i !== -1 && ((i > 0 && LETTER.test(hay[i - 1])) ||
                        (i + needle.length < hay.length && LETTER.test(hay[i + needle.length])))) {
      i = hay.indexOf(needle, i + 1);
    }
    return i;
  }

  function countExact(hay, needle) {
    var n = 0, i = findExact(hay, needle, 0);
    while (i !== -1) { n++; i = findExact(hay, needle, i + needle.length); }
    return n;
  }

  function escapeHtml(s) {
    return s.replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  }

  function mark(text, start, end) {
    var from = Math.max(0, start - 70), to = Math.min(text.length, end + 90);
    return (from > 0 ? "… " : "") + escapeHtml(text.slice(from, start)) + "<mark>" + escapeHtml(text.slice(start, end)) +
      "</mark>" + escapeHtml(text.slice(end, to)) + (to < text.length ? " …" : "");
  }

  // The section's text around the first match: of the marked syllables as typed when the section
  // has them (``exact``), else of the folded terms.
  function snippet(doc, ts, whole, exact) {
    if (exact && exact.length) {
      var text = doc.xn || (doc.xn = doc.x.normalize("NFC")), low = doc.ex || (doc.ex = text.toLowerCase());
      if (low.length === text.length) {
        var phrase = exact.join(" "), first = findExact(low, phrase, 0), len = phrase.length;
        exact.forEach(function (t) { var i = findExact(low, t, 0); if (first === -1 && i !== -1) { first = i; len = t.length; } });
        if (first !== -1) return mark(text, first, first + len);
      }
    }
    var f = doc.fx || (doc.fx = foldWithMap(doc.x));
    var at = -1, len2 = 0;
    ts.forEach(function (t) { var i = find(f.text, t, 0, whole); if (i !== -1 && (at === -1 || i < at)) { at = i; len2 = t.length; } });
    if (at === -1) return escapeHtml(doc.x.slice(0, 160));
    return mark(doc.x, f.map[at], f.map[Math.min(at + len2, f.map.length) - 1] + 1);
  }

  function search(docs, query, lang) {
    var ts = terms(query);
    if (!ts.length) return [];
    var raw = query.trim().toLowerCase();
    var whole = lang === "vi";                           // syllables; Chinese: substrings
    var exact = whole ? markedTerms(query) : [];         // Vietnamese syllables typed with their marks
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
      // the marked syllables as typed: every one of them in the section puts it in the first tier,
      // ranked there by those syllables, exactly, in the same way (their folded look-alikes do not count)
      var tier = 0;
      if (exact.length) {
        if (doc.ex === undefined) { doc.xn = doc.x.normalize("NFC"); doc.ex = doc.xn.toLowerCase(); }
        if (doc.et === undefined) { doc.et = lowerNFC(doc.t); doc.ep = lowerNFC(doc.p); }
        var exactScore = 0;
        tier = 1;
        exact.forEach(function (t) {
          var inText = countExact(doc.ex, t), inTitle = countExact(doc.et, t), inPage = countExact(doc.ep, t);
          if (!inText && !inTitle) tier = 0;
          exactScore += 1 + Math.log(1 + inText) + (inTitle ? 8 : 0) + (inPage ? 12 : 0);
        });
        var exactPhrase = exact.join(" ");
        if (exact.length > 1) {
          var inTextE = countExact(doc.ex, exactPhrase);
          exactScore += (countExact(doc.et, exactPhrase) ? 10 : 0) + (inTextE ? 2 + Math.log(1 + inTextE) : 0);
        }
        if (tier) score = exactScore + 0.01 * score;
      }
      var url = doc.u.split("#")[0];
      var page = pages[url] || (pages[url] = { url: url, title: doc.p, score: 0, tier: 0, sections: [] });
      page.sections.push({ doc: doc, score: score, tier: tier });
      page.tier = Math.max(page.tier, tier);
    });
    var list = Object.keys(pages).map(function (k) { return pages[k]; });
    // a page: its best section, plus a quarter of the others (many passing mentions rank below one topic)
    list.forEach(function (p) {
      // look-alike sections of a page that has the syllables as typed neither count nor show
      p.sections = p.sections.filter(function (s) { return s.tier === p.tier; });
      p.sections.sort(function (a, b) { return b.score - a.score; });
      p.score = p.sections.reduce(function (acc, s, i) { return acc + (i ? 0.25 : 1) * s.score; }, 0);
    });
    // pages with the syllables as typed, if any; else (a typo in a mark?) the folded matches, as before
    var top = list.reduce(function (acc, p) { return Math.max(acc, p.tier); }, 0);
    list = list.filter(function (p) { return p.tier === top; });
    list.sort(function (a, b) { return b.score - a.score; });
    return list.map(function (p) { p.terms = ts; p.whole = whole; p.exact = exact; return p; });
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
        html += '<li><a href="' + escapeHtml(root + s.doc.u) + '">' + escapeHtml(s.doc.t) + "</a><br>" +
          snippet(s.doc, page.terms, page.whole, s.tier ? page.exact : null) + "</li>";
      });
      li.innerHTML = html + "</ul>";
      list.appendChild(li);
    });
  }

  window.attnSearch = { fold: fold, search: search, snippet: snippet };

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
