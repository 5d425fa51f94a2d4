// A form generated from a JSON Schema, validated in the page before anything is sent.
// Objects of simple fields (string, number, integer, boolean, enum; required, defaults,
// descriptions) become labelled controls; anything richer becomes a JSON editor. Both are
// validated with @cfworker/json-schema (no eval, so the page's CSP holds), errors shown
// inline beside the field they concern. A schema's labels, descriptions and choices are the
// server's text: shown through the display function's twin (`visible`), hidden characters
// escaped; a value that holds hidden characters says so under its field, escaped.

import { Validator } from "@cfworker/json-schema";
import { h, uid } from "./dom.js";
import { approximate, exactDigits, isExact, parseExact, stringifyExact, typedNumber } from "./exact.js";
import { visible } from "./shown.js";

const STRUCTURE = ["allOf", "anyOf", "oneOf", "not", "$ref", "if", "patternProperties", "dependentSchemas"];
const SIMPLE = new Set(["string", "number", "integer", "boolean"]);

/** The one simple type of a property schema (`["integer", "null"]` counts as integer), or null. */
function simpleType(schema) {
  if (!schema || typeof schema !== "object" || STRUCTURE.some((k) => k in schema)) return null;
  if (Array.isArray(schema.enum)) {
    return schema.enum.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))
      ? "enum"
      : null;
  }
  let type = schema.type;
  if (Array.isArray(type)) {
    const rest = type.filter((t) => t !== "null");
    type = rest.length === 1 ? rest[0] : null;
  }
  return SIMPLE.has(type) ? type : null;
}

/** Whether the schema can be shown as a form of simple fields. */
export function isSimpleObject(schema) {
  if (!schema || typeof schema !== "object" || STRUCTURE.some((k) => k in schema)) return false;
  if (schema.type !== "object" || !schema.properties || typeof schema.properties !== "object")
    return false;
  const names = Object.keys(schema.properties);
  return names.length > 0 && names.every((n) => simpleType(schema.properties[n]) !== null);
}

/** Validation errors as `[{path: "build" | "", message}]` (leaf keywords only). */
export function validate(schema, value) {
  if (!schema || typeof schema !== "object") return [];
  let result;
  try {
    result = new Validator(schema, "2020-12", false).validate(value);
  } catch (error) {
    return [{ path: "", message: `The schema could not be used: ${error.message}` }];
  }
  const out = [];
  for (const e of result.errors) {
    if (["properties", "items", "allOf", "anyOf", "oneOf", "$ref", "additionalProperties"].includes(e.keyword)
      && result.errors.some((o) => o !== e && o.instanceLocation.startsWith(`${e.instanceLocation}/`)))
      continue;
    let path = e.instanceLocation.replace(/^#\/?/, "");
    if (e.keyword === "required") {
      const m = /"([^"]*)"/.exec(e.error);
      if (m) path = path ? `${path}/${m[1]}` : m[1];
      out.push({ path, message: "This field is required." });
      continue;
    }
    out.push({ path, message: friendly(e) });
  }
  return out;
}

function friendly(e) {
  const num = "(-?\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?)";
  const m = new RegExp(`${num} is (less|greater) than (?:or equal to )?\\s*${num}`).exec(e.error);
  if (e.keyword === "minimum" && m) return `Must be at least ${m[3]}.`;
  if (e.keyword === "maximum" && m) return `Must be at most ${m[3]}.`;
  if (e.keyword === "exclusiveMinimum" && m) return `Must be greater than ${m[3]}.`;
  if (e.keyword === "exclusiveMaximum" && m) return `Must be less than ${m[3]}.`;
  if (e.keyword === "type") {
    const t = /Expected "([^"]+)"/.exec(e.error);
    if (t && t[1] === "integer") return "Must be a whole number.";
    if (t) return `Must be of type ${t[1]}.`;
  }
  if (e.keyword === "enum") return "Must be one of the listed choices.";
  return e.error;
}

function fieldControl(name, prop, type, required, initial, ids) {
  const common = {
    id: ids.control,
    name,
    "aria-describedby": `${ids.hint} ${ids.error}`,
    "aria-required": required ? "true" : null,
  };
  if (type === "boolean") {
    return h("input", { ...common, type: "checkbox", checked: initial === true });
  }
  if (type === "enum") {
    const select = h("select", common);
    const hasInitial = initial !== undefined;
    select.append(h("option", { value: "", text: "— choose —", selected: !hasInitial }));
    prop.enum.forEach((choice, i) => {
      select.append(
        h("option", { value: String(i), text: visible(String(choice)), selected: hasInitial && choice === initial }),
      );
    });
    return select;
  }
  if (type === "number" || type === "integer") {
    return h("input", {
      ...common,
      type: "number",
      step: type === "integer" ? "1" : "any",
      inputmode: type === "integer" ? "numeric" : "decimal",
      value: initial === undefined || initial === null ? "" : isExact(initial) ? exactDigits(initial) : String(initial),
    });
  }
  const long = typeof prop.maxLength !== "number" || prop.maxLength > 120;
  return h(long && prop.format !== "email" ? "textarea" : "input", {
    ...common,
    ...(long ? { rows: "2" } : { type: "text" }),
    value: typeof initial === "string" ? initial : initial === undefined ? "" : String(initial),
  });
}

