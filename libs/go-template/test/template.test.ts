/**
 * Golden tests of the Go text/template-compatible renderer: syntax, control
 * structures, builtins and the data model. Every expected output is what Go's
 * text/template prints for the same template and data (cross-checked against
 * Go itself; the Go 1.22/1.23 features marked below against Go's documented
 * behaviour), so these strings must not be "fixed" to match a change.
 */
import t from 'tap';
import { compileTemplate, GoFloat, renderTemplate, TemplateError, validateTemplate } from '../src/index.js';
import { fixture } from './fixture.js';

const render = (source: string, data: unknown = fixture()): string => compileTemplate(source, 't').execute(data);

/** [name, template, Go's output for fixture()] */
const golden: [string, string, string][] = [
  ['plain text', 'hello, world', 'hello, world'],
  ['field', 'Hello {{.Name}}!', 'Hello alice!'],
  ['spaces inside action', '{{ .Name }}|{{\t.Event\t}}', 'alice|upload'],
  ['trim both', 'a  {{- .Name -}}  b', 'aaliceb'],
  ['trim newlines', 'x\n  {{- .Name}}\n\t{{- " " -}}\n  y', 'xalice y'],
  ['comment', 'a{{/* a comment */}}b', 'ab'],
  ['comment trimmed', 'a \n {{- /* c */ -}} \n b', 'ab'],
  ['negative number is not a trim marker', '{{-3}} {{3 -}} x', '-3 3x'],
  ['literal delimiters', '{{"{{"}}x{{"}}"}}', '{{x}}'],
  ['nested fields', '{{.Nested.Inner.Deep}}', 'value'],
  ['missing key', '[{{.Nope}}]', '[<no value>]'],
  ['missing key chain', '[{{.Nope.Deeper.Still}}]', '[<no value>]'],
  ['nil value', '[{{.Nil}}] [{{.Nested.Inner.Nil}}]', '[<no value>] [<no value>]'],
  ['root variable inside with', '{{with .Nested}}{{$.Name}}:{{.Inner.Deep}}{{end}}', 'alice:value'],
  ['dot', '{{with .Name}}{{.}}{{end}}', 'alice'],
  ['variables declare and assign', '{{$n := 0}}{{range .Errors}}{{$n = len .}}{{end}}{{$n}}', '7'],
  ['variable field chain', '{{$u := index .Users 0}}{{$u.Name}} {{$u.Age}} {{$u.Tags}}', 'bob 31 [x y]'],
  ['field of parenthesized pipeline', '{{(index .Users 1).Name}}', 'carol'],
  ['print map sorted', '{{.Meta}}', 'map[a:one b:two c:three]'],
  ['print slice', '{{.Errors}}', '[quota exceeded timeout]'],
  ['print nested slices', '{{.Matrix}}', '[[1 2] [3 4]]'],
  ['print slice of maps', '{{.Users}}', '[map[Age:31 Name:bob Tags:[x y]] map[Age:27 Name:carol Tags:[]]]'],
  ['print empties', '{{.Empty}} {{.EmptyMap}} [{{.EmptyStr}}]', '[] map[] []'],
  ['print slice with nil', '{{.WithNil}}', '[a <nil> 1]'],
  ['print bools', '{{.Flag}} {{.Off}} {{true}} {{false}}', 'true false true false'],
  ['string escapes', '{{"tab\\there \\u00e9\\x41\\101\\\\\\""}}', 'tab\there éAA\\"'],
  ['raw string', '{{`a\\nb "c"`}}', 'a\\nb "c"'],
  ['char constants', "{{'a'}} {{'\\n'}} {{'é'}}", '97 10 233'],
  ['integer literals', '{{42}} {{-7}} {{0x1F}} {{0o17}} {{017}} {{0b101}} {{1_000}} {{+5}}', '42 -7 31 15 15 5 1000 5'],
  [
    'float literals',
    '{{1.5}} {{1e3}} {{1.0}} {{0.000012}} {{1e21}} {{123456789.0}} {{.5}} {{100000.0}} {{1e6}} {{-2.50}}',
    '1.5 1000 1 1.2e-05 1e+21 1.23456789e+08 0.5 100000 1e+06 -2.5',
  ],
  ['data numbers', '{{.Pi}} {{.Ratio}} {{.Small}} {{.Big}} {{.Num}} {{.Neg}} {{.Floats}}', '3.14159 0.75 1.234e-05 1e+21 42 -7 [1.5 0.1 100]'],
  ['nil literal printed', '{{print nil}}', '<nil>'],
  ['if true', '{{if .Flag}}yes{{end}}', 'yes'],
  ['if else', '{{if .Off}}yes{{else}}no{{end}}', 'no'],
  ['else if chain', '{{if eq .Status 0}}zero{{else if eq .Status 1}}one{{else if eq .Status 2}}two{{else}}many{{end}}', 'one'],
  [
    'falsy values',
    '{{if .Zero}}y{{else}}n{{end}}{{if .Empty}}y{{else}}n{{end}}{{if .EmptyMap}}y{{else}}n{{end}}{{if .Nil}}y{{else}}n{{end}}{{if .Nope}}y{{else}}n{{end}}{{if .EmptyStr}}y{{else}}n{{end}}{{if .Off}}y{{else}}n{{end}}{{if 0.0}}y{{else}}n{{end}}',
    'nnnnnnnn',
  ],
  [
    'truthy values',
    '{{if .Num}}y{{end}}{{if .Errors}}y{{end}}{{if .Meta}}y{{end}}{{if .Name}}y{{end}}{{if .When}}y{{end}}{{if .Neg}}y{{end}}{{if .Ratio}}y{{end}}',
    'yyyyyyy',
  ],
  ['if with declaration', '{{if $e := .Errors}}{{len $e}} errors{{end}}', '2 errors'],
  ['nested if', '{{if .Flag}}{{if .Off}}a{{else}}b{{end}}{{else}}c{{end}}', 'b'],
  ['with sets dot', '{{with .Users}}{{len .}}{{end}}', '2'],
  ['with else', '{{with .Empty}}has{{else}}none{{end}}', 'none'],
  ['with variable', '{{with $x := .Name}}{{$x}}={{.}}{{end}}', 'alice=alice'],
  ['range slice', '{{range .Errors}}[{{.}}]{{end}}', '[quota exceeded][timeout]'],
  ['range index and element', '{{range $i, $e := .Errors}}{{$i}}:{{$e}} {{end}}', '0:quota exceeded 1:timeout '],
  ['range map sorted keys', '{{range $k, $v := .Meta}}{{$k}}={{$v}} {{end}}', 'a=one b=two c=three '],
  ['range map values', '{{range .Meta}}{{.}},{{end}}', 'one,two,three,'],
  ['range map bytewise key order', '{{range $k, $v := .Keys}}{{$k}} {{end}}', '10 9 B b z é '],
  ['range empty else', '{{range .Empty}}x{{else}}empty{{end}}', 'empty'],
  ['range missing else', '{{range .Nope}}x{{else}}missing{{end}}', 'missing'],
  ['range break', '{{range .Users}}{{if eq .Name "carol"}}{{break}}{{end}}{{.Name}};{{end}}', 'bob;'],
  ['range continue', '{{range $i, $e := .Errors}}{{if eq $i 0}}{{continue}}{{end}}{{$e}}{{end}}', 'timeout'],
  ['range struct-like fields', '{{range .Users}}{{.Name}}({{.Age}}) {{end}}', 'bob(31) carol(27) '],
  ['nested range with root', '{{range .Users}}{{$u := .Name}}{{range .Tags}}{{$u}}/{{.}}@{{$.Protocol}} {{end}}{{end}}', 'bob/x@SFTP bob/y@SFTP '],
  ['range element nil', '{{range .WithNil}}{{.}};{{end}}', 'a;<no value>;1;'],
  ['range variable scope', '{{range $i, $e := .Errors}}{{end}}{{$x := 1}}{{range .Errors}}{{$x = 2}}{{end}}{{$x}}', '2'],
  ['range json array', '[{{range $i, $e := .Errors}}{{if $i}},{{end}}{{toJson $e}}{{end}}]', '["quota exceeded","timeout"]'],
  ['define and template', '{{define "greet"}}Hi {{.}}!{{end}}{{template "greet" .Name}}', 'Hi alice!'],
  ['template without data', '{{define "x"}}[{{.}}]{{end}}{{template "x"}}', '[<no value>]'],
  ['template with pipeline', '{{define "u"}}{{.Name}}={{.Age}};{{end}}{{range .Users}}{{template "u" .}}{{end}}', 'bob=31;carol=27;'],
  ['block', '{{block "b" .Name}}<{{.}}>{{end}}|{{template "b" "x"}}', '<alice>|<x>'],
  [
    'recursive template',
    '{{define "n"}}{{.Name}}{{with .Children}}({{range .}}{{template "n" .}} {{end}}){{end}}{{end}}{{template "n" .Tree}}',
    'root(a(a1 a2 ) b )',
  ],
  ['define after use', '{{template "later" .Num}}{{define "later"}}n={{.}}{{end}}', 'n=42'],
  ['and or values', '{{and 1 0 2}}|{{and 1 2}}|{{or 0 "" "x"}}|{{or 0 ""}}|', '0|2|x||'],
  ['and short circuit', '{{and .Nil .Nil.Foo}}|{{or .Name .Nil.Foo}}', '<no value>|alice'],
  ['or default', '{{or .Nope "default"}}', 'default'],
  ['not', '{{not .Flag}} {{not .Empty}} {{not 0}}', 'false true true'],
  ['eq multiple', '{{eq .Event "download" "upload"}} {{eq .Event "a" "b"}}', 'true false'],
  [
    'eq kinds',
    '{{eq 1 1}} {{eq 1.5 1.5}} {{eq .Ratio 0.75}} {{ne .Name "bob"}} {{eq .Flag true}} {{eq .Nope .Nope}} {{eq .Nope 1}}',
    'true true true true true true false',
  ],
  [
    'ordering',
    '{{lt 1 2}} {{le 2 2}} {{gt 3 2}} {{ge 1 2}} {{lt "a" "b"}} {{lt "B" "a"}} {{gt .Pi 3.0}} {{lt -1 0}}',
    'true true true false true true true true',
  ],
  ['len', '{{len .Unicode}} {{len .Errors}} {{len .Meta}} {{len ""}} {{len .EmptyMap}}', '17 2 3 0 0'],
  ['index', '{{index .Errors 1}} {{index .Meta "b"}} {{index .Matrix 1 0}} {{index "abc" 1}} {{index .Users 0 "Name"}}', 'timeout two 3 98 bob'],
  ['index missing map key', '[{{index .Meta "nope"}}]', '[<no value>]'],
  [
    'slice',
    '{{slice .Errors 1}} {{slice "hello" 1 3}} {{slice .Errors 0 1}} {{slice "hello"}} {{slice .Matrix 1 2}}',
    '[timeout] el [quota exceeded] hello [[3 4]]',
  ],
  ['print spacing', '{{print 1 2 "a" "b" 3 .Nil 4}}', '1 2ab3 <nil> 4'],
  ['println', '{{println "a" 1 .Nil}}', 'a 1 <nil>\n'],
  ['html', '{{html .Html}} {{html "a" 1}}', '&lt;a href=&#34;x&#34;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt; a1'],
  ['js', '{{js .Html}} {{js "line\\nnext=é"}}', '\\u003Ca href\\u003D\\"x\\"\\u003ETom \\u0026 \\\'Jerry\\\'\\u003C/a\\u003E line\\u000Anext\\u003Dé'],
  ['urlquery', '{{urlquery "a b&c=d/é"}} {{urlquery "x" 1}}', 'a+b%26c%3Dd%2F%C3%A9 x1'],
  ['escapers with missing value', '{{html .Nope}} {{urlquery .Nope}}', '&lt;no value&gt; %3Cno+value%3E'],
  ['pipeline chain', '{{.Name | printf "%s!" | printf "[%s]"}}', '[alice!]'],
  ['pipeline into len', '{{"abc" | len}} {{.Errors | len}}', '3 2'],
  ['pipeline final argument last', '{{3 | printf "%d-%d" 2}}', '2-3'],
  ['parenthesized arguments', '{{printf "%d tags" (len (index .Users 0).Tags)}}', '2 tags'],
  ['pipeline with declaration', '{{$s := .Name | printf "%q"}}{{$s}}', '"alice"'],
  ['assignment inside with', '{{with $x := .Name}}{{$x = "y"}}{{$x}}{{end}}{{.Name}}', 'yalice'],
  ['empty define is replaced', '{{define "a"}}{{end}}{{define "a"}}x{{end}}{{template "a"}}', 'x'],
  ['pipeline into printf and deep index', '{{.Users | len | printf "%d users"}} {{index .Users 0 "Tags" 1}}', '2 users y'],
  ['and or not combined', '{{if and .Flag (or .Off .Num) (not .Nil)}}ok{{end}} {{or .Nope .Nil .EmptyStr}}', 'ok '],
  ['shadowed variable in if', '{{$a := 1}}{{if true}}{{$a := 2}}{{$a}}{{end}}{{$a}}', '21'],
  [
    'range with trimmed if else',
    '{{range .Users}}{{- if .Tags}}{{.Name}}:{{range .Tags}}{{.}}{{end}}{{else}}{{.Name}}:none{{end}};{{- end}}',
    'bob:xy;carol:none;',
  ],
  ['empty slices', '{{slice .Errors 1 1}} {{slice .Errors 2}} {{len (slice .Errors 0 0)}}', '[] [] 0'],
  ['index with unicode key and nested maps', '{{index .Keys "é"}} {{index .Matrix 0}} {{index .Nested "Inner" "Deep"}}', 'e-acute [1 2] value'],
  ['multiline comment with trim', 'a{{/* multi\nline */}}b{{- /* x */}} c', 'ab c'],
  ['eq with nil values', '{{eq .Nil .Nope}} {{eq .Nil nil}} {{ne .Name .Nil}}', 'true true true'],
  ['ordering mixed', '{{lt 1.5 2.0}} {{le "a" "a"}} {{ge .Num 42}} {{gt .Neg -8}}', 'true true true true'],
  // Go 1.22 (range over an int) and Go 1.23 (else with, JSON \\b \\f): from Go's release notes and docs.
  [
    'range over int (Go 1.22)',
    '{{range 3}}{{.}}{{end}}|{{range $i := .Num}}{{if ge $i 3}}{{break}}{{end}}{{$i}},{{end}}|{{range 0}}x{{else}}none{{end}}',
    '012|0,1,2,|none',
  ],
  ['else with (Go 1.23)', '{{with .Nope}}a{{else with .Name}}b:{{.}}{{else}}c{{end}}|{{with .Nope}}a{{else with .Empty}}b{{else}}c{{end}}', 'b:alice|c'],
  ['json short escapes (Go 1.22)', '{{toJson "a\\bb\\fc\\u0001"}}', '"a\\bb\\fc\\u0001"'],
];

