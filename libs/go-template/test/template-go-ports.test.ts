/**
 * Rows ported from Go's own tests (text/template/parse's lexer and number
 * tests, text/template's exec tests, fmt's fmt_test.go float, complex,
 * reorder and width/precision tables), written as templates over the
 * JSON-like data model. The expected strings are Go's: taken from those
 * tables, or for parse errors derived from Go's newNumber/lexer rules (the
 * message Go's parser builds for that literal).
 */
import t from 'tap';
import { compileTemplate, TemplateError, validateTemplate } from '../src/index.js';
import { failure } from './fixture.js';

const render = (source: string, data: unknown = {}): string => compileTemplate(source, 't').execute(data);

/** [template, Go's parse error] — refused when parsed, so validateTemplate refuses them too. */
const badNumbers: [string, string][] = [
  ['{{0xi}}', 'template: t:1: illegal number syntax: "0xi"'],
  ['{{0xi.}}', 'template: t:1: illegal number syntax: "0xi"'],
  ['{{08}}', 'template: t:1: integer overflow: "08"'], // not octal, read as the float 8 with no '.', 'e' or 'p'
  ['{{09.5}}{{019}}', 'template: t:1: integer overflow: "019"'],
  ['{{1e400}}', 'template: t:1: illegal number syntax: "1e400"'], // ParseFloat's range error
  ['{{-1e400}}', 'template: t:1: illegal number syntax: "-1e400"'],
  ['{{1e400i}}', 'template: t:1: illegal number syntax: "1e400i"'],
  ['{{0x}}', 'template: t:1: illegal number syntax: "0x"'],
  ['{{0o}}', 'template: t:1: illegal number syntax: "0o"'],
  ['{{0b}}', 'template: t:1: illegal number syntax: "0b"'],
  ['{{-0o}}', 'template: t:1: illegal number syntax: "-0o"'],
  ['{{1_}}', 'template: t:1: illegal number syntax: "1_"'],
  ['{{1__2}}', 'template: t:1: illegal number syntax: "1__2"'],
  ['{{0x_}}', 'template: t:1: illegal number syntax: "0x_"'],
  ['{{1_.5}}', 'template: t:1: illegal number syntax: "1_.5"'],
  ['{{0x1.8}}', 'template: t:1: illegal number syntax: "0x1.8"'], // a hex float needs its p exponent
  ['{{0x123.}}', 'template: t:1: illegal number syntax: "0x123."'],
  ['{{1e}}', 'template: t:1: illegal number syntax: "1e"'],
  ['{{1e.}}', 'template: t:1: illegal number syntax: "1e"'],
  ['{{0xFFFFFFFFFFFFFFFFFF}}', 'template: t:1: illegal number syntax: "0xFFFFFFFFFFFFFFFFFF"'],
  ['{{99999999999999999999}}', 'template: t:1: integer overflow: "99999999999999999999"'],
  ['{{0b2}}', 'template: t:1: bad number syntax: "0b2"'],
  ['{{3k}}', 'template: t:1: bad number syntax: "3k"'],
  ['{{0o8}}', 'template: t:1: bad number syntax: "0o8"'],
  ['{{+-1}}', 'template: t:1: bad number syntax: "+-1"'],
  ['{{1+2.}}', 'template: t:1: bad number syntax: "1+2."'],
  ['{{1+2}}', 'template: t:1: bad number syntax: "1+2"'],
  ['{{1.2.3}}', 'template: t:1: unexpected ".3" in operand'],
  ['{{1e400+1i}}', 'template: t:1: strconv.ParseFloat: parsing "1e400": value out of range'],
  ['{{0b1+1i}}', 'template: t:1: syntax error scanning complex number'],
  ['x\n{{0xi}}', 'template: t:2: illegal number syntax: "0xi"'],
];

