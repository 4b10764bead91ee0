// The time of the document's last mutation, kept by a MutationObserver in
// browsergate's isolated world: the quiet-DOM wait (dom_quiet.js) counts
// its window from it, so a document that has been still for 15 ms needs
// only 5 ms more. The page cannot reach the world, so it can neither
// disconnect the observer nor change the time. Made at most once a
// document; when it is made it takes the present as the last mutation, so
// a document it did not watch from its start is never taken as quiet
// sooner than the wait that made it.
globalThis.browsergateDOM ??= (() => {
  const dom = {last: performance.now()};
  new MutationObserver(() => { dom.last = performance.now(); })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  return dom;
})()