t.test('golden templates render like Go', async (t) => {
  t.ok(golden.length >= 80, `golden table has ${golden.length} cases`);
  for (const [name, source, expected] of golden) {
    t.equal(render(source), expected, name);
  }
});

t.test('API: compile once, execute many; validate; render', async (t) => {
  t.equal(renderTemplate('{{.A}}-{{.B}}', { A: 1, B: 'x' }), '1-x');

  const tpl = compileTemplate('{{$x := .A}}{{$x}}{{range .L}}{{$x = .}}{{end}}{{$x}}');
  t.equal(tpl.name, 'template', 'default template name');
  t.equal(tpl.execute({ A: 'a', L: [1, 2] }), 'a2');
  t.equal(tpl.execute({ A: 'b', L: [] }), 'bb', 'no variable state survives an execution');
  t.equal(compileTemplate('x', 'subject').name, 'subject');

  t.equal(validateTemplate('Hello {{.Name}}{{if .X}}{{end}}'), null);
  t.equal(validateTemplate('Hello {{.Name'), 'template: template:1: unclosed action');
  t.equal(validateTemplate('{{Name}}'), 'template: template:1: function "Name" not defined');
  t.equal(validateTemplate('{{end}}'), 'template: template:1: unexpected {{end}}');
});

t.test('API: TemplateError carries Go messages and the failing phase', async (t) => {
  let caught: unknown;
  try {
    compileTemplate('a\n{{if .A}}\n{{.B\n', 'body');
  } catch (e) {
    caught = e;
  }
  t.ok(caught instanceof TemplateError && caught instanceof Error, 'parse error is a TemplateError');
  t.equal((caught as TemplateError).phase, 'parse');
  t.equal((caught as TemplateError).name, 'TemplateError');
  t.equal((caught as TemplateError).message, 'template: body:4: unclosed action started at body:3');

  caught = undefined;
  const tpl = compileTemplate('ok\n  {{.X.Y}}', 'http body');
  try {
    tpl.execute({ X: null });
  } catch (e) {
    caught = e;
  }
  t.ok(caught instanceof TemplateError, 'execution error is a TemplateError');
  t.equal((caught as TemplateError).phase, 'exec');
  t.equal(
    (caught as TemplateError).message,
    // Go positions a chain at its last field: .Y is at byte 6 of line 2.
    'template: http body:2:6: executing "http body" at <.X.Y>: nil pointer evaluating interface {}.Y',
  );
  t.equal(tpl.execute({ X: { Y: 'fine' } }), 'ok\n  fine', 'a failed execution does not break the template');
});

