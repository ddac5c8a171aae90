/// Runs a ``RegexProgram`` without backreferences or lookaround as a Pike VM (a Thompson-NFA
/// simulation): every live thread advances one scalar at a time in lock step, and a thread that reaches
/// an instruction already reached at the same position is dropped, so the work is
/// O(text length × program size) whatever the pattern, and empty loops such as `(a*)*` terminate.
///
/// Only ECMAScript `RegExp.prototype.test` is needed, so threads carry no captures and the search stops
/// at the first thread that reaches ``RegexInstruction/Op/match``. The text is the string's UTF-8 bytes,
/// read in place: an ASCII byte is its own scalar, and only non-ASCII bytes are decoded. The thread lists
/// and the visited marks live in one temporary allocation per search (on the stack when small).
enum RegexPikeVM {
    /// Whether `program` matches anywhere in `text` (UTF-8).
    static func search(_ program: RegexProgram, in text: UnsafeBufferPointer<UInt8>) -> Bool {
        var work = 0
        return search(program, in: text, work: &work)
    }

    /// Whether `program` matches anywhere in `text` (UTF-8), adding the work it did to `work`: the threads it
    /// stepped, or the instructions a straight-line program walked (a validation counts them against its own
    /// limit: a large program over a long text is linear, but with a large constant).
    static func search(_ program: RegexProgram, in text: UnsafeBufferPointer<UInt8>, work: inout Int) -> Bool {
        let size = program.instructions.count
        if program.isStraightLine { return searchStraightLine(program, in: text, work: &work) }
        return program.instructions.withUnsafeBufferPointer { instructions in
            program.classes.withUnsafeBufferPointer { classes in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: 5 * size + 2) { memory in
                    memory.initialize(repeating: 0)
                    let base = memory.baseAddress!
                    var vm = Machine(
                        instructions: instructions, classes: classes, text: text, anchored: program.anchoredStart,
                        visited: base, current: base + size, next: base + 2 * size, stack: base + 3 * size)
                    vm.startFilter = program.startFilter
                    defer { work += vm.work }
                    return vm.run()
                }
            }
        }
    }

    /// The search for a program without choices (no split or jump, as `^[0-9]{5}$`): from each start a
    /// single thread walks the instructions, with no lists to keep.
    private static func searchStraightLine(
        _ program: RegexProgram, in text: UnsafeBufferPointer<UInt8>, work: inout Int
    ) -> Bool {
        program.instructions.withUnsafeBufferPointer { instructions in
            program.classes.withUnsafeBufferPointer { classes in
                let machine = Machine(
                    instructions: instructions, classes: classes, text: text, anchored: program.anchoredStart,
                    visited: nil, current: nil, next: nil, stack: nil)
                var start = 0
                while true {
                    if let filter = program.startFilter {
                        while start < text.count, !filter.mayStart(machine.decode(start).scalar) {
                            start += machine.decode(start).length
                        }
                    }
                    if machine.walk(from: start, steps: &work) { return true }
                    if program.anchoredStart || start >= text.count { return false }
                    start += machine.decode(start).length
                }
            }
        }
    }

    /// The state of one search.
    private struct Machine {
        let instructions: UnsafeBufferPointer<RegexInstruction>
        let classes: UnsafeBufferPointer<RegexCharClass>
        let text: UnsafeBufferPointer<UInt8>
        let anchored: Bool
        /// The generation (position number) at which each instruction was last reached.
        let visited: UnsafeMutablePointer<Int>!
        /// The consuming instructions of the threads at the current position.
        var current: UnsafeMutablePointer<Int>!
        /// The consuming instructions of the threads at the next position.
        var next: UnsafeMutablePointer<Int>!
        /// The work stack of the epsilon closure (each instruction pushes at most two).
        let stack: UnsafeMutablePointer<Int>!
        var currentCount = 0
        var nextCount = 0
        var generation = 1
        /// The threads stepped so far.
        var work = 0
        /// The first scalars of any match, when known: with no thread in flight, the search jumps to the
        /// next position holding one of them.
        var startFilter: RegexStartFilter?

        /// No scalar (before the start or past the end of the text).
        static let none = UInt32.max

        /// The scalar at byte `position` and its length in bytes (``none`` and 0 past the end).
        @inline(__always)
        func decode(_ position: Int) -> (scalar: UInt32, length: Int) {
            guard position < text.count else { return (Self.none, 0) }
            let b0 = UInt32(text[position])
            if b0 < 0x80 { return (b0, 1) }
            if b0 < 0xE0 { return ((b0 & 0x1F) << 6 | UInt32(text[position + 1]) & 0x3F, 2) }
            if b0 < 0xF0 {
                return ((b0 & 0x0F) << 12 | (UInt32(text[position + 1]) & 0x3F) << 6 | UInt32(text[position + 2]) & 0x3F, 3)
            }
            let v =
                (b0 & 0x07) << 18 | (UInt32(text[position + 1]) & 0x3F) << 12 | (UInt32(text[position + 2]) & 0x3F) << 6
                | UInt32(text[position + 3]) & 0x3F
            return (v, 4)
        }

        /// Adds the threads reachable from `start` without consuming to the next list; true when one of
        /// them matches.
        @inline(__always)
        mutating func addClosure(_ start: Int, position: Int, previous: UInt32, scalar: UInt32) -> Bool {
            var depth = 1
            stack[0] = start
            while depth > 0 {
                depth -= 1
                let pc = stack[depth]
                if visited[pc] == generation { continue }
                visited[pc] = generation
                let instruction = instructions[pc]
                switch instruction.op {
                case .char, .set:
                    next[nextCount] = pc
                    nextCount += 1
                case .match:
                    return true
                case .jump:
                    stack[depth] = instruction.a
                    depth += 1
                case .split:
                    stack[depth] = instruction.b
                    stack[depth + 1] = instruction.a
                    depth += 2
                case .assertStart:
                    if position == 0 {
                        stack[depth] = pc + 1
                        depth += 1
                    }
                case .assertEnd:
                    if position == text.count {
                        stack[depth] = pc + 1
                        depth += 1
                    }
                case .wordBoundary, .notWordBoundary:
                    let boundary = RegexCharClass.isWordScalar(previous) != RegexCharClass.isWordScalar(scalar)
                    if boundary == (instruction.op == .wordBoundary) {
                        stack[depth] = pc + 1
                        depth += 1
                    }
                default:
                    // Capture and empty-iteration bookkeeping: nothing to do without captures.
                    stack[depth] = pc + 1
                    depth += 1
                }
            }
            return false
        }

        /// Whether a straight-line program (no split or jump) matches starting at `start`.
        func walk(from start: Int, steps: inout Int) -> Bool {
            var position = start
            var pc = 0
            while true {
                steps += 1
                let instruction = instructions[pc]
                switch instruction.op {
                case .char, .set:
                    let (scalar, length) = decode(position)
                    guard length > 0 else { return false }
                    let accepted =
                        instruction.op == .char ? UInt32(instruction.a) == scalar : classes[instruction.a].contains(scalar)
                    guard accepted else { return false }
                    position += length
                case .match:
                    return true
                case .assertStart:
                    guard position == 0 else { return false }
                case .assertEnd:
                    guard position == text.count else { return false }
                case .wordBoundary, .notWordBoundary:
                    var previous = Self.none
                    if position > 0 {
                        var back = position - 1
                        while text[back] & 0xC0 == 0x80 { back -= 1 }
                        previous = decode(back).scalar
                    }
                    let boundary =
                        RegexCharClass.isWordScalar(previous) != RegexCharClass.isWordScalar(decode(position).scalar)
                    guard boundary == (instruction.op == .wordBoundary) else { return false }
                default:
                    break
                }
                pc += 1
            }
        }

        /// Runs the lists forward from the start of the text; true at the first thread that matches.
        mutating func run() -> Bool {
            var position = 0
            var (scalar, length) = decode(0)
            if addClosure(0, position: 0, previous: Self.none, scalar: scalar) { return true }
            swap(&current, &next)
            currentCount = nextCount
            // Threads of the current list that came from earlier starts (not from a start at `position`).
            var inFlight = 0
            while true {
                if currentCount == 0 && anchored { return false }
                if inFlight == 0, let startFilter, !startFilter.mayStart(scalar) {
                    // Only the start thread is alive and it cannot take this scalar: skip ahead.
                    repeat {
                        if position >= text.count { return false }
                        position += length
                        (scalar, length) = decode(position)
                    } while !startFilter.mayStart(scalar)
                    generation += 1
                    nextCount = 0
                    _ = addClosure(0, position: position, previous: Self.none, scalar: scalar)
                    swap(&current, &next)
                    currentCount = nextCount
                }
                if position >= text.count { return false }
                let nextPosition = position + length
                let (nextScalar, nextLength) = decode(nextPosition)
                generation += 1
                nextCount = 0
                work &+= currentCount + 1
                for k in 0..<currentCount {
                    let pc = current[k]
                    let instruction = instructions[pc]
                    let accepted =
                        instruction.op == .char ? UInt32(instruction.a) == scalar : classes[instruction.a].contains(scalar)
                    if accepted, addClosure(pc + 1, position: nextPosition, previous: scalar, scalar: nextScalar) {
                        return true
                    }
                }
                inFlight = nextCount
                if !anchored, addClosure(0, position: nextPosition, previous: scalar, scalar: nextScalar) {
                    return true
                }
                swap(&current, &next)
                currentCount = nextCount
                position = nextPosition
                scalar = nextScalar
                length = nextLength
            }
        }
    }
}
