// Starts the watch of the document's mutations (dom_changes.js) once the
// parser is done, for every top-level document of the session's tabs: run in
// browsergate's isolated world as each document begins. Not before: the
// parser's own insertions into a long page would each make a mutation
// record, and the time they end is the time of DOMContentLoaded. The
// listener is on the window in the capture phase and added before any of
// the page's scripts runs, so no listener of the page can stop the event
// before it; a document that never fires it (or one the page rewrites) is
// watched from the first wait on it instead.
//
// Only the top frame's document is watched: the wait reads the tab's own
// document, never a frame's. The test cannot throw (a window's own top is
// always readable, whatever its origin), but is kept in a try all the
// same, so that a frame never runs the watch whatever it is.
{
  // A block, so the name is no global of the world's.
  let isTop = false;
  try { isTop = globalThis === top; } catch { isTop = false; }
  if (isTop && document.readyState === 'loading') {
    addEventListener('DOMContentLoaded', () => DOM_CHANGES, {capture: true, once: true});
  } else if (isTop) {
    DOM_CHANGES;
  }
}