t.test("malformed number literals are refused when the template is parsed, with Go's message", async (t) => {
  for (const [source, message] of badNumbers) {
    let err: unknown;
    try {
      compileTemplate(source, 't');
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof TemplateError, `${source}: refused`);
    t.equal((err as TemplateError | undefined)?.phase, 'parse', `${source}: at parse time`);
    t.equal((err as Error | undefined)?.message, message, source);
    t.equal(validateTemplate(source), message.replace('template: t:', 'template: template:'), `${source}: validateTemplate`);
  }
});

/** [name, template, Go's output] */
const golden: [string, string, string][] = [
  // parse_test.go numberTests and exec_test.go ideal constants
  [
    'number forms',
    '{{7_3}} {{0b10_010_01}} {{0B10_010_01}} {{073}} {{0o73}} {{0O73}} {{0x7_3}} {{0X73}} {{+73}} {{-0x0}} {{0xdeadbeef}} {{0xef}}',
    '73 73 73 59 59 59 115 115 73 0 3735928559 239',
  ],
  [
    'float forms',
    '{{1e9}} {{-1e9}} {{1e19}} {{1e1_9}} {{1E19}} {{0x_1p4}} {{0X_1P4}} {{0x_1p-4}} {{1e-400}} {{0x1.8p1}} {{-0x1e}}',
    '1e+09 -1e+09 1e+19 1e+19 1e+19 16 16 0.0625 0 3 -30',
  ],
  ['types of ideal constants', '{{printf "%T %T %T %T %T %T %T" 3 1.0 1e1 0x1 0x1p1 1i 1+2i}}', 'int float64 float64 int float64 complex128 complex128'],
  [
    'complex constants',
    '{{1i}} {{4i}} {{-1.2+4.2i}} {{073i}} {{0i}} {{-12+0i}} {{13+0i}} {{1+0x1p1i}}',
    '(0+1i) (0+4i) (-1.2+4.2i) (0+73i) (0+0i) (-12+0i) (13+0i) (1+2i)',
  ],
  ['printf complex (exec_test)', '{{printf "%g" 1+7i}}', '(1+7i)'],
  ['complex truth, eq and print', '{{if 0i}}y{{else}}n{{end}}{{if 1i}}y{{end}} {{eq 1+2i 1+2i}} {{ne 1i 2i}} {{print 1i 2}}', 'ny true true (0+1i) 2'],
  // fmt_test.go: floats in %x/%X/%b
  ['printf %x of floats', '{{printf "%x|%X|%x|%x|%x|%x" 1.0 1.0 3.0 0.1 -2.5 0.0}}', '0x1p+00|0X1P+00|0x1.8p+01|0x1.999999999999ap-04|-0x1.4p+01|0x0p+00'],
  ['printf %x with precision (fmt_test)', '{{printf "%+.3x|%+.3x|% .3X|% .3x" 0.0 1.0 -1.0 1.0}}', '+0x0.000p+00|+0x1.000p+00|-0X1.000P+00| 0x1.000p+00'],
  ['printf %#x (fmt_test)', '{{printf "%#.0x|%#.4x|%#.0x|%#.4x" 1.0 1.0 123.0 123.0}}', '0x1.p+00|0x1.0000p+00|0x1.p+07|0x1.ec00p+06'],
  // fmt's fmtFloat counts %#x digits from the x of the prefix on, and keeps none for %#X
  ['printf %#x and %#X without precision', '{{printf "%#x|%#X|%#x" 1.0 1.0 0.0}}', '0x1.0000p+00|0X1.P+00|0x0.0000p+00'],
  ['printf %x rounds to even', '{{printf "%.1x|%.1x|%.0x|%.0x" 1.03125 1.09375 1.5 2.5}}', '0x1.0p+00|0x1.2p+00|0x1p+01|0x1p+01'],
  [
    'printf %b of floats (fmt_test)',
    '{{printf "%b|%#b|%.4b|%b|%b" 1.0 1.0 -1.0 0.0 0x1p-1074}}',
    '4503599627370496p-52|4503599627370496p-52|-4503599627370496p-52|0p-1074|1p-1074',
  ],
  ['printf %x of a tiny float', '{{printf "%x|%x" 0x1p-1074 0x1p-1022}}', '0x1p-1074|0x1p-1022'],
  // fmt_test.go: complex values
  [
    'printf complex precision (fmt_test)',
    '{{printf "%.f|% .f|%+.f|%+.3e|%+.3x|%+.3g" 0i 0i 0i 1+2i 1+2i 1+2i}}',
    '(0+0i)|( 0+0i)|(+0+0i)|(+1.000e+00+2.000e+00i)|(+0x1.000p+00+0x1.000p+01i)|(+1+2i)',
  ],
  [
    'printf complex negative (fmt_test)',
    '{{printf "%.3e|%.3x|%.3f|%.3g|% .3E|% .3X" -1-2i -1-2i -1-2i -1-2i -1-2i -1-2i}}',
    '(-1.000e+00-2.000e+00i)|(-0x1.000p+00-0x1.000p+01i)|(-1.000-2.000i)|(-1-2i)|(-1.000E+00-2.000E+00i)|(-0X1.000P+00-0X1.000P+01i)',
  ],
  [
    'printf complex sharp (fmt_test)',
    '{{printf "%#g|%#g|%#.0f|%#.0x|%#.0g|%#.4x" 1+2i 123456+789012i 1.23+1.0i 1.23+1.0i 0+100000i 123+1i}}',
    '(1.00000+2.00000i)|(123456.+789012.i)|(1.+1.i)|(0x1.p+00+0x1.p+00i)|(0.+1.e+05i)|(0x1.ec00p+06+0x1.0000p+00i)',
  ],
  [
    'printf complex width (fmt_test)',
    '{{printf "%#12.5g|%b|%v" 0+100000i 1+2i 1+2i}}',
    '(      0.0000 +1.0000e+05i)|(4503599627370496p-52+4503599627370496p-51i)|(1+2i)',
  ],
  ['printf complex bad verb', '{{printf "%d|%s" 1i 1i}}', '%!d(complex128=(0+1i))|%!s(complex128=(0+1i))'],
  // fmt_test.go reorderTests
  ['printf indexes', '{{printf "%[1]d" 1}}|{{printf "%[2]d" 2 1}}|{{printf "%[2]d %[1]d" 1 2}}|{{printf "%[2]*[1]d" 2 5}}', '1|1|2 1|    2'],
  [
    'printf indexes for width and precision',
    '{{printf "%[3]*.[2]*[1]f" 12.0 2 6}}|{{printf "%[1]*.[2]*[3]f" 6 2 12.0}}|{{printf "%[1]*[3]f" 10 99 12.0}}|{{printf "%.[1]*[3]f" 6 99 12.0}}|{{printf "%[1]*.[3]f" 6 3 12.0}}',
    ' 12.00| 12.00| 12.000000|12.000000|    12',
  ],
  [
    'printf indexes reuse arguments',
    '{{printf "%d %d %d %#[1]o %#o %#o" 11 12 13}}|{{printf "%d %d %d %#[1]o %#o %#o %#o" 11 12 13}}',
    '11 12 13 013 014 015|11 12 13 013 014 015 %!o(MISSING)',
  ],
  [
    'printf bad indexes',
    '{{printf "%[d" 2 1}}|{{printf "%]d" 2 1}}|{{printf "%[]d" 2 1}}|{{printf "%[-3]d" 2 1}}|{{printf "%[99]d" 2 1}}|{{printf "%[3]" 2 1}}',
    '%!d(BADINDEX)|%!](int=2)d%!(EXTRA int=1)|%!d(BADINDEX)|%!d(BADINDEX)|%!d(BADINDEX)|%!(NOVERB)',
  ],
  [
    'printf index with width or precision',
    '{{printf "%[1].2d" 5 6}}|{{printf "%[1]2d" 2 1}}|{{printf "%3.[2]d" 7}}|{{printf "%.[2]d" 7}}',
    '%!d(BADINDEX)|%!d(BADINDEX)|%!d(BADINDEX)|%!d(BADINDEX)',
  ],
  [
    'printf bad index keeps the sequence',
    '{{printf "%[5]d %[2]d %d" 1 2 3}}|{{printf "%d %[3]d %d" 1 2}}|{{printf "%.[]"}}',
    '%!d(BADINDEX) 2 3|1 %!d(BADINDEX) 2|%!](BADINDEX)',
  ],
  [
    'printf odd widths',
    '{{printf "%.-3d" 42}}|{{printf "%2147483648d" 42}}|{{printf "%-2147483648d" 42}}|{{printf "%.2147483648d" 42}}',
    '%!-(int=42)3d|%!(NOVERB)%!(EXTRA int=42)|%!(NOVERB)%!(EXTRA int=42)|%!(NOVERB)%!(EXTRA int=42)',
  ],
  // fmt_test.go startests
  ['printf star arguments', '{{printf "%*d|%-*d|%*d|%-*d|%.*d|%*.*d|%0*d" 4 42 4 42 -4 42 -4 42 4 42 8 4 42 4 42}}', '  42|42  |42  |42  |0042|    0042|0042'],
  [
    'printf bad star arguments',
    '{{printf "%*d" nil 42}}|{{printf "%*d" 10000000 42}}|{{printf "%*d" -10000000 42}}|{{printf "%.*d" nil 42}}|{{printf "%.*d" -1 42}}|{{printf "%.*d" 10000000 42}}',
    '%!(BADWIDTH)42|%!(BADWIDTH)42|%!(BADWIDTH)42|%!(BADPREC)42|%!(BADPREC)42|%!(BADPREC)42',
  ],
  ['printf star odd cases', '{{printf "%*d" 5 "foo"}}|{{printf "%*% %d" 20 5}}|{{printf "%*" 4}}', '%!d(string=  foo)|% 5|%!(NOVERB)'],
  ['printf star from a byte', '{{printf "%0*d" (index "\\x04" 0) 42}}', '0042'],
  // indexing a string yields a byte (uint8); slicing keeps a string
  [
    'index of a string is a byte',
    '{{index "abc" 1}} {{printf "%T %v %c %q %x %#v" (index "abc" 1) (index "abc" 1) (index "abc" 1) (index "abc" 1) (index "abc" 1) (index "abc" 1)}}',
    "98 uint8 98 b 'b' 62 0x62",
  ],
  ['index of a multibyte string', '{{index "é" 0}} {{index "é" 1}} {{len "é"}}', '195 169 2'],
  ['slice of a string is a string', '{{slice "abc" 1 2}} {{printf "%T" (slice "abc" 1)}} {{printf "%q" (slice "abc" 3)}}', 'b string ""'],
  [
    'bytes compare with ints',
    '{{eq (index "abc" 1) 98}} {{ne (index "abc" 0) 98}} {{lt (index "abc" 1) 99}} {{lt -1 (index "abc" 1)}} {{gt (index "abc" 1) 98}} {{eq (index "abc" 1) (index "abc" 1)}}',
    'true true true true false true',
  ],
  ['byte as printf extra and toJson', '{{printf "x" (index "a" 0)}} {{toJson (index "a" 0)}}', 'x%!(EXTRA uint8=97) 97'],
];

