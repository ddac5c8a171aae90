@testable import CourierSchema
import Foundation
import Testing

/// Courier's ECMA-262 engine: the patterns that hang a backtracking engine answer at once, deep nesting
/// and huge repetitions are bounded, backtracking patterns stop at their budget, the semantics follow
/// ECMAScript, and thousands of random patterns agree with node's `RegExp`.
@Suite(.timeLimit(.minutes(10))) struct RegexEngineTests {
    private static func matcher(_ pattern: String) throws -> PatternMatcher {
        try PatternMatcher(ecmaScript: pattern)
    }

    private static let a36 = String(repeating: "a", count: 36)
    private static let email =
        #"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$"#
    private static let optionalThenRequired = String(repeating: "a?", count: 100) + String(repeating: "a", count: 100)

    /// Patterns with exponential or polynomial backtracking, each with inputs that trigger it.
    static let catastrophic: [(String, String, Bool)] = [
        ("^(a+)+$", a36 + "!", false),
        ("^(a+)+$", a36, true),
        ("^(a+)+$", String(repeating: "a", count: 28) + "!", false),
        ("(a|aa)*b", String(repeating: "a", count: 40), false),
        ("(a|aa)*b", String(repeating: "a", count: 40) + "b", true),
        ("a*a*a*a*a*a*a*a*c", String(repeating: "a", count: 5_000), false),
        ("a*a*a*a*a*a*a*a*c", String(repeating: "a", count: 5_000) + "c", true),
        (email, String(repeating: "a", count: 40) + "!", false),
        (email, "abcdefghij.klmnopqrst_uvwxyz0123456789ab", false),
        (email, "john.doe_x@example.co.uk", true),
        (#"\s*\s*$"#, String(repeating: " ", count: 20_000) + "x", true),
        (#"^\s*\s*$"#, String(repeating: " ", count: 20_000) + "x", false),
        (#"\s*\s*x$"#, String(repeating: " ", count: 20_000) + "y", false),
        ("(x+x+)+y", String(repeating: "x", count: 5_000), false),
        ("(x+x+)+y", String(repeating: "x", count: 5_000) + "y", true),
        ("(.*a){20}", String(repeating: "a", count: 19) + String(repeating: "b", count: 2_000), false),
        ("(.*a){20}", String(repeating: "ab", count: 20), true),
        (optionalThenRequired, String(repeating: "a", count: 100), true),
        (optionalThenRequired, String(repeating: "a", count: 99), false),
        ("^(a|a?)+$", String(repeating: "a", count: 50) + "b", false),
        ("^(\\w+\\s?)*$", String(repeating: "word ", count: 2_000) + "!", false),
        ("((a*)*)*b", String(repeating: "a", count: 10_000), false),
        ("(?:a|b|ab|ba)*c", String(repeating: "ab", count: 10_000), false),
        ("^(([a-z])+.)+[A-Z]([a-z])+$", String(repeating: "a", count: 60) + "!", false),
        ("(a*)*$", String(repeating: "a", count: 10_000) + "!", true),
        ("^(a*)*$", String(repeating: "a", count: 10_000) + "!", false),
    ]

    @Test(arguments: catastrophic)
    func catastrophicPatternsAnswerAtOnce(_ pattern: String, _ text: String, _ expected: Bool) throws {
        let matcher = try Self.matcher(pattern)
        #expect(!matcher.usesBacktracking)
        #expect(try matcher.test(text) == expected, "\(pattern)")
        // The same text on the Pike VM itself (ASCII text is usually answered by the automaton).
        let program = try RegexCompiler.compile(pattern)
        var text = text
        #expect(text.withUTF8 { RegexPikeVM.search(program, in: $0) } == expected, "\(pattern) on the Pike VM")
    }

    @Test func inputsOfAHundredThousandScalars() throws {
        let letters = String(repeating: "a", count: 100_000)
        #expect(try Self.matcher("^[a-z]+$").test(letters))
        #expect(try !Self.matcher("^[a-z]+$").test(letters + "1"))
        #expect(try !Self.matcher("(a|b)*c").test(String(repeating: "ab", count: 50_000)))
        let accents = String(repeating: "é", count: 100_000)
        #expect(try Self.matcher(#"^\p{L}+$"#).test(accents))
        #expect(try Self.matcher("^.*😀$").test(accents + "😀"))
        #expect(try !Self.matcher("^.*😀$").test(accents + "😀\n"))
        #expect(try Self.matcher("x").test(letters + "x"))
        #expect(try Self.matcher("(?:ab|cd)+e").test(String(repeating: "z", count: 100_000) + "cdabe"))
        #expect(try !Self.matcher("(?:ab|cd)+e").test(String(repeating: "ab", count: 50_000)))
        #expect(try Self.matcher("é+x").test(letters + "éééx"))
        #expect(try !Self.matcher("é+x").test(accents))
    }

    @Test func hugeRepetitionsAreRejectedAsTooLarge() throws {
        for pattern in ["(a{1000}){1000}", "a{100000}", "(?:a{0,500}){200}", "a{1,4294967295}", "((a{50}){50}){50}"] {
            let error = #expect(throws: RegexSyntaxError.self, "\(pattern)") { try Self.matcher(pattern) }
            #expect(error?.reason.contains("pattern is too large") == true)
        }
        #expect(try Self.matcher("(?:a{100}){100}").test(String(repeating: "a", count: 10_000)))
        #expect(try Self.matcher("^[0-9]{1,255}$").test(String(repeating: "7", count: 255)))
        #expect(try !Self.matcher("^[0-9]{1,255}$").test(String(repeating: "7", count: 256)))
    }

    @Test(arguments: [3_000, 100_000])
    func deepNestingNeverOverflowsTheStack(_ depth: Int) throws {
        let open = String(repeating: "(", count: depth)
        let close = String(repeating: ")", count: depth)
        #expect(try Self.matcher(open + "a" + close).test("xa"))
        #expect(try Self.matcher(open + "a" + close + "*b").test("aaab"))
        let nonCapturing = String(repeating: "(?:", count: depth) + "a|b" + close
        #expect(try Self.matcher(nonCapturing).test("b"))
        #expect(throws: RegexSyntaxError.self) { try Self.matcher(open + "a") }
        #expect(throws: RegexSyntaxError.self) { try Self.matcher("a" + close) }
        // A backtracking pattern records captures: 2 instructions per group, too large at depth 100,000.
        if depth > RegexCompiler.maxInstructions / 2 {
            #expect(throws: RegexSyntaxError.self) { try Self.matcher(open + "a" + close + "\\1") }
        } else {
            #expect(try Self.matcher(open + "a" + close + "\\1").test("aa"))
        }
        let classes = String(repeating: "[", count: depth) + "]"
        #expect(try Self.matcher(classes).test("["))
        #expect(throws: RegexSyntaxError.self) { try Self.matcher(String(repeating: "(?=", count: depth) + "a" + close) }
        // Each level of alternation costs three instructions (split, x, jump).
        let alternatives = String(repeating: "(?:x|", count: depth) + "a" + close
        if 3 * depth > RegexCompiler.maxInstructions {
            #expect(throws: RegexSyntaxError.self) { try Self.matcher(alternatives) }
        } else {
            #expect(try Self.matcher(alternatives).test("a"))
            #expect(try !Self.matcher("^" + alternatives + "$").test("b"))
        }
    }

    /// Quantifiers and lookbehind terms never move code already emitted, so nesting thousands of them
    /// compiles in linear time (moving it would be quadratic: billions of instruction copies here).
    @Test func deeplyNestedQuantifiersCompileInLinearTime() throws {
        let depth = 20_000
        let close = String(repeating: ")", count: depth)
        let stars = String(repeating: "(?:", count: depth) + "a" + String(repeating: ")*", count: depth)
        #expect(try Self.matcher("^" + stars + "$").test("aaa"))
        #expect(try !Self.matcher("^" + stars + "$").test("aab"))
        let optionals = String(repeating: "(", count: depth) + "a" + String(repeating: ")?", count: depth) + "b"
        #expect(try Self.matcher("^" + optionals).test("b"))
        #expect(try Self.matcher("^" + optionals).test("ab"))
        let pluses = String(repeating: "(?:", count: depth) + "a|b" + String(repeating: ")+", count: depth)
        #expect(try Self.matcher("^" + pluses + "$").test("abba"))
        let behindDepth = 10_000
        let behind =
            "b(?<=" + String(repeating: "(?:a", count: behindDepth) + String(repeating: ")", count: behindDepth) + "b)"
        #expect(try Self.matcher(behind).test(String(repeating: "a", count: behindDepth) + "b"))
        #expect(try !Self.matcher(behind).test(String(repeating: "a", count: behindDepth - 1) + "b"))
        let doubling = String(repeating: "(?:", count: 20) + "a" + String(repeating: "){2}", count: 20)
        #expect(throws: RegexSyntaxError.self) { try Self.matcher(doubling) }
        #expect(try Self.matcher("^" + stars + close.prefix(0) + "$").test(""))
    }

    @Test func lookaroundNestsUpToItsLimit() throws {
        let depth = RegexCompiler.maxLookaroundDepth
        let nested = String(repeating: "(?=", count: depth) + "a" + String(repeating: ")", count: depth)
        #expect(try Self.matcher(nested).test("a"))
        #expect(throws: RegexSyntaxError.self) { try Self.matcher("(?=" + nested + ")") }
    }

    @Test(arguments: [
        ("^(?=(a+)+$)", String(repeating: "a", count: 40) + "!"),
        ("^(a|aa)+\\1c$", String(repeating: "a", count: 60)),
        ("^(?!(a+)+$)b", String(repeating: "a", count: 40) + "!"),
        ("(?<=(a+)+)b(a+)+\\2$", String(repeating: "a", count: 30) + "b" + String(repeating: "a", count: 30) + "!"),
    ])
    func backtrackingPatternsStopAtTheirBudget(_ pattern: String, _ text: String) throws {
        let matcher = try Self.matcher(pattern)
        #expect(matcher.usesBacktracking)
        let error = #expect(throws: RegexBudgetExceeded.self) { try matcher.test(text) }
        #expect(error?.reason.contains("1000000 backtracking steps") == true)
        #expect(!matcher.matches(text))
    }

    @Test func budgetIsConfigurable() throws {
        let small = try PatternMatcher(ecmaScript: "(a)\\1", stepBudget: 10)
        #expect(throws: RegexBudgetExceeded.self) { try small.test(String(repeating: "b", count: 100) + "aa") }
        #expect(try PatternMatcher(ecmaScript: "(a)\\1").test(String(repeating: "b", count: 100) + "aa"))
    }

    /// Pattern, text, whether ECMAScript's `new RegExp(pattern, "u").test(text)` is true (checked with
    /// node).
    static let semantics: [(String, String, Bool)] = [
        // Classes and escapes.
        (#"^[a-c]+$"#, "abcab", true), (#"^[a-c]+$"#, "abd", false), (#"^[^a-c]$"#, "d", true),
        (#"^[^a-c]$"#, "b", false), (#"[]"#, "a", false), (#"^[^]$"#, "\n", true),
        (#"^[\w]+$"#, "a_Z9", true), (#"^\w$"#, "é", false), (#"^\d$"#, "৪", false), (#"^\D$"#, "৪", true),
        (#"^\s$"#, "\u{FEFF}", true), (#"^\s$"#, "\u{2029}", true), (#"^\s$"#, "\u{180E}", false),
        (#"^\S$"#, "\u{A0}", false), (#"^[\s\S]$"#, "\n", true), (#"^[^\S]$"#, " ", true),
        (#"^\u0041\x42\u{43}$"#, "ABC", true), (#"^\u{1F600}$"#, "😀", true), (#"^\uD83D\uDE00$"#, "😀", true),
        (#"^\cJ$"#, "\n", true), (#"^[\cJ]$"#, "\n", true), (#"^\0$"#, "\u{0}", true), (#"^[\b]$"#, "\u{8}", true),
        (#"^\t\n\v\f\r$"#, "\t\n\u{B}\u{C}\r", true), (#"^\/\.\*\[\]$"#, "/.*[]", true), (#"^[\-]$"#, "-", true),
        (#"^[a-]$"#, "-", true), (#"^[-a]$"#, "-", true), (#"^[😀-😂]$"#, "😁", true), (#"^[😀-😂]$"#, "😃", false),
        // Unicode properties.
        (#"^\p{L}+$"#, "éλЖ", true), (#"^\p{Lu}$"#, "a", false), (#"^\P{L}$"#, "1", true),
        (#"^\p{Nd}+$"#, "৪২", true), (#"^\p{Letter}cole$"#, "école", true), (#"^[\p{L}\d]+$"#, "a1é", true),
        (#"^[^\p{L}]$"#, "a", false), (#"^\p{General_Category=Lu}$"#, "Ж", true), (#"^\p{White_Space}$"#, " ", true),
        (#"^\p{Any}$"#, "😀", true), (#"^\p{ASCII}$"#, "é", false),
        // Dot, anchors, word boundaries.
        ("^.$", "\n", false), ("^.$", "\r", false), ("^.$", "\u{2028}", false), ("^.$", "😀", true),
        ("^abc$", "abc\n", false), ("^b", "ab", false), ("b$", "ab", true), ("a^b", "ab", false),
        ("(^a|b$)", "xb", true), (#"\bfoo\b"#, "a foo.", true), (#"\bfoo\b"#, "afoo", false),
        (#"\Bfoo"#, "afoo", true), (#"\b"#, "", false), (#"\B"#, "", true), (#"é\b"#, "é", false),
        (#"^\b$"#, "", false), (#"a\b"#, "a", true),
        // Quantifiers, laziness, empty loops.
        ("^a{3}$", "aaa", true), ("^a{3}$", "aaaa", false), ("^a{2,}$", "a", false), ("^a{2,}$", "aaaaa", true),
        ("^a{1,2}$", "aaa", false), ("^a{0}$", "", true), ("^a+?b$", "aaab", true), ("^a*?$", "aaa", true),
        ("^(a*)*$", "aaa", true), ("^(|a)*$", "aa", true), ("^(a*)+$", "", true), ("^(a?)*?b$", "aab", true),
        ("^(?:a|b)*$", "abba", true), ("^(?:)*$", "", true), ("^x{2}?$", "xx", true),
        // Groups, alternation, backreferences, lookaround.
        ("^(?<year>\\d{4})-(?<month>\\d{2})$", "2024-05", true), ("^(cat|dog)s?$", "dogs", true),
        ("^(cat|dog)s?$", "cow", false), ("^(a)\\1$", "aa", true), ("^(a)\\1$", "ab", false),
        ("^(?<x>[ab])\\k<x>$", "bb", true), ("^\\k<x>(?<x>a)$", "a", true), ("^(a)|\\1b$", "b", true),
        ("^(?:(a)|b)\\1$", "b", true), ("^(?:(a)|b)*\\1$", "ab", true), ("^(a*)+\\1$", "aa", true),
        ("q(?=u)", "qu", true), ("q(?=u)", "qa", false), ("q(?!u)", "qa", true), ("(?<=\\$)\\d+", "$42", true),
        ("(?<=\\$)\\d+", "€42", false), ("(?<!\\$)\\b\\d+", "$42", false), ("(?<=a+)b", "aab", true),
        ("(?<=(a)(b))c\\1", "abca", true), ("(?<=\\1(a))b", "aab", true), ("(?=(a))\\1b", "ab", true),
        ("(?!(a))\\1b", "b", true), ("b+", "aaab", true), ("[é😀]z", "aa😀z", true), ("[é😀]z", "aa😀y", false),
        ("\\d{3}", "ab12c345", true), ("\\d{3}", "ab12c34", false), ("ab|é", "xxé", true), ("ab|é", "xxa", false),
        ("abc", "ababc", true), ("abc", "ababd", false), ("a\\b", "ba a", true), ("a\\b", "baa", true),
        ("a\\B", "ba", false), ("^(?=.*\\d)(?=.*[a-z]).{8,}$", "passw0rd", true),
        ("^(?=.*\\d)(?=.*[a-z]).{8,}$", "password", false), ("(a)|b", "b", true),
    ]

    @Test(arguments: semantics)
    func semanticsFollowECMAScript(_ pattern: String, _ text: String, _ expected: Bool) throws {
        #expect(try Self.matcher(pattern).test(text) == expected, "\(pattern) on \(text.debugDescription)")
    }

    /// Patterns ECMAScript's `u` mode rejects.
    @Test(arguments: [
        "(", ")", "[", "a{", "a{1", "}", "]", "*", "a**", "a{2}{3}", "+a", "a|*", "\\", "\\a", "\\1", "(a)\\2",
        "\\k<x>", "(?<x>a)\\k<y>", "(?<x>a)(?<x>b)", "(?<1x>a)", "(?P<x>a)", "(?i)a", "(?#c)a", "(?=a)*",
        "(?<!a)+", "^*", "$+", "\\b*", "[b-a]", "[\\d-z]", "a{2,1}", "\\u{110000}", "\\xZ1", "\\c1", "\\00",
        "\\p{Nope}", "\\p{L", "\\-", "a{,2}", "[\\B]", "(?<=a", "\\p{Script=Greek}",
    ])
    func invalidPatternsAreRejected(_ pattern: String) {
        #expect(throws: RegexSyntaxError.self, "\(pattern)") { try Self.matcher(pattern) }
    }

    @Test func formatRegexUsesTheSameParser() throws {
        let deep = String(repeating: "(", count: 100_000) + String(repeating: ")", count: 100_000)
        var options = CompiledSchema.Options()
        options.assertFormat = true
        var registry = SchemaRegistry()
        let uri = try registry.add(
            try SchemaTestSupport.json(#"{"format": "regex"}"#), uri: "https://courier.example/t/regex.json")
        let schema = try registry.compile(id: uri, options: options)
        #expect(schema.isValid(.string(deep)))
        #expect(!schema.isValid(.string(String(repeating: "(", count: 100_000))))
        #expect(!schema.isValid("(a{1000}){1000}"))
    }
}

/// Thousands of random patterns and strings, answered by node's `RegExp` (with the `u` flag) and by
/// Courier's engine: the answers, and which patterns are rejected, must agree.
///
/// Deliberate differences: V8 lets a match start between the two halves of a surrogate pair (so `\B`
/// matches inside "😀"), which ECMA-262's `u` mode does not allow; such answers are skipped. The grammar
/// below avoids the others: Courier accepts loose Unicode property names
/// (`\p{letter}`, `\p{digit}`, as the `Regex` translation it replaced did and as the JSON Schema Test
/// Suite expects) and rejects script properties (`\p{Script=Greek}`) and patterns whose counted
/// repetitions expand beyond ``RegexCompiler/maxInstructions``.
@Suite(.timeLimit(.minutes(10))) struct RegexDifferentialTests {
    /// SplitMix64: a small seeded generator, so every run checks the same cases.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A random pattern from a small grammar of the dialect (and, rarely, a stray syntax character).
    static func pattern(_ g: inout Generator, depth: Int = 0) -> String {
        let alternatives = Int.random(in: 0..<10, using: &g) == 0 ? 2 : 1
        var out: [String] = []
        for _ in 0..<alternatives {
            var sequence = ""
            for _ in 0..<Int.random(in: 0...3, using: &g) {
                sequence += term(&g, depth: depth)
            }
            out.append(sequence)
        }
        return out.joined(separator: "|")
    }

    private static func term(_ g: inout Generator, depth: Int) -> String {
        let atoms = [
            "a", "b", "c", "a", "b", ".", "[ab]", "[^a]", "[a-c]", "[^]", "[]", "\\d", "\\w", "\\s", "\\W", "\\D",
            "\\u0061", "\\x62", "\\u{1F600}", "😀", "é", "\\p{L}", "\\P{L}", "[\\d\\s]", "[é-😀]", "\\n", "-", "_",
        ]
        let assertions = ["^", "$", "\\b", "\\B"]
        let strays = ["{", "}", "]", ")", "(", "*", "\\k<n>", "\\2", "\\c", "[b-a]", "{1}"]
        let roll = Int.random(in: 0..<100, using: &g)
        var atom: String
        switch roll {
        case 0..<2:
            return strays.randomElement(using: &g)!
        case 2..<12:
            return assertions.randomElement(using: &g)!
        case 12..<30 where depth < 3:
            let inner = pattern(&g, depth: depth + 1)
            let openers = ["(", "(?:", "(?<n>", "(?=", "(?!", "(?<=", "(?<!"]
            let opener = openers[Int.random(in: 0..<100, using: &g) < 70 ? Int.random(in: 0..<2, using: &g) : Int.random(in: 0..<7, using: &g)]
            atom = opener + inner + ")"
            if opener.hasPrefix("(?=") || opener.hasPrefix("(?!") || opener.hasPrefix("(?<=") || opener.hasPrefix("(?<!") {
                return atom
            }
        case 30..<34:
            atom = "\\1"
        default:
            atom = atoms.randomElement(using: &g)!
        }
        let quantifiers = ["*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?", "??", "{1,3}?"]
        if Int.random(in: 0..<100, using: &g) < 35 { atom += quantifiers.randomElement(using: &g)! }
        return atom
    }

    /// A random short string over an alphabet that meets the patterns' atoms.
    static func text(_ g: inout Generator) -> String {
        let alphabet: [String] = ["a", "b", "c", "a", "b", " ", "1", "_", "\n", "-", "é", "😀", "Ж", "n"]
        return (0..<Int.random(in: 0...7, using: &g)).map { _ in alphabet.randomElement(using: &g)! }.joined()
    }

    /// Runs node once over every case: `[[pattern, [texts]]]` in, `[null | [answer]]` out (null when node
    /// rejects the pattern); an answer is true, false, or nil when node's first match starts between the
    /// halves of a surrogate pair (a V8 deviation from ECMA-262, whose `u` mode reads code points).
    static func node(_ cases: [(String, [String])]) throws -> [[Bool?]?] {
        let script = """
            let input = '';
            process.stdin.on('data', d => input += d);
            process.stdin.on('end', () => {
              const out = JSON.parse(input).map(([p, texts]) => {
                let re;
                try { re = new RegExp(p, 'u'); } catch (e) { return null; }
                // V8 tries a start between the halves of a surrogate pair (where only a zero-width
                // match such as \\B can succeed); ECMA-262's u mode has no such position: flag it.
                return texts.map(t => {
                  const m = re.exec(t);
                  if (!m) return false;
                  const i = m.index, hi = t.charCodeAt(i - 1), lo = t.charCodeAt(i);
                  return (i > 0 && hi >= 0xD800 && hi <= 0xDBFF && lo >= 0xDC00 && lo <= 0xDFFF) ? 'split' : true;
                });
              });
              process.stdout.write(JSON.stringify(out));
            });
            """
        // Ask for node's version first: writing the cases to a process that already exited (env finding
        // no node) would raise SIGPIPE and end the whole test run instead of failing this test.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["node", "--version"]
        probe.standardOutput = Pipe()
        probe.standardError = Pipe()
        do {
            try probe.run()
            probe.waitUntilExit()
        } catch {
            Issue.record("node (v20, via /usr/bin/env node) is needed for the differential test: \(error)")
            return []
        }
        guard probe.terminationStatus == 0 else {
            Issue.record(
                "node is needed for the differential test but `/usr/bin/env node --version` failed (exit status \(probe.terminationStatus)); install node v20"
            )
            return []
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["node", "-e", script]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            Issue.record("node (v20, via /usr/bin/env node) is needed for the differential test: \(error)")
            return []
        }
        let payload = try JSONSerialization.data(withJSONObject: cases.map { [$0.0, $0.1] as [Any] })
        // Write on another thread, so a full output pipe cannot deadlock the writer.
        let writer = Thread {
            input.fileHandleForWriting.write(payload)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            Issue.record(
                "node is needed for the differential test and did not run (exit status \(process.terminationStatus)); install node v20 so `/usr/bin/env node` finds it"
            )
            return []
        }
        let decoded = try #require(try JSONSerialization.jsonObject(with: data) as? [Any])
        return decoded.map { answers in (answers as? [Any])?.map { $0 as? Bool } }
    }

    /// The automaton (ASCII text) and the Pike VM answer alike on every random pattern that has one.
    @Test func automatonAgreesWithThePikeVM() throws {
        var g = Generator(state: 0xD_FA)
        var automata = 0
        for _ in 0..<3_000 {
            guard let program = try? RegexCompiler.compile(Self.pattern(&g)), let automaton = program.automaton else {
                continue
            }
            automata += 1
            for _ in 0..<10 {
                var text = String(Self.text(&g).unicodeScalars.filter(\.isASCII))
                let description = text.debugDescription
                text.withUTF8 { bytes in
                    let expected = RegexPikeVM.search(program, in: bytes)
                    #expect(automaton.search(bytes) == expected, "\(description)")
                }
            }
        }
        #expect(automata > 1_000)
    }

    @Test func randomPatternsAgreeWithNode() throws {
        var g = Generator(state: 0xC0_0121_E12E)
        var cases: [(String, [String])] = []
        for _ in 0..<4_000 {
            let pattern = Self.pattern(&g)
            cases.append((pattern, (0..<8).map { _ in Self.text(&g) }))
        }
        let answers = try Self.node(cases)
        try #require(answers.count == cases.count, "node answered \(answers.count) of \(cases.count) patterns")
        var rejected = 0
        var backtracking = 0
        var mismatches = 0
        var split = 0
        for ((pattern, texts), expected) in zip(cases, answers) {
            let matcher = try? PatternMatcher(ecmaScript: pattern)
            guard let expected else {
                rejected += 1
                #expect(matcher == nil, "node rejects \(pattern.debugDescription) but Courier accepts it")
                continue
            }
            guard let matcher else {
                Issue.record("node accepts \(pattern.debugDescription) but Courier rejects it")
                continue
            }
            if matcher.usesBacktracking { backtracking += 1 }
            for (text, answer) in zip(texts, expected) {
                let ours = try matcher.test(text)
                guard let answer else {
                    split += 1
                    continue
                }
                if ours != answer {
                    mismatches += 1
                    Issue.record("\(pattern.debugDescription) on \(text.debugDescription): node \(answer), Courier \(ours)")
                }
            }
            if mismatches > 20 { break }
        }
        // The grammar must exercise both engines and the syntax checks.
        #expect(rejected > 100)
        #expect(backtracking > 250)
        #expect(split < 200, "too many answers skipped for V8's surrogate-pair starts")
        #expect(cases.count - rejected - backtracking > 1_000)
    }
}
