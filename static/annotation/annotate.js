/* Hardset annotation page: error spans (ESA, MQM, ESA+MQM), scores, choices, translations,
 * the non-scorable flag, autosave, submission.
 *
 * Plain JavaScript, no framework. Text is only ever inserted with textContent (never HTML); an
 * html campaign's target is the server's sanitised HTML, whose text nodes are split in place.
 * Offsets: the translation is split into grapheme clusters (Intl.Segmenter) so a span never
 * cuts a combining sequence, an emoji or a CJK/RTL character; spans are saved as offsets in
 * Unicode code points (Python str indices), end exclusive. The [MISSING] marker is a span with
 * start = end = length of the translation and "missing": true.
 * What to set up comes from the protocol's page_features (data.features), not its name.
 */
(function () {
  "use strict";

  const dataEl = document.getElementById("annotate-data");
  if (!dataEl) return;
  const data = JSON.parse(dataEl.textContent);
  const form = document.getElementById("answer-form");
  const pageCsrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  // Logging in again (e.g. in another tab after the session expired) rotates the CSRF token:
  // read the current cookie each time so saving works again without reloading the page.
  function csrf() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : pageCsrf;
  }
  const keyInput = form.querySelector("input[name=idempotency_key]");
  const answerInput = form.querySelector("input[name=answer]");
  const checklistEl = document.getElementById("checklist");
  const saveStatus = document.getElementById("save-status");
  const submitButton = document.getElementById("submit-button");
  const localKey = "hardset-draft-" + data.itemId;
  const readonly = data.readonly;
  const features = data.features || [];
  const has = (feature) => features.includes(feature);

  // ----- state ---------------------------------------------------------------------------
  let state = Object.assign({}, data.draft || {});
  let restoredFromLocal = false;
  try {
    const local = JSON.parse(localStorage.getItem(localKey) || "null");
    if (local && local.t > data.draftSavedAt && local.draft) {
      state = local.draft; // newer than the server copy: the last save did not get through
      restoredFromLocal = true;
    }
  } catch (e) { /* private mode: no local copy */ }
  if (has("spans")) {
    state.spans = Array.isArray(state.spans) ? state.spans : [];
  }

  // ----- graphemes -----------------------------------------------------------------------
  const target = data.target || "";
  const segmenter = (window.Intl && Intl.Segmenter) ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;
  const units = [];
  (function split() {
    let cp = 0;
    const parts = segmenter ? Array.from(segmenter.segment(target), (s) => s.segment) : Array.from(target);
    for (const text of parts) {
      const n = Array.from(text).length; // code points, as Python counts
      units.push({ text: text, start: cp, end: cp + n, space: /^\s+$/u.test(text) });
      cp += n;
    }
  })();
  const targetLength = units.length ? units[units.length - 1].end : 0;
  // Word of each unit (dictionary-based for CJK in Intl.Segmenter); -1 outside words.
  const wordOf = new Array(units.length).fill(-1);
  (function words() {
    const lang = (document.getElementById("target") || {}).lang || undefined;
    if (!(window.Intl && Intl.Segmenter)) {
      let w = 0;
      units.forEach((u, i) => {
        if (u.space || /^\p{P}$/u.test(u.text)) { w++; } else { wordOf[i] = w; }
      });
      return;
    }
    const byWords = new Intl.Segmenter(lang, { granularity: "word" });
    let unit = 0, w = 0;
    const utf16Ends = []; // Intl reports UTF-16 offsets; units are grapheme clusters
    let acc = 0;
    units.forEach((u) => { acc += u.text.length; utf16Ends.push(acc); });
    for (const seg of byWords.segment(target)) {
      const end = seg.index + seg.segment.length;
      while (unit < units.length && utf16Ends[unit] <= end) {
        if (seg.isWordLike) wordOf[unit] = w;
        unit++;
      }
      w++;
    }
  })();
  const MISSING = units.length; // index of the [MISSING] pseudo-unit

  function unitsOf(span) {
    if (span.missing) return [MISSING];
    if (span.side === "source") return []; // marked in the source (through the API): not over the target
    const out = [];
    units.forEach((u, i) => { if (u.start >= span.start && u.end <= span.end) out.push(i); });
    return out;
  }
  function excerpt(span) {
    if (span.missing) return "[MISSING]";
    if (span.side === "source") return "[source " + span.start + "–" + span.end + "]";
    return Array.from(target).slice(span.start, span.end).join("");
  }

  // ----- span editor (ESA, MQM) ----------------------------------------------------------
  const targetEl = document.getElementById("target");
  const spanList = document.getElementById("span-list");
  const cursorStatus = document.getElementById("cursor-status");
  let cursor = 0;
  let anchor = null;
  let unitEls = [];
  const severities = data.severities;

  function currentSeverity() {
    const checked = document.querySelector("input[name=severity]:checked");
    return checked ? checked.value : severities[0];
  }

  function unitEl(i) {
    const el = document.createElement("span");
    el.className = "g" + (units[i].space ? " space" : "");
    el.dataset.k = String(i);
    el.textContent = units[i].text;
    return el;
  }

  // An html campaign's target arrives as sanitised HTML (annotation/html_text.py) whose visible
  // text (text nodes in order, each <br> one "\n") is data.target, the text spans index. Each
  // text node is replaced by the grapheme units that start in it, inside the same elements, so
  // the markup stays and a selection across a <b> boundary maps to the same offsets. False (and
  // nothing changed) when the DOM does not read as data.target: the page falls back to plain text.
  function buildTargetInMarkup() {
    targetEl.querySelectorAll("mark.hs-span").forEach((m) => m.replaceWith(...m.childNodes));
    targetEl.normalize();
    const pieces = [];
    const walker = document.createTreeWalker(targetEl, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.nodeType === Node.TEXT_NODE || n.nodeName === "BR") pieces.push(n);
    }
    const textOf = (n) => (n.nodeType === Node.TEXT_NODE ? n.data : "\n");
    if (pieces.map(textOf).join("") !== target) return false;
    let unit = 0, unitStart = 0, pos = 0; // UTF-16 positions, as DOM strings count
    unitEls = [];
    for (const piece of pieces) {
      const end = pos + textOf(piece).length;
      const fragment = document.createDocumentFragment();
      // Units that start here; the tail of a unit begun in an earlier piece is dropped
      // (that unit's element already holds it).
      while (unit < units.length && unitStart < end) {
        if (unitStart >= pos) {
          const el = unitEl(unit);
          unitEls.push(el);
          fragment.appendChild(el);
        }
        unitStart += units[unit].text.length;
        unit++;
      }
      piece.replaceWith(fragment);
      pos = end;
    }
    return true;
  }

  function buildTarget() {
    if (!(targetEl.dataset.html && buildTargetInMarkup())) {
      targetEl.textContent = "";
      unitEls = units.map((u, i) => {
        const el = unitEl(i);
        targetEl.appendChild(el);
        return el;
      });
    }
    const missing = document.createElement("span");
    missing.className = "g missing-token";
    missing.dataset.k = String(MISSING);
    missing.textContent = "[MISSING]";
    missing.setAttribute("dir", "ltr");
    targetEl.appendChild(document.createTextNode(" "));
    targetEl.appendChild(missing);
    unitEls.push(missing);
  }

  function spansAt(k) {
    return state.spans.filter((s) => unitsOf(s).includes(k));
  }

  function paint() {
    unitEls.forEach((el) => { el.className = el.className.replace(/\s?(err-\w+|cursor|selected)/g, ""); });
    state.spans.forEach((s) => {
      unitsOf(s).forEach((k) => unitEls[k] && unitEls[k].classList.add("err-" + (s.severity || "minor")));
    });
    if (document.activeElement === targetEl || anchor !== null) {
      const [a, b] = selectionRange();
      for (let k = a; k <= b; k++) if (anchor !== null) unitEls[k].classList.add("selected");
      if (unitEls[cursor]) unitEls[cursor].classList.add("cursor");
    }
    const here = spansAt(cursor);
    const what = cursor === MISSING ? "[MISSING] marker" : "“" + (units[cursor] ? units[cursor].text : "") + "”";
    cursorStatus.textContent = "Cursor on " + what + (here.length ? " — marked " + here.map((s) => s.severity).join(", ") : "");
  }

  function selectionRange() {
    if (anchor === null) return [cursor, cursor];
    return [Math.min(anchor, cursor), Math.max(anchor, cursor)];
  }

  function wordAround(k) {
    if (k === MISSING || wordOf[k] < 0) return [k, k];
    let a = k, b = k;
    while (a > 0 && wordOf[a - 1] === wordOf[k]) a--;
    while (b < units.length - 1 && wordOf[b + 1] === wordOf[k]) b++;
    return [a, b];
  }

  function addSpan(a, b) {
    if (readonly) return;
    let span;
    if (a === MISSING || b === MISSING) {
      if (a !== b) b = Math.min(a, b) === MISSING ? MISSING : units.length - 1;
      if (a === MISSING && b === MISSING) {
        span = { start: targetLength, end: targetLength, missing: true, severity: currentSeverity() };
      } else {
        a = Math.min(a, b); b = units.length - 1;
      }
    }
    if (!span) {
      while (a <= b && units[a].space) a++;
      while (b >= a && units[b].space) b--;
      if (a > b) return;
      span = { start: units[a].start, end: units[b].end, severity: currentSeverity() };
    }
    if (has("typology")) { span.category = ""; span.subcategory = ""; }
    const duplicate = state.spans.find((s) => s.start === span.start && s.end === span.end && !!s.missing === !!span.missing);
    if (duplicate) { duplicate.severity = span.severity; } else { state.spans.push(span); }
    state.spans.sort((x, y) => x.start - y.start || x.end - y.end);
    if (has("no_errors")) state.no_errors = false;
    anchor = null;
    changed();
    renderSpanList();
    if (has("typology")) {
      const idx = state.spans.indexOf(duplicate || span);
      const select = spanList.querySelector('select[data-role="category"][data-i="' + idx + '"]');
      if (select && !duplicate) select.focus();
    }
  }

  function removeSpan(span) {
    state.spans = state.spans.filter((s) => s !== span);
    changed();
    renderSpanList();
  }

  function option(value, label, selected) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    if (selected) o.selected = true;
    return o;
  }

  function renderSpanList() {
    spanList.textContent = "";
    state.spans.forEach((span, i) => {
      const li = document.createElement("li");
      li.className = "err-item err-" + span.severity;
      const quote = document.createElement("span");
      quote.className = "quote";
      quote.setAttribute("dir", "auto");
      quote.textContent = excerpt(span);
      li.appendChild(quote);

      const sev = document.createElement("select");
      sev.setAttribute("aria-label", "Severity of error " + (i + 1));
      severities.forEach((s) => sev.appendChild(option(s, s, s === span.severity)));
      sev.disabled = readonly;
      sev.addEventListener("change", () => { span.severity = sev.value; li.className = "err-item err-" + span.severity; changed(); });
      li.appendChild(sev);

      if (has("typology")) {
        const cat = document.createElement("select");
        cat.dataset.role = "category";
        cat.dataset.i = String(i);
        cat.setAttribute("aria-label", "Category of error " + (i + 1));
        cat.appendChild(option("", "Category…", !span.category));
        data.typology.forEach((t) => cat.appendChild(option(t.category, t.category, t.category === span.category)));
        const sub = document.createElement("select");
        sub.setAttribute("aria-label", "Subcategory of error " + (i + 1));
        const fillSub = () => {
          sub.textContent = "";
          const entry = data.typology.find((t) => t.category === span.category);
          const subs = entry ? entry.subcategories : [];
          sub.hidden = subs.length === 0;
          sub.appendChild(option("", "Subcategory…", !span.subcategory));
          subs.forEach((s) => sub.appendChild(option(s, s, s === span.subcategory)));
        };
        fillSub();
        cat.addEventListener("change", () => { span.category = cat.value; span.subcategory = ""; fillSub(); changed(); if (!sub.hidden) sub.focus(); });
        sub.addEventListener("change", () => { span.subcategory = sub.value; changed(); });
        cat.disabled = sub.disabled = readonly;
        li.appendChild(cat);
        li.appendChild(sub);
      }

      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "small secondary outline";
      remove.textContent = "✕";
      remove.title = "Remove this error (Delete)";
      remove.setAttribute("aria-label", "Remove error " + (i + 1));
      remove.disabled = readonly;
      remove.addEventListener("click", () => { removeSpan(span); targetEl.focus(); });
      li.appendChild(remove);
      spanList.appendChild(li);
    });
    paint();
  }

  function lastOfWord(k) {
    while (k < units.length - 1 && wordOf[k] >= 0 && wordOf[k + 1] === wordOf[k]) k++;
    return k;
  }

  // The cursor is a character and a selection includes both ends, so a selection growing
  // forwards by words must stop on a word's last character: stopping on the first character of
  // the next word (where a plain Ctrl+→ goes) would mark one character too many.
  function extendForwardByWord(k) {
    if (k < MISSING && wordOf[k] >= 0 && lastOfWord(k) > k) return lastOfWord(k);
    k++;
    while (k < units.length && wordOf[k] < 0) k++;
    return k < units.length ? lastOfWord(k) : MISSING;
  }

  // Shrinking such a selection backwards by a word stops on the previous word's last character,
  // never before the anchor.
  function shrinkBackByWord(k) {
    k = wordOf[k] >= 0 ? wordAround(k)[0] - 1 : k - 1;
    while (k > anchor && wordOf[k] < 0) k--;
    return Math.max(anchor, k);
  }

  function moveBy(step, byWord) {
    let k = cursor;
    const forwardSelection = anchor !== null && cursor >= anchor;
    if (!byWord) {
      k += step;
    } else if (forwardSelection && step > 0) {
      k = extendForwardByWord(k);
    } else if (forwardSelection && cursor > anchor) {
      k = shrinkBackByWord(k);
    } else if (step > 0) {
      // To the start of the next word (or the [MISSING] marker after the last one).
      const here = k < MISSING ? wordOf[k] : -2;
      while (k < MISSING && (wordOf[k] === here || wordOf[k] < 0)) k++;
    } else {
      k--;
      while (k > 0 && wordOf[k] < 0) k--;
      while (k > 0 && wordOf[k - 1] === wordOf[k] && wordOf[k] >= 0) k--;
    }
    cursor = Math.max(0, Math.min(MISSING, k));
  }

  function setupSpanEditor() {
    buildTarget();
    renderSpanList();
    const isRtl = () => getComputedStyle(targetEl).direction === "rtl";
    targetEl.addEventListener("focus", paint);
    targetEl.addEventListener("blur", () => { if (anchor === null) paint(); });
    targetEl.addEventListener("keydown", (e) => {
      if (e.ctrlKey && e.key === "Enter") return; // submit, handled globally
      let step = 0;
      if (e.key === "ArrowRight") step = isRtl() ? -1 : 1;
      if (e.key === "ArrowLeft") step = isRtl() ? 1 : -1;
      if (step) {
        e.preventDefault();
        if (e.shiftKey && anchor === null) anchor = cursor;
        if (!e.shiftKey) anchor = null;
        moveBy(step, e.ctrlKey || e.altKey || e.metaKey);
        if (e.shiftKey && cursor === MISSING) cursor = MISSING - 1;
        paint();
        return;
      }
      if (e.key === "Home" || e.key === "End") {
        e.preventDefault();
        if (e.shiftKey && anchor === null) anchor = cursor;
        if (!e.shiftKey) anchor = null;
        cursor = e.key === "Home" ? 0 : Math.max(0, MISSING - 1);
        paint();
        return;
      }
      if (e.key === "Escape") { anchor = null; paint(); return; }
      if (e.key === "Enter") {
        e.preventDefault();
        const [a, b] = anchor === null ? wordAround(cursor) : selectionRange();
        addSpan(a, b);
        targetEl.focus();
        return;
      }
      if (e.key === "Delete" || e.key === "Backspace") {
        e.preventDefault();
        const here = spansAt(cursor);
        if (here.length) removeSpan(here[here.length - 1]);
        return;
      }
      const digit = /^[1-9]$/.test(e.key) ? Number(e.key) : 0;
      if (digit && digit <= severities.length && !e.ctrlKey && !e.altKey) {
        e.preventDefault();
        const sev = severities[digit - 1];
        const radio = document.querySelector('input[name=severity][value="' + sev + '"]');
        if (radio) radio.checked = true;
        const here = spansAt(cursor);
        if (here.length && !readonly) { here.forEach((s) => { s.severity = sev; }); changed(); renderSpanList(); }
        return;
      }
      if (e.key === "m") { e.preventDefault(); anchor = null; cursor = MISSING; paint(); return; }
      if (e.key === "c" && has("typology")) {
        const here = spansAt(cursor);
        const idx = here.length ? state.spans.indexOf(here[0]) : state.spans.length - 1;
        const select = spanList.querySelector('select[data-role="category"][data-i="' + idx + '"]');
        if (select) { e.preventDefault(); select.focus(); }
        return;
      }
      if (e.key === "s" && has("score")) { e.preventDefault(); focusScore(); }
    });
    targetEl.addEventListener("mouseup", (event) => {
      const sel = window.getSelection();
      const unitOf = (node) => {
        const el = node && (node.nodeType === 1 ? node : node.parentElement);
        const g = el && el.closest(".g");
        return g && targetEl.contains(g) ? Number(g.dataset.k) : null;
      };
      if (sel && !sel.isCollapsed) {
        const a = unitOf(sel.anchorNode), b = unitOf(sel.focusNode);
        sel.removeAllRanges();
        if (a !== null && b !== null) {
          // A drag snaps to whole words (as in Appraise); with Alt it keeps exact characters.
          let lo = Math.min(a, b), hi = Math.max(a, b);
          if (!event.altKey) { lo = wordAround(lo)[0]; hi = wordAround(hi)[1]; }
          addSpan(lo, hi);
          return;
        }
      }
    });
    targetEl.addEventListener("click", (e) => {
      const g = e.target.closest && e.target.closest(".g");
      if (g) { cursor = Number(g.dataset.k); anchor = null; targetEl.focus(); paint(); }
    });
    document.getElementById("mark-button").addEventListener("click", () => {
      const [a, b] = anchor === null ? wordAround(cursor) : selectionRange();
      addSpan(a, b);
      targetEl.focus();
    });
  }

  // ----- ESA score -----------------------------------------------------------------------
  // "s" jumps to the score with its value selected, so typed digits replace a restored draft
  // score instead of being appended to it (30 then "45" read as 3045, clamped to 100).
  function focusScore() {
    const input = document.getElementById("score-input");
    input.focus();
    input.select();
  }

  function setupScore() {
    const range = document.getElementById("score-range");
    const input = document.getElementById("score-input");
    const confirmLabel = document.getElementById("confirm-low");
    const confirmInput = document.getElementById("confirm-low-input");
    const show = () => {
      const has = Number.isInteger(state.score);
      range.classList.toggle("unset", !has);
      if (has) { range.value = String(state.score); input.value = String(state.score); }
      const low = has && state.score < data.lowScore && state.spans.length === 0;
      confirmLabel.hidden = !low;
      confirmInput.checked = !!state.confirmed_low_score;
    };
    const set = (value) => {
      if (value === "" || value === null || Number.isNaN(Number(value))) { state.score = null; }
      else { state.score = Math.max(0, Math.min(100, Math.round(Number(value)))); }
      show();
      changed();
    };
    range.tabIndex = 0;
    range.addEventListener("input", () => set(range.value));
    // A click on the thumb's default position fires no "input": still counts as choosing it.
    range.addEventListener("pointerup", () => set(range.value));
    input.addEventListener("input", () => {
      if (input.value === "") { set(""); return; }
      const v = Number(input.value);
      if (Number.isFinite(v)) set(v);
    });
    input.addEventListener("blur", show);
    confirmInput.addEventListener("change", () => { state.confirmed_low_score = confirmInput.checked; changed(); });
    range.disabled = input.disabled = confirmInput.disabled = readonly;
    showScore = show;
    show();
  }
  let showScore = () => {};

  // ----- MQM "no errors" ------------------------------------------------------------------
  function setupNoErrors() {
    const box = document.getElementById("no-errors");
    box.checked = !!state.no_errors;
    box.disabled = readonly;
    box.addEventListener("change", () => {
      if (box.checked && state.spans.length) {
        if (!window.confirm("Remove the " + state.spans.length + " marked error(s)?")) { box.checked = false; return; }
        state.spans = [];
        renderSpanList();
      }
      state.no_errors = box.checked;
      changed();
    });
  }

  // ----- choice ---------------------------------------------------------------------------
  function setupChoice() {
    const inputs = Array.from(form.querySelectorAll("input[name=selected]"));
    const confidence = Array.from(form.querySelectorAll("input[name=confidence]"));
    const comment = form.querySelector("textarea[name=comment]");
    const read = () => {
      state.selected = inputs.filter((i) => i.checked).map((i) => Number(i.value));
      const c = confidence.find((i) => i.checked);
      state.confidence = c ? Number(c.value) : null;
      state.comment = comment ? comment.value : "";
      changed();
    };
    const selected = state.selected || [];
    inputs.forEach((i) => { i.checked = selected.includes(Number(i.value)); i.disabled = readonly; i.addEventListener("change", read); });
    confidence.forEach((i) => { i.checked = Number(i.value) === state.confidence; i.disabled = readonly; i.addEventListener("change", read); });
    if (comment) { comment.value = state.comment || ""; comment.disabled = readonly; comment.addEventListener("input", read); }
    document.addEventListener("keydown", (e) => {
      if (isTyping(e) || e.ctrlKey || e.altKey || e.metaKey || readonly) return;
      const m = /^Digit([1-9])$/.exec(e.code);
      if (!m) return;
      const n = Number(m[1]);
      if (e.shiftKey) {
        const c = confidence[n - 1];
        if (c) { e.preventDefault(); c.checked = true; c.focus(); read(); }
        return;
      }
      const input = inputs.find((i) => i.dataset.key === String(n));
      if (!input) return;
      e.preventDefault();
      input.checked = data.multiSelect ? !input.checked : true;
      input.focus();
      read();
    });
  }

  // ----- questionnaire --------------------------------------------------------------------
  // Every question is a fieldset of native radios / checkboxes (Tab and the arrow keys work
  // as in any form); j/k move between questions, y/n, digits and 0 answer the active one.
  const questionEls = Array.from(form.querySelectorAll("fieldset.question"));

  function questionAnswer(fs) {
    const inputs = Array.from(fs.querySelectorAll("input"));
    const checked = inputs.filter((i) => i.checked);
    if (fs.dataset.type === "multiple") {
      if (checked.some((i) => i.dataset.none)) return "none";
      return checked.length ? checked.map((i) => Number(i.value)) : undefined;
    }
    if (!checked.length) return undefined;
    return fs.dataset.type === "yes_no" ? checked[0].value : Number(checked[0].value);
  }

  function activeQuestion() {
    const here = document.activeElement && document.activeElement.closest && document.activeElement.closest("fieldset.question");
    if (here) return here;
    return questionEls.find((fs) => questionAnswer(fs) === undefined) || questionEls[0];
  }

  function focusQuestion(fs) {
    if (!fs) return;
    const inputs = Array.from(fs.querySelectorAll("input"));
    (inputs.find((i) => i.checked) || inputs[0] || fs).focus();
    fs.scrollIntoView({ block: "nearest" });
  }

  function setupQuestionnaire() {
    const comment = form.querySelector("textarea[name=comment]");
    const read = () => {
      const answers = {};
      questionEls.forEach((fs) => {
        const value = questionAnswer(fs);
        if (value !== undefined) answers[fs.dataset.question] = value;
      });
      state.answers = answers;
      state.comment = comment ? comment.value : "";
      changed();
    };
    // The inputs show the state; run again on pageshow, after a back navigation's form
    // restoration may have checked boxes the state (and so the checklist) does not have.
    const show = () => questionEls.forEach((fs) => {
      if (comment) comment.value = state.comment || "";
      const value = (state.answers || {})[fs.dataset.question];
      fs.querySelectorAll("input").forEach((i) => {
        if (fs.dataset.type === "multiple") {
          i.checked = i.dataset.none ? value === "none" : Array.isArray(value) && value.includes(Number(i.value));
        } else {
          i.checked = value !== undefined && String(value) === i.value;
        }
      });
    });
    show();
    window.addEventListener("pageshow", show);
    questionEls.forEach((fs) => {
      fs.querySelectorAll("input").forEach((i) => {
        i.disabled = readonly;
        i.addEventListener("change", () => {
          // "None of these" and the options exclude each other.
          if (fs.dataset.type === "multiple" && i.checked) {
            fs.querySelectorAll("input").forEach((other) => {
              if (other !== i && !!other.dataset.none !== !!i.dataset.none) other.checked = false;
            });
          }
          read();
        });
      });
    });
    if (comment) { comment.value = state.comment || ""; comment.disabled = readonly; comment.addEventListener("input", read); }
    document.addEventListener("keydown", (e) => {
      if (isTyping(e) || e.ctrlKey || e.altKey || e.metaKey || !questionEls.length) return;
      const fs = activeQuestion();
      const index = questionEls.indexOf(fs);
      if (e.key === "j" || e.key === "k") {
        e.preventDefault();
        focusQuestion(questionEls[Math.max(0, Math.min(questionEls.length - 1, index + (e.key === "j" ? 1 : -1)))]);
        return;
      }
      if (readonly) return;
      let key = null;
      const digit = /^Digit([0-9])$/.exec(e.code);
      if (digit && !e.shiftKey) key = digit[1];
      else if (fs.dataset.type === "yes_no" && (e.key === "y" || e.key === "n")) key = e.key;
      if (key === null) return;
      const input = fs.querySelector('input[data-key="' + key + '"]');
      if (!input) return;
      e.preventDefault();
      const multiple = fs.dataset.type === "multiple";
      input.checked = multiple ? !input.checked : true;
      input.dispatchEvent(new Event("change"));
      // One answer closes a yes/no or single question: go on to the next one.
      if (!multiple && index < questionEls.length - 1) focusQuestion(questionEls[index + 1]);
      else input.focus();
    });
  }

  // ----- translation task -----------------------------------------------------------------
  function setupTranslation() {
    const box = document.getElementById("translation-input");
    const comment = form.querySelector("textarea[name=comment]");
    box.value = state.translation || "";
    if (comment) comment.value = state.comment || "";
    const read = () => { state.translation = box.value; state.comment = comment ? comment.value : ""; changed(); };
    box.disabled = readonly;
    box.addEventListener("input", read);
    if (comment) { comment.disabled = readonly; comment.addEventListener("input", read); }
  }

  // ----- non-scorable flag (scored protocols) ----------------------------------------------
  function setupNonScorable() {
    const box = document.getElementById("non-scorable");
    const reason = document.getElementById("non-scorable-reason");
    const reasonLabel = document.getElementById("non-scorable-reason-label");
    const judgment = document.getElementById("judgment");
    const root = document.querySelector(".annotate");
    const show = () => {
      const flagged = !!state.non_scorable;
      box.checked = flagged;
      reasonLabel.hidden = !flagged;
      judgment.hidden = flagged;
      root.classList.toggle("flagged", flagged);
    };
    reason.value = state.non_scorable_reason || "";
    box.disabled = reason.disabled = readonly;
    box.addEventListener("change", () => {
      state.non_scorable = box.checked;
      if (!box.checked) delete state.non_scorable_reason;
      else state.non_scorable_reason = reason.value;
      show();
      changed();
      if (box.checked) reason.focus();
    });
    reason.addEventListener("input", () => { state.non_scorable_reason = reason.value; changed(); });
    show();
  }

  // ----- checklist ------------------------------------------------------------------------
  function missing() {
    const out = [];
    if (data.nonScorable && state.non_scorable) {
      if (!(state.non_scorable_reason || "").trim()) out.push("Say briefly why this item cannot be scored.");
      return out;
    }
    if (has("typology")) {
      state.spans.forEach((s, i) => {
        if (!s.category) out.push("Error " + (i + 1) + " (“" + excerpt(s) + "”): choose a category.");
        else {
          const entry = data.typology.find((t) => t.category === s.category);
          if (entry && entry.subcategories.length && !s.subcategory) out.push("Error " + (i + 1) + ": choose a subcategory of " + s.category + ".");
        }
      });
    }
    if (has("score")) {
      if (!Number.isInteger(state.score)) out.push("Give a 0–100 score.");
      else if (state.score < data.lowScore && state.spans.length === 0 && !state.confirmed_low_score) {
        out.push("Confirm the score " + state.score + ": no error is marked in the translation.");
      }
    }
    if (has("no_errors") && !state.spans.length && !state.no_errors) out.push("Mark the errors, or tick “This translation has no errors”.");
    if (has("choice")) {
      if (!(state.selected && state.selected.length)) out.push(data.multiSelect ? "Choose at least one option." : "Choose an option.");
      if (data.askConfidence && !state.confidence) out.push("Rate your confidence.");
    }
    if (has("translation") && !(state.translation || "").trim()) out.push("Write the translation.");
    if (has("questionnaire")) {
      questionEls.forEach((fs, i) => {
        if (!(state.answers || {}).hasOwnProperty(fs.dataset.question)) out.push("Answer question " + (i + 1) + ".");
      });
    }
    return out;
  }

  function renderChecklist() {
    const list = missing();
    checklistEl.textContent = "";
    checklistEl.classList.toggle("ready", list.length === 0);
    if (readonly) { checklistEl.textContent = "This campaign is closed; answers can no longer change."; return; }
    if (!list.length) { checklistEl.textContent = "Ready to submit."; return; }
    const title = document.createElement("strong");
    title.textContent = "Still missing:";
    const ul = document.createElement("ul");
    list.forEach((text) => { const li = document.createElement("li"); li.textContent = text; ul.appendChild(li); });
    checklistEl.appendChild(title);
    checklistEl.appendChild(ul);
  }

  // ----- autosave, activity ---------------------------------------------------------------
  let saveTimer = null;
  let lastInteraction = Date.now();
  let sessionExpired = false;

  function answer() {
    const a = Object.assign({}, state);
    delete a.prefilled;
    return a;
  }

  function changed() {
    lastInteraction = Date.now();
    renderChecklist();
    if (has("score")) showScore();
    try { localStorage.setItem(localKey, JSON.stringify({ t: Date.now(), draft: answer() })); } catch (e) { /* ignore */ }
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveDraft, 700);
  }

  function expired() {
    sessionExpired = true;
    saveStatus.textContent = "";
    const text = document.createTextNode("Session expired — your work is kept in this browser. ");
    const link = document.createElement("a");
    link.href = "/accounts/login/?next=" + encodeURIComponent(window.location.pathname);
    link.textContent = "Log in again";
    link.target = "_blank";
    saveStatus.appendChild(text);
    saveStatus.appendChild(link);
    saveStatus.appendChild(document.createTextNode(" and it is saved."));
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), "Accept": "application/json" },
      body: JSON.stringify(body),
    });
  }

  async function saveDraft() {
    if (readonly) return;
    const sentAt = Date.now();
    saveStatus.textContent = "Saving…";
    try {
      const response = await post(data.draftUrl, { draft: answer() });
      // A refusal (paused, closed: 403) is JSON naming why; a 403 that is not JSON is Django's
      // CSRF page, whose token went with the session.
      const body = await response.json().catch(() => null);
      if (response.status === 401 || (response.status === 403 && !body)) { expired(); return; }
      if (!body) throw new Error("the answer is not JSON");  // kept here, sent again below
      if (!response.ok) { saveStatus.textContent = "Not saved: " + (body.errors || []).join("; "); return; }
      sessionExpired = false;
      saveStatus.textContent = "Draft saved " + new Date().toLocaleTimeString();
      try {
        const local = JSON.parse(localStorage.getItem(localKey) || "null");
        if (local && local.t <= sentAt) localStorage.removeItem(localKey);
      } catch (e) { /* ignore */ }
    } catch (e) {
      saveStatus.textContent = "Offline — the draft is kept in this browser and saved when the connection is back.";
      clearTimeout(saveTimer);
      saveTimer = setTimeout(saveDraft, 5000);
    }
  }

  ["keydown", "pointerdown", "scroll", "input"].forEach((type) =>
    document.addEventListener(type, () => { lastInteraction = Date.now(); }, { passive: true, capture: true }));
  setInterval(() => {
    if (readonly || document.visibilityState !== "visible" || Date.now() - lastInteraction > 60000) return;
    if (sessionExpired) { saveDraft(); return; } // retries after the annotator logged in again
    post(data.heartbeatUrl, {}).then((r) => { if (r.status === 401) expired(); }).catch(() => {});
  }, 20000);
  window.addEventListener("focus", () => { if (sessionExpired) saveDraft(); });

  // ----- submission -----------------------------------------------------------------------
  let submitting = false;
  async function submit(event) {
    event.preventDefault();
    if (submitting || readonly) return;
    const list = missing();
    if (list.length) {
      renderChecklist();
      checklistEl.classList.add("shake");
      setTimeout(() => checklistEl.classList.remove("shake"), 600);
      checklistEl.setAttribute("tabindex", "-1");
      checklistEl.focus();
      return;
    }
    submitting = true;
    clearTimeout(saveTimer);
    if (submitButton) submitButton.setAttribute("aria-busy", "true");
    answerInput.disabled = false;
    answerInput.value = JSON.stringify(answer());
    form.querySelector("input[name=csrfmiddlewaretoken]").value = csrf();
    const body = new FormData(form);
    answerInput.disabled = true;
    // Retries reuse the same Idempotency-Key, so the server never counts the answer twice.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const response = await fetch(data.submitUrl, {
          method: "POST",
          credentials: "same-origin",
          headers: { "X-CSRFToken": csrf(), "Accept": "application/json", "Idempotency-Key": keyInput.value },
          body: body,
        });
        if (response.status === 401) { expired(); break; }
        const result = await response.json();
        if (response.ok && result.ok) {
          try { localStorage.removeItem(localKey); } catch (e) { /* ignore */ }
          window.location.assign(result.next_url);
          return;
        }
        checklistEl.textContent = "";
        const strong = document.createElement("strong");
        strong.textContent = "Not submitted: ";
        checklistEl.appendChild(strong);
        checklistEl.appendChild(document.createTextNode((result.errors || []).concat(result.missing || []).join("; ")));
        break;
      } catch (e) {
        saveStatus.textContent = "Network problem, retrying…";
        await new Promise((r) => setTimeout(r, 1000 * (attempt + 1)));
      }
    }
    submitting = false;
    if (submitButton) submitButton.removeAttribute("aria-busy");
  }
  form.addEventListener("submit", submit);

  // ----- global keys ----------------------------------------------------------------------
  function isTyping(e) {
    const t = e.target;
    return t && (t.tagName === "TEXTAREA" || t.tagName === "SELECT" ||
      (t.tagName === "INPUT" && !["radio", "checkbox", "range", "button", "submit"].includes(t.type)));
  }
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      e.preventDefault();
      form.requestSubmit();
      return;
    }
    if (isTyping(e) || e.ctrlKey || e.altKey || e.metaKey) return;
    if (e.target === targetEl) return; // the span editor has its own keys
    if (e.key === "p" && data.previousUrl) { window.location.assign(data.previousUrl); }
    else if (e.key === "n" && data.nextUrl && !has("questionnaire")) { window.location.assign(data.nextUrl); }
    else if (e.key === "t" && targetEl) { e.preventDefault(); targetEl.focus(); }
    else if (e.key === "s" && has("score")) { e.preventDefault(); focusScore(); }
    else if (e.key === "w" && has("translation")) { e.preventDefault(); document.getElementById("translation-input").focus(); }
  });

  // ----- start ----------------------------------------------------------------------------
  if (has("spans")) setupSpanEditor();
  if (has("score")) setupScore();
  if (has("no_errors")) setupNoErrors();
  if (has("choice")) setupChoice();
  if (has("translation")) setupTranslation();
  if (has("questionnaire")) setupQuestionnaire();
  if (data.nonScorable) setupNonScorable();
  renderChecklist();
  if (targetEl) {
    targetEl.addEventListener("keydown", (e) => {
      if (e.key === "p" && data.previousUrl && !e.ctrlKey) window.location.assign(data.previousUrl);
      if (e.key === "n" && data.nextUrl && !e.ctrlKey) window.location.assign(data.nextUrl);
    });
  }
  if (restoredFromLocal) saveDraft();
})();