t.test("Go's own exec and fmt test rows render the same", async (t) => {
  for (const [name, source, expected] of golden) {
    let got: string;
    try {
      got = render(source, { S: 'abc' });
    } catch (e) {
      got = `error: ${(e as Error).message}`;
    }
    t.equal(got, expected, name);
  }
});

/** [template, Go's execution error] — comparisons (funcs.go eq/lt, Go 1.18+ rules for maps and slices). */
const comparisonErrors: [string, string][] = [
  ['{{eq `xy` 1}}', 'template: t:1:2: executing "t" at <eq `xy` 1>: error calling eq: incompatible types for comparison'],
  ['{{eq 2 2.0}}', 'template: t:1:2: executing "t" at <eq 2 2.0>: error calling eq: incompatible types for comparison'],
  ['{{ne 1 "1"}}', 'template: t:1:2: executing "t" at <ne 1 "1">: error calling ne: incompatible types for comparison'],
  ['{{lt true true}}', 'template: t:1:2: executing "t" at <lt true true>: error calling lt: invalid type for comparison'],
  ['{{lt 1+0i 1+0i}}', 'template: t:1:2: executing "t" at <lt 1+0i 1+0i>: error calling lt: invalid type for comparison'],
  ['{{ge 1i 1}}', 'template: t:1:2: executing "t" at <ge 1i 1>: error calling ge: incompatible types for comparison'],
  ['{{eq 1i 1}}', 'template: t:1:2: executing "t" at <eq 1i 1>: error calling eq: incompatible types for comparison'],
  ['{{lt .L 1}}', 'template: t:1:2: executing "t" at <lt .L 1>: error calling lt: invalid type for comparison'],
  ['{{eq .M 1}}', 'template: t:1:2: executing "t" at <eq .M 1>: error calling eq: incompatible types for comparison'],
  ['{{eq .L .L}}', 'template: t:1:2: executing "t" at <eq .L .L>: error calling eq: non-comparable type [x y]: []interface {}'],
  ['{{eq .M .M}}', 'template: t:1:2: executing "t" at <eq .M .M>: error calling eq: non-comparable type map[a:%!s(int=1)]: map[string]interface {}'],
  ['{{eq (index "a" 0) "a"}}', 'template: t:1:2: executing "t" at <eq (index "a" 0) "a">: error calling eq: incompatible types for comparison'],
  ['{{lt (index "a" 0) 1.5}}', 'template: t:1:2: executing "t" at <lt (index "a" 0) 1.5>: error calling lt: incompatible types for comparison'],
  ['{{len 1i}}', 'template: t:1:2: executing "t" at <len 1i>: error calling len: len of type complex128'],
  ['{{index .L 1i}}', 'template: t:1:2: executing "t" at <index .L 1i>: error calling index: cannot index slice/array with type complex128'],
  ['{{toJson 1i}}', 'template: t:1:2: executing "t" at <toJson 1i>: error calling toJson: json: unsupported type: complex128'],
];

