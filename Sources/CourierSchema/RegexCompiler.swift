/// Parses an ECMA-262 pattern (with the `u` flag's strictness) and emits a ``RegexProgram`` in one
/// pass, with an explicit stack of open groups: no recursion, so no nesting depth can overflow the
/// stack.
///
/// Code is only ever appended, so compiling takes time linear in the pattern and its expansion: every
/// quantifiable atom is preceded by placeholders that a quantifier fills (its split, and when
/// backtracking its mark and capture reset), every alternative by one for its split, and a lookbehind's
/// terms, which must run right to left, are chained by jumps rather than moved. Jumps are relative while
/// compiling, so a fragment can be copied for counted repetition (`{n,m}`); ``finish()`` drops the
/// placeholders and makes the jumps absolute.
///
/// Limits: a program may hold at most ``maxInstructions`` instructions (counted repetition such as
/// `(a{1000}){1000}` expands, and is rejected past that with "pattern is too large"), and lookarounds
/// may nest at most ``maxLookaroundDepth`` deep (the backtracking matcher recurses into them). Group
/// nesting itself is not limited (node, for one, rejects 100,000 nested groups; this engine accepts
/// them while they fit in ``maxInstructions``).
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
    /// How many placeholders `code` holds.
    private var placeholders = 0
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
        /// Where the group's code begins (its placeholders: the start of its fragment when quantified).
        var start: Int
        /// Whether the group matches right to left (inside a lookbehind).
        var backward: Bool
        /// How many groups were opened before this one (its own number is the next).
        var groupsBefore: Int
        /// Jumps to the group's end, from the alternatives before the current one.
        var pendingJumps: [Int] = []
        /// The placeholder for the split from the current alternative to the next.
        var choiceSlot = 0
        /// Right to left: the placeholder for the jump from the current alternative's start to its last
        /// term.
        var entrySlot = 0
        /// Right to left: the current alternative's finished terms, with the placeholder after each.
        var terms: [(start: Int, trailer: Int)] = []
        /// Right to left: where the term being parsed begins.
        var openTerm: Int?
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
        var frames = [Frame(kind: .root, start: 0, backward: false, groupsBefore: 0)]
        beginAlternative(&frames[0])
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
                closeGroup(&frame)
                if case .look = frame.kind {
                    lookDepth -= 1
                    try noQuantifier()
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
                    reserveSlots()
                    emitClass(try characterClass(), backward: backward)
                case ".":
                    reserveSlots()
                    emitClass(RegexCharClass(ranges: RegexCharClass.lineTerminators, negated: true), backward: backward)
                case "\\":
                    if peek() != "b" && peek() != "B" { reserveSlots() }
                    guard try atomEscape(backward: backward) else {
                        try noQuantifier()
                        continue
                    }
                default:
                    reserveSlots()
                    emit(RegexInstruction(backward ? .charBack : .char, Int(c.value)))
                }
                try quantifier(start: start, groupsBefore: groupsOpened)
            }
            guard size <= Self.maxInstructions else { throw Self.tooLarge }
        }
        guard frames.count == 1 else { throw RegexSyntaxError(reason: "missing )") }
        closeGroup(&frames[0])
        emit(RegexInstruction(.match))
    }

    private static var tooLarge: RegexSyntaxError {
        RegexSyntaxError(reason: "pattern is too large (more than \(maxInstructions) instructions once repetitions expand)")
    }

    /// A placeholder: a jump to the next instruction, which ``compacted(_:)`` removes.
    private static let placeholder = RegexInstruction(.jump, 1)

    /// How many placeholders precede every quantifiable atom: room for the split (and, when
    /// backtracking, the mark and the capture reset) that a quantifier puts before it, so that no
    /// quantifier ever has to insert code (which would cost time in proportion to the atom, and so
    /// quadratic time for deeply nested quantifiers).
    private var slotCount: Int { backtracking ? 3 : 1 }

    private mutating func reserveSlots() {
        for _ in 0..<slotCount { emit(Self.placeholder) }
    }

    /// Makes jumps absolute, removes placeholders, and packages the program.
    private func finish() -> RegexProgram {
        var program = RegexProgram()
        program.instructions = Self.compacted(code, absolute: true)
        program.classes = classes
        program.needsBacktracking = backtracking
        program.groupCount = groupNames.count
        program.registerCount = registers
        program.anchoredStart = source.first == "^" && rootAlternatives == 1
        program.isStraightLine = !backtracking && !program.instructions.contains { $0.op == .split || $0.op == .jump }
        program.computeStartFilter()
        program.automaton = RegexDFA(program)
        return program
    }

    /// `fragment` without its placeholders, jumps retargeted (and made absolute when `absolute`).
    /// Every jump of a fragment lands inside it or just past its end.
    private static func compacted(_ fragment: [RegexInstruction], absolute: Bool) -> [RegexInstruction] {
        var newIndex = [Int](repeating: 0, count: fragment.count + 1)
        var kept = 0
        for pc in fragment.indices {
            newIndex[pc] = kept
            if !isPlaceholder(fragment[pc]) { kept += 1 }
        }
        newIndex[fragment.count] = kept
        var result: [RegexInstruction] = []
        result.reserveCapacity(kept)
        for pc in fragment.indices {
            var instruction = fragment[pc]
            if isPlaceholder(instruction) { continue }
            let here = result.count
            switch instruction.op {
            case .jump, .look:
                instruction.a = newIndex[pc + instruction.a] - (absolute ? 0 : here)
            case .split:
                instruction.a = newIndex[pc + instruction.a] - (absolute ? 0 : here)
                instruction.b = newIndex[pc + instruction.b] - (absolute ? 0 : here)
            default:
                break
            }
            result.append(instruction)
        }
        return result
    }

    private mutating func emit(_ instruction: RegexInstruction) {
        if Self.isPlaceholder(instruction) { placeholders += 1 }
        code.append(instruction)
    }

    /// Replaces the instruction at `index` (usually a placeholder).
    private mutating func fill(_ index: Int, with instruction: RegexInstruction) {
        if Self.isPlaceholder(code[index]) { placeholders -= 1 }
        if Self.isPlaceholder(instruction) { placeholders += 1 }
        code[index] = instruction
    }

    /// Whether `instruction` does nothing (a jump to the next instruction).
    private static func isPlaceholder(_ instruction: RegexInstruction) -> Bool {
        instruction.op == .jump && instruction.a == 1
    }

    /// The number of instructions the program would have without its placeholders: what
    /// ``maxInstructions`` limits.
    private var size: Int { code.count - placeholders }

    private mutating func emitClass(_ set: RegexCharClass, backward: Bool) {
        if let scalar = set.singleScalar {
            emit(RegexInstruction(backward ? .charBack : .char, Int(scalar)))
            return
        }
        classes.append(set)
        emit(RegexInstruction(backward ? .setBack : .set, classes.count - 1))
    }

    /// Starts an alternative: a placeholder for the split to the next alternative and, right to left, one
    /// for the jump to the last term.
    private mutating func beginAlternative(_ frame: inout Frame) {
        frame.choiceSlot = code.count
        emit(Self.placeholder)
        if frame.backward {
            frame.entrySlot = code.count
            emit(Self.placeholder)
        }
    }

    /// Notes that a term begins. Right to left, the previous term gets a placeholder after it, which
    /// ``wireTerms(_:)`` turns into a jump to the term before it.
    private mutating func beginTerm(_ frame: inout Frame) {
        guard frame.backward else { return }
        closeTerm(&frame)
        frame.openTerm = code.count
    }

    private mutating func closeTerm(_ frame: inout Frame) {
        guard let start = frame.openTerm else { return }
        frame.terms.append((start: start, trailer: code.count))
        emit(Self.placeholder)
        frame.openTerm = nil
    }

    /// Right to left, runs the alternative's terms last to first: the entry jumps to the last term,
    /// each term's trailer to the term before it, the first term's trailer to the alternative's end.
    private mutating func wireTerms(_ frame: inout Frame) {
        guard frame.backward else { return }
        closeTerm(&frame)
        defer { frame.terms.removeAll() }
        guard let last = frame.terms.last else { return }
        fill(frame.entrySlot, with: RegexInstruction(.jump, last.start - frame.entrySlot))
        for k in frame.terms.indices {
            let target = k == 0 ? code.count : frame.terms[k - 1].start
            fill(frame.terms[k].trailer, with: RegexInstruction(.jump, target - frame.terms[k].trailer))
        }
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
        if case .group = kind { reserveSlots() }
        let before = groupsOpened
        if case .group(let capture?) = kind {
            groupsOpened = capture
            if backtracking { emit(RegexInstruction(.save, 2 * capture + (backward ? 1 : 0))) }
        }
        var frame = Frame(kind: kind, start: start, backward: backward, groupsBefore: before)
        beginAlternative(&frame)
        frames.append(frame)
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

    /// Ends the current alternative at `|`: fills its split placeholder, and leaves a jump to the group's
    /// end to patch.
    private mutating func endAlternative(_ frame: inout Frame) throws(RegexSyntaxError) {
        wireTerms(&frame)
        frame.pendingJumps.append(code.count)
        emit(RegexInstruction(.jump))
        fill(frame.choiceSlot, with: RegexInstruction(.split, 1, code.count - frame.choiceSlot))
        beginAlternative(&frame)
        guard size <= Self.maxInstructions else { throw Self.tooLarge }
    }

    /// Ends a group (or the pattern) at `)`: patches its alternatives' jumps and closes its capture or
    /// lookaround.
    private mutating func closeGroup(_ frame: inout Frame) {
        wireTerms(&frame)
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

    /// Reads an optional quantifier after the atom whose code (placeholders first) starts at `start`, and
    /// expands it.
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

    /// Makes the atom at `start...` (its placeholders, then its code F) repeat.
    ///
    /// `F?`, `F*` and (forward matching) `F+` fill the placeholders and append at most two instructions:
    /// `split(+1, end) F`, `L: split(+1, end) F jump L`, `L: F split(L, +1)`. Other counts copy F:
    /// n copies, then `L: split(+1, end) F jump L` or m-n nested optional copies `split(+1, end) F`.
    /// Backtracking adds, to each iteration, a reset of the captures inside F and (for iterations past
    /// the minimum) a check that the iteration consumed something, as ECMA-262's RepeatMatcher requires.
    private mutating func repeatFragment(
        start: Int, minimum: Int, maximum: Int, greedy: Bool, groupsBefore: Int
    ) throws(RegexSyntaxError) {
        if minimum == 1 && maximum == 1 { return }
        let resets = backtracking && groupsOpened > groupsBefore
        let unbounded = maximum == Int.max
        if minimum == 0 && (maximum == 1 || unbounded) {
            let end = code.count + (backtracking ? 1 : 0) + (unbounded ? 1 : 0)
            fill(start, with: choice(greedy, to: end - start))
            if backtracking {
                let register = registers
                registers += 1
                fill(start + 1, with: RegexInstruction(.markPosition, register))
                if resets { fill(start + 2, with: RegexInstruction(.resetCaptures, groupsBefore + 1, groupsOpened)) }
                emit(RegexInstruction(.checkProgress, register))
            }
            if unbounded { emit(RegexInstruction(.jump, start - code.count)) }
            return
        }
        if minimum == 1 && unbounded && !backtracking {
            let back = start - code.count
            emit(greedy ? RegexInstruction(.split, back, 1) : RegexInstruction(.split, 1, back))
            return
        }
        var fragment = Self.compacted(Array(code[(start + slotCount)...]), absolute: false)
        placeholders -= code[start...].count { Self.isPlaceholder($0) }
        code.removeSubrange(start...)
        if resets { fragment.insert(RegexInstruction(.resetCaptures, groupsBefore + 1, groupsOpened), at: 0) }
        let length = fragment.count
        let check = backtracking ? 2 : 0
        let copies = minimum
        let optional = unbounded ? 0 : maximum - minimum
        let loopSize = unbounded ? length + check + 2 : 0
        let (copySize, o1) = copies.multipliedReportingOverflow(by: length)
        let (optionalSize, o2) = optional.multipliedReportingOverflow(by: length + check + 1)
        guard !o1, !o2, size + copySize + optionalSize + loopSize <= Self.maxInstructions else { throw Self.tooLarge }
        code.reserveCapacity(code.count + copySize + optionalSize + loopSize)
        for _ in 0..<copies { code.append(contentsOf: fragment) }
        if unbounded {
            let loop = code.count
            emit(choice(greedy, to: length + check + 2))
            appendIteration(fragment, checked: backtracking)
            emit(RegexInstruction(.jump, loop - code.count))
        } else if optional > 0 {
            let end = code.count + optionalSize
            for _ in 0..<optional {
                emit(choice(greedy, to: end - code.count))
                appendIteration(fragment, checked: backtracking)
            }
        }
    }

    /// A split that enters the next instruction or skips `offset` ahead, preferring to enter when greedy.
    private func choice(_ greedy: Bool, to offset: Int) -> RegexInstruction {
        greedy ? RegexInstruction(.split, 1, offset) : RegexInstruction(.split, offset, 1)
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
