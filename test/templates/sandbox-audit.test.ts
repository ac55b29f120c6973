import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RENDER_LIMITS, TemplateError, analyzeTemplate, renderTemplate } from '../../controller/src/templates/engine';
import { startTestController, type TestController } from '../helpers/controller';

/**
 * Attacks on the template sandbox (sandbox.ts) that got through it, each refused now: through the
 * engine directly, and end to end through the render API (which renders in the worker pool).
 */

/** The render's error, or a failure naming what rendered instead. */
function renderError(source: string, variables: Record<string, unknown> = {}): TemplateError {
  let output: string;
  try {
    output = renderTemplate(source, variables);
  } catch (err) {
    expect(err).toBeInstanceOf(TemplateError);
    return err as TemplateError;
  }
  throw new Error(`rendered instead of failing: ${JSON.stringify(output.slice(0, 200))}`);
}

/**
 * A sandbox escape: select() looked its test up by name in a plain object, so
 * select("__defineGetter__", f) ran Object.prototype.__defineGetter__ on the render context. A getter
 * for context.env (a cycler's raw next(), taken out of the cycler with dictsort) then handed the
 * context to a macro; the context's prototype methods, enumerable and read raw by a for loop, gave
 * init(), which made a stock Environment whose renderString() rendered with nunjucks' own runtime.
 */
const ESCAPE = `{% macro grab(c, item, arg) %}
{% for k, v in c %}{% if k == "init" %}{% set holder = {"init": v} %}{% set _ = holder.init() %}
{% for k2, v2 in holder.env %}{% if k2 == "renderString" %}
{% set stock = {"rs": v2, "asyncFilters": [], "extensionsList": [], "opts": {}, "globals": {"range": range} } %}
{% set out = stock.rs("{{ range.constructor('return process')().pid }}") %}
{% for k3, v3 in c %}{% if k3 == "setVariable" %}{% set into = {"ctx": c.ctx, "sv": v3} %}{% set _ = into.sv("leak", "pid=" ~ out) %}{% endif %}{% endfor %}
{% endif %}{% endfor %}
{% endif %}{% endfor %}
{% endmacro %}
{% set fakeEnv = {"getTest": (cycler({"call": grab}) | dictsort)[1][1], "globals": {"range": range} } %}
{{ ["env"] | select("__defineGetter__", (cycler(fakeEnv) | dictsort)[1][1]) | length }}
{{ ["x"] | select("anything") | length }}
{{ leak }}`;

/**
 * A code injection: nunjucks pastes names into the JavaScript it compiles a template to
 * (`contextOrFrameLookup(context, frame, "NAME")`), and its lexer lets a name hold `"`, `&` and
 * backquotes. The name closes the string and calls Function through tagged templates, which need no
 * parentheses: every other character of the code is a hex escape.
 */
