// Building DOM nodes. Every piece of text that comes from the model, a tool or the server
// goes in as a text node or an attribute value, never as HTML: nothing here parses markup.

/** An element: `h("button", {class: "x", onclick: f, text: "Go"}, child, "text")`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = String(value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "value" || key === "checked" || key === "disabled" || key === "selected")
      el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let counter = 0;
/** A unique id for tying labels, hints and errors to their control. */
export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** JSON for showing: pretty when it parses, the raw text otherwise. */
export function prettyJson(text) {
  if (typeof text !== "string") return JSON.stringify(text, null, 2);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