t.test('comparison errors are worded as Go words them', async (t) => {
  for (const [source, message] of comparisonErrors) {
    const err = failure(source, { L: ['x', 'y'], M: { a: 1 } });
    t.equal(err?.phase, 'exec', `${source}: phase`);
    t.equal(err?.message, message, source);
  }
});

/** parse_test.go errorTests: [name, template, text Go's parse error must contain]. */
const parseErrorTests: [string, string, string][] = [
  ['unclosed1', 'line1\n{{', 'unclosed1:2: unclosed action'],
  ['unclosed2', 'line1\n{{define `x`}}line2\n{{', 'unclosed2:3: unclosed action'],
  ['unclosed3', 'line1\n{{"x"\n"y"\n', 'unclosed3:4: unclosed action started at unclosed3:2'],
  ['unclosed4', '{{\n\n\n\n\n', 'unclosed4:6: unclosed action started at unclosed4:1'],
  ['var1', 'line1\n{{\nx\n}}', 'var1:3: function "x" not defined'],
  ['function', '{{foo}}', 'function "foo" not defined'],
  ['comment1', '{{/*}}', 'comment1:1: unclosed comment'],
  ['comment2', '{{/*\nhello\n}}', 'comment2:1: unclosed comment'],
  ['lparen', '{{.X (1 2 3}}', 'unclosed left paren'],
  ['rparen', '{{.X 1 2 3 ) }}', 'unexpected right paren'],
  ['rparen2', '{{(.X 1 2 3', 'unclosed action'],
  ['space', '{{`x`3}}', 'in operand'],
  ['idchar', '{{a#}}', "'#'"],
  ['charconst', "{{'a}}", 'unterminated character constant'],
  ['stringconst', '{{"a}}', 'unterminated quoted string'],
  ['rawstringconst', '{{`a}}', 'unterminated raw quoted string'],
  ['number', '{{0xi}}', 'number syntax'],
  ['multidefine', '{{define `a`}}a{{end}}{{define `a`}}b{{end}}', 'multiple definition of template'],
  ['eof', '{{range .X}}', 'unexpected EOF'],
  ['variable', '{{$x := 23}}{{with $x.y := 3}}{{$x 23}}{{end}}', 'unexpected ":="'],
  ['multidecl', '{{$a,$b,$c := 23}}', 'too many declarations'],
  ['undefvar', '{{$a}}', 'undefined variable'],
  ['wrongdot', '{{true.any}}', 'unexpected . after term'],
  ['wrongpipeline', '{{12|false}}', 'non executable command in pipeline'],
  ['emptypipeline', '{{ ( ) }}', 'missing value for parenthesized pipeline'],
  ['multilinerawstring', '{{ $v := `\n` }} {{', 'multilinerawstring:2: unclosed action'],
  ['rangeundefvar', '{{range $k}}{{end}}', 'undefined variable'],
  ['rangeundefvars', '{{range $k, $v}}{{end}}', 'undefined variable'],
  ['rangemissingvalue1', '{{range $k,}}{{end}}', 'missing value for range'],
  ['rangemissingvalue2', '{{range $k, $v := }}{{end}}', 'missing value for range'],
  ['rangenotvariable1', '{{range $k, .}}{{end}}', 'range can only initialize variables'],
  ['rangenotvariable2', '{{range $k, 123 := .}}{{end}}', 'range can only initialize variables'],
];

