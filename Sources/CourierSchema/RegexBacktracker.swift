/// Runs a ``RegexProgram`` with backreferences or lookaround (which no automaton can run) by
/// backtracking, in ECMA-262's order, with an explicit stack and a step budget.
///
/// Every instruction executed is one step, and a backreference also counts the bytes it compares (else
/// `^(a+)\1$` would compare a whole capture per step and go quadratic within the budget); when the steps run
/// out the search throws
/// ``RegexBudgetExceeded`` instead of running for an exponential time. Captures follow ECMA-262:
/// a quantified group's captures are cleared at each iteration, an iteration past the minimum that
/// consumes nothing fails, a backreference to an unset group matches the empty string, a positive
/// lookaround keeps its captures and is never re-entered, a negative one keeps none. Lookbehind bodies
/// were compiled right to left and consume leftwards. Only lookarounds recurse (at most
/// ``RegexCompiler/maxLookaroundDepth`` deep).
struct RegexBacktracker {
    /// One entry of the backtracking stack: a choice to resume, or a value to restore on the way back.
    private struct Entry {
        /// ``branch``, ``capture`` or ``register``.
        var kind: Int
        /// The instruction to resume, or the slot or register to restore.
        var a: Int
        /// The position to resume at, or the value to restore.
        var b: Int

        static let branch = 0
        static let capture = 1
        static let register = 2
    }

    private let instructions: [RegexInstruction]
    private let classes: [RegexCharClass]
    private let text: UnsafeBufferPointer<UInt8>
    private let anchored: Bool
    private let budget: Int
    private var steps = 0
    /// The steps taken so far (the validation counts them against its own limit).
    var stepsTaken: Int { steps }
    private var captures: [Int]
    private var registers: [Int]
    private var stack: [Entry] = []

    /// A matcher of `program` over `text` (UTF-8) that may execute at most `budget` instructions.
    init(_ program: RegexProgram, text: UnsafeBufferPointer<UInt8>, budget: Int) {
        instructions = program.instructions
        classes = program.classes
        self.text = text
        anchored = program.anchoredStart
        self.budget = budget
        captures = Array(repeating: -1, count: 2 * (program.groupCount + 1))
        registers = Array(repeating: -1, count: program.registerCount)
    }

    /// Whether the program matches anywhere in the text, trying each start position in turn.
    mutating func search() throws(RegexBudgetExceeded) -> Bool {
        var start = 0
        while true {
            if try run(from: 0, at: start) { return true }
            if anchored || start >= text.count { return false }
            start += scalarLength(at: start)
        }
    }

    /// The length in bytes of the scalar at byte `position`.
    private func scalarLength(at position: Int) -> Int {
        let b0 = text[position]
        return b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4
    }

    /// The scalar at byte `position` and its length in bytes.
    private func scalar(at position: Int) -> (UInt32, Int) {
        let b0 = UInt32(text[position])
        if b0 < 0x80 { return (b0, 1) }
        let length = b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4
        var v = b0 & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length { v = v << 6 | UInt32(text[position + k]) & 0x3F }
        return (v, length)
    }

    /// The scalar ending at byte `position` and its length in bytes.
    private func scalar(before position: Int) -> (UInt32, Int) {
        var start = position - 1
        while text[start] & 0xC0 == 0x80 { start -= 1 }
        return scalar(at: start)
    }

    /// Whether the scalar before `position` is an ASCII word character.
    private func isWord(before position: Int) -> Bool {
        position > 0 && RegexCharClass.isWordScalar(UInt32(text[position - 1]))
    }

    /// Whether the scalar at `position` is an ASCII word character.
    private func isWord(at position: Int) -> Bool {
        position < text.count && RegexCharClass.isWordScalar(UInt32(text[position]))
    }

