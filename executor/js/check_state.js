// Whether the element (this) a fill_form field sets is checked: an
// <input> of type checkbox or radio by its checked property, an element
// with role checkbox, radio, switch, menuitemcheckbox or menuitemradio by
// its aria-checked attribute. It reads the DOM through the built-in
// prototypes' getters in the gate's isolated world. Returns {checked,
// radio}, or {refused} when the element is none of these or is disabled.
function() {
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const attr = a => Element.prototype.getAttribute.call(this, a);
  if (getter(Element.prototype, 'localName').call(this) === 'input') {
    const type = getter(HTMLInputElement.prototype, 'type').call(this);
    if (type === 'checkbox' || type === 'radio') {
      if (getter(HTMLInputElement.prototype, 'disabled').call(this)) return {refused: 'it is disabled'};
      return {checked: getter(HTMLInputElement.prototype, 'checked').call(this), radio: type === 'radio'};
    }
  }
  const role = attr('role');
  if (['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(role)) {
    if (attr('aria-disabled') === 'true') return {refused: 'it is disabled'};
    return {checked: attr('aria-checked') === 'true', radio: role === 'radio' || role === 'menuitemradio'};
  }
  return {refused: 'it is not a checkbox nor a radio button (an <input> of type checkbox or radio, or an element with role checkbox, radio or switch)'};
}