t.test("parse_test.go's errorTests are refused when parsed, with Go's wording", async (t) => {
  // The whole message where the substring leaves room for an older wording.
  t.equal(validateTemplate('{{.X 1 2 3 ) }}'), 'template: template:1: unexpected right paren');
  t.equal(validateTemplate('{{(.X))}}'), 'template: template:1: unexpected right paren');
  for (const [name, source, part] of parseErrorTests) {
    let err: unknown;
    try {
      compileTemplate(source, name);
    } catch (e) {
      err = e;
    }
    t.equal((err as TemplateError | undefined)?.phase, 'parse', `${name}: at parse time`);
    const message = (err as Error | undefined)?.message ?? '';
    t.ok(message.includes(part), `${name}: ${JSON.stringify(message)} contains ${JSON.stringify(part)}`);
  }
});

/** lex_test.go's error items, as the parser reports them: [name, template, Go's error]. */
const lexErrors: [string, string, string][] = [
  ['badchar', '#{{\x01}}', 'template: t:1: unrecognized character in action: U+0001'],
  ['unclosed action', '{{', 'template: t:1: unclosed action'],
  ['EOF in action', '{{range', 'template: t:1: unclosed action'],
  ['unclosed quote', '{{"\n"}}', 'template: t:1: unterminated quoted string'],
  ['unclosed raw quote', '{{`xx}}', 'template: t:1: unterminated raw quoted string'],
  ['unclosed char constant', "{{'\n}}", 'template: t:1: unterminated character constant'],
  ['bad number', '{{3k}}', 'template: t:1: bad number syntax: "3k"'],
  ['unclosed paren', '{{(3}}', 'template: t:1: unclosed left paren'],
  ['extra right paren', '{{3)}}', 'template: t:1: unexpected right paren'],
  ['text with bad comment', 'hello-{{/*/}}-world', 'template: t:1: unclosed comment'],
  ['comment close separated from delim', 'hello-{{/* */ }}-world', 'template: t:1: comment ends before closing delimiter'],
];