t.test('data model: JS values read as the Go values JSON decodes to', async (t) => {
  t.equal(render('{{.}}|{{.A}}|{{.A.B}}', null), '<no value>|<no value>|<no value>', 'null data is no data');
  t.equal(compileTemplate('{{.}}|{{.A}}').execute(undefined), '<no value>|<no value>', 'undefined data is no data');
  t.equal(render('{{.A}}|{{len .}}|{{.}}', { A: undefined, B: 1 }), '<no value>|1|map[B:1]', 'undefined key = missing');
  t.equal(
    render('{{.F}} {{printf "%T %.1f" .F .F}} {{eq .F 2.0}} {{.I}} {{printf "%T" .I}}', { F: new GoFloat(2), I: 2 }),
    '2 float64 2.0 true 2 int',
    'GoFloat marks an integral float64',
  );
  t.equal(
    render('{{range $k, $v := .M}}{{$k}}={{$v}} {{end}}|{{.M}}|{{index .M 9}}', {
      M: new Map<number, string>([
        [10, 'a'],
        [9, 'b'],
        [100, 'c'],
      ]),
    }),
    '9=b 10=a 100=c |map[9:b 10:a 100:c]|b',
    'Map keys sort numerically',
  );
  t.equal(
    render('{{.B}}|{{printf "%s %x %q" .B .B .B}}|{{len .B}}|{{index .B 1}}', { B: new Uint8Array([104, 105]) }),
    '[104 105]|hi 6869 "hi"|2|105',
    'Uint8Array is []byte',
  );
  t.equal(render('{{.N}}', { N: 2 ** 53 }), '9007199254740992');
  t.equal(render('{{.N}} {{toJson .N}}', { N: -0.5e-7 }), '-5e-08 -5e-8');
});

