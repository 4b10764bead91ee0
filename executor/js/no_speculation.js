// Speculation rules make the browser itself prefetch and prerender URLs a
// page lists, from the browser process, where no request interception of
// the page's sees them. In the user's browser context nothing else stands
// in their way, so a <script type="speculationrules"> is taken out of the
// document as soon as it is inserted: an observer's callback is queued with
// the insertion, ahead of the microtask in which Chromium acts on the
// rules, and removing the script withdraws them. This part runs in an
// isolated world of its own, where the page cannot disconnect it or change
// the DOM methods it uses; it also watches open shadow roots it finds
// (declarative ones included). Shadow roots a page script attaches are
// watched from the page's world (user_context.js). Rules sent in a
// Speculation-Rules response header are dropped from the response by the
// guard (attach.go).
(() => {
  // A script element of any namespace and prefix (Chromium acts on SVG
  // ones too), with the type attribute Chromium reads: the one in no
  // namespace.
  const strip = n => {
    if (n.nodeType === 1 && n.localName === 'script' &&
        (n.getAttributeNS(null, 'type') || '').trim().toLowerCase() === 'speculationrules') n.remove();
  };
  const sweep = n => {
    strip(n);
    if (!n.querySelectorAll) return;
    n.querySelectorAll('*|script').forEach(strip);
    for (const e of [n, ...n.querySelectorAll('*')]) {
      if (e.shadowRoot) watch(e.shadowRoot);
    }
  };
  const watched = new WeakSet();
  const observer = new MutationObserver(records => {
    for (const r of records) {
      if (r.type === 'attributes') { strip(r.target); continue; }
      for (const n of r.addedNodes) sweep(n);
    }
  });
  const watch = root => {
    if (watched.has(root)) return;
    watched.add(root);
    observer.observe(root, {childList: true, subtree: true, attributes: true, attributeFilter: ['type']});
    sweep(root);
  };
  watch(document);
})()
