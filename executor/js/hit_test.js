// Whether hit (the node a click at the element's centre would land on, as
// the browser's own hit test says) is the element (this) or inside it,
// across shadow roots and slots, so that an element laid over it
// (a transparent overlay) cannot take a click meant for it.
function(hit) {
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const up = n => {
    if (n.nodeType === 11) return getter(ShadowRoot.prototype, 'host').call(n);
    if (n.nodeType === 1) {
      const slot = getter(Element.prototype, 'assignedSlot').call(n);
      if (slot) return slot;
    }
    return getter(Node.prototype, 'parentNode').call(n);
  };
  for (let n = hit; n; n = up(n)) if (n === this) return true;
  return false;
}
