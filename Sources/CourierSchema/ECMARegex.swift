/// Why an ECMA-262 pattern was rejected.
struct RegexSyntaxError: Error {
    var reason: String
}

/// A pattern needed more matching work than its budget allows (only patterns with backreferences or
/// lookaround, which no linear-time engine can run, have a budget).
struct RegexBudgetExceeded: Error, Sendable {
    var reason: String
}

/// An ECMA-262 regular expression (JSON Schema's `pattern`, `patternProperties` and `format: regex`)
/// ready to search strings, on Courier's own engine (no `Regex`, no `NSRegularExpression`).
///
/// The pattern is parsed with an explicit stack (any nesting depth) into a Thompson-NFA program
/// (``RegexCompiler``) with ECMAScript meanings: matching over Unicode scalars, `\d` and `\w` ASCII-only,
/// `\s` the ECMAScript white space set, `.` excluding line terminators, `^` and `$` not multiline.
///
/// - Patterns without backreferences or lookaround (nearly all schema patterns) run on a Pike VM
///   (``RegexPikeVM``) in O(text length × program size): `^(a+)+$`, `(a|aa)*b` or `\s*\s*$` cannot
///   backtrack because nothing does. Over ASCII text, a small deterministic automaton built at compile
///   time (``RegexDFA``) answers first when the pattern has one: one table look-up per byte.
/// - Patterns with backreferences (`\1`, `\k<name>`) or lookaround run on a backtracking matcher
///   (``RegexBacktracker``) limited to ``defaultStepBudget`` steps per test unless told otherwise.
///
/// A program holds at most ``RegexCompiler/maxInstructions`` instructions once counted repetitions expand;
/// a larger pattern is rejected with a ``RegexSyntaxError`` ("pattern is too large").
struct PatternMatcher: Sendable {
    /// The steps a backtracking test may take by default (one step per instruction executed): a million,
    /// a few milliseconds of work.
    static let defaultStepBudget = 1_000_000

    private let program: RegexProgram
    /// The steps one test may take when the pattern needs backtracking.
    let stepBudget: Int

    /// Compiles an ECMA-262 pattern; throws why it is invalid (or too large).
    init(ecmaScript source: String, stepBudget: Int = PatternMatcher.defaultStepBudget) throws(RegexSyntaxError) {
        program = try RegexCompiler.compile(source)
        self.stepBudget = stepBudget
    }

    /// Whether the pattern needs the backtracking matcher (and so can exhaust its budget).
    var usesBacktracking: Bool { program.needsBacktracking }

