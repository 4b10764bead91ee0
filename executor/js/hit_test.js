// Whether the element (this) itself, or one of its descendants, is what a
// click at (x, y) would hit, so that a transparent overlay cannot take a
// click meant for an in-scope element.
function(x, y) {
  const root = this.getRootNode();
  const hit = (root && root.elementFromPoint ? root : document).elementFromPoint(x, y);
  return !!hit && (hit === this || Node.prototype.contains.call(this, hit));
}