const hex = (code: string) => code.replace(/[^A-Za-z0-9]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
const injectedName = (code: string) => `a"&Function\`${hex(code)}\`\`\`&"`;
/** The same through the name nunjucks gives a call for its errors, where it escapes quotes but not backslashes. */
const injectedCallee = (code: string) =>
  `{{ x["\\\\\\"&eval(${JSON.stringify(code).replace(/"/g, '`')})/*"]() }}*/,context,[])),0,4),env.opts.autoescape);//`;

describe('sandbox audit: the engine', () => {
  it('select and reject take only the registered tests, never an Object.prototype method', () => {
    const sources = [
      `{% macro m() %}x{% endmacro %}{{ ["lookup"] | select("__defineGetter__", m) | length }}`,
      `{{ ["env"] | reject("__defineSetter__", range) | length }}`,
      `{{ [1] | select("constructor") | length }}`,
      `{{ [1] | reject("hasOwnProperty") | length }}`,
      `{{ [1] | select("valueOf") | length }}`,
      `{{ [1] | select("__lookupGetter__") | length }}`,
      `{% filter select("toString") %}x{% endfilter %}`,
    ];
    for (const source of sources) expect(renderError(source).detail, source).toMatch(/^test not found: /);
    // The registered tests still work.
    expect(renderTemplate(`{{ [1, 2, 3, 4] | select("odd") | join(",") }} {{ [1, 2, 3] | reject("equalto", 2) | join(",") }}`, {})).toBe('1,3 1,3');
  });

  it('refuses the escape through select, a raw cycler method and the render context', () => {
    // Its dict impersonating a test ({"call": grab}) is refused before it renders; select("__defineGetter__")
    // is refused by the test above, and the loops over the context would see none of its methods.
    expect(analyzeTemplate(ESCAPE).error?.detail).toBe("'call' cannot be a key in templates");
    const error = renderError(ESCAPE);
    expect(error.detail).toBe("'call' cannot be a key in templates");
    expect(error.message).not.toContain(String(process.pid));
    // With the key spelled differently, the chain stops at select.
    expect(renderError(ESCAPE.replace('{"call": grab}', '{"cal": grab}')).detail).toBe('test not found: __defineGetter__');
  });

  it('loops, dictsort and list see an object the way attribute access does: its own data, its functions bound to it', () => {
    // A cycler's next() taken out of the cycler stays the cycler's: called on another object it does not write there.
    const out = renderTemplate(
      `{% set c = cycler("a") %}{% set d = {"f": (c | dictsort)[1][1]} %}{{ d.f() }}{{ d.current | default("-") }}` +
        `{% for k, v in c %}{% if k == "next" %}{% set e = {"f": v} %}{{ e.f() }}{{ e.current | default("-") }}{% endif %}{% endfor %}` +
        `{% for item in c | list %}{% if item.key == "next" %}{% set g = {"f": item.value} %}{{ g.f() }}{{ g.current | default("-") }}{% endif %}{% endfor %}`,
      {},
    );
    expect(out).toBe('a-a-a-');
    // Inherited properties are not the object's data: not looped over, not sorted, not counted as free loop iterations.
    const inherited = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`p${i}`, i]));
    const x = Object.assign(Object.create(inherited) as Record<string, unknown>, { own: 1 });
    expect(renderTemplate(`{% for k, v in x %}{{ k }}={{ v }};{% endfor %}|{{ x | dictsort | length }}|{{ x | list | length }}`, { x })).toBe(
      'own=1;|1|1',
    );
    // 600 x 600 iterations over inherited keys would have cost nothing against the step budget.
    expect(renderTemplate(`{% for a, av in x %}{% for b, bv in x %}{{ a }}{% endfor %}{% endfor %}`, { x })).toBe('own');
    // Names no template may read are not looped over either (JSON may carry them as own keys).
    const json = JSON.parse('{"__proto__": {"a": 1}, "constructor": 2, "ok": 3}') as Record<string, unknown>;
    expect(renderTemplate(`{% for k, v in x %}{{ k }};{% endfor %}{{ x | dictsort | length }}`, { x: json })).toBe('ok;1');
  });

  it('refuses dict literals keyed by a blocked name ({"__proto__": …} set the prototype of the dict)', () => {
    for (const key of ['__proto__', 'constructor', 'toString', 'call']) {
      const source = `{% set d = {"a": 1, "${key}": range} %}{% for k, v in d %}{{ k }}{% endfor %}`;
      const { error } = analyzeTemplate(source);
      expect(error?.detail, source).toBe(`'${key}' cannot be a key in templates`);
      expect(renderError(source).detail).toBe(`'${key}' cannot be a key in templates`);
    }
    expect(renderTemplate(`{% set d = {"a": 1, "b": 2} %}{{ d | dictsort | join(";") }}`, {})).toBe('a,1;b,2');
  });

  it('refuses names that are not identifiers: a name cannot break out of the compiled code', () => {
    const flag = '__sandboxAuditInjected';
    const name = injectedName(`globalThis.${flag} = 1`);
    for (const source of [
      `{{ ${name} }}`,
      `{% if ${name} %}{% endif %}`,
      `{% set ${name} = 1 %}`,
      `{% for ${name} in [1] %}{% endfor %}`,
      `{% for k, ${name} in {"a": 1} %}{% endfor %}`,
      `{% macro m(${name}) %}{% endmacro %}`,
      `{% macro ${name}() %}{% endmacro %}`,
      `{{ m(${name}=1) }}`,
    ]) {
      const expected = `invalid name '${name}': names are letters, digits and underscores`;
      expect(analyzeTemplate(source).error?.detail, source).toBe(expected);
      expect(renderError(source, { x: {} }).detail, source).toBe(expected);
    }
    expect((globalThis as Record<string, unknown>)[flag]).toBeUndefined();
    // Names as templates write them still work.
    expect(renderTemplate('{% set _a1 = 1 %}{% for k, v_2 in {"b": _a1} %}{{ k }}{{ v_2 }}{% endfor %}{{ Name_3 }}', { Name_3: 'x' })).toBe('b1x');
  });

  it('writes the name of a call into the compiled code as a label: a string in it cannot break out', () => {
    const flag = '__sandboxAuditCallee';
    const source = injectedCallee(`globalThis.${flag} = 1`);
    // A valid template: it calls an attribute x does not have.
    expect(analyzeTemplate(source).error).toBeNull();
    const { detail } = renderError(source, { x: {} });
    expect(detail).toMatch(/^'x\[".*"\]' is not a function$/);
    expect(detail).not.toContain('\\');
    expect((globalThis as Record<string, unknown>)[flag]).toBeUndefined();
    expect(renderError('{{ x["a\nb"]() }}', { x: {} }).detail).toBe(`'x["a?b"]' is not a function`);
    // Backslashes in a called expression are text like any other.
    expect(renderTemplate('{{ "g\\\\h".replace("\\\\", "/") }} {{ x["a\\\\b"] }}', { x: { 'a\\b': 1 } })).toBe('g/h 1');
  });

  it('calls functions with no this: a template call never hands over the render context', () => {
    // Variables are JSON in the API; the engine takes anything, and a function given shows what a call passes.
    const probe = function (this: unknown) {
      return this === undefined ? 'none' : 'context';
    };
    expect(renderTemplate('{{ f() }}', { f: probe })).toBe('none');
  });

  it('limits the whole output, literal text included', () => {
    const chunk = 'A'.repeat(2000);
    const n = Math.ceil(RENDER_LIMITS.outputChars / chunk.length) + 1;
    expect(renderError(`{% for i in range(${n}) %}${chunk}{% endfor %}`).detail).toBe(
      `the output is larger than ${RENDER_LIMITS.outputChars} characters`,
    );
    expect(renderTemplate(`{% for i in range(${n - 3}) %}${chunk}{% endfor %}`, {})).toHaveLength((n - 3) * chunk.length);
  });

  it("counts a macro run from native code (a string method's replacer) against the step budget", () => {
    // 299,999 spaces, each replaced by a call of the macro: more calls than the budget allows.
    const error = renderError(`{% macro f() %}x{% endmacro %}{% set s = "a" | center(300000) %}{{ s.replaceAll(" ", f) | length }}`);
    expect(error.detail).toBe(`the template did more than ${RENDER_LIMITS.steps} loop iterations and calls`);
    // Below the budget, macros as replacers work as before.
    expect(renderTemplate(`{% macro f() %}-{% endmacro %}{{ "a b c".replaceAll(" ", f) }}`, {})).toBe('a-b-c');
  });

  it('keeps error messages short: an error never carries a huge value out of the render', () => {
    const build = `{% set s %}{% for i in range(1000) %}${'B'.repeat(1000)}{% endfor %}{% endset %}`;
    for (const tail of ['{{ [1] | groupby(s) }}', '{{ [1] | select(s) }}']) {
      const error = renderError(build + tail);
      expect(error.detail.length, tail).toBeLessThanOrEqual(1000);
      expect(error.message.length, tail).toBeLessThanOrEqual(1100);
    }
  });
});