    /// Whether the pattern matches anywhere in `text` (ECMAScript `RegExp.prototype.test`); throws when
    /// the pattern's matching budget runs out before an answer (only patterns with backreferences or
    /// lookaround have a budget).
    func test(_ text: String) throws(RegexBudgetExceeded) -> Bool {
        var text = text
        let result = text.withUTF8 { bytes -> Result<Bool, RegexBudgetExceeded> in
            if !program.needsBacktracking {
                if let automaton = program.automaton, let found = automaton.search(bytes) { return .success(found) }
                return .success(RegexPikeVM.search(program, in: bytes))
            }
            var matcher = RegexBacktracker(program, text: bytes, budget: stepBudget)
            do throws(RegexBudgetExceeded) {
                return .success(try matcher.search())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Whether the pattern matches anywhere in `text` (ECMAScript `RegExp.prototype.test`); false when
    /// the budget runs out (use ``test(_:)`` to tell that apart).
    func matches(_ text: String) -> Bool {
        (try? test(text)) ?? false
    }
}

/// A character set of a ``SimplePattern``: scalar ranges, possibly negated.
struct ScalarSet: Sendable {
    var ranges: [ClosedRange<UInt32>] = []
    var negated = false

    func contains(_ v: UInt32) -> Bool {
        var found = false
        for range in ranges where range.contains(v) {
            found = true
            break
        }
        return found != negated
    }
}

/// A pattern of literals, sets and quantifiers only, optionally anchored, matched by backtracking.
///
/// No longer used to match schemas (``PatternMatcher`` runs ``RegexPikeVM``); kept with
/// ``ECMATranslator`` as an independent reference that tests compare against Swift `Regex`.
struct SimplePattern: Sendable {
    struct Piece: Sendable {
        var set: ScalarSet
        var min: Int
        var max: Int  // Int.max for unbounded
        var greedy: Bool
    }

    var pieces: [Piece] = []
    var anchoredStart = false
    var anchoredEnd = false

    func search(_ text: String) -> Bool {
        // ASCII text (the common case) is matched on its UTF-8 bytes in place, without copying.
        var text = text
        if let found = text.withUTF8({ bytes -> Bool? in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            return search(bytes) { UInt32($0) }
        }) {
            return found
        }
        return search(Array(text.unicodeScalars)) { $0.value }
    }

    private func search<C: RandomAccessCollection>(_ s: C, _ value: (C.Element) -> UInt32) -> Bool where C.Index == Int {
        if anchoredStart { return match(s, value, 0, s.startIndex) }
        for start in s.startIndex...s.endIndex where match(s, value, 0, start) { return true }
        return false
    }

    private func match<C: RandomAccessCollection>(
        _ s: C, _ value: (C.Element) -> UInt32, _ piece: Int, _ position: Int
    ) -> Bool where C.Index == Int {
        if piece == pieces.count { return !anchoredEnd || position == s.endIndex }
        let p = pieces[piece]
        // Count how many scalars from `position` the set accepts, up to max.
        var n = 0
        while n < p.max, position + n < s.endIndex, p.set.contains(value(s[position + n])) { n += 1 }
        if n < p.min { return false }
        if p.min == p.max { return match(s, value, piece + 1, position + n) }
        if p.greedy {
            var k = n
            while k >= p.min {
                if match(s, value, piece + 1, position + k) { return true }
                k -= 1
            }
        } else {
            for k in p.min...n where match(s, value, piece + 1, position + k) { return true }
        }
        return false
    }
}

/// Translates ECMA-262 pattern syntax (with the `u` flag's strictness) to Swift `Regex` syntax, and
/// builds a ``SimplePattern`` when the pattern is simple enough.
///
/// Not used by ``PatternMatcher`` (whose engine is ``RegexCompiler`` and ``RegexPikeVM``): kept only as a
/// test oracle, so tests can compare answers with Swift `Regex`.
struct ECMATranslator {
    private let source: [Unicode.Scalar]
    private var i = 0
    private var out = ""
    private(set) var simple: SimplePattern?
    private var simpleOK = true
    private var building = SimplePattern()
    private var groupCount = 0

    static let whitespace: [ClosedRange<UInt32>] = [
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A, 0x2028...0x2029,
        0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ]
    static let digits: [ClosedRange<UInt32>] = [0x30...0x39]
    static let word: [ClosedRange<UInt32>] = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
    static let lineTerminators: [ClosedRange<UInt32>] = [0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029]

    init(_ pattern: String) {
        source = Array(pattern.unicodeScalars)
    }

    private var atEnd: Bool { i >= source.count }
    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        i + offset < source.count ? source[i + offset] : nil
    }

    private static func rangesText(_ ranges: [ClosedRange<UInt32>]) -> String {
        // Short ranges are written out: Swift's parser rejects some valid bounds (U+2000-U+200A).
        ranges.map { r in
            r.count <= 16 ? r.map(hex).joined() : hex(r.lowerBound) + "-" + hex(r.upperBound)
        }.joined()
    }

    private static func hex(_ v: UInt32) -> String { "\\u{" + String(v, radix: 16) + "}" }

    mutating func translate() throws(RegexSyntaxError) -> String {
        // Count capture groups first so that `\N` can be told from an octal-looking escape.
        var depthInClass = false
        var k = 0
        while k < source.count {
            let c = source[k]
            if c == "\\" {
                k += 2
                continue
            }
            if c == "[" { depthInClass = true }
            if c == "]" { depthInClass = false }
            if c == "(" && !depthInClass {
                if k + 1 < source.count, source[k + 1] == "?" {
                    if k + 2 < source.count, source[k + 2] == "<", k + 3 < source.count,
                        source[k + 3] != "=" && source[k + 3] != "!"
                    {
                        groupCount += 1
                    }
                } else {
                    groupCount += 1
                }
            }
            k += 1
        }
        if peek() == "^" {
            building.anchoredStart = true
            i += 1
            out += "^"
        }
        try disjunction()
        guard atEnd else { throw RegexSyntaxError(reason: "unbalanced parenthesis") }
        if simpleOK { simple = building }
        return out
    }

    private mutating func disjunction() throws(RegexSyntaxError) {
        while !atEnd {
            let c = source[i]
            switch c {
            case ")":
                return
            case "|":
                simpleOK = false
                out += "|"
                i += 1
            case "^":
                simpleOK = false
                out += "^"
                i += 1
            case "$":
                i += 1
                out += "\\z"
                if atEnd && !building.anchoredEnd {
                    building.anchoredEnd = true
                } else {
                    simpleOK = false
                }
            case "(":
                simpleOK = false
                i += 1
                if peek() == "?" {
                    if peek(1) == ":" || peek(1) == "=" || peek(1) == "!" {
                        out += "(?" + String(source[i + 1])
                        i += 2
                    } else if peek(1) == "<" && (peek(2) == "=" || peek(2) == "!") {
                        out += "(?<" + String(source[i + 2])
                        i += 3
                    } else if peek(1) == "<" {
                        out += "(?<"
                        i += 2
                        while let n = peek(), n != ">" {
                            guard n.properties.isAlphabetic || n == "_" || n == "$" || ("0"..."9").contains(n) else {
                                throw RegexSyntaxError(reason: "invalid group name")
                            }
                            out.unicodeScalars.append(n)
                            i += 1
                        }
                        guard peek() == ">" else { throw RegexSyntaxError(reason: "unterminated group name") }
                        out += ">"
                        i += 1
                    } else {
                        throw RegexSyntaxError(reason: "invalid group")
                    }
                } else {
                    out += "("
                }
                try disjunction()
                guard peek() == ")" else { throw RegexSyntaxError(reason: "missing )") }
                out += ")"
                i += 1
                try quantifier(nil)
            case "*", "+", "?":
                throw RegexSyntaxError(reason: "nothing to repeat")
            case "{":
                if isQuantifierBrace() { throw RegexSyntaxError(reason: "nothing to repeat") }
                throw RegexSyntaxError(reason: "lone {")
            case "}", "]":
                throw RegexSyntaxError(reason: "lone \(c)")
            case "[":
                i += 1
                let set = try characterClass()
                try quantifier(set)
            case ".":
                i += 1
                out += "[^" + Self.rangesText(Self.lineTerminators) + "]"
                try quantifier(ScalarSet(ranges: Self.lineTerminators, negated: true))
            case "\\":
                i += 1
                let set = try atomEscape()
                try quantifier(set)
            default:
                i += 1
                out += Self.hex(c.value)
                try quantifier(ScalarSet(ranges: [c.value...c.value]))
            }
        }
    }

    private func isQuantifierBrace() -> Bool {
        var k = i + 1
        var sawDigit = false
        while k < source.count, ("0"..."9").contains(source[k]) {
            k += 1
            sawDigit = true
        }
        guard sawDigit, k < source.count else { return false }
        if source[k] == "}" { return true }
        guard source[k] == "," else { return false }
        k += 1
        while k < source.count, ("0"..."9").contains(source[k]) { k += 1 }
        return k < source.count && source[k] == "}"
    }

    private mutating func readInt() -> Int {
        var n = 0
        while let c = peek(), ("0"..."9").contains(c) {
            n = min(n * 10 + Int(c.value - 48), 1_000_000)
            i += 1
        }
        return n
    }

    /// Reads an optional quantifier after an atom; `set` is the atom's set for the simple matcher
    /// (nil when the atom is not simple).
    private mutating func quantifier(_ set: ScalarSet?) throws(RegexSyntaxError) {
        var minimum = 1
        var maximum = 1
        var quantified = true
        switch peek() {
        case "*":
            minimum = 0
            maximum = Int.max
            out += "*"
            i += 1
        case "+":
            maximum = Int.max
            out += "+"
            i += 1
        case "?":
            minimum = 0
            out += "?"
            i += 1
        case "{" where isQuantifierBrace():
            i += 1
            minimum = readInt()
            maximum = minimum
            var text = "{\(minimum)"
            if peek() == "," {
                i += 1
                text += ","
                if peek() == "}" {
                    maximum = Int.max
                } else {
                    maximum = readInt()
                    text += String(maximum)
                    guard maximum >= minimum else { throw RegexSyntaxError(reason: "numbers out of order in {}") }
                }
            }
            i += 1  // "}"
            out += text + "}"
        default:
            quantified = false
        }
        var greedy = true
        if quantified, peek() == "?" {
            greedy = false
            out += "?"
            i += 1
        }
        if quantified, let next = peek(), next == "*" || next == "+" || next == "?" || (next == "{" && isQuantifierBrace()) {
            throw RegexSyntaxError(reason: "nothing to repeat")
        }
        guard let set else {
            simpleOK = false
            return
        }
        building.pieces.append(SimplePattern.Piece(set: set, min: minimum, max: maximum, greedy: greedy))
    }

    /// An escape outside a class; returns the set it matches when it is a single-scalar set.
    private mutating func atomEscape() throws(RegexSyntaxError) -> ScalarSet? {
        guard let c = peek() else { throw RegexSyntaxError(reason: "\\ at end of pattern") }
        i += 1
        switch c {
        case "d":
            out += "[0-9]"
            return ScalarSet(ranges: Self.digits)
        case "D":
            out += "[^0-9]"
            return ScalarSet(ranges: Self.digits, negated: true)
        case "w":
            out += "[A-Za-z0-9_]"
            return ScalarSet(ranges: Self.word)
        case "W":
            out += "[^A-Za-z0-9_]"
            return ScalarSet(ranges: Self.word, negated: true)
        case "s":
            out += "[" + Self.rangesText(Self.whitespace) + "]"
            return ScalarSet(ranges: Self.whitespace)
        case "S":
            out += "[^" + Self.rangesText(Self.whitespace) + "]"
            return ScalarSet(ranges: Self.whitespace, negated: true)
        case "b", "B":
            out += "\\" + String(c)
            simpleOK = false
            return nil
        case "1"..."9":
            i -= 1
            let n = readInt()
            guard n <= groupCount else { throw RegexSyntaxError(reason: "reference to a missing group \(n)") }
            out += "\\\(n)"
            simpleOK = false
            return nil
        case "k":
            guard peek() == "<" else { throw RegexSyntaxError(reason: "invalid \\k") }
            out += "\\k"
            while let n = peek() {
                out.unicodeScalars.append(n)
                i += 1
                if n == ">" { break }
            }
            simpleOK = false
            return nil
        case "p", "P":
            guard peek() == "{" else { throw RegexSyntaxError(reason: "invalid \\\(c)") }
            var property = ""
            i += 1
            while let n = peek(), n != "}" {
                property.unicodeScalars.append(n)
                i += 1
            }
            guard peek() == "}", !property.isEmpty else { throw RegexSyntaxError(reason: "unterminated \\\(c){") }
            i += 1
            out += "\\\(c){\(property)}"
            simpleOK = false
            return nil
        default:
            let value = try characterEscape(c, inClass: false)
            out += Self.hex(value)
            return ScalarSet(ranges: [value...value])
        }
    }

    /// A character escape (after the backslash and `c`), shared by atoms and classes.
    private mutating func characterEscape(_ c: Unicode.Scalar, inClass: Bool) throws(RegexSyntaxError) -> UInt32 {
        switch c {
        case "t": return 0x09
        case "n": return 0x0A
        case "v": return 0x0B
        case "f": return 0x0C
        case "r": return 0x0D
        case "0":
            if let n = peek(), ("0"..."9").contains(n) { throw RegexSyntaxError(reason: "octal escapes are not allowed") }
            return 0
        case "c":
            guard let letter = peek(), letter.isASCII, letter.properties.isAlphabetic else {
                throw RegexSyntaxError(reason: "invalid \\c escape")
            }
            i += 1
            return letter.value % 32
        case "x":
            guard let h1 = peek().flatMap(Self.hexDigit), let h2 = peek(1).flatMap(Self.hexDigit) else {
                throw RegexSyntaxError(reason: "invalid \\x escape")
            }
            i += 2
            return h1 << 4 | h2
        case "u":
            if peek() == "{" {
                i += 1
                var v: UInt32 = 0
                var count = 0
                while let h = peek().flatMap(Self.hexDigit) {
                    v = v << 4 | h
                    count += 1
                    i += 1
                    guard v <= 0x10FFFF else { throw RegexSyntaxError(reason: "\\u{} out of range") }
                }
                guard count > 0, peek() == "}" else { throw RegexSyntaxError(reason: "invalid \\u{} escape") }
                i += 1
                return v
            }
            let v = try fourHex()
            if (0xD800...0xDBFF).contains(v), peek() == "\\", peek(1) == "u" {
                let saved = i
                i += 2
                if let low = try? fourHex(), (0xDC00...0xDFFF).contains(low) {
                    return 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                }
                i = saved
            }
            return v
        case "-" where inClass:
            return 0x2D
        default:
            let syntax: Set<Unicode.Scalar> = ["^", "$", "\\", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "/"]
            if syntax.contains(c) { return c.value }
            throw RegexSyntaxError(reason: "invalid escape \\\(c)")
        }
    }

    private mutating func fourHex() throws(RegexSyntaxError) -> UInt32 {
        var v: UInt32 = 0
        for k in 0..<4 {
            guard let h = peek(k).flatMap(Self.hexDigit) else { throw RegexSyntaxError(reason: "invalid \\u escape") }
            v = v << 4 | h
        }
        i += 4
        return v
    }

    private static func hexDigit(_ c: Unicode.Scalar) -> UInt32? {
        switch c {
        case "0"..."9": return c.value - 48
        case "a"..."f": return c.value - 87
        case "A"..."F": return c.value - 55
        default: return nil
        }
    }

    /// A class after `[`; returns its set when it has no property escapes.
    private mutating func characterClass() throws(RegexSyntaxError) -> ScalarSet? {
        var set = ScalarSet()
        var representable = true
        if peek() == "^" {
            set.negated = true
            i += 1
        }
        if peek() == "]" {
            i += 1
            if set.negated {
                out += "[\\u{0}-\\u{10ffff}]"
                return ScalarSet(ranges: [0...0x10FFFF])
            }
            out += "(?!)"
            simpleOK = false
            return nil
        }
        var body = ""
        // Class atom: a single scalar, or a class escape (\d, \p{..}) that cannot be a range end.
        enum ClassAtom {
            case scalar(UInt32)
            case multi(text: String, ranges: [ClosedRange<UInt32>]?, negated: Bool)
        }
        func atom(_ t: inout ECMATranslator) throws(RegexSyntaxError) -> ClassAtom {
            guard let c = t.peek() else { throw RegexSyntaxError(reason: "unterminated character class") }
            t.i += 1
            guard c == "\\" else { return .scalar(c.value) }
            guard let e = t.peek() else { throw RegexSyntaxError(reason: "\\ at end of pattern") }
            t.i += 1
            switch e {
            case "d": return .multi(text: "0-9", ranges: ECMATranslator.digits, negated: false)
            case "D": return .multi(text: "[^0-9]", ranges: ECMATranslator.digits, negated: true)
            case "w": return .multi(text: "A-Za-z0-9_", ranges: ECMATranslator.word, negated: false)
            case "W": return .multi(text: "[^A-Za-z0-9_]", ranges: ECMATranslator.word, negated: true)
            case "s": return .multi(text: ECMATranslator.rangesText(ECMATranslator.whitespace), ranges: ECMATranslator.whitespace, negated: false)
            case "S": return .multi(text: "[^" + ECMATranslator.rangesText(ECMATranslator.whitespace) + "]", ranges: ECMATranslator.whitespace, negated: true)
            case "b": return .scalar(0x08)
            case "p", "P":
                guard t.peek() == "{" else { throw RegexSyntaxError(reason: "invalid \\\(e)") }
                var property = ""
                t.i += 1
                while let n = t.peek(), n != "}" {
                    property.unicodeScalars.append(n)
                    t.i += 1
                }
                guard t.peek() == "}", !property.isEmpty else { throw RegexSyntaxError(reason: "unterminated \\\(e){") }
                t.i += 1
                return .multi(text: "\\\(e){\(property)}", ranges: nil, negated: false)
            default:
                return .scalar(try t.characterEscape(e, inClass: true))
            }
        }
        while true {
            guard let c = peek() else { throw RegexSyntaxError(reason: "unterminated character class") }
            if c == "]" {
                i += 1
                break
            }
            let first = try atom(&self)
            if peek() == "-", let after = peek(1), after != "]" {
                i += 1
                let second = try atom(&self)
                guard case .scalar(let low) = first, case .scalar(let high) = second else {
                    throw RegexSyntaxError(reason: "a class escape cannot bound a range")
                }
                guard low <= high else { throw RegexSyntaxError(reason: "range out of order in character class") }
                body += Self.hex(low) + "-" + Self.hex(high)
                set.ranges.append(low...high)
                continue
            }
            switch first {
            case .scalar(let v):
                body += Self.hex(v)
                set.ranges.append(v...v)
            case .multi(let text, let ranges, let negated):
                body += text
                if let ranges, !negated {
                    set.ranges.append(contentsOf: ranges)
                } else {
                    representable = false
                }
            }
        }
        out += "[" + (set.negated ? "^" : "") + body + "]"
        if !representable { simpleOK = false }
        return representable ? set : nil
    }
}
