/// Parses an ECMA-262 pattern (with the `u` flag's strictness) and emits a ``RegexProgram`` in one
/// pass, with an explicit stack of open groups: no recursion, so no nesting depth can overflow the
/// stack.
///
/// Code is emitted with relative jumps, so the fragment of an atom can be copied (counted repetition
/// `{n,m}` expands to copies), wrapped (a split inserted before it) or moved (the terms of a lookbehind
/// are laid out right to left) without relocation; ``finish()`` makes the jumps absolute.
///
/// Limits: a program may hold at most ``maxInstructions`` instructions (counted repetition such as
/// `(a{1000}){1000}` expands, and is rejected past that with "pattern is too large"), and lookarounds
/// may nest at most ``maxLookaroundDepth`` deep (the backtracking matcher recurses into them). Group
/// nesting itself is not limited.
struct RegexCompiler {
    /// The most instructions a compiled pattern may have.
    static let maxInstructions = 50_000
    /// The deepest lookarounds may nest inside one another.
    static let maxLookaroundDepth = 64

    /// Compiles `source` to a program, or throws why it is not a valid pattern (or too large).
    static func compile(_ source: String) throws(RegexSyntaxError) -> RegexProgram {
        var compiler = RegexCompiler(source)
        try compiler.scan()
        try compiler.parse()
        return compiler.finish()
    }

    private let source: [Unicode.Scalar]
    private var i = 0
    private var code: [RegexInstruction] = []
    private var classes: [RegexCharClass] = []
    /// Whether the program is for the backtracking matcher (records captures, checks empty iterations).
    private var backtracking = false
    /// The names of the groups, by group number minus one (nil for unnamed groups), from ``scan()``.
    private var groupNames: [String?] = []
    private var groupsOpened = 0
    private var registers = 0
    private var lookDepth = 0
    private var rootAlternatives = 1

    /// One open group (or the whole pattern) while parsing.
    private struct Frame {
        enum Kind {
            case root
            case group(capture: Int?)
            case look(kind: Int, at: Int)
        }

        var kind: Kind
        /// Where the group's code begins (the start of its fragment when quantified).
        var start: Int
        /// Where the current alternative's code begins.
        var alternativeStart: Int
        /// Jumps to the group's end, from the alternatives before the current one.
        var pendingJumps: [Int] = []
        /// Whether the group matches right to left (inside a lookbehind).
        var backward: Bool
        /// Where each term of the current alternative begins (right-to-left groups only).
        var termStarts: [Int] = []
        /// How many groups were opened before this one (its own number is the next).
        var groupsBefore: Int
    }

    private init(_ pattern: String) {
        source = Array(pattern.unicodeScalars)
    }

