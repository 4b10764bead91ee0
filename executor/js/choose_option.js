// Makes the option (an <option> of the select this) the select's choice,
// as a user's choice would: the select focused, the option the only
// selected one, then the input and change events the page listens for.
// Returns the option's label and value.
function(option) {
  HTMLElement.prototype.focus.call(this);
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const setter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).set;
  for (const o of getter(HTMLSelectElement.prototype, 'options').call(this)) {
    setter(HTMLOptionElement.prototype, 'selected').call(o, o === option);
  }
  for (const type of ['input', 'change']) {
    EventTarget.prototype.dispatchEvent.call(this, new Event(type, {bubbles: true}));
  }
  return {label: getter(HTMLOptionElement.prototype, 'label').call(option), value: getter(HTMLOptionElement.prototype, 'value').call(option)};
}
