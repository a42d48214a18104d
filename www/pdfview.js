// pdfview.js: the PDF preview's frame (pdfview.html), a classic script
// (an opaque origin cannot load modules from the app's origin without
// CORS). pdf.js comes from vendor/pdf.min.js; vendor/pdf.worker.min.js,
// loaded before this as a plain script, sets globalThis.pdfjsWorker, so
// pdf.js parses on this page's thread (an opaque origin cannot start a
// Worker from the app's origin either).
//
// The page is only ever an opaque origin: views/viewer.js frames it with
// sandbox="allow-scripts" (no allow-same-origin), and every shipped
// configuration serves it with "Content-Security-Policy: sandbox
// allow-scripts; default-src 'none'; script-src 'self'; ...". So whatever
// a PDF makes of pdf.js here holds no cookie, can fetch nothing, and
// cannot reach the app; PDF scripts never run (pdf.js's scripting is not
// loaded), isEvalSupported is off, and no annotation layer is made, so no
// link in the PDF navigates. The bytes come from the parent by
// postMessage; the page count or an error goes back (js/pdfpreview.js
// reads it).
"use strict";
(() => {
  // Never run with the app's origin (served without its headers and
  // opened as a page of its own), and only for a parent.
  if (self.origin !== "null" || window.parent === window || typeof pdfjsLib !== "object") return;
  // The URL's origin, which is the app's: messages go to it alone.
  const app = location.origin;
  const post = (m) => window.parent.postMessage(m, app);
  const box = document.getElementById("pages");
  let started = false;

  addEventListener("message", (ev) => {
    if (started || ev.source !== window.parent || ev.origin !== app) return;
    const d = ev.data;
    if (!d || d.type !== "pdf" || !(d.data instanceof ArrayBuffer)) return;
    started = true;
    show(d).catch(() => post({ type: "error", reason: "failed" }));
  });
  // Esc closes the viewer while the focus is in here too.
  addEventListener("keydown", (ev) => { if (ev.key === "Escape") post({ type: "close" }); });

  function look(d) {
    if (typeof d.lang === "string" && /^[a-z]{2}$/.test(d.lang)) document.documentElement.lang = d.lang;
    document.documentElement.style.colorScheme = d.dark ? "dark" : "light";
    if (typeof d.bg === "string" && /^(#[0-9a-f]{3,8}|rgba?\([0-9., ]+\))$/i.test(d.bg)) {
      document.documentElement.style.background = d.bg;
      document.body.style.background = d.bg;
    }
  }

  async function show(d) {
    look(d);
    const label = typeof d.pageLabel === "string" ? d.pageLabel : "{i} / {n}";
    const maxPages = Number.isSafeInteger(d.maxPages) && d.maxPages > 0 ? d.maxPages : 1;
    let pdf;
    try {
      pdf = await pdfjsLib.getDocument({ data: new Uint8Array(d.data), isEvalSupported: false,
        enableXfa: false, verbosity: pdfjsLib.VerbosityLevel.ERRORS }).promise;
    } catch (e) {
      post({ type: "error", reason: e && e.name === "PasswordException" ? "password" : "failed" });
      return;
    }
    const n = pdf.numPages;
    post({ type: "pages", n });
    const first = (await pdf.getPage(1)).getViewport({ scale: 1 });
    const slots = [];
    for (let i = 1; i <= Math.min(n, maxPages); i++) {
      const slot = document.createElement("div");
      slot.className = "page";
      slot.setAttribute("role", "img");
      slot.setAttribute("aria-label", label.replace("{i}", i).replace("{n}", n));
      slot.style.aspectRatio = `${first.width} / ${first.height}`;
      slot.dataset.page = String(i);
      slots.push(slot);
    }
    box.replaceChildren(...slots);
    // Pages within a screen of the view are drawn, one at a time; a page
    // scrolled further away gives its pixels back.
    let queue = Promise.resolve();
    const near = new Set();
    const io = new IntersectionObserver((entries) => {
      for (const en of entries) {
        const slot = en.target;
        if (en.isIntersecting) {
          near.add(slot);
          queue = queue.then(() => (near.has(slot) && !slot.firstChild ? draw(pdf, slot) : null)).catch(() => {});
        } else {
          near.delete(slot);
          drop(pdf, slot);
        }
      }
    }, { root: box, rootMargin: "100% 0px" });
    for (const s of slots) io.observe(s);
  }

  const tasks = new WeakMap();
  async function draw(pdf, slot) {
    const page = await pdf.getPage(Number(slot.dataset.page));
    const vp1 = page.getViewport({ scale: 1 });
    slot.style.aspectRatio = `${vp1.width} / ${vp1.height}`;
    // At most twice the CSS pixels: a page 60rem wide stays under 2,000
    // pixels across on any screen.
    const scale = (slot.clientWidth / vp1.width) * Math.min(window.devicePixelRatio || 1, 2);
    const vp = page.getViewport({ scale });
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, Math.floor(vp.width));
    canvas.height = Math.max(1, Math.floor(vp.height));
    const task = page.render({ canvasContext: canvas.getContext("2d"), viewport: vp });
    tasks.set(slot, task);
    try {
      await task.promise;
      slot.replaceChildren(canvas);
    } finally {
      tasks.delete(slot);
    }
  }

  function drop(pdf, slot) {
    tasks.get(slot)?.cancel();
    if (!slot.firstChild) return;
    const c = slot.firstChild;
    slot.replaceChildren();
    c.width = c.height = 0;
    pdf.getPage(Number(slot.dataset.page)).then((p) => p.cleanup()).catch(() => {});
  }

  post({ type: "ready" });
})();
