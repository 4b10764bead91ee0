// Right before each mouse event of a click on the element (this): hit is
// the node the browser's own hit test finds at the click point. It must be
// the element or inside it (across shadow roots and slots), so that an
// element laid over it (a transparent overlay) cannot take the click; and
// what a click there would do must be within what the gate judged of the
// element (want: {urls, submits}), so that a page that changes the element,
// or a click that lands on something the gate did not see, is caught.
// want.pointOnly (a hover): only the hit test is checked.
// Returns '' when the click may go ahead, else why not.
function(hit, want) {
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const up = n => {
    if (n.nodeType === 11) return getter(ShadowRoot.prototype, 'host').call(n);
    if (n.nodeType === 1) {
      const slot = getter(Element.prototype, 'assignedSlot').call(n);
      if (slot) return slot;
    }
    return getter(Node.prototype, 'parentNode').call(n);
  };
  let inside = false;
  for (let n = hit; n && !inside; n = up(n)) inside = n === this;
  if (!inside) return 'covered';
  if (want.pointOnly) return ''; // a hover: only where the pointer lands matters
  const r = RESOLVE(hit, 'click');
  const unjudged = r.urls.filter(u => !want.urls.includes(u));
  if ((r.submits && !want.submits) || unjudged.length || r.embeds) {
    return 'the element changed after the gate decided: a click on it now ' +
      (r.embeds ? 'lands in an embedded document' : r.submits && !want.submits ? 'submits a form' : 'leads to ' + unjudged.join(', ')) +
      ', which the gate did not judge';
  }
  return '';
}