t.test('data model: functions and call', async (t) => {
  const data = {
    Add: (a: number, b: number) => a + b,
    Fail: () => {
      throw new Error('boom');
    },
  };
  t.equal(render('{{call .Add 1 2}} {{call .Add "a" "b"}} {{if .Add}}set{{end}}', data), '3 ab set');
  t.throws(() => render('{{call .Fail}}', data), {
    name: 'TemplateError',
    message: 'template: t:1:2: executing "t" at <call .Fail>: error calling call: boom',
  });
  t.throws(() => render('{{.Add}}', data), {
    message: 'template: t:1:2: executing "t" at <{{.Add}}>: can\'t print {{.Add}} of type func(...interface {}) interface {}',
  });
  t.throws(() => render('{{.Add 1 2}}', data), {
    message: 'template: t:1:2: executing "t" at <.Add>: Add is not a method but has arguments',
  });
  t.throws(() => render('{{call .Nope}}', data), {
    message: 'template: t:1:2: executing "t" at <call .Nope>: error calling call: call of nil',
  });
});

class User {
  constructor(
    public Name: string,
    public Age: number,
  ) {}
  Greeting(prefix: string): string {
    return `${prefix} ${this.Name}`;
  }
  Adult(): boolean {
    return this.Age >= 18;
  }
}

