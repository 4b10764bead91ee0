// Whether the element (this) itself holds the focus of its document (no
// frame inside it does).
function() { return this.ownerDocument.activeElement === this; }
