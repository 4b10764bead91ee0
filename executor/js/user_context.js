// In the user's browser context no egress proxy stands behind request
// interception, so the session's pages (every frame) lose what would reach
// the network around it: workers of every kind — shared and service
// workers (top-level targets the user's own pages share, which the guard
// cannot tell apart as the session's) and dedicated workers (Chromium has
// no request interception on a worker target) — and WebTransport (QUIC
// over UDP, which nothing intercepts).
(() => {
  for (const n of ['Worker', 'SharedWorker', 'WebTransport']) {
    try { Object.defineProperty(window, n, {value: undefined, writable: false, configurable: false}); } catch (e) {}
  }
  try { Object.defineProperty(Navigator.prototype, 'serviceWorker', {get: () => undefined, configurable: false}); } catch (e) {}
})();

// A shadow root the page attaches, closed ones too, is out of sight of the
// isolated world's observer (no_speculation.js), so a speculation-rules
// script inserted into it is taken out from here. Everything used is
// captured before any page script runs, so a page that redefines a DOM
// method or getter later does not change what this code calls.
(() => {
  const apply = Reflect.apply;
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const attach = Element.prototype.attachShadow;
  const getAttributeNS = Element.prototype.getAttributeNS;
  const remove = Element.prototype.remove;
  const query = Element.prototype.querySelectorAll;
  const observe = MutationObserver.prototype.observe;
  const nodeType = getter(Node.prototype, 'nodeType');
  const localName = getter(Element.prototype, 'localName');
  const recordType = getter(MutationRecord.prototype, 'type');
  const recordTarget = getter(MutationRecord.prototype, 'target');
  const recordAdded = getter(MutationRecord.prototype, 'addedNodes');
  const listLength = getter(NodeList.prototype, 'length');
  const listItem = NodeList.prototype.item;
  const each = (list, f) => {
    const n = apply(listLength, list, []);
    for (let i = 0; i < n; i++) f(apply(listItem, list, [i]));
  };
  const strip = n => {
    try {
      if (apply(nodeType, n, []) === 1 && apply(localName, n, []) === 'script' &&
          String(apply(getAttributeNS, n, [null, 'type']) || '').trim().toLowerCase() === 'speculationrules') apply(remove, n, []);
    } catch (e) {}
  };
  const sweep = n => {
    strip(n);
    try { each(apply(query, n, ['*|script']), strip); } catch (e) {}
  };
  const observer = new MutationObserver(records => {
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (apply(recordType, r, []) === 'attributes') strip(apply(recordTarget, r, []));
      else each(apply(recordAdded, r, []), sweep);
    }
  });
  const watch = root => apply(observe, observer, [root, {childList: true, subtree: true, attributes: true, attributeFilter: ['type']}]);
  try {
    Object.defineProperty(Element.prototype, 'attachShadow', {
      value: function attachShadow(init) {
        const root = apply(attach, this, [init]);
        watch(root);
        return root;
      },
      writable: false, configurable: false,
    });
  } catch (e) {}
  // A popup opened blank is the opener's to write into at once, before
  // any script of the guard's runs in its document: it is watched from
  // here, before window.open returns it.
  const open = window.open;
  try {
    Object.defineProperty(window, 'open', {
      value: function open_(...args) {
        const w = apply(open, this, args);
        try { if (w) watch(w.document); } catch (e) {} // another origin's: not writable from here either
        return w;
      },
      writable: false, configurable: false,
    });
  } catch (e) {}
})()