    /// Runs from `pc` at `position` until ``RegexInstruction/Op/match`` or ``RegexInstruction/Op/lookEnd``
    /// (true, leaving its choices on the stack) or until every choice above the current stack height
    /// failed (false, with every capture and register restored).
    private mutating func run(from startPC: Int, at startPosition: Int) throws(RegexBudgetExceeded) -> Bool {
        let base = stack.count
        var pc = startPC
        var position = startPosition
        while true {
            steps += 1
            if steps > budget {
                throw RegexBudgetExceeded(
                    reason: "the pattern needed more than \(budget) backtracking steps (it uses backreferences or lookaround)")
            }
            let instruction = instructions[pc]
            var ok = true
            switch instruction.op {
            case .char:
                if position < text.count {
                    let (v, length) = scalar(at: position)
                    ok = v == UInt32(instruction.a)
                    position += length
                } else {
                    ok = false
                }
                pc += 1
            case .set:
                if position < text.count {
                    let (v, length) = scalar(at: position)
                    ok = classes[instruction.a].contains(v)
                    position += length
                } else {
                    ok = false
                }
                pc += 1
            case .charBack:
                if position > 0 {
                    let (v, length) = scalar(before: position)
                    ok = v == UInt32(instruction.a)
                    position -= length
                } else {
                    ok = false
                }
                pc += 1
            case .setBack:
                if position > 0 {
                    let (v, length) = scalar(before: position)
                    ok = classes[instruction.a].contains(v)
                    position -= length
                } else {
                    ok = false
                }
                pc += 1
            case .split:
                stack.append(Entry(kind: Entry.branch, a: instruction.b, b: position))
                pc = instruction.a
            case .jump:
                pc = instruction.a
            case .assertStart:
                ok = position == 0
                pc += 1
            case .assertEnd:
                ok = position == text.count
                pc += 1
            case .wordBoundary, .notWordBoundary:
                let boundary = isWord(before: position) != isWord(at: position)
                ok = boundary == (instruction.op == .wordBoundary)
                pc += 1
            case .save:
                stack.append(Entry(kind: Entry.capture, a: instruction.a, b: captures[instruction.a]))
                captures[instruction.a] = position
                pc += 1
            case .resetCaptures:
                for slot in (2 * instruction.a)...(2 * instruction.b + 1) where captures[slot] != -1 {
                    stack.append(Entry(kind: Entry.capture, a: slot, b: captures[slot]))
                    captures[slot] = -1
                }
                pc += 1
            case .markPosition:
                stack.append(Entry(kind: Entry.register, a: instruction.a, b: registers[instruction.a]))
                registers[instruction.a] = position
                pc += 1
            case .checkProgress:
                ok = position != registers[instruction.a]
                pc += 1
            case .backReference, .backReferenceBack:
                let start = captures[2 * instruction.a]
                let end = captures[2 * instruction.a + 1]
                if start >= 0, end >= 0 {
                    let length = end - start
                    let from = instruction.op == .backReference ? position : position - length
                    if from >= 0, from + length <= text.count {
                        var k = 0
                        while k < length, text[from + k] == text[start + k] { k += 1 }
                        steps += k
                        ok = k == length
                    } else {
                        ok = false
                    }
                    if ok { position = instruction.op == .backReference ? position + length : from }
                }
                pc += 1
            case .look:
                let height = stack.count
                let matched = try run(from: pc + 1, at: position)
                let kind = instruction.b
                let positive = kind == RegexProgram.LookKind.ahead || kind == RegexProgram.LookKind.behind
                if matched && positive {
                    // Keep the captures the body set (their undo entries) but none of its choices.
                    var kept = height
                    for k in height..<stack.count where stack[k].kind != Entry.branch {
                        stack[kept] = stack[k]
                        kept += 1
                    }
                    stack.removeSubrange(kept...)
                } else if matched {
                    unwind(to: height)
                }
                ok = matched == positive
                pc = instruction.a
            case .lookEnd, .match:
                return true
            }
            if !ok {
                var resumed = false
                while stack.count > base {
                    let entry = stack.removeLast()
                    switch entry.kind {
                    case Entry.branch:
                        pc = entry.a
                        position = entry.b
                        resumed = true
                    case Entry.capture:
                        captures[entry.a] = entry.b
                    default:
                        registers[entry.a] = entry.b
                    }
                    if resumed { break }
                }
                if !resumed { return false }
            }
        }
    }

    /// Pops the stack down to `height`, restoring every capture and register on the way.
    private mutating func unwind(to height: Int) {
        while stack.count > height {
            let entry = stack.removeLast()
            if entry.kind == Entry.capture {
                captures[entry.a] = entry.b
            } else if entry.kind == Entry.register {
                registers[entry.a] = entry.b
            }
        }
    }
}