class Size {
  constructor(public n: number) {}
  String(): string {
    return `${this.n} bytes`;
  }
}

t.test('data model: class instances are structs with methods', async (t) => {
  const data = { U: new User('bob', 31), S: new Size(12) };
  t.equal(
    render('{{.U.Name}} {{.U.Greeting "hi"}} {{if .U.Adult}}adult{{end}} {{.U}} {{printf "%+v" .U}} {{toJson .U}}', data),
    'bob hi bob adult &{bob 31} &{Name:bob Age:31} {"Name":"bob","Age":31}',
  );
  t.equal(render('{{.S}} {{printf "%v|%s|%d" .S .S .S}} {{print .S}}', data), '12 bytes 12 bytes|12 bytes|&{12} 12 bytes');
  t.throws(() => render('{{.U.Greeting}}', data), {
    message: 'template: t:1:4: executing "t" at <.U.Greeting>: wrong number of args for Greeting: want 1 got 0',
  });
  t.throws(() => render('{{.U.Missing}}', data), {
    message: 'template: t:1:4: executing "t" at <.U.Missing>: can\'t evaluate field Missing in type interface {}',
  });
  t.throws(() => render('{{.Missing}}', new User('x', 1)), {
    message: 'template: t:1:2: executing "t" at <.Missing>: can\'t evaluate field Missing in type *User',
  });
});
