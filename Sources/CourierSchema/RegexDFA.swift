/// A deterministic automaton for ASCII text, built when a pattern compiles from its Thompson-NFA program
/// (subset construction), so that the common case (a short schema pattern over a short ASCII string)
/// costs one table look-up per byte.
///
/// Built only for programs without backreferences, lookaround or word boundaries, and only while it has
/// at most ``maxStates`` states; bytes are grouped into classes the program cannot tell apart. `^` is
/// resolved by building the first state at the start of the text; `$` by knowing, for each state, whether
/// the end of the text completes a match. A non-ASCII byte makes ``search(_:)`` answer nil, and the caller
/// runs ``RegexPikeVM`` instead, so answers never depend on which engine ran.
struct RegexDFA: Sendable {
    /// The most states an automaton may have before the pattern is left to the Pike VM.
    static let maxStates = 128
    /// The most instructions the construction may visit (closure steps) before giving up, so that
    /// compiling a large pattern stays cheap: about a millisecond.
    static let maxConstructionSteps = 200_000

    /// The byte class of each ASCII byte.
    private var byteClass: [UInt8] = []
    /// The number of byte classes.
    private var classCount = 0
    /// `transitions[state * classCount + class]`: the next state, ``matched`` or ``dead``.
    private var transitions: [Int16] = []
    /// Whether the end of the text, in each state, completes a match.
    private var acceptsAtEnd: [Bool] = []
    /// Whether the first state already matched (the pattern matches the empty string at the start).
    private var matchesAtStart = false

    /// The pseudo-state of a search that found a match.
    private static let matched: Int16 = -1
    /// The pseudo-state of an anchored search that can no longer match.
    private static let dead: Int16 = -2

    /// Whether `text` has a match (ECMAScript `test`), or nil when the text is not ASCII.
    func search(_ text: UnsafeBufferPointer<UInt8>) -> Bool? {
        if matchesAtStart { return true }
        var state = 0
        for byte in text {
            guard byte < 0x80 else { return nil }
            let next = transitions[state &* classCount &+ Int(byteClass[Int(byte)])]
            if next < 0 {
                if next == Self.matched { return true }
                // Dead: no thread left and no new start (anchored). The rest need not be ASCII-checked.
                return false
            }
            state = Int(next)
        }
        return acceptsAtEnd[state]
    }

    /// The automaton of `program` (absolute jumps), or nil when the program needs another engine or
    /// the automaton would be too large.
    init?(_ program: RegexProgram) {
        let instructions = program.instructions
        guard !program.needsBacktracking else { return nil }
        for instruction in instructions where instruction.op == .wordBoundary || instruction.op == .notWordBoundary {
            return nil
        }
        let unanchored = !program.anchoredStart
        var steps = 0
        // Byte classes: bytes that every consuming instruction treats alike.
        var classOf = [Int](repeating: 0, count: 128)
        var count = 1
        var split = [Int](repeating: -1, count: 256)
        for instruction in instructions where instruction.consumes {
            steps += 128
            guard steps <= Self.maxConstructionSteps else { return nil }
            for k in 0..<(2 * count) { split[k] = -1 }
            var next = 0
            for byte in 0..<128 {
                let accepted =
                    instruction.op == .char
                    ? instruction.a == byte : program.classes[instruction.a].contains(UInt32(byte))
                let key = classOf[byte] * 2 + (accepted ? 1 : 0)
                if split[key] < 0 {
                    split[key] = next
                    next += 1
                }
                classOf[byte] = split[key]
            }
            count = next
        }
        var representative = [Int](repeating: 0, count: count)
        for byte in (0..<128).reversed() { representative[classOf[byte]] = byte }

        /// The leaves reachable from `starts` without consuming (consuming instructions and `$`), or nil
        /// when `match` is reachable.
        var seen = [Int](repeating: 0, count: instructions.count)
        var generation = 0
        func closure(_ starts: [Int], atStart: Bool) -> [Int]? {
            generation += 1
            var leaves: [Int] = []
            var work = starts
            while let pc = work.popLast() {
                guard seen[pc] != generation else { continue }
                seen[pc] = generation
                steps += 1
                let instruction = instructions[pc]
                switch instruction.op {
                case .char, .set, .assertEnd:
                    leaves.append(pc)
                case .match:
                    return nil
                case .jump:
                    work.append(instruction.a)
                case .split:
                    work.append(instruction.a)
                    work.append(instruction.b)
                case .assertStart:
                    if atStart { work.append(pc + 1) }
                default:
                    work.append(pc + 1)
                }
            }
            return leaves.sorted()
        }

        /// Whether the end of the text completes a match from `leaves`.
        func accepts(_ leaves: [Int], atStart: Bool) -> Bool {
            let ends = leaves.filter { instructions[$0].op == .assertEnd }.map { $0 + 1 }
            guard !ends.isEmpty else { return false }
            // Past `$`, only assertions can follow at the end: `$` again, `^` at the start, or `match`.
            generation += 1
            var work = ends
            while let pc = work.popLast() {
                guard seen[pc] != generation else { continue }
                seen[pc] = generation
                let instruction = instructions[pc]
                switch instruction.op {
                case .match: return true
                case .jump: work.append(instruction.a)
                case .split: work.append(contentsOf: [instruction.a, instruction.b])
                case .assertEnd: work.append(pc + 1)
                case .assertStart: if atStart { work.append(pc + 1) }
                case .char, .set: break
                default: work.append(pc + 1)
                }
            }
            return false
        }

        guard let first = closure([0], atStart: true) else {
            matchesAtStart = true
            byteClass = []
            return
        }
        var states: [[Int]] = [first]
        var index: [[Int]: Int] = [:]  // the first state is never reused: `^` holds only there
        var table: [Int16] = []
        var accepting: [Bool] = [accepts(first, atStart: true)]
        var current = 0
        while current < states.count {
            let leaves = states[current]
            for k in 0..<count {
                let byte = representative[k]
                var starts: [Int] = []
                for pc in leaves {
                    let instruction = instructions[pc]
                    let accepted: Bool
                    switch instruction.op {
                    case .char: accepted = instruction.a == byte
                    case .set: accepted = program.classes[instruction.a].contains(UInt32(byte))
                    default: accepted = false
                    }
                    if accepted { starts.append(pc + 1) }
                }
                if unanchored { starts.append(0) }
                let reached = closure(starts, atStart: false)
                guard steps <= Self.maxConstructionSteps else { return nil }
                guard let next = reached else {
                    table.append(Self.matched)
                    continue
                }
                if next.isEmpty {
                    table.append(Self.dead)
                    continue
                }
                if let known = index[next] {
                    table.append(Int16(known))
                    continue
                }
                guard states.count < Self.maxStates else { return nil }
                index[next] = states.count
                table.append(Int16(states.count))
                states.append(next)
                accepting.append(accepts(next, atStart: false))
            }
            current += 1
        }
        byteClass = classOf.map { UInt8($0) }
        classCount = count
        transitions = table
        acceptsAtEnd = accepting
    }
}