describe('sandbox audit: the render API', () => {
  let c: TestController;
  let token: string;

  beforeAll(async () => {
    c = await startTestController();
    token = (await c.createOrgUser(['operator'])).token;
  });
  afterAll(async () => c?.close());

  async function render(source: string, variables: Record<string, unknown> = {}) {
    const created = await c.request('POST', '/api/config/templates', {
      token,
      body: { name: 'audit', platform: 'vendor_eos-gnmi', config_format: 'cli', source },
    });
    expect(created.status, created.text).toBe(201);
    return c.request('POST', `/api/config/templates/${created.body.id}/render`, { token, body: { variables } });
  }

  it('refuses a name that injects code into the compiled template, and runs nothing', async () => {
    const marker = `/tmp/switchboard-sandbox-audit-${process.pid}`;
    rmSync(marker, { force: true });
    const name = injectedName(`process.getBuiltinModule('fs').writeFileSync('${marker}', 'x')`);
    // In an if, the name is not a required variable: the render runs.
    const res = await render(`{% if ${name} %}{% endif %}ok`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('RENDER_ERROR');
    expect(res.body.error).toMatch(/^Render error: line 1, column \d+: invalid name '.*': names are letters, digits and underscores$/);
    const callee = await render(injectedCallee(`process.getBuiltinModule('fs').writeFileSync('${marker}', 'x')`), { x: {} });
    expect(callee.status).toBe(400);
    expect(callee.body.error).toMatch(/^Render error: line 1, column \d+: 'x\[".*"\]' is not a function$/);
    expect(existsSync(marker)).toBe(false);
    const validated = await c.request('POST', '/api/config/templates/validate', { token, body: { source: `{{ ${name} }}` } });
    expect(validated.body).toMatchObject({ valid: false, variables: [] });
  });

  it('refuses the escape through select and the render context, and leaks nothing', async () => {
    // `leak` is a free name, so a required variable: given, the render runs.
    const res = await render(ESCAPE, { leak: '' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('RENDER_ERROR');
    expect(res.body.error).toMatch(/^Render error: line 10, column \d+: 'call' cannot be a key in templates$/);
    expect(res.text).not.toContain(`pid=${process.pid}`);
  });

  it('refuses a template whose literal text makes the output larger than the limit', async () => {
    const chunk = 'A'.repeat(2000);
    const res = await render(`{% for i in range(${Math.ceil(RENDER_LIMITS.outputChars / chunk.length) + 1}) %}${chunk}{% endfor %}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`Render error: the output is larger than ${RENDER_LIMITS.outputChars} characters`);
  });

  it('answers a short error when a huge value ends up in an error message', async () => {
    const res = await render(`{% set s %}{% for i in range(2000) %}${'B'.repeat(1000)}{% endfor %}{% endset %}{{ [1] | groupby(s) }}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Render error: /);
    expect(res.text.length).toBeLessThan(2000);
  });

  it('checks a source in a render worker, not on the event loop: a large one no longer holds up every request', async () => {
    // About a megabyte of template, the largest a template may be: parsing and checking it takes a second or more.
    const source = Array.from({ length: 20_000 }, (_, i) => `interface Ethernet${i}\n description {{ d${i % 50} }}\n`).join('');
    expect(source.length).toBeGreaterThan(800_000);
    let loopTurned = false;
    setImmediate(() => (loopTurned = true));
    // Checked on the event loop, the answer came back before the loop could turn once.
    const checked = await c.services.templates.validate(source);
    expect(loopTurned).toBe(true);
    expect(checked.valid).toBe(true);
    expect(checked.variables.map((v) => v.name)).toHaveLength(50);
    const created = await c.request('POST', '/api/config/templates', {
      token,
      body: { name: 'large', platform: 'vendor_eos-gnmi', config_format: 'cli', source },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.variables).toHaveLength(50);
  });
});