    private var atEnd: Bool { i >= source.count }
    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        i + offset < source.count ? source[i + offset] : nil
    }

    // MARK: - Pre-scan

    /// Counts and names the capture groups (so `\N` and `\k<name>` can refer forward) and decides
    /// whether the pattern needs backtracking (backreferences or lookaround).
    private mutating func scan() throws(RegexSyntaxError) {
        var inClass = false
        var k = 0
        while k < source.count {
            let c = source[k]
            if c == "\\" {
                if !inClass, k + 1 < source.count, ("1"..."9").contains(source[k + 1]) || source[k + 1] == "k" {
                    backtracking = true
                }
                k += 2
                continue
            }
            if c == "[" { inClass = true }
            if c == "]" { inClass = false }
            if c == "(" && !inClass {
                if k + 1 < source.count, source[k + 1] == "?" {
                    let next = k + 2 < source.count ? source[k + 2] : nil
                    let after = k + 3 < source.count ? source[k + 3] : nil
                    if next == "=" || next == "!" || (next == "<" && (after == "=" || after == "!")) {
                        backtracking = true
                    } else if next == "<" {
                        var name = ""
                        var n = k + 3
                        while n < source.count, source[n] != ">" {
                            name.unicodeScalars.append(source[n])
                            n += 1
                        }
                        if groupNames.contains(name) { throw RegexSyntaxError(reason: "duplicate group name \(name)") }
                        groupNames.append(name)
                    }
                } else {
                    groupNames.append(nil)
                }
            }
            k += 1
        }
    }

    // MARK: - Parsing

    private mutating func parse() throws(RegexSyntaxError) {
        var frames = [Frame(kind: .root, start: 0, alternativeStart: 0, backward: false, groupsBefore: 0)]
        while !atEnd {
            let c = source[i]
            switch c {
            case "|":
                i += 1
                try endAlternative(&frames[frames.count - 1])
                if frames.count == 1 { rootAlternatives += 1 }
            case ")":
                guard frames.count > 1 else { throw RegexSyntaxError(reason: "unbalanced parenthesis") }
                i += 1
                var frame = frames.removeLast()
                try closeGroup(&frame)
                if case .look = frame.kind {
                    lookDepth -= 1
                    if let next = peek(), next == "*" || next == "+" || next == "?" || (next == "{" && isQuantifierBrace()) {
                        throw RegexSyntaxError(reason: "nothing to repeat")
                    }
                } else {
                    try quantifier(start: frame.start, groupsBefore: frame.groupsBefore)
                }
            case "(":
                i += 1
                beginTerm(&frames[frames.count - 1])
                try openGroup(&frames)
            case "^", "$":
                i += 1
                beginTerm(&frames[frames.count - 1])
                emit(RegexInstruction(c == "^" ? .assertStart : .assertEnd))
                try noQuantifier()
            case "*", "+", "?":
                throw RegexSyntaxError(reason: "nothing to repeat")
            case "{":
                if isQuantifierBrace() { throw RegexSyntaxError(reason: "nothing to repeat") }
                throw RegexSyntaxError(reason: "lone {")
            case "}", "]":
                throw RegexSyntaxError(reason: "lone \(c)")
            default:
                i += 1
                beginTerm(&frames[frames.count - 1])
                let start = code.count
                let backward = frames[frames.count - 1].backward
                switch c {
                case "[":
                    emitClass(try characterClass(), backward: backward)
                case ".":
                    emitClass(RegexCharClass(ranges: RegexCharClass.lineTerminators, negated: true), backward: backward)
                case "\\":
                    guard try atomEscape(backward: backward) else {
                        try noQuantifier()
                        continue
                    }
                default:
                    emit(RegexInstruction(backward ? .charBack : .char, Int(c.value)))
                }
                try quantifier(start: start, groupsBefore: groupsOpened)
            }
            guard code.count <= Self.maxInstructions else { throw Self.tooLarge }
        }
        guard frames.count == 1 else { throw RegexSyntaxError(reason: "missing )") }
        try closeGroup(&frames[0])
        emit(RegexInstruction(.match))
    }

    private static var tooLarge: RegexSyntaxError {
        RegexSyntaxError(reason: "pattern is too large (more than \(maxInstructions) instructions once repetitions expand)")
    }

    /// Makes jumps absolute and packages the program.
    private func finish() -> RegexProgram {
        var program = RegexProgram()
        program.instructions = code
        for pc in program.instructions.indices {
            switch code[pc].op {
            case .jump, .look:
                program.instructions[pc].a += pc
            case .split:
                program.instructions[pc].a += pc
                program.instructions[pc].b += pc
            default:
                break
            }
        }
        program.classes = classes
        program.needsBacktracking = backtracking
        program.groupCount = groupNames.count
        program.registerCount = registers
        program.anchoredStart = source.first == "^" && rootAlternatives == 1
        program.isStraightLine = !backtracking && !code.contains { $0.op == .split || $0.op == .jump }
        return program
    }

    private mutating func emit(_ instruction: RegexInstruction) {
        code.append(instruction)
    }

    private mutating func emitClass(_ set: RegexCharClass, backward: Bool) {
        if let scalar = set.singleScalar {
            emit(RegexInstruction(backward ? .charBack : .char, Int(scalar)))
            return
        }
        classes.append(set)
        emit(RegexInstruction(backward ? .setBack : .set, classes.count - 1))
    }

    /// Notes where a term begins, so a right-to-left alternative can lay its terms out in reverse.
    private func beginTerm(_ frame: inout Frame) {
        if frame.backward { frame.termStarts.append(code.count) }
    }

    private mutating func openGroup(_ frames: inout [Frame]) throws(RegexSyntaxError) {
        let parent = frames[frames.count - 1]
        let start = code.count
        var kind = Frame.Kind.group(capture: nil)
        var backward = parent.backward
        if peek() == "?" {
            if peek(1) == ":" {
                i += 2
            } else if peek(1) == "=" || peek(1) == "!" || (peek(1) == "<" && (peek(2) == "=" || peek(2) == "!")) {
                let behind = peek(1) == "<"
                let negative = (behind ? peek(2) : peek(1)) == "!"
                i += behind ? 3 : 2
                lookDepth += 1
                guard lookDepth <= Self.maxLookaroundDepth else {
                    throw RegexSyntaxError(reason: "lookarounds nest more than \(Self.maxLookaroundDepth) deep")
                }
                let look =
                    behind
                    ? (negative ? RegexProgram.LookKind.negativeBehind : RegexProgram.LookKind.behind)
                    : (negative ? RegexProgram.LookKind.negativeAhead : RegexProgram.LookKind.ahead)
                kind = .look(kind: look, at: start)
                backward = behind
                emit(RegexInstruction(.look, 0, look))
            } else if peek(1) == "<" {
                i += 2
                try groupName()
                kind = .group(capture: groupsOpened + 1)
            } else {
                throw RegexSyntaxError(reason: "invalid group")
            }
        } else {
            kind = .group(capture: groupsOpened + 1)
        }
        let before = groupsOpened
        if case .group(let capture?) = kind {
            groupsOpened = capture
            if backtracking { emit(RegexInstruction(.save, 2 * capture + (backward ? 1 : 0))) }
        }
        frames.append(Frame(kind: kind, start: start, alternativeStart: code.count, backward: backward, groupsBefore: before))
    }

    /// Reads a group name up to and including `>` (an ECMAScript identifier).
    private mutating func groupName() throws(RegexSyntaxError) {
        var first = true
        while let n = peek(), n != ">" {
            let valid =
                n == "$" || n == "_"
                || (first ? n.properties.isIDStart : (n.properties.isIDContinue || n == "\u{200C}" || n == "\u{200D}"))
            guard valid else { throw RegexSyntaxError(reason: "invalid group name") }
            first = false
            i += 1
        }
        guard peek() == ">", !first else { throw RegexSyntaxError(reason: "invalid group name") }
        i += 1
    }

    /// Ends the current alternative at `|`: lays out a right-to-left alternative, inserts the split that
    /// chooses it, and leaves a jump to the group's end to patch.
    private mutating func endAlternative(_ frame: inout Frame) throws(RegexSyntaxError) {
        reverseTerms(&frame)
        let length = code.count - frame.alternativeStart
        code.insert(RegexInstruction(.split, 1, length + 2), at: frame.alternativeStart)
        frame.pendingJumps.append(code.count)
        emit(RegexInstruction(.jump))
        frame.alternativeStart = code.count
        guard code.count <= Self.maxInstructions else { throw Self.tooLarge }
    }

    private mutating func reverseTerms(_ frame: inout Frame) {
        defer { frame.termStarts.removeAll() }
        guard frame.backward, frame.termStarts.count > 1 else { return }
        var rebuilt: [RegexInstruction] = []
        rebuilt.reserveCapacity(code.count - frame.alternativeStart)
        var end = code.count
        for start in frame.termStarts.reversed() {
            rebuilt.append(contentsOf: code[start..<end])
            end = start
        }
        code.replaceSubrange(frame.termStarts[0]..<code.count, with: rebuilt)
    }

    /// Ends a group (or the pattern) at `)`: patches its alternatives' jumps and closes its capture or
    /// lookaround.
    private mutating func closeGroup(_ frame: inout Frame) throws(RegexSyntaxError) {
        reverseTerms(&frame)
        for jump in frame.pendingJumps { code[jump].a = code.count - jump }
        switch frame.kind {
        case .root:
            break
        case .group(let capture):
            if let capture, backtracking {
                emit(RegexInstruction(.save, 2 * capture + (frame.backward ? 0 : 1)))
            }
        case .look(_, let at):
            emit(RegexInstruction(.lookEnd))
            code[at].a = code.count - at
        }
    }

    private mutating func noQuantifier() throws(RegexSyntaxError) {
        if let next = peek(), next == "*" || next == "+" || next == "?" || (next == "{" && isQuantifierBrace()) {
            throw RegexSyntaxError(reason: "nothing to repeat")
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
            n = min(n * 10 + Int(c.value - 48), 1_000_000_000)
            i += 1
        }
        return n
    }

    /// Reads an optional quantifier after the atom whose code starts at `start`, and expands it.
    private mutating func quantifier(start: Int, groupsBefore: Int) throws(RegexSyntaxError) {
        var minimum = 1
        var maximum = 1
        switch peek() {
        case "*":
            minimum = 0
            maximum = Int.max
            i += 1
        case "+":
            maximum = Int.max
            i += 1
        case "?":
            minimum = 0
            i += 1
        case "{" where isQuantifierBrace():
            i += 1
            minimum = readInt()
            maximum = minimum
            if peek() == "," {
                i += 1
                maximum = peek() == "}" ? Int.max : readInt()
                guard maximum >= minimum else { throw RegexSyntaxError(reason: "numbers out of order in {} quantifier") }
            }
            i += 1  // "}"
        default:
            return
        }
        var greedy = true
        if peek() == "?" {
            greedy = false
            i += 1
        }
        try noQuantifier()
        try repeatFragment(start: start, minimum: minimum, maximum: maximum, greedy: greedy, groupsBefore: groupsBefore)
    }

    /// Replaces the fragment at `start...` with its repetition.
    ///
    /// Forward matching (Pike VM): `F{n,}` is n-1 copies then `L: F; split(L, next)`; `F{n,m}` is n
    /// copies then m-n nested optional copies `split(+1, end) F`. Backtracking adds, to each iteration,
    /// a reset of the captures inside F and (for iterations past the minimum) a check that the iteration
    /// consumed something, as ECMA-262's RepeatMatcher requires.
    private mutating func repeatFragment(
        start: Int, minimum: Int, maximum: Int, greedy: Bool, groupsBefore: Int
    ) throws(RegexSyntaxError) {
        if minimum == 1 && maximum == 1 { return }
        var fragment = Array(code[start...])
        code.removeSubrange(start...)
        if backtracking && groupsOpened > groupsBefore {
            fragment.insert(RegexInstruction(.resetCaptures, groupsBefore + 1, groupsOpened), at: 0)
        }
        let length = fragment.count
        let check = backtracking ? 2 : 0
        let unbounded = maximum == Int.max
        let compactLoop = unbounded && !backtracking && minimum > 0
        let copies = compactLoop ? minimum - 1 : minimum
        let optional = unbounded ? 0 : maximum - minimum
        let loopSize = unbounded ? (compactLoop ? length + 1 : length + check + 2) : 0
        let (copySize, o1) = copies.multipliedReportingOverflow(by: length)
        let (optionalSize, o2) = optional.multipliedReportingOverflow(by: length + check + 1)
        guard !o1, !o2, code.count + copySize + optionalSize + loopSize <= Self.maxInstructions else { throw Self.tooLarge }
        code.reserveCapacity(code.count + copySize + optionalSize + loopSize)
        for _ in 0..<copies { code.append(contentsOf: fragment) }
        if unbounded {
            if compactLoop {
                let loop = code.count
                code.append(contentsOf: fragment)
                let back = loop - code.count
                emit(greedy ? RegexInstruction(.split, back, 1) : RegexInstruction(.split, 1, back))
            } else {
                let loop = code.count
                let exit = length + check + 2
                emit(greedy ? RegexInstruction(.split, 1, exit) : RegexInstruction(.split, exit, 1))
                appendIteration(fragment, checked: backtracking)
                emit(RegexInstruction(.jump, loop - code.count))
            }
        } else if optional > 0 {
            let end = code.count + optionalSize
            for _ in 0..<optional {
                let here = code.count
                emit(greedy ? RegexInstruction(.split, 1, end - here) : RegexInstruction(.split, end - here, 1))
                appendIteration(fragment, checked: backtracking)
            }
        }
    }

    /// Appends one iteration of `fragment`, guarded against empty iterations when `checked`.
    private mutating func appendIteration(_ fragment: [RegexInstruction], checked: Bool) {
        guard checked else {
            code.append(contentsOf: fragment)
            return
        }
        let register = registers
        registers += 1
        emit(RegexInstruction(.markPosition, register))
        code.append(contentsOf: fragment)
        emit(RegexInstruction(.checkProgress, register))
    }

    // MARK: - Escapes and classes

    /// An escape outside a class: emits it and returns whether it can be quantified (`\b` and `\B`
    /// cannot).
    private mutating func atomEscape(backward: Bool) throws(RegexSyntaxError) -> Bool {
        guard let c = peek() else { throw RegexSyntaxError(reason: "\\ at end of pattern") }
        i += 1
        switch c {
        case "b", "B":
            emit(RegexInstruction(c == "b" ? .wordBoundary : .notWordBoundary))
            return false
        case "1"..."9":
            i -= 1
            let n = readInt()
            guard n <= groupNames.count else { throw RegexSyntaxError(reason: "reference to a missing group \(n)") }
            emit(RegexInstruction(backward ? .backReferenceBack : .backReference, n))
        case "k":
            guard peek() == "<" else { throw RegexSyntaxError(reason: "invalid \\k") }
            i += 1
            var name = ""
            while let n = peek(), n != ">" {
                name.unicodeScalars.append(n)
                i += 1
            }
            guard peek() == ">" else { throw RegexSyntaxError(reason: "unterminated \\k<") }
            i += 1
            guard let index = groupNames.firstIndex(of: name) else {
                throw RegexSyntaxError(reason: "reference to a missing group \(name)")
            }
            emit(RegexInstruction(backward ? .backReferenceBack : .backReference, index + 1))
        default:
            if let set = try classEscape(c) {
                emitClass(set, backward: backward)
            } else {
                let value = try characterEscape(c, inClass: false)
                emit(RegexInstruction(backward ? .charBack : .char, Int(value)))
            }
        }
        return true
    }

    /// The set of a class escape (`\d \D \w \W \s \S \p{…} \P{…}`, after the backslash and `c`), or
    /// nil when `c` starts another escape.
    private mutating func classEscape(_ c: Unicode.Scalar) throws(RegexSyntaxError) -> RegexCharClass? {
        switch c {
        case "d": return RegexCharClass(ranges: RegexCharClass.digits)
        case "D": return RegexCharClass(ranges: RegexCharClass.digits, negated: true)
        case "w": return RegexCharClass(ranges: RegexCharClass.word)
        case "W": return RegexCharClass(ranges: RegexCharClass.word, negated: true)
        case "s": return RegexCharClass(ranges: RegexCharClass.whitespace)
        case "S": return RegexCharClass(ranges: RegexCharClass.whitespace, negated: true)
        case "p", "P":
            return RegexCharClass(ranges: [], properties: [try property(negated: c == "P")])
        default:
            return nil
        }
    }

    /// A `{name}` after `\p` or `\P`.
    private mutating func property(negated: Bool) throws(RegexSyntaxError) -> RegexProperty {
        let escape = negated ? "\\P" : "\\p"
        guard peek() == "{" else { throw RegexSyntaxError(reason: "invalid \(escape)") }
        var name = ""
        i += 1
        while let n = peek(), n != "}" {
            name.unicodeScalars.append(n)
            i += 1
        }
        guard peek() == "}", !name.isEmpty else { throw RegexSyntaxError(reason: "unterminated \(escape){") }
        i += 1
        return try RegexProperty(named: name, negated: negated)
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
        case "b" where inClass:
            return 0x08
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

    /// One member of a class: a scalar (which may bound a range) or a class escape's set.
    private enum ClassAtom {
        case scalar(UInt32)
        case set(RegexCharClass)
    }

    private mutating func classAtom() throws(RegexSyntaxError) -> ClassAtom {
        guard let c = peek() else { throw RegexSyntaxError(reason: "unterminated character class") }
        i += 1
        guard c == "\\" else { return .scalar(c.value) }
        guard let e = peek() else { throw RegexSyntaxError(reason: "\\ at end of pattern") }
        i += 1
        if let set = try classEscape(e) { return .set(set) }
        return .scalar(try characterEscape(e, inClass: true))
    }

    /// A class after `[`.
    private mutating func characterClass() throws(RegexSyntaxError) -> RegexCharClass {
        var negated = false
        if peek() == "^" {
            negated = true
            i += 1
        }
        var ranges: [ClosedRange<UInt32>] = []
        var properties: [RegexProperty] = []
        while true {
            guard let c = peek() else { throw RegexSyntaxError(reason: "unterminated character class") }
            if c == "]" {
                i += 1
                break
            }
            let first = try classAtom()
            if peek() == "-", let after = peek(1), after != "]" {
                i += 1
                let second = try classAtom()
                guard case .scalar(let low) = first, case .scalar(let high) = second else {
                    throw RegexSyntaxError(reason: "a class escape cannot bound a range")
                }
                guard low <= high else { throw RegexSyntaxError(reason: "range out of order in character class") }
                ranges.append(low...high)
                continue
            }
            switch first {
            case .scalar(let v):
                ranges.append(v...v)
            case .set(let set):
                // A negated escape (\D, \W, \S) inside a class is its complement's ranges; \p and \P
                // stay properties.
                if set.properties.isEmpty {
                    ranges.append(contentsOf: set.negated ? RegexCharClass.complement(set.ranges) : set.ranges)
                } else {
                    properties.append(contentsOf: set.properties)
                }
            }
        }
        return RegexCharClass(ranges: ranges, properties: properties, negated: negated)
    }
}