t.test("lex_test.go's error items give Go's parse errors", async (t) => {
  for (const [name, source, message] of lexErrors) {
    let err: unknown;
    try {
      compileTemplate(source, 't');
    } catch (e) {
      err = e;
    }
    t.equal((err as Error | undefined)?.message, message, name);
  }
});

/**
 * Go's slice does not unwrap interface values (index does): every field of
 * JSON-like data is an `interface {}`, so a field cannot be a slice index
 * while a constant, a parenthesized pipeline or a variable set from one can.
 * [template, Go's output or error]
 */
const interfaceIndexes: [string, string][] = [
  ['{{slice .X .One}}', 'template: t:1:2: executing "t" at <slice .X .One>: error calling slice: cannot index slice/array with type interface {}'],
  ['{{slice .X 0 .Two}}', 'template: t:1:2: executing "t" at <slice .X 0 .Two>: error calling slice: cannot index slice/array with type interface {}'],
  ['{{slice .S .One}}', 'template: t:1:2: executing "t" at <slice .S .One>: error calling slice: cannot index slice/array with type interface {}'],
  ['{{slice .X .Nil}}', 'template: t:1:2: executing "t" at <slice .X .Nil>: error calling slice: cannot index slice/array with type interface {}'],
  ['{{slice .X .Missing}}', 'template: t:1:2: executing "t" at <slice .X .Missing>: error calling slice: cannot index slice/array with type interface {}'],
  [
    '{{range .X}}{{slice $.X .}}{{end}}',
    'template: t:1:14: executing "t" at <slice $.X .>: error calling slice: cannot index slice/array with type interface {}',
  ],
  [
    '{{range $i, $e := .X}}{{slice $.X $e}}{{end}}',
    'template: t:1:24: executing "t" at <slice $.X $e>: error calling slice: cannot index slice/array with type interface {}',
  ],
  ['{{slice .X (.One)}} {{$o := .One}}{{slice .X $o}} {{slice .X 1}} {{index .X .One}} {{slice .Y}}', '[2 3] [2 3] [2 3] 2 [4 5]'],
  ['{{range $i, $e := .X}}{{slice $.X $i}}{{end}} {{with .Two}}{{slice $.X .}}{{end}}', '[1 2 3][2 3][3] [3]'],
];

