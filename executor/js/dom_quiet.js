// A function of the wait's cap in ms: its promise resolves once the
// document has seen no mutation for 20 ms, counted from the last mutation
// the document's watch saw (dom_changes.js), or when the cap has passed
// (client-side rendering after a navigation or a click; a page that never
// stops changing). It says how it ended: "quiet" (the document had been
// still for 20 ms when the wait began), "waited" (it had to wait for the
// rest of the window), "capped"; whether the watch was there before the
// wait (watched: false, when the wait had to start it); and the
// document's readyState as it ended (the wait after an action asks
// whether the document has loaded in the same round trip).
(cap => new Promise(resolve => {
  const watched = globalThis.browsergateDOM !== undefined;
  const dom = DOM_CHANGES;
  const start = performance.now();
  let waited = false, still = false;
  const check = () => {
    const now = performance.now();
    const idle = now - dom.last;
    if (idle >= 20 && still) {
      resolve({end: waited ? 'waited' : 'quiet', watched, ready: document.readyState});
    } else if (idle >= 20) {
      // Looked at twice, a task apart: a timer of the page's that is
      // overdue (its renderer had no CPU for a while) runs between the
      // looks, and a change it makes is seen.
      still = true;
      setTimeout(check, 0);
    } else if (now - start >= cap) {
      resolve({end: 'capped', watched, ready: document.readyState});
    } else {
      waited = true;
      still = false;
      setTimeout(check, Math.min(20 - idle, Math.max(cap - (now - start), 1)));
    }
  };
  // The first look is a task of its own too, after the page's overdue ones.
  setTimeout(check, 0);
}))