function readControl(control, prop, type) {
  if (type === "boolean") return { value: control.checked };
  if (type === "enum") return control.value === "" ? {} : { value: prop.enum[Number(control.value)] };
  if (type === "number" || type === "integer") {
    if (control.validity && control.validity.badInput) return { error: "Enter a number." };
    if (control.value.trim() === "") return {};
    return { value: typedNumber(control.value.trim()) }; // an integer past 2^53 kept exactly
  }
  return control.value === "" ? {} : { value: control.value };
}

/**
 * A form for `schema` starting from `initial`. Returns `{el, read(), focus()}`; `read()`
 * validates and shows the errors inline, giving `{ok: true, value}` or `{ok: false}`.
 */
export function schemaForm(schema, initial, { label }) {
  if (isSimpleObject(schema)) return fieldsForm(schema, initial || {});
  return jsonEditor(schema, initial, label);
}

function fieldsForm(schema, initial) {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = [];
  const el = h("div", { class: "fields" });
  for (const [name, prop] of Object.entries(schema.properties)) {
    const type = simpleType(prop);
    const ids = { control: uid("f"), hint: uid("hint"), error: uid("err") };
    const start = name in initial ? initial[name] : prop.default;
    const control = fieldControl(name, prop, type, required.has(name), start, ids);
    const error = h("p", { id: ids.error, class: "field-error", hidden: true });
    const labelText = [visible(typeof prop.title === "string" && prop.title ? prop.title : name), required.has(name) ? " (required)" : ""];
    const description = typeof prop.description === "string" ? visible(prop.description) : "";
    const hidden = typeof start === "string" && visible(start) !== start ? ` This value holds hidden characters, shown escaped: ${visible(start)}` : "";
    const hint = h("p", { id: ids.hint, class: "hint", text: `${description}${hidden}`.trim(), hidden: !description && !hidden });
    const row =
      type === "boolean"
        ? h("div", { class: "field field-check" }, control, h("label", { for: ids.control }, labelText), hint, error)
        : h("div", { class: "field" }, h("label", { for: ids.control }, labelText), hint, control, error);
    el.append(row);
    fields.push({ name, prop, type, control, error });
  }
  const formError = h("p", { class: "field-error", role: "alert", hidden: true });
  el.append(formError);

  function read() {
    const value = {};
    const problems = new Map();
    for (const f of fields) {
      const r = readControl(f.control, f.prop, f.type);
      if (r.error) problems.set(f.name, r.error);
      else if ("value" in r) value[f.name] = r.value;
    }
    const errors = problems.size ? [] : validate(schema, approximate(value));
    for (const e of errors) {
      const name = e.path.split("/")[0];
      if (fields.some((f) => f.name === name) && !problems.has(name)) problems.set(name, e.message);
      else if (!fields.some((f) => f.name === name)) problems.set("", e.message);
    }
    for (const f of fields) {
      const message = problems.get(f.name);
      f.error.textContent = message || "";
      f.error.hidden = !message;
      if (message) f.control.setAttribute("aria-invalid", "true");
      else f.control.removeAttribute("aria-invalid");
    }
    formError.textContent = problems.get("") || "";
    formError.hidden = !problems.get("");
    if (problems.size) {
      const first = fields.find((f) => problems.has(f.name));
      if (first) first.control.focus();
      return { ok: false };
    }
    return { ok: true, value };
  }
  return { el, read, focus: () => fields[0] && fields[0].control.focus() };
}

function jsonEditor(schema, initial, label) {
  const ids = { control: uid("json"), hint: uid("hint"), error: uid("err") };
  const start = initial !== undefined ? initial : schema && "default" in schema ? schema.default : undefined;
  const control = h("textarea", {
    id: ids.control,
    class: "json",
    rows: "6",
    spellcheck: "false",
    "aria-describedby": `${ids.hint} ${ids.error}`,
    value: start === undefined ? "" : stringifyExact(start, 2),
  });
  const description = schema && typeof schema.description === "string" ? `${visible(schema.description)} ` : "";
  const json = control.value;
  const hidden = visible(json) !== json ? ` It holds hidden characters, shown escaped: ${visible(json)}` : "";
  const hint = h("p", { id: ids.hint, class: "hint", text: `${description}Write JSON.${hidden}` });
  const error = h("div", { id: ids.error, class: "field-error", hidden: true });
  const el = h("div", { class: "field" }, h("label", { for: ids.control, text: label }), hint, control, error);

  function show(messages) {
    error.replaceChildren(...messages.map((m) => h("p", { text: m })));
    error.hidden = messages.length === 0;
    if (messages.length) {
      control.setAttribute("aria-invalid", "true");
      control.focus();
    } else control.removeAttribute("aria-invalid");
  }
  function read() {
    let value;
    try {
      value = parseExact(control.value);
    } catch (e) {
      show([`Not valid JSON: ${e.message}`]);
      return { ok: false };
    }
    const errors = validate(schema, approximate(value));
    show(errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)));
    return errors.length ? { ok: false } : { ok: true, value };
  }
  return { el, read, focus: () => control.focus() };
}