t.test('slice indexes of static type interface {} are refused as Go refuses them', async (t) => {
  const data = { X: [1, 2, 3], Y: [4, 5], S: 'abc', One: 1, Two: 2, Nil: null };
  for (const [source, expected] of interfaceIndexes) {
    let got: string;
    try {
      got = render(source, data);
    } catch (e) {
      got = (e as Error).message;
    }
    t.equal(got, expected, source);
  }
});

/** A string literal's \x and octal escapes are bytes, as in Go: [template, Go's output]. */
const byteStrings: [string, string][] = [
  ['{{"\\xff" | len}}', '1'],
  ['{{len "\\xff\\xfe"}} {{len "\\377"}} {{len "\\u00ff"}} {{len "\\xc3\\xa9"}} {{"\\xc3\\xa9"}}', '2 1 2 2 é'],
  ['{{index "\\xff" 0}} {{printf "%q" "\\xff"}} {{printf "%x" "a\\xffb"}} {{printf "%q" "\\xff\\u00ff"}}', '255 "\\xff" 61ff62 "\\xffÿ"'],
  ['{{len (slice "é" 0 1)}} {{printf "%q" (slice "é" 1)}} {{printf "%q" (slice "é" 0 1)}}{{slice "é" 0 1}}{{slice "é" 1}}', '1 "\\xa9" "\\xc3"é'],
  ['{{eq "\\xff" (slice "\\xff\\xfe" 0 1)}} {{ne "\\xff" "\\xfe"}} {{lt "\\xfe" "\\xff"}}', 'true true true'],
  ['{{toBase64 "\\xff"}} {{toHex "a\\xff"}} {{toJson "\\xff"}}', '/w== 61ff "\ufffd"'],
  ['[{{"\\xff"}}]', '[\ufffd]'],
];

t.test("a string literal's \\x and octal escapes are bytes, not code points", async (t) => {
  for (const [source, expected] of byteStrings) t.equal(render(source), expected, source);
});
